package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/shortlink/terraform-provider-shortlink/internal/analytics"
	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/defaults"
	"github.com/shortlink/terraform-provider-shortlink/internal/links"
	"github.com/shortlink/terraform-provider-shortlink/internal/snapshot"
	"github.com/shortlink/terraform-provider-shortlink/internal/validate"
)

// serviceFieldAttributes maps the service's field names, as they appear in
// its messages, to the attributes of shortlink_link.
var serviceFieldAttributes = map[string]string{
	"destination": "destination",
	"domainId":    "domain_id",
	"domain_id":   "domain_id",
	"slug":        "slug",
	"expiresAt":   "expires_at",
	"expires_at":  "expires_at",
	"utm":         "utm",
}

// addServiceError turns an error of the client into a diagnostic that says
// what happened and what to do, on the attribute it concerns where there is
// one. action says what the provider was doing ("create the link").
func addServiceError(diags *diag.Diagnostics, action string, err error) {
	summary := "Could not " + action
	if client.IsVerdict(err) {
		diags.AddError(verdictSummary(err), verdictDetail(err))
		return
	}
	var taken *links.SlugTakenError
	if errors.As(err, &taken) {
		diags.AddAttributeError(path.Root("slug"), summary, slugTakenDetail(taken))
		return
	}
	if errors.Is(err, errChangeNotReadBack) {
		diags.AddError(summary, err.Error()+"\n\nThe service made the change; only reading the link back failed. The next plan reads the link and shows what is left to do, if anything: run the command again.")
		return
	}
	var past *client.WaitPastDeadlineError
	if errors.As(err, &past) {
		diags.AddError(summary, waitPastDeadlineDetail(past, err))
		return
	}
	var apiErr *client.APIError
	// An interrupt that cut the search for a link a create may have made,
	// after an answer that left it unknown, is the cause to tell, not that
	// answer (whose advice is to run the command again).
	interrupted := errors.Is(err, client.ErrAmbiguous) && errors.Is(err, context.Canceled)
	if !errors.As(err, &apiErr) || interrupted {
		diags.AddError(summary, plainErrorDetail(err))
		return
	}
	detail := serviceErrorDetail(apiErr) + mayHaveCreated(err) + mayHaveChanged(err)
	if attr := attributeOf(apiErr); attr != "" {
		diags.AddAttributeError(path.Root(attr), summary, detail)
		return
	}
	diags.AddError(summary, detail)
}

// plainErrorDetail explains an error that carries no answer of the service.
func plainErrorDetail(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded) && errors.Is(err, client.ErrAmbiguous):
		return err.Error() + "\n\nThe operation ran out of time while the service was still creating the link. " + leftoverAdvice + " To avoid this, raise the resource's create timeout or lower Terraform's -parallelism."
	case errors.Is(err, context.DeadlineExceeded):
		unsent := ""
		if errors.Is(err, client.ErrNotSent) && !errors.Is(err, client.ErrUnanswered) {
			unsent = " This request was never sent: it changed nothing on the service."
		}
		return err.Error() + fmt.Sprintf("\n\nThe operation ran out of time: a create, change or delete is bounded by the resource's timeouts, a read by %s.%s Its time went waiting for the rate limit, or for the service to answer the writes already sent (its fraud filter may take seconds for each). Raise the timeouts where they apply; where the rate limit held it, lowering Terraform's -parallelism also makes fewer requests wait.", defaults.ReadTimeout, unsent)
	case errors.Is(err, client.ErrAmbiguous) && errors.Is(err, context.Canceled):
		return err.Error() + "\n\nTerraform was interrupted before the provider knew whether the service created the link (waiting for the create's answer, or looking for the link after an answer that left it unknown), and the provider stopped at the end of stop_grace_period. " + leftoverAdvice
	case errors.Is(err, client.ErrAmbiguous):
		return err.Error() + "\n\nThe service may or may not have created the link. " + leftoverAdvice
	case errors.Is(err, client.ErrUnanswered) && errors.Is(err, context.Canceled):
		return err.Error() + "\n\nTerraform was interrupted before the service confirmed this request, and the provider stopped waiting for its answer at the end of stop_grace_period. The service may have carried it out: the next plan reads the link and shows what is left to do."
	case errors.Is(err, client.ErrNotSent), errors.Is(err, context.Canceled):
		// A write cut off after it was sent is ErrAmbiguous or
		// ErrUnanswered above: what is left is a write never sent, or a read.
		return err.Error() + "\n\nTerraform was interrupted before this request completed; it changed nothing on the service. Run the command again to finish."
	case errors.Is(err, links.ErrNoSuchLink), errors.Is(err, snapshot.ErrListingsShifted):
		return err.Error() // it says what to do; base_url is not the cause
	case errors.Is(err, client.ErrUnexpectedResponse):
		// The service answered: base_url is right (a wrong one is a
		// verdict, ErrWrongBaseURL), so it is not the advice here.
		return err.Error() + "\n\nThe service answered, but not as the provider can read (what came back is quoted above); the configuration is not the cause. Run the command again; if the same answer comes back, report it, with the text above, to the service's support."
	}
	return err.Error() + "\n\nCheck that base_url points at the service and that it is reachable, then run the command again."
}

// verdictReportedElsewhere reports whether err is a run-wide verdict that another
// operation explains in full: the first caller with a verdict claims the
// report and gets false. Every verdict of the client is one conclusion:
// the first explains it, whichever it is.
func verdictReportedElsewhere(explained *reports, err error) bool {
	if !client.IsVerdict(err) {
		return false
	}
	_, first := explained.claim("the client's verdict", "")
	return !first
}

// addOperationError reports an operation that failed. A conclusion the
// client holds for the whole run (the service cannot be reached, base_url
// is wrong, the key is refused) is explained in full by the first
// operation that reports it; the others fail with a line that points to
// it, so a run of 30 links reads one explanation, not 30.
func addOperationError(diags *diag.Diagnostics, explained *reports, action string, err error) {
	if verdictReportedElsewhere(explained, err) {
		diags.AddError("Could not "+action, verdictSummary(err)+": the same as the error reported in full once for this run, which says why and what to do."+mayHaveCreated(err))
		return
	}
	addServiceError(diags, action, err)
}

// mayHaveCreated is what a failed create whose outcome is unknown adds to
// its message, after whatever else failed: the link may exist.
func mayHaveCreated(err error) string {
	if !errors.Is(err, client.ErrAmbiguous) {
		return ""
	}
	return "\n\nBefore that, the create's own answer left its outcome unknown (" + err.Error() + "): the service may have created the link. " + leftoverAdvice
}

// mayHaveChanged says what a change or delete whose answer was a server
// error leaves: the service may have carried it out before failing.
func mayHaveChanged(err error) string {
	if !errors.Is(err, client.ErrUnanswered) {
		return ""
	}
	return "\n\nThe service may have carried this request out before it failed: the next plan reads the link and shows what is left to do."
}

// addRefreshError reports a refresh that failed. A conclusion the client
// holds for the whole run is reported as an error by the first refresh
// only: the run fails on it, and the other refreshes keep their state with
// a warning (which Terraform folds into one) instead of repeating it.
func addRefreshError(diags *diag.Diagnostics, explained *reports, action string, err error) {
	if verdictReportedElsewhere(explained, err) {
		diags.AddWarning("Not refreshed", fmt.Sprintf("Could not %s: %s. The error is reported once for the whole run.", action, verdictSummary(err)))
		return
	}
	addServiceError(diags, action, err)
}

// verdictSummaries say in a few words what each verdict the client holds
// for the whole run means; any other verdict is about reaching the service.
var verdictSummaries = []struct {
	verdict error
	summary string
}{
	{client.ErrWrongBaseURL, "base_url does not lead to the short-link service's API"},
	{client.ErrUnauthorized, "The service rejected the API key"},
	{client.ErrForbidden, "The API key lacks a scope Terraform needs"},
}

func verdictSummary(err error) string {
	for _, v := range verdictSummaries {
		if errors.Is(err, v.verdict) {
			return v.summary
		}
	}
	return "Cannot reach the short-link service"
}

func verdictDetail(err error) string {
	detail := err.Error() + "\n\nThe provider stopped trying, for every operation of this run. Check base_url (or " + EnvBaseURL + "): its scheme, host and port; and that the service (or the emulator) is running and reachable from this machine."
	if errors.Is(err, client.ErrWrongBaseURL) {
		detail = strings.TrimSuffix(err.Error(), ".") + ".\n\nCorrect base_url (or " + EnvBaseURL + ", where the provider block does not set base_url). Every other operation of this run fails the same way, so the provider stopped sending requests."
	} else if refusal := keyRefusal(err); refusal != nil {
		detail = serviceErrorDetail(refusal) + "\n\nThe key would be refused the same way by every other request of this run that needs it, so the provider stopped sending them."
	}
	return detail + mayHaveCreated(err)
}

// keyRefusal is the 401 or 403 answer in err's tree, if any: the tree of a
// failed create also holds the answer to the create itself (a 5xx), and
// the refusal came to the listing that looked for its link.
func keyRefusal(err error) *client.APIError {
	//nolint:errorlint // walks the tree itself: errors.As stops at the first APIError
	if a, ok := err.(*client.APIError); ok && (errors.Is(a, client.ErrUnauthorized) || errors.Is(a, client.ErrForbidden)) {
		return a
	}
	switch u := err.(type) { //nolint:errorlint // as above
	case interface{ Unwrap() error }:
		return keyRefusal(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if a := keyRefusal(e); a != nil {
				return a
			}
		}
	}
	return nil
}

// addInvalidSetting reports a setting (base_url, api_key) the provider
// cannot use, naming the environment variable when that is where it came
// from.
//
// Like every diagnostic of those two settings it is the provider block's,
// not the attribute's: Terraform prints an attribute's source line under
// its diagnostic, and the line of api_key, or of a base_url the key was
// pasted into, holds the key in clear. The summary names the setting.
func addInvalidSetting(diags *diag.Diagnostics, name, env string, err error, fromEnv bool) {
	if fromEnv {
		diags.AddError("Invalid "+env,
			err.Error()+". The value comes from the environment variable "+env+" ("+name+" is not set in the provider block): correct or unset it.")
		return
	}
	diags.AddError("Invalid "+name, err.Error()+".")
}

// addInvalidInstant reports a time that is not RFC 3339, saying what is
// wrong in the commonest slips: the time zone or the time of day missing,
// or a space between date and time, as spreadsheets write them.
func addInvalidInstant(diags *diag.Diagnostics, at path.Path, value string) {
	if value == "" {
		// Most often a variable or a CSV cell left empty: every time
		// attribute is optional, and null is what sets none.
		diags.AddAttributeError(at, "Invalid time",
			fmt.Sprintf("%s is empty, which is not a time. To set none, %s; otherwise write the date, the time and the time zone, for example 2027-01-05T23:59:59Z (UTC).", at, validate.LeaveOutForNone))
		return
	}
	hint := ""
	switch m := spaceBetween.FindStringSubmatch(value); {
	case dateOnly.MatchString(value):
		hint = " It has no time of day: write the date and the time, joined by T."
	case dateAndTime.MatchString(value):
		hint = " It has no time zone: add Z for UTC, or the offset from UTC such as +01:00."
	case len(m) == 2 && m[1] == "":
		hint = " A space joins the date and the time, as spreadsheets write them: join them by T, and add the time zone (Z for UTC)."
	case len(m) == 2:
		hint = " A space joins the date and the time, as spreadsheets write them: join them by T."
	default:
		hint = outOfRange(value)
	}
	diags.AddAttributeError(at, "Invalid time",
		fmt.Sprintf("%s is %q, which is not an RFC 3339 time.%s Write the date, the time and the time zone, for example 2027-01-05T23:59:59Z (UTC) or 2027-01-05T23:59:59+01:00.", at, value, hint))
}

// outOfRange says which field of a time written in RFC 3339's shape is out
// of its range ("2027-13-01T00:00:00Z": its month), as time.Parse finds it;
// "" for any other fault.
func outOfRange(value string) string {
	var parseErr *time.ParseError
	if _, err := links.ParseRFC3339(value); errors.As(err, &parseErr) && strings.HasSuffix(parseErr.Message, " out of range") {
		return " Its " + strings.TrimSuffix(strings.TrimPrefix(parseErr.Message, ": "), " out of range") + " is out of range."
	}
	return ""
}

// dateOnly and dateAndTime are the shapes of an RFC 3339 time cut short,
// spaceBetween one with a space for its T.
var (
	dateOnly    = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	dateAndTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$`)
	// spaceBetween captures the time zone, if any.
	spaceBetween = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?$`)
)

// addRateLimitWait tells the user that an operation waited long for the
// rate limit, so that a slow apply has its reason in the output. The
// summary is the same for every resource, so Terraform folds the warnings
// of a large apply into one. The part spent waiting for answers is named
// apart: with a slow service it is most of the wait while the window still
// has room, and only slow answers explain it.
func addRateLimitWait(diags *diag.Diagnostics, w client.WaitSum) {
	told, outcome := waitTold(diags, w)
	forAnswers := ""
	if w.ForAnswers >= time.Second {
		forAnswers = fmt.Sprintf(" Of that, %s went waiting for the answers to this run's requests already sent: the provider sends the next requests only once answers to those already sent have said how much remains, so while the service is slow to answer (its fraud filter runs on every create and change of destination), the next requests wait as long, however much the window allows.",
			w.ForAnswers.Round(time.Second))
	}
	why := "so the provider holds requests back until the service's window allows them rather than have them refused."
	if w.Refused > 0 { // then it was refused all the same, and does not say it was not
		why = "so the provider holds requests back until the service's window allows them, as far as the answers so far show it; a 429 comes where they did not show it: another run or integration using the key spent the window first, or the service counts otherwise than its headers say."
	}
	diags.AddWarning("Waited for the rate limit",
		fmt.Sprintf("This operation waited %s in all for the service's rate limit%s.%s The limit is per API key: every request of this run, and of any other run using the same key, counts against it, %s%s An apply of many links takes about as many windows as its writes need; lowering -parallelism does not make it faster, but each link then waits behind fewer others of this run, and less of its timeout (see the guide Rate limits, retries and timeouts in the provider's documentation).",
			w.Total.Round(time.Second), told, forAnswers, why, outcome))
}

// addReadRateLimitWait tells that a read waited long for the read rate
// limit: mostly for a listing of the account, which pages at that limit.
func addReadRateLimitWait(diags *diag.Diagnostics, w client.WaitSum) {
	told, outcome := waitTold(diags, w)
	diags.AddWarning("Waited for the rate limit",
		fmt.Sprintf("Reading waited %s in all for the service's read rate limit%s.%s The service can only list all of an account's links, page by page, so a listing of a large account takes about as many windows of the read limit as it has pages; one listing serves every refresh and data source of this run, and the read that started it says so, once. The limit is per API key: every other run and integration using the key counts against it too.",
			w.Total.Round(time.Second), told, outcome))
}

// addExportReadRateLimitWait tells that reading the analytics export
// waited long for the read rate limit, which the export shares with the
// listings of the account's links.
func addExportReadRateLimitWait(diags *diag.Diagnostics, w client.WaitSum) {
	told, outcome := waitTold(diags, w)
	diags.AddWarning("Waited for the rate limit",
		fmt.Sprintf("Reading waited %s in all for the service's read rate limit%s.%s The analytics export this data source reads on every plan counts against the same read limit as the listings of the account's links that refreshes and other data sources take. The limit is per API key: every other run and integration using the key counts against it too.",
			w.Total.Round(time.Second), told, outcome))
}

// waitTold is what the waits' warnings say of the 429s that asked for a
// wait, and of whether the operation failed.
func waitTold(diags *diag.Diagnostics, w client.WaitSum) (told, outcome string) {
	told, outcome = "", " Nothing failed."
	if w.Refused > 0 {
		told = fmt.Sprintf(", %d time(s) told to by a 429 answer", w.Refused)
	}
	if diags.HasError() {
		outcome = " The waits are not what failed: the error says what did."
	}
	return told, outcome
}

// leftoverAdvice says what the next run does about a create whose outcome
// is unknown; it holds for a new process, not only for this one.
const leftoverAdvice = "If it did, the link is on the account but in no state. The next apply settles it: for a resource with a slug, the service answers 409 and the provider takes the link over when it is exactly what the resource declares, was created within adoption_window and no other resource manages it (with a warning naming it); for a resource without a slug a new link is created, and the plan warns of a probable leftover it finds (one the service finishes making after that plan has listed is not found: look for a second link to the same destination, created about now, and delete it)."

// slugTakenDetail explains a 409 that the create could not resolve, with
// the ID that imports the link holding the slug.
func slugTakenDetail(e *links.SlugTakenError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The slug %q is already taken on domain %s (409 slug_taken)", e.Slug, e.DomainID)
	if e.ManagedHere() {
		fmt.Fprintf(&b, " by link %s (%s, destination %q), which another resource of this configuration created or manages.\n\n%s", e.Holder.ID, e.Holder.ShortURL, e.Holder.Destination, duplicateSlugAdvice)
		return b.String()
	}
	if e.Holder != nil {
		fmt.Fprintf(&b, " by link %s (%s, destination %q", e.Holder.ID, e.Holder.ShortURL, e.Holder.Destination)
		if !e.Holder.CreatedAt.IsZero() {
			fmt.Fprintf(&b, ", created %s", e.Holder.CreatedAt.Format(time.RFC3339))
		}
		fmt.Fprintf(&b, "), which was not taken over: %s", e.Reason)
	}
	b.WriteString(".\n\n")
	if e.Reason == links.BeingDeleted {
		b.WriteString("Run the apply again once the delete has gone through: the link is then created anew.")
		return b.String()
	}
	// The likeliest cause first: a link alike is most often a renamed
	// resource's; any other, another configuration's or the dashboard's.
	if e.Alike {
		b.WriteString(renamedAdvice + " Otherwise, choose")
	} else {
		b.WriteString("Choose")
	}
	fmt.Fprintf(&b, " another slug, or, if that link should be managed by this resource, import it: `terraform import <resource address> %s`, or an import block with `id = %q`.", e.ImportID(), e.ImportID())
	if e.Holder != nil {
		b.WriteString(" If this resource is being replaced with create_before_destroy, that link is most likely its own old one, which keeps the slug until it is destroyed: a link with a fixed slug cannot be replaced create-before-destroy, so remove create_before_destroy from it or change the slug.")
	}
	return b.String()
}

// renamedAdvice explains a 409 whose holder is what the resource declares
// but too old to be a leftover: most often the link of a resource this
// apply destroys, renamed without a moved block, whose delete Terraform
// had not started (creates and deletes of other addresses run in any
// order). The apply process cannot tell: only the plan saw that resource.
const renamedAdvice = "That link is exactly what this resource declares. If it belongs to a resource at another address that this apply destroys (one renamed, or moved into or out of a module, without a moved block; the plan warned of the slug), Terraform had not yet sent its delete when this create met the slug: run the apply again once this one has ended, and the link is created anew, without the deleted link's clicks."

// duplicateSlugAdvice is what to do when two resources of one
// configuration declare one slug.
const duplicateSlugAdvice = "A slug is one link: two resources cannot both hold it on one domain. Remove the duplicate (often a repeated row of a CSV or a repeated for_each value) or give one of them another slug."

// addWantedByAnotherCreate reports, at plan time, that the link a resource
// manages (id, shortURL) is what another resource's create, found earlier
// in the same plan, would take over as a leftover.
func addWantedByAnotherCreate(diags *diag.Diagnostics, id, shortURL string, wanted client.CreateLinkInput) {
	diags.AddError("Slug held by this resource's link",
		fmt.Sprintf("This resource manages link %s (%s), which holds the slug %q on domain %s. Another resource of this configuration creates a link with that slug and this link's destination, and would take this link over: two resources would manage one link, and destroying either would delete it.\n\n%s If this resource was renamed or moved, a moved block keeps its link. If it is being removed, remove it in one apply and add the other in the next.",
			id, shortURL, wanted.Slug, wanted.DomainID, duplicateSlugAdvice))
}

// addHandedOn says that a destroy left link id on the service, because a
// create of the same apply took it over.
func addHandedOn(diags *diag.Diagnostics, id, shortURL string) {
	diags.AddWarning("Link kept for the object that took it over",
		fmt.Sprintf("This object is destroyed, but its link %s (%s) is not deleted: a create earlier in this apply, with the same slug, took it over and now manages it, with its short URL and click history. This happens when a link with a fixed slug is replaced with create_before_destroy (after a taint, -replace, or an interrupted create), or when a resource renamed without a moved block is created before the old one is destroyed.", id, shortURL))
}

// addTakenByMistake reports the destroy of an object whose link id a
// create without a slug took over after its answer was lost (see
// links.Creator.MadeInstead): the link is kept, and made is the link the
// service made for that create, which no state records (nil: none showed).
func addTakenByMistake(diags *diag.Diagnostics, id, shortURL, destination string, made *client.Link) {
	what := fmt.Sprintf("The service may still make a link for that create (its answer came before the service had done it), which no state would record: look on the account for a second link to %s (the shortlink_links data source lists a domain's links) and delete it.", destination)
	if made != nil {
		what = fmt.Sprintf("The service made link %s (%s, created %s) for that create all the same, and no state records it: delete it (in the dashboard, or with an import block and a destroy).", made.ID, made.ShortURL, made.CreatedAt.Format(time.RFC3339))
	}
	diags.AddWarning("Link kept: a create without a slug took it for its own",
		fmt.Sprintf("This object is destroyed, but its link %s (%s) is not deleted: a create earlier in this apply asked for an identical link without a slug (this object's replacement, after -replace or a taint with create_before_destroy, or a resource renamed without a moved block), its answer was lost, and its search for the link it made found this one and took it over. The new object now manages %s, with its short URL and click history; it has no new short URL. %s To give it one, replace it again.", id, shortURL, id, what))
}

// addMadeBeside reports the destroy of an object whose link id is deleted
// while a create without a slug of an identical link took link taken
// after its answer was lost, and made is the link the service made for
// that create (see links.Creator.MadeBeside).
func addMadeBeside(diags *diag.Diagnostics, id, taken string, made *client.Link) {
	diags.AddWarning("Link "+made.ID+" is in no state",
		fmt.Sprintf("This object's link %s is deleted. A create earlier in this apply asked for an identical link without a slug (this object's replacement, after -replace or a taint with create_before_destroy), its answer was lost, and its search took link %s, the newest identical link then on the account, which was not this object's: it may be another resource's (an identical instance of the same count or for_each), which two objects then name, and the next plan fails on it. The service made link %s (%s, created %s) for that create all the same, and no state records it: import it into the new object in place of %s (`terraform state rm` on that address, then an import block), or delete it.",
			id, taken, made.ID, made.ShortURL, made.CreatedAt.Format(time.RFC3339), taken))
}

// withDeletedBeforeRefusedCreate adds to the errors of a create the quota
// refused which links on its domain this apply had already deleted: a
// replacement without create_before_destroy deletes the old link before it
// creates the new one, and no configuration brings the old one back while
// the quota refuses every create.
func withDeletedBeforeRefusedCreate(diags diag.Diagnostics, deleted []string) diag.Diagnostics {
	if len(deleted) == 0 {
		return diags
	}
	return withErrorsTelling(diags, fmt.Sprintf("This apply deleted %s on this domain before this create. If this create replaces one of them (a change of domain_id, slug or expires_at, or -replace, without create_before_destroy), the old link is gone and the new one was not made: reverting the configuration needs a create too, which the quota refuses until it allows one more (the old link's clicks stay in the account-wide export). While the quota is tight, give links that may be replaced `lifecycle { create_before_destroy = true }` (with a slug that changes, or none): the new link is then created first, and a refused create keeps the old one.", quotedIDs(deleted)))
}

// withErrorsTelling is diags with more added, as a paragraph of its own,
// to the detail of each error, which keeps its attribute; any other
// diagnostic is kept as it is.
func withErrorsTelling(diags diag.Diagnostics, more string) diag.Diagnostics {
	var out diag.Diagnostics
	for _, d := range diags {
		if d.Severity() != diag.SeverityError {
			out.Append(d)
			continue
		}
		if withPath, ok := d.(diag.DiagnosticWithPath); ok {
			out.AddAttributeError(withPath.Path(), d.Summary(), d.Detail()+"\n\n"+more)
			continue
		}
		out.AddError(d.Summary(), d.Detail()+"\n\n"+more)
	}
	return out
}

// quotedIDs names links: "link a", "links a and b", "links a, b and c".
func quotedIDs(ids []string) string {
	if len(ids) == 1 {
		return "link " + ids[0]
	}
	return "links " + strings.Join(ids[:len(ids)-1], ", ") + " and " + ids[len(ids)-1]
}

// addManagedTwice reports a link that two objects of the state name.
func addManagedTwice(diags *diag.Diagnostics, id, shortURL string) {
	diags.AddError("Link managed twice",
		fmt.Sprintf("Link %s (%s) is named by this resource and by another object of this configuration: another resource (a copied block with the same slug and destination, a second resource an import brought the link into, or the old address of a resource renamed without a moved block) or an old object of this one. Destroying or replacing either would delete the link both name. Keep it in one: remove an import block of this run that brings the link in (with its resource block), or run `terraform state rm` on the address that should let the link go (after a rename, the old one; after an import, the one imported), then remove its block or give it another slug. If the other is an old (deposed) object of this resource, left by a replacement created before destroy that did not finish, run `terraform state rm` on this resource, then `terraform import` it with the ID %s: the link is kept.", id, shortURL, id))
}

// addDuplicateSlug reports, at plan time, the second of two resources of
// this run that would create the same domain and slug.
func addDuplicateSlug(diags *diag.Diagnostics, in, earlier client.CreateLinkInput) {
	diags.AddAttributeError(path.Root("slug"), "Slug declared twice",
		fmt.Sprintf("Another resource of this configuration also creates a link with the slug %q on domain %s (its destination is %q); only one of the two creates could succeed, the other would fail with 409 slug_taken.\n\n%s",
			in.Slug, in.DomainID, earlier.Destination, duplicateSlugAdvice))
}

// addSlugHeld says that the slug a plan creates is held on the service by
// holder; problem says why the create could not take it over ("": it
// would, as the leftover of an interrupted run).
func addSlugHeld(diags *diag.Diagnostics, in client.CreateLinkInput, holder *client.Link, problem string) {
	// The slug is in the summary: Terraform shows one warning in full per
	// summary, and a reviewer must see every slug held.
	switch problem {
	case "":
		diags.AddAttributeWarning(path.Root("slug"), fmt.Sprintf("Slug %q held by a link this resource would take over", in.Slug),
			fmt.Sprintf("The slug %q is held on domain %s by link %s (%s), created %s, which is exactly what this resource declares and which no other resource of this run manages: most probably left by an interrupted run, or made outside Terraform (in the dashboard, by a script) with these very values. The apply takes it over (see adoption_window), unless something frees the slug before the create, and the apply then creates a new link: such as the destroy of a resource that managed the link (a resource renamed without a moved block has its old address destroyed, often first). Before applying, make sure it is no other configuration's or workspace's link: if one declares the same slug, both would manage the link, and destroying either would delete it, so give one of them another slug. If a resource of this configuration manages it (renamed without a moved block; this plan may check a new link before reading every resource, and reads none that -target leaves out), a moved block keeps the link as it is: once taken over, the old address's destroy would delete it.",
				in.Slug, in.DomainID, holder.ID, holder.ShortURL, holder.CreatedAt.Format(time.RFC3339)))
	case links.ManagedHere:
		diags.AddAttributeWarning(path.Root("slug"), fmt.Sprintf("Slug %q held by a link of this configuration", in.Slug),
			fmt.Sprintf("The slug %q is held on domain %s by link %s (%s, destination %q), which a resource of this configuration manages.\n\nIf it is this resource's own link, being replaced (tainted by an interrupted or failed apply, or -replace), nothing more is needed: the replacement destroys it first, which frees the slug; created first (create_before_destroy), the new object takes the link over, which its old object then leaves on the service.\n\nIf it is another resource's link, it would be taken over too, and two resources would manage one link, which destroying either deletes. %s If that resource was renamed or moved, a moved block keeps its link.",
				in.Slug, in.DomainID, holder.ID, holder.ShortURL, holder.Destination, duplicateSlugAdvice))
	default:
		diags.AddAttributeWarning(path.Root("slug"), fmt.Sprintf("Slug %q already taken", in.Slug),
			fmt.Sprintf("The slug %q is already used on domain %s by link %s (%s, destination %q): %s. Unless this apply deletes or replaces that link first, the create will fail with 409 slug_taken. If that link belongs to another resource of this configuration: if this plan destroys that resource (renamed without a moved block; this plan may check a new link before reading every resource), a moved block keeps the link; otherwise remove one of the two, since a slug is one link. If it is no resource's of this configuration, choose another slug, or import that link with the ID %s.",
				in.Slug, in.DomainID, holder.ID, holder.ShortURL, holder.Destination, problem, links.SlugImportID(in.DomainID, in.Slug)))
	}
}

// addServiceNotAsked reports a plan-time check that could not ask the
// service. A conclusion for the whole run (unreachable, wrong base_url,
// key refused) fails the plan, once: the apply could not succeed, and a
// plan in CI must not pass on it. Anything else (the service kept failing,
// an answer that cannot be read) only skips the check, with a warning.
func addServiceNotAsked(diags *diag.Diagnostics, explained *reports, err error) {
	if errors.Is(err, context.Canceled) {
		return // Terraform was interrupted: the plan stops, and Terraform says so
	}
	if client.IsVerdict(err) {
		if !verdictReportedElsewhere(explained, err) {
			addServiceError(diags, "check the new link against the service", err)
		}
		return
	}
	diags.AddWarning("New link not checked against the service",
		"The plan could not list the account's links to check that this new link can be created (for example that its slug is free): "+err.Error()+". The plan goes on without the check; the apply reports what the service answers.")
}

// addRetakenWarning says that a create whose answer left its outcome
// unknown found the link it most probably made, and what else that link
// may be.
func addRetakenWarning(diags *diag.Diagnostics, l *client.Link) {
	diags.AddWarning("Found link "+l.ID+" after the create's error",
		fmt.Sprintf("The service's answer to the create left its outcome unknown (an error or no answer), and link %s (%s, created %s), exactly what this resource declares, was then found on the account: most probably the one that create made, which this resource now manages rather than create a second. If another configuration on the same API key created an identical link at that moment, it may be that one instead, and the two states then hold one link, which destroying either deletes: run `terraform state rm` on this resource and plan again. The plan's warning \"Possible leftover of an interrupted run\" names each link this create may have made besides; import the one no other state holds into this resource (an import block with its ID), since an apply without an import creates a new link. A slug on the link rules this out.",
			l.ID, l.ShortURL, l.CreatedAt.Format(time.RFC3339)))
}

// addTwinLeftWarning names a link that another attempt of a create made
// as well as l, the one the resource manages, and that no state records.
func addTwinLeftWarning(diags *diag.Diagnostics, l, twin *client.Link) {
	diags.AddWarning("Link "+twin.ID+" duplicates this resource's link",
		fmt.Sprintf("The create was sent more than once, each answer leaving its outcome unknown, and the service made a link for more than one of them: this resource manages link %s (%s), and link %s (%s, created %s), exactly the same, is on the account in no state. "+
			"Delete it (in the dashboard, or with an import block and a destroy), unless another configuration on the same API key created an identical link at that moment. A slug on the link rules this out.",
			l.ID, l.ShortURL, twin.ID, twin.ShortURL, twin.CreatedAt.Format(time.RFC3339)))
}

// addAnsweredOtherwise reports a create or change the service carried out
// otherwise than planned (answeredOtherwise). The state records the link
// as the service keeps it, so that nothing is lost; a create's error leaves
// it tainted, and what the next plan does depends on what was kept.
func addAnsweredOtherwise(diags *diag.Diagnostics, id, action string, kept []valueKept) {
	lines, byNext := make([]string, len(kept)), map[nextPlan][]string{}
	for i, k := range kept {
		lines[i] = fmt.Sprintf("%s: planned %s, the service kept %s", k.name, k.planned, k.kept)
		byNext[k.next] = append(byNext[k.next], k.name)
	}
	var next string
	switch {
	case action == "create":
		next = "Terraform marks the new link tainted: the next apply would delete it and create it again, with the same result. To keep it, write the values as the service keeps them, then run `terraform untaint` on this resource."
	case len(byNext[replaces]) > 0:
		next = fmt.Sprintf("A change cannot set %s again: the next plan replaces the link, which deletes it with its click history. Write the values as the service keeps them before you apply again.", strings.Join(byNext[replaces], " or "))
	case len(byNext[changesAgain]) > 0:
		next = "Declare them as the service keeps them: otherwise the next plan shows the difference again, and its apply sends the same change."
	default:
		next = "The configuration leaves them to the service, so the next plan takes them as they are."
	}
	diags.AddError("Service kept link "+id+" otherwise than planned",
		fmt.Sprintf("The service answered the %s of link %s with values other than this resource planned:\n  - %s\nThe state records the link as the service answered, so it is not lost. The service changes such values its own way (a slug in lower case, for example). %s",
			action, id, strings.Join(lines, "\n  - "), next))
}

// addLeftoverAdopted warns that a create took over the link that held its
// slug. The summary names no cause: the detail gives the likely ones.
func addLeftoverAdopted(diags *diag.Diagnostics, l *client.Link) {
	// The link in the summary keeps Terraform from folding these warnings
	// into one, which would hide all but the first link.
	diags.AddAttributeWarning(path.Root("slug"), "Took over link "+l.ID+", which already held the slug",
		fmt.Sprintf("The slug %q was already held by link %s (%s, created %s), which has exactly this resource's domain, destination and expiry (and no UTM parameters or its own), was created within adoption_window and was not created or taken over by another resource of this apply: most probably a run that was interrupted or killed after sending its create, or this resource's own old link if it is being replaced with create_before_destroy (its old object then leaves the link on the service), or a resource of this configuration that this run left out (renamed without a moved block and applied with -target), or one made outside Terraform (in the dashboard, by a script) with these very values, which this takes over as an import would, or else another configuration that declares the same slug and was applied at the same time. This resource now manages that link, with its short URL and click history. If another address of this configuration names it too, run `terraform state rm` on that address (after a rename, the old one) before destroying anything. If it belongs to another configuration, run `terraform state rm` on this resource and choose another slug: both states hold the link, and destroying either deletes it.",
			l.Slug, l.ID, l.ShortURL, l.CreatedAt.Format(time.RFC3339)))
}

// addProbableLeftovers warns, as a new link without a slug is planned,
// about links that may be leftovers of an interrupted run.
func addProbableLeftovers(diags *diag.Diagnostics, found []client.Link, window time.Duration) {
	names := make([]string, len(found))
	for i, l := range found {
		names[i] = fmt.Sprintf("%s (%s, created %s)", l.ID, l.ShortURL, l.CreatedAt.Format(time.RFC3339))
	}
	diags.AddAttributeWarning(path.Root("destination"), "Possible leftover of an interrupted run: "+strings.Join(ids(found), ", "),
		fmt.Sprintf("The account already holds %d link(s) with this new link's domain, destination and expiry, created within the last %s and read by no resource of this plan so far: %s. Without a slug nothing tells such a link from another configuration's, so the apply will create a new one. If a run of this configuration was interrupted or killed after sending its create, that link is its leftover and no state records it: to keep it instead, import it into this resource (an import block with its ID) before applying, or delete it in the dashboard afterwards. If a resource of this configuration that this plan destroys manages it (renamed without a moved block), add a moved block instead: an import would put it in this resource's state while the old resource's destroy deletes it. If another resource (of this configuration or another) manages it, ignore this warning: a plan may check a new link before it has read every resource.",
			len(found), links.FormatDuration(window), strings.Join(names, "; ")))
}

func ids(found []client.Link) []string {
	out := make([]string, len(found))
	for i, l := range found {
		out[i] = l.ID
	}
	return out
}

// addUTMStepError reports that a new link did not get its UTM parameters.
// Create has already saved the link, so Terraform keeps it as tainted; the
// detail says how to keep the link instead of having it replaced.
func addUTMStepError(diags *diag.Diagnostics, l *client.Link, err error) {
	keep := fmt.Sprintf("Link %s (%s) was created and is recorded in the state as tainted, so the next apply replaces it: deletes it and creates another, which a quota or the rate limit may refuse. To keep it, run `terraform untaint` on this resource first: the next apply then sets the UTM parameters in place.", l.ID, l.ShortURL)
	if errors.Is(err, client.ErrNotSent) && errors.Is(err, context.Canceled) {
		diags.AddError("Link created without its UTM parameters", "Terraform was interrupted after the service created the link and before its UTM parameters were set. "+keep)
		return
	}
	if changedNoLink(err) {
		// Not "deleted outside Terraform", nor keep's untaint: the link may
		// be gone, and only the next refresh can say.
		diags.AddError("Link created without its UTM parameters",
			fmt.Sprintf("%v\n\nLink %s (%s) was created, but the service then found no such link to set its UTM parameters: it may have been deleted since, or the service may not know a new link at once. It is recorded in the state as tainted: run the apply again, and its refresh says what became of the link. If the link is still there, the plan replaces it; to keep it instead, run `terraform untaint` on this resource first, and the apply then sets the UTM parameters in place.", err, l.ID, l.ShortURL))
		return
	}
	var step diag.Diagnostics
	addServiceError(&step, "set the UTM parameters of the new link "+l.ID, err)
	diags.Append(withErrorsTelling(step, keep)...)
}

// attributeOf names the attribute an error is about, if any.
func attributeOf(e *client.APIError) string {
	switch {
	case isFilterRejection(e):
		return "destination"
	case errors.Is(e, client.ErrConflict) && e.Code == "slug_taken":
		return "slug"
	case errors.Is(e, client.ErrInvalidRequest):
		field, _, found := strings.Cut(e.Message, ":")
		if !found {
			return ""
		}
		return serviceFieldAttributes[strings.TrimSpace(field)]
	}
	return ""
}

func serviceErrorDetail(e *client.APIError) string {
	said := serviceSaid(e)
	switch {
	case errors.Is(e, client.ErrUnauthorized):
		return "The service rejected the API key (401 " + e.Said() + ")" + said + ". Check that api_key (or " + EnvAPIKey + ", which is used only where the provider block does not set api_key) holds a current key from the dashboard's API-key section, that the key was not revoked, and that the account's plan still includes the API."
	case errors.Is(e, client.ErrForbidden):
		return fmt.Sprintf("The API key lacks the scope this operation needs (403 %s): %s needs %s%s. Terraform needs a key with both links:read (every refresh and import lists the links) and links:write (create, change, delete).", e.Said(), e.Method+" "+e.Path, scopeFor(e.Method), said)
	case isFilterRejection(e):
		return "The service's fraud filter rejected the destination (422 " + e.Said() + ")" + said + ". Choose another destination; if it is legitimate, ask the service's support to review it."
	case errors.Is(e, client.ErrBlocked):
		return "The service refused the request (422 " + e.Said() + ")" + said + "."
	case errors.Is(e, client.ErrQuota):
		return "The monthly link quota of the account's plan is exhausted (402 " + e.Said() + ")" + said + ". The quota counts the links created in a month, so deleting links does not give any back: wait for the next month or upgrade the account's plan. This request changed nothing."
	case errors.Is(e, client.ErrConflict):
		return "The service refused the request as a conflict (409 " + e.Said() + ")" + said + ". If the slug is taken, choose another one, or import the link that holds it with the ID <domain_id>/<slug> of that link."
	case errors.Is(e, client.ErrInvalidRequest) && attributeOf(e) == "domain_id":
		return "The service refused the request (400 " + e.Said() + ")" + said + ". domain_id must be the ID of one of the account's domains: the dashboard's Domains section lists them (the API has no endpoint that does)."
	case errors.Is(e, client.ErrInvalidRequest):
		return "The service refused the request (400 " + e.Said() + ")" + said + "."
	// ErrNotFound is 404 or 410: the status is the one that came back. One
	// to a link's PATCH or DELETE never comes here: the resource tells a
	// link deleted outside Terraform from another account's (changedNoLink,
	// Delete).
	case errors.Is(e, client.ErrNotFound):
		return fmt.Sprintf("The service answered %d %s to %s %s%s: it found nothing there. Check base_url, and for a create that domain_id is one of the account's domains (the dashboard's Domains section).", e.StatusCode, e.Said(), e.Method, e.Path, said)
	}
	again := "run the command again."
	switch {
	case e.Attempts > 1:
		said = fmt.Sprintf(" (the last of %d attempts)%s", e.Attempts, said)
	case e.RetriesOff:
		said = " (one attempt: max_retries is 0)" + said
		again = "run the command again, or raise max_retries so that the provider retries such answers."
	}
	if e.StatusCode < 500 {
		// An answer the specification does not name (a redirect, 405, 413…):
		// sending the request again would meet it again.
		return fmt.Sprintf("The service answered %d to %s %s%s. The provider does not expect this answer and does not retry it.", e.StatusCode, e.Method, e.Path, said)
	}
	return fmt.Sprintf("The service answered %d%s. This may be temporary: %s", e.StatusCode, said, again)
}

// isFilterRejection reports a 422 of the fraud filter, whose code the
// service sent or the status implies, as opposed to another 422.
func isFilterRejection(e *client.APIError) bool {
	return errors.Is(e, client.ErrBlocked) && e.Code == "blocked_by_filter"
}

// waitPastDeadlineDetail explains a request the rate limit, or a service
// unavailable, would hold past its operation's timeout.
func waitPastDeadlineDetail(past *client.WaitPastDeadlineError, err error) string {
	if past.Status == http.StatusServiceUnavailable {
		return fmt.Sprintf("%v\n\nThe service is unavailable (503) and asked to wait %v before the next request, longer than this operation's timeout has left, so the provider stopped at once rather than wait for nothing. Run again once the service is back.%s", err, past.Wait.Round(time.Second), waitInstead(past.Method)) + mayHaveCreated(err)
	}
	held := fmt.Sprintf("The service's rate limit asked to wait %v before the next request", past.Wait.Round(time.Second))
	if past.Spent {
		held = fmt.Sprintf("The service's rate limit has nothing left of its window for about %v", past.Wait.Round(time.Second))
	}
	outcome := "that request was not carried out"
	if errors.Is(err, client.ErrUnanswered) {
		outcome = "that request was not sent again, but an earlier attempt may have been carried out: the next plan reads the link and shows what is left to do"
	}
	return fmt.Sprintf("%v\n\n%s, longer than this operation's timeout has left, so the provider stopped at once rather than wait for nothing; %s. %s", err, held, outcome, raiseTimeout(past.Method)) + mayHaveCreated(err)
}

// timeoutOf names the resource's timeout that bounds a write of method.
func timeoutOf(method string) (op string, ok bool) {
	op, ok = map[string]string{http.MethodPost: "create", http.MethodPatch: "update", http.MethodDelete: "delete"}[method]
	return op, ok
}

// waitInstead says which timeout to raise to wait out a write's 503 ("" for a read).
func waitInstead(method string) string {
	if op, ok := timeoutOf(method); ok {
		return " To wait for it instead, raise the resource's " + op + " timeout (timeouts." + op + ")."
	}
	return ""
}

// raiseTimeout says which timeout bounds a request of method, and what to do.
func raiseTimeout(method string) string {
	if op, ok := timeoutOf(method); ok {
		return "Raise the resource's " + op + " timeout (timeouts." + op + "), or run again once the wait has passed."
	}
	return fmt.Sprintf("A read of a refresh, plan or data source has no timeout of its own and waits at most %s; one made by a create, change or delete is bounded by that resource's timeout (timeouts.create, timeouts.update, timeouts.delete), which you may raise. Or run again once the wait has passed.", defaults.ReadTimeout)
}

func serviceSaid(e *client.APIError) string {
	switch {
	case e.Message != "":
		return fmt.Sprintf("; the service said: %q", e.Message)
	case e.PageText != "":
		return "; the answer was an HTML page (from the service or a proxy in front of it), which says: " + e.PageText
	case e.Body != "":
		return fmt.Sprintf("; the service sent a body that is not JSON, beginning %q", e.Body)
	}
	return ""
}

func scopeFor(method string) string {
	if method == "GET" {
		return "links:read"
	}
	return "links:write"
}

// configured reports whether the provider was configured, and says why not
// in a diagnostic: with base_url or api_key known only after apply, the
// provider cannot reach the service before then.
func configured(data *providerData, diags *diag.Diagnostics) bool {
	if data != nil {
		return true
	}
	diags.AddError("Provider not configured",
		"The provider's base_url or api_key is not known yet (it depends on a resource not yet applied), so the service cannot be read during this plan. "+
			"Apply what the provider configuration depends on first (terraform apply -target=<address>), or give base_url and api_key values known before apply.")
	return false
}

// addExportError reports a reading of the export that failed; explained
// says whether a run-wide conclusion (key refused, service unreachable) was
// reported in full elsewhere.
func addExportError(diags *diag.Diagnostics, explained *reports, linkID string, err error) {
	const summary = "Could not read the analytics export"
	var tooMany *tooManyClicksError
	switch {
	case errors.As(err, &tooMany):
		diags.AddAttributeError(path.Root("max_clicks"), "Too many clicks",
			fmt.Sprintf("%s. Every click shortlink_analytics_export keeps in csv or rows is held in the plan and the state, which a busy account outgrows. Narrow the range with since and until, or to one link with link_id, or raise max_clicks. For counts (per link, per day, per referrer) use shortlink_clicks, whose state does not grow with the clicks; for row_count alone set include_csv and include_rows to false.", tooMany))
	case linkID != "" && client.IsNotFound(err):
		diags.AddAttributeError(path.Root("link_id"), summary,
			fmt.Sprintf("No link with ID %s exists on this account (%v). Check link_id; the account's links are listed by data.shortlink_links, and a link managed here is referenced as shortlink_link.<name>.id. If the link was deleted, change or remove link_id: every plan reads this data source, a destroy's plan too, and terraform destroy -refresh=false destroys without reading it.", linkID, err))
	case errors.Is(err, analytics.ErrMalformed):
		request := "GET /api/analytics/export"
		if linkID != "" {
			request += "?linkId=" + url.QueryEscape(linkID)
		}
		diags.AddError(summary, err.Error()+"\n\nThe service's answer to "+request+" cannot be read as CSV with a header row and one record per click. "+
			"Read that line of the export with the same key ("+request+", the header Authorization: Bearer <key>) to see what the service sent: a proxy's page or an error body is for the service or the network in between to mend; CSV that this provider cannot read is for its developers, to whom report the line.")
	default:
		addOperationError(diags, explained, "export the analytics", err)
	}
}

// addReplacementWarning warns that changing the attribute at p replaces
// the link id (shortURL): what is lost, what becomes of the short URL, and
// how to keep the link: give p what the link holds (held; "" for none),
// which is the way whether the configuration changed or the link did
// (a dashboard edit shows here as a change the user never made).
func addReplacementWarning(diags *diag.Diagnostics, p path.Path, id, shortURL, newShortURL, held string) {
	keep := fmt.Sprintf("make %s what the link holds: %q", p, held)
	if held == "" {
		keep = fmt.Sprintf("remove %s: the link has none", p)
	}
	diags.AddAttributeWarning(p, "Replacing the link loses its click history",
		fmt.Sprintf("Changing %s replaces link %s (%s): the service takes it only when a link is created, so the link is deleted and a new one made. The new link starts with no click history (the old link's clicks stay in the account-wide export), with a QR code of its own %s. To keep the link, %s.",
			p, id, shortURL, newShortURL, keep))
}

// addUTMConflict reports, on the utm attribute (whose line Terraform can
// show, unlike a key's within it), a parameter the destination's query
// sets to another value.
func addUTMConflict(diags *diag.Diagnostics, c links.UTMConflict) {
	diags.AddAttributeError(path.Root("utm"), "UTM parameter set twice",
		fmt.Sprintf("utm.%s is %q, but the destination's query sets utm_%s=%s. How the service combines the two is not shown: a visitor could be counted under either, or both. Set the parameter in one place: remove utm_%s from the destination, or utm.%s.",
			c.Attribute, c.InUTM, c.Attribute, c.InQuery, c.Attribute, c.Attribute))
}

// defaultTimeouts are shortlink_link's default timeouts, by the name the
// timeouts attribute gives each.
var defaultTimeouts = map[string]time.Duration{
	"create": defaults.CreateTimeout, "update": defaults.UpdateTimeout, "delete": defaults.DeleteTimeout,
}

// addTimeoutNotPositive reports a timeout of zero or less on timeouts,
// naming op in its text: Terraform shows the line of an attribute, but not
// of a key within an object's value, for which it shows the resource's
// first line (as validate.UTMValue does for utm).
func addTimeoutNotPositive(diags *diag.Diagnostics, op, value string) {
	diags.AddAttributeError(path.Root("timeouts"), "Invalid timeouts."+op,
		fmt.Sprintf("timeouts.%s is %q: the %s would fail before its first request. Remove it for the default (%s), or give the longest the %s may take, such as \"30m\".", op, value, op, defaultTimeouts[op], op))
}

// addTimeoutsSetNone warns that timeouts sets none of create, update and
// delete, most likely for a misspelt name, which Terraform drops silently.
func addTimeoutsSetNone(diags *diag.Diagnostics) {
	diags.AddAttributeWarning(path.Root("timeouts"), "Empty timeouts",
		fmt.Sprintf("timeouts sets none of create, update and delete, so each keeps its default (%s, %s and %s). Terraform drops a name spelt otherwise without an error before the provider sees it: check the spelling, or remove timeouts.",
			defaultTimeouts["create"], defaultTimeouts["update"], defaultTimeouts["delete"]))
}

// addPastExpiry warns that a link about to be created has expired already.
func addPastExpiry(diags *diag.Diagnostics, expiresAt string) {
	diags.AddAttributeWarning(path.Root("expires_at"), "Expiry in the past",
		fmt.Sprintf("expires_at %s has already passed: the link will be created expired, and every visit will answer 410 Gone. Set a future time, or remove expires_at.", expiresAt))
}

// addNoSuchLink reports a lookup that found no link, on the attribute
// that named it.
func addNoSuchLink(diags *diag.Diagnostics, at path.Path, detail string) {
	diags.AddAttributeError(at, "No such link", detail)
}

// addNoLinkWithID reports a lookup by ID that no link of the account
// answers, on the attribute id.
func addNoLinkWithID(diags *diag.Diagnostics, id string) {
	addNoSuchLink(diags, path.Root("id"), fmt.Sprintf("No link with ID %q exists on this account; list the account's links with data.shortlink_links.", id))
}

// importSummary is the summary of every error of an import that names no
// link it can find.
const importSummary = "Could not import the link"

// exampleUUID shows, in an import's errors, what a link or domain ID
// looks like.
const exampleUUID = "2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60"

// addImportNamesNothing reports an import that gives neither an ID nor an
// identity.
func addImportNamesNothing(diags *diag.Diagnostics) {
	diags.AddError(importSummary, "The import names neither an ID nor an identity. Write `id = \"<link ID>\"` or `identity = { id = \"<link ID>\" }` in the import block.")
}

// addIdentityNotALinkID reports an import whose identity's id (id, as
// Terraform spells a value) is no link ID: the other forms of an import
// ID are not identities.
func addIdentityNotALinkID(diags *diag.Diagnostics, id string) {
	diags.AddError(importSummary, fmt.Sprintf("The identity's id %s is not a link ID. It must be the UUID of a link, such as %s (the resource's id attribute, or, on Terraform 1.14 and later, a result of `terraform query`). To import by domain and slug or by short URL, write `id = \"<domain_id>/<slug>\"` or the short URL instead of identity.", id, exampleUUID))
}

// addNotAnImportID reports an import ID of none of the forms an import
// takes.
func addNotAnImportID(diags *diag.Diagnostics, importID string) {
	diags.AddError(importSummary, fmt.Sprintf("The import ID %q is none of a link ID (a UUID such as %s), <domain_id>/<slug> (such as %s/spring) or a short URL (such as https://go.example.com/spring).", importID, exampleUUID, exampleUUID))
}

// addListCutByLimit warns that a list block's limit (Terraform's default
// is 100) leaves out links its filters match: an adoption from it would
// leave them out too, with nothing else to say so.
func addListCutByLimit(diags *diag.Diagnostics, matched, limit int64) {
	diags.AddWarning("More links match than the list's limit",
		fmt.Sprintf("%d links match the filters; the list block's limit lists the first %d, and -generate-config-out writes blocks for those only. Raise limit in the list block (Terraform's default is 100), or narrow the filters and list the rest with another list block.", matched, limit))
}

// noLinkOnDomain warns that a domain_id matched nothing at all: most often
// an ID copied wrong, which the service cannot tell from an empty domain.
func noLinkOnDomain(domainID string, total int) diag.Diagnostics {
	var diags diag.Diagnostics
	found := fmt.Sprintf("None of the account's %d links is on domain %s.", total, domainID)
	if total == 0 {
		found = fmt.Sprintf("The account has no links, so none is on domain %s.", domainID)
	}
	diags.AddAttributeWarning(path.Root("domain_id"), "No link on this domain",
		found+" If that is unexpected, check domain_id against the domain cards of the dashboard's Domains section (the service cannot list domains to an API key, so the provider cannot tell an unknown domain from an empty one).")
	return diags
}

// addTooManyLinks reports a shortlink_links that matched more links than
// its max_links.
func addTooManyLinks(diags *diag.Diagnostics, matched, maxLinks int64) {
	diags.AddAttributeError(path.Root("max_links"), "Too many links",
		fmt.Sprintf("%d links match, more than max_links (%d). Every link shortlink_links returns is held in the plan and the state, which a large account outgrows. Narrow it with domain_id, slug_prefix or destination_host, or raise max_links. To find links to adopt, `terraform query` lists them without holding them in the state (Terraform 1.14 and later).", matched, maxLinks))
}

// addUnknownFilter reports a filter of terraform query known only later.
func addUnknownFilter(diags *diag.Diagnostics, name string) {
	diags.AddAttributeError(path.Root(name), "Unknown "+name, name+" must be known when the query runs; use a literal or a variable.")
}

// addInvalidFilter reports a filter value that can match nothing; problem
// says why.
func addInvalidFilter(diags *diag.Diagnostics, name, problem string) {
	diags.AddAttributeError(path.Root(name), "Invalid "+name, name+" "+problem)
}

// addNotRefreshedUnconfigured warns that a refresh kept the state because
// the provider's settings are known only at apply.
func addNotRefreshedUnconfigured(diags *diag.Diagnostics) {
	diags.AddWarning("Link not refreshed",
		"The provider's base_url or api_key is not known until apply, so this plan uses the link as last recorded in the state.")
}

// addLinkGone warns that a refresh found the link deleted outside
// Terraform, and drops it from the state. A refresh does not know whether
// the configuration still declares the link, so the warning says what
// follows in either case, and what a link made anew loses.
func addLinkGone(diags *diag.Diagnostics, id, shortURL string) {
	diags.AddWarning("Link no longer exists",
		fmt.Sprintf("The link %s (%s) is no longer on the service; it was probably deleted outside Terraform. It is removed from the state. "+
			recreatedIfDeclared, id, shortURL))
}

// recreatedIfDeclared is what follows a link dropped from the state by a
// refresh, which does not know whether the configuration still declares
// it, nor whether it is a -refresh-only one: what a link made anew loses.
const recreatedIfDeclared = "If the configuration still declares it, the plan creates a new link (after a -refresh-only plan or apply, the next plan does): a new ID, no click history, and a new short URL unless slug is set."

// addLinkGoneAfterDelete tells of a link dropped from the state because
// a delete whose outcome its run did not learn (interrupted, or answered
// with a server error) was carried out.
func addLinkGoneAfterDelete(diags *diag.Diagnostics, id, shortURL string) {
	diags.AddWarning("Link deleted by an earlier run",
		fmt.Sprintf("The link %s (%s) is no longer on the service: an earlier run sent its delete without learning the outcome (the run was interrupted, or the service answered with a server error), and the service carried the delete out. It is removed from the state. "+
			recreatedIfDeclared, id, shortURL))
}

// keyOrBaseURL names the two settings that choose the account a provider
// reads, with where each may come from: the suspects when an account
// lists none of a domain's links.
const keyOrBaseURL = "the API key (api_key, or " + EnvAPIKey + " where the provider block does not set api_key) or base_url"

// addDomainUnlisted fails the refresh of a link that the account's list
// lacks together with every other link on its domain: the account listed
// may be another one (a key or base_url of another account), which removing
// the link would not survive. inFull: this link's error explains it for
// the run; the others point to explainer's ("<id> (<short URL>)").
func addDomainUnlisted(diags *diag.Diagnostics, inFull bool, explainer, id, shortURL, domainID string) {
	const wayOut = "If the links on that domain were deleted, outside Terraform or by a destroy or a replacement that was killed before it could record its deletes, remove each from the state (`terraform state rm` with the address above); the next apply creates it anew, with a new ID and no click history. To destroy the configuration instead, `terraform destroy -refresh=false` does not read them, but only with the right key and base_url: another account's answers every delete with 404, and the links would leave the state while they stay on their account."
	if !inFull {
		diags.AddError("No link on the link's domain", fmt.Sprintf("The link %s (%s) is missing for the same reason as link %s, whose error explains it in full: the account listed has no link on domain %s. %s", id, shortURL, explainer, domainID, wayOut))
		return
	}
	diags.AddError("No link on the link's domain",
		fmt.Sprintf("The link %s (%s) is not in the account's list, and neither is any other link on its domain %s. Either "+keyOrBaseURL+" is another account's, or every link on that domain was deleted: outside Terraform, or by a destroy or a replacement that was killed before it could record its deletes. "+
			"The refresh keeps the link in the state and stops the plan: read as deleted, a run with another account's key would drop every link from the state, and the next run with the right key would create them again beside the originals. If the key or base_url is wrong, correct it. "+
			"If the resource was given another account's provider on purpose (a changed provider argument, a moved block between modules of different providers), to move the link: a link cannot change accounts, so undo that, and declare the link anew under the new provider instead, removing the old resource, so that the plan creates the new link and deletes the old one. %s", id, shortURL, domainID, wayOut))
}

// addDeleteNotFoundOffDomain warns that a delete answered 404 by an
// account that lists no link on the link's domain dropped the link from
// the state: that account may be another one, which still holds the link.
func addDeleteNotFoundOffDomain(diags *diag.Diagnostics, id, shortURL, domainID string) {
	diags.AddWarning("Link removed from the state only",
		fmt.Sprintf("The service answered 404 to the delete of the link %s (%s), and the account listed has no link on its domain %s either, so the link is removed from the state. "+
			"If every link on that domain was deleted already (outside Terraform, or by a destroy or a replacement that was killed), nothing is left to do. "+
			"But if "+keyOrBaseURL+" of this resource's provider is another account's (for example after the resource's provider was changed to another alias), the link is still on its own account and no state records it: import it again with the right provider (`terraform import` with the address of the resource that declared %s, and %s; Terraform names no address beside a destroy's warning), or delete it on that account.", id, shortURL, domainID, shortURL, id))
}

// addNotRefreshedListingsShifted warns that every listing missed the link
// while links were being deleted, so that none can say it is gone: the
// state keeps it as recorded.
func addNotRefreshedListingsShifted(diags *diag.Diagnostics, id, shortURL string) {
	diags.AddWarning("Link not refreshed",
		fmt.Sprintf("The link %s (%s) was missing from %d listings of the account, but %s: "+
			"it may still be there. The plan uses it as last recorded in the state. If it was deleted, a run once those deletions are over removes it from the state.", id, shortURL, snapshot.MaxLooks, snapshot.ListingsShifted))
}

// addListingsShifted warns that what a list returns may lack links: every
// listing saw links deleted while it was taken.
func addListingsShifted(diags *diag.Diagnostics) {
	diags.AddWarning("Links may be missing",
		fmt.Sprintf("Of %d listings, none settled: %s. This holds every link those listings found: a link that was there throughout may still be missing from it, and a link deleted while they were taken may be in it. "+
			"Run again once those deletions are over.", snapshot.MaxLooks, snapshot.ListingsShifted))
}

// addDeletedBeforeChange reports a change of destination whose link was
// deleted outside Terraform since the refresh.
func addDeletedBeforeChange(diags *diag.Diagnostics, id string) {
	diags.AddError("Could not change the link's destination",
		fmt.Sprintf("The link %s was deleted outside Terraform. Run `terraform apply` again: the refresh removes it from the state and the plan shows a new link to create (should that plan warn that the slug is taken or held, another link holds it now, and the warning says what the apply will do).", id))
}

// addChangeOffDomain reports a change answered 404 by an account that
// lists no link on the link's domain: most likely another account's key
// or base_url, not a link deleted outside Terraform.
func addChangeOffDomain(diags *diag.Diagnostics, id, shortURL, domainID string) {
	diags.AddError("Could not change the link's destination",
		fmt.Sprintf("The service answered 404 to the change of the link %s (%s), and the account listed has no link on its domain %s either. Either "+keyOrBaseURL+" of this resource's provider is another account's (for example after the resource's provider was changed to another alias), or every link on that domain was deleted. Nothing was changed and the state keeps the link. "+
			"If the key, base_url or provider is wrong, correct it and run again. Otherwise run `terraform plan`: its refresh says what to do with links deleted outside Terraform.", id, shortURL, domainID))
}

// addMissingSetting reports a required setting given neither in the
// provider block nor in its environment variable, on the provider block
// (addInvalidSetting says why).
func addMissingSetting(diags *diag.Diagnostics, name, env, what string) {
	diags.AddError("Missing "+name,
		"Set "+name+" in the provider block or the "+env+" environment variable to "+what+".")
}

// addEmptySettingFromEnv reports a setting written as an empty string
// and taken from its environment variable (warnIfEmptyTakenFromEnv), on
// the provider block (addInvalidSetting says why).
func addEmptySettingFromEnv(diags *diag.Diagnostics, name, env, what string) {
	diags.AddWarning(name+" is empty: "+env+" is used",
		"This provider block sets "+name+" to an empty string (a variable left at a default of \"\", for instance), which counts as not set, so "+what+" comes from the "+env+" environment variable. "+
			"Where provider blocks with aliases serve several accounts, that may be another account's, and links would be read and written there. "+
			"Give "+name+" a value, or leave it null (a variable's default = null) to take it from "+env+" on purpose.")
}

// addKeyInProtocolDumps reports an api_key written to protocol dumps
// (warnIfKeyInProtocolDumps), on the provider block: on api_key,
// Terraform would print the key's line beside it.
func addKeyInProtocolDumps(diags *diag.Diagnostics, env, dir, keyEnv string) {
	diags.AddWarning("API key written to protocol dumps",
		env+" is set, so every message Terraform sends this provider is written to files in "+fmt.Sprintf("%q", dir)+", this provider block's settings among them, api_key in clear: "+
			"those files are outside what the provider redacts. Delete the files once you are done with them, and while "+env+" is set give the key in the "+keyEnv+" environment variable rather than in the provider block: "+
			"the provider reads that variable itself, and no message carries it.")
}

// reportDefect is what the user can do about a defect of the provider,
// which no configuration causes or mends.
const reportDefect = "Please report this issue to the provider developers."

// addUnexpectedProviderData reports provider data of another type than
// Configure hands over: a defect of the provider, never of the user.
func addUnexpectedProviderData(diags interface{ AddError(string, string) }, data any) {
	diags.AddError("Unexpected provider data", fmt.Sprintf("Expected *providerData, got %T. %s", data, reportDefect))
}

// addClientRefused reports a client that refused settings Configure had
// checked already: a defect of the provider, never of the user.
func addClientRefused(diags *diag.Diagnostics, err error) {
	diags.AddError("Could not configure the provider", err.Error()+". "+reportDefect)
}
