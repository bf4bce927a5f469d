package provider

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/shortlink/terraform-provider-shortlink/internal/analytics"
	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/defaults"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
	"github.com/shortlink/terraform-provider-shortlink/internal/links"
	"github.com/shortlink/terraform-provider-shortlink/internal/snapshot"
)

// Each error of the service surfaces as a diagnostic that says what happened
// and what to do.

// A placeholder key of a letter or a word is refused in words of its own:
// the key is kept out of messages where it stands alone, not cut out of
// every word that holds its letters.
func TestAccLinkErrors_unknownKey(t *testing.T) {
	for _, key := range []string{"sl_test_not_a_key", "k"} {
		t.Run(key, func(t *testing.T) {
			e := newTestEnv(t)
			expectFailure(t, e.providerBlock(key)+linkBody(e.fx.DomainID, "https://example.com/a"),
				"The service rejected the API key", "401 invalid_api_key", "Check that api_key", "used only where the provider block does not set api_key", "plan still includes the API")
		})
	}
}

func TestAccLinkErrors_planWithoutAPI(t *testing.T) {
	e := newTestEnv(t)
	if err := e.srv.SetAPIEnabled(e.fx.AccountID, false); err != nil {
		t.Fatal(err)
	}
	expectFailure(t, e.config(linkBody(e.fx.DomainID, "https://example.com/a")), "401 invalid_api_key", "plan still includes the API")
}

func TestAccLinkErrors_readOnlyKeyCannotCreate(t *testing.T) {
	e := newTestEnv(t)
	expectFailure(t, e.providerBlock(e.fx.ReadKey)+linkBody(e.fx.DomainID, "https://example.com/a"), "403 insufficient_scope", "needs links:write", "both links:read")
}

func TestAccLinkErrors_writeOnlyKeyCannotRefresh(t *testing.T) {
	e := newTestEnv(t)
	body := linkBody(e.fx.DomainID, "https://example.com/a")
	e.testLink(t, []resource.TestStep{
		{Config: e.config(body)},
		{
			Config:      e.providerBlock(e.fx.WriteKey) + body,
			ExpectError: expectErr("403 insufficient_scope", "GET /api/links needs links:read", "every refresh"),
		},
		{Config: e.config(body)}, // back to a full key, so destroy can refresh
	})
}

// A key without links:read cannot plan a new link either: the plan lists
// the links (a slug held, what an interrupted run left), so it fails
// before anything is created.
func TestAccLinkErrors_writeOnlyKeyCannotPlanANewLink(t *testing.T) {
	e := newTestEnv(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			Config:      e.providerBlock(e.fx.WriteKey) + linkBody(e.fx.DomainID, "https://example.com/a"),
			ExpectError: expectErr("403 insufficient_scope", "GET /api/links needs links:read"),
		}},
	})
	if n := len(e.srv.Links(e.fx.AccountID)); n != 0 {
		t.Errorf("the failed plan left %d links on the account, want none", n)
	}
}

func TestAccLinkErrors_blockedDestination(t *testing.T) {
	e := newTestEnv(t)
	e.testLink(t, []resource.TestStep{
		{
			Config:      e.config(linkBody(e.fx.DomainID, "https://blocked.example/win")),
			ExpectError: expectErr("with shortlink_link.test,", "destination", "422 blocked_by_filter", "Choose another destination"),
		},
		{Config: e.config(linkBody(e.fx.DomainID, "https://example.com/fine"))},
		{
			Config:      e.config(linkBody(e.fx.DomainID, "https://www.blocked.example/")),
			ExpectError: expectErr("fraud filter rejected the destination"),
		},
		{Config: e.config(linkBody(e.fx.DomainID, "https://example.com/fine"))},
	})
}

func TestAccLinkErrors_quotaExhausted(t *testing.T) {
	e := newTestEnv(t)
	if err := e.srv.SetMonthlyQuota(e.fx.AccountID, 1); err != nil {
		t.Fatal(err)
	}
	e.testLink(t, []resource.TestStep{{
		Config: e.config(fmt.Sprintf(`
resource "shortlink_link" "test" {
  count       = 2
  domain_id   = %q
  destination = "https://example.com/${count.index}"
}
`, e.fx.DomainID)),
		// The account's plan, never "the plan", a word Terraform's output
		// gives to the plan it makes.
		ExpectError: expectErr("The monthly link quota of the account's plan", "402 link_quota", "deleting links does not give any back: wait for the next month or upgrade the account's plan"),
	}})
}

// TestAccLinkErrors_quotaRefusesAReplacement: a replacement without
// create_before_destroy deletes the old link, then the quota refuses the
// new one. The error says "this request changed nothing", which is true of
// the create but not of the apply: it must also name the link the apply
// deleted, say that reverting cannot bring it back while the quota refuses
// creates, and point to create_before_destroy.
func TestAccLinkErrors_quotaRefusesAReplacement(t *testing.T) {
	e := newTestEnv(t)
	config := func(slug string) string {
		return e.config(fmt.Sprintf(`
resource "shortlink_link" "test" {
  domain_id   = %q
  destination = "https://example.com/replaced"
  slug        = %q
}
`, e.fx.DomainID, slug))
	}
	e.testLink(t, []resource.TestStep{
		{
			Config: config("before"),
			Check: func(*terraform.State) error {
				return e.srv.SetMonthlyQuota(e.fx.AccountID, 1) // spent by that create
			},
		},
		{
			Config: config("after"),
			ExpectError: expectErr("402 link_quota", "This request changed nothing", "This apply deleted link", "on this domain before this create",
				"reverting the configuration needs a create too", "create_before_destroy = true"),
		},
	})
}

func TestAccLinkErrors_slugTaken(t *testing.T) {
	e := newTestEnv(t)
	e.seedLinks(t, e.fx.DomainID, "taken", 1)
	expectFailure(t, e.config(fmt.Sprintf(`
resource "shortlink_link" "test" {
  domain_id   = %q
  destination = "https://example.com/a"
  slug        = "taken-0"
}
`, e.fx.DomainID)), "with shortlink_link.test,", "slug", "409 slug_taken", "destination", "differs", "import it", e.fx.DomainID+"/taken-0")
}

// TestAccLinkErrors_slugHeldByAnotherResource: two resources of one
// configuration declare the same link; the plan refuses the second, with
// advice that fits (neither import nor create_before_destroy).
func TestAccLinkErrors_slugHeldByAnotherResource(t *testing.T) {
	e := newTestEnv(t)
	twin := func(name string) string {
		return fmt.Sprintf(`
resource "shortlink_link" %q {
  domain_id   = %q
  destination = "https://example.com/twin"
  slug        = "twin"
}
`, name, e.fx.DomainID)
	}
	e.testLink(t, []resource.TestStep{{
		Config:      e.config(twin("a") + twin("b")),
		ExpectError: expectErr("Slug declared twice", `also creates a link with the slug "twin"`, "Remove the duplicate"),
	}})
}

// The 409 of a slug that another resource of this run created reads as a
// duplicate, without the advice (import, create_before_destroy) that fits
// a link of another configuration or a replacement.
func TestSlugTakenDetail(t *testing.T) {
	holder := &client.Link{ID: "l1", ShortURL: "https://go.example/spring", Destination: "https://example.com/a", CreatedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	for name, tc := range map[string]struct {
		err          *links.SlugTakenError
		want, absent []string
	}{
		"managed here": {
			err:    &links.SlugTakenError{DomainID: "d", Slug: "spring", Holder: holder, Reason: links.ManagedHere},
			want:   []string{"another resource of this configuration created or manages", "Remove the duplicate"},
			absent: []string{"import", "create_before_destroy"},
		},
		"another configuration's": {
			err:    &links.SlugTakenError{DomainID: "d", Slug: "spring", Holder: holder, Reason: "its destination differs"},
			want:   []string{"not taken over: its destination differs", "create_before_destroy", "import <resource address> d/spring"},
			absent: []string{"renamed", "Otherwise"},
		},
		"what the resource declares, but old": {
			err:  &links.SlugTakenError{DomainID: "d", Slug: "spring", Holder: holder, Reason: "it was created at 2026-11-01T00:00:00Z, longer ago than adoption_window", Alike: true},
			want: []string{"exactly what this resource declares", "renamed", "run the apply again once this one has ended", "import <resource address> d/spring"},
		},
		"not listed": {
			err:    &links.SlugTakenError{DomainID: "d", Slug: "spring"},
			want:   []string{"Choose another slug", "import"},
			absent: []string{"create_before_destroy"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := slugTakenDetail(tc.err)
			// What to do in the likeliest case comes before the replacement's.
			if cbd := strings.Index(got, "create_before_destroy"); cbd >= 0 && cbd < strings.Index(got, "nother slug, or") {
				t.Errorf("create_before_destroy comes before what to do:\n%s", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(got, a) {
					t.Errorf("says %q:\n%s", a, got)
				}
			}
		})
	}
}

// The plan's warnings of a slug or a destination already on the service
// name every likely cause with its own remedy: a rename without a moved
// block (where an import would lose the link), another configuration or
// workspace, a duplicate.
func TestSlugOrLeftoverWarningsNameTheirCauses(t *testing.T) {
	in := client.CreateLinkInput{DomainID: "d", Slug: "spring", Destination: "https://example.com/a"}
	holder := &client.Link{ID: "l1", ShortURL: "https://go.example/spring", Destination: "https://example.com/a", CreatedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	for name, tc := range map[string]struct {
		add  func(*diag.Diagnostics)
		want []string
	}{
		"would take over": {func(d *diag.Diagnostics) { addSlugHeld(d, in, holder, "") },
			[]string{"interrupted run", "workspace", "destroying either would delete it", "moved block keeps the link"}},
		"of this configuration": {func(d *diag.Diagnostics) { addSlugHeld(d, in, holder, links.ManagedHere) },
			[]string{"Remove the duplicate", "a moved block keeps its link"}},
		"taken": {func(d *diag.Diagnostics) { addSlugHeld(d, in, holder, "its destination differs") },
			[]string{"a moved block keeps the link", "remove one of the two", "import that link with the ID d/spring"}},
		"probable leftover": {func(d *diag.Diagnostics) { addProbableLeftovers(d, []client.Link{*holder}, time.Hour) },
			[]string{"import it into this resource", "add a moved block instead: an import would put it in this resource's state while the old resource's destroy deletes it"}},
		"managed twice": {func(d *diag.Diagnostics) { addManagedTwice(d, holder.ID, holder.ShortURL) },
			[]string{"a second resource an import brought the link into", "the old address of a resource renamed without a moved block", "after a rename, the old one; after an import, the one imported"}},
	} {
		t.Run(name, func(t *testing.T) {
			var diags diag.Diagnostics
			tc.add(&diags)
			if len(diags) != 1 {
				t.Fatalf("got %d diagnostics, want one", len(diags))
			}
			for _, w := range tc.want {
				if !strings.Contains(diags[0].Detail(), w) {
					t.Errorf("lacks %q:\n%s", w, diags[0].Detail())
				}
			}
		})
	}
}

// A time without its zone or its time of day is told what to write.
func TestAddInvalidInstant(t *testing.T) {
	for value, want := range map[string]string{
		"2027-01-05T23:59:59":       "It has no time zone",
		"2027-01-05":                "It has no time of day",
		"2027-01-05 23:59:59Z":      "A space joins the date and the time, as spreadsheets write them: join them by T. Write",
		"2027-01-05 23:59:59":       "join them by T, and add the time zone (Z for UTC).",
		"2027-01-05 23:59":          "join them by T, and add the time zone",
		"next friday":               "not an RFC 3339 time. Write",
		"2027-13-05T23:59:59Z":      "not an RFC 3339 time. Its month is out of range. Write",
		"2027-01-05T23:59:59+0100":  "not an RFC 3339 time. Write",
		"2027-01-05T23:59:59+24:00": "not an RFC 3339 time. Its time zone offset is out of range. Write",
		"":                          "expires_at is empty, which is not a time. To set none, leave it out or set it to null",
	} {
		var diags diag.Diagnostics
		addInvalidInstant(&diags, path.Root("expires_at"), value)
		if len(diags) != 1 || !strings.Contains(diags[0].Detail(), want) || !strings.Contains(diags[0].Detail(), "2027-01-05T23:59:59Z") {
			t.Errorf("%q: got %v, want one error saying %q and showing a valid time", value, diags, want)
		}
	}
}

// A link whose domain the account lists no link on is explained in full
// once, the others point to it; both say how to leave the state behind.
func TestAddDomainUnlisted(t *testing.T) {
	for explainer, want := range map[string]string{
		"l-1 (https://s.test/a)": "a link cannot change accounts, so undo that, and declare the link anew under the new provider",
		"l-0 (https://s.test/b)": "for the same reason as link l-0 (https://s.test/b), whose error explains it in full",
	} {
		var diags diag.Diagnostics
		addDomainUnlisted(&diags, explainer == "l-1 (https://s.test/a)", explainer, "l-1", "https://s.test/a", "d-1")
		if detail := diags[0].Detail(); !diags.HasError() || !strings.Contains(detail, want) || !strings.Contains(detail, "terraform state rm") || !strings.Contains(detail, "terraform destroy -refresh=false") || !strings.Contains(detail, "only with the right key and base_url") {
			t.Errorf("explained by %s: %v, want an error saying %q and the ways out", explainer, diags, want)
		}
	}
}

// The warning of a long wait says how long, how often a 429 told the
// provider to wait, how much of it went waiting for answers (slow ones
// hold requests back whatever the window allows), and what a lower
// -parallelism does and does not do.
func TestAddRateLimitWait(t *testing.T) {
	for _, tc := range []struct {
		refused    int
		forAnswers time.Duration
		told       bool
	}{{0, 0, false}, {3, 0, true}, {0, 7 * time.Second, false}} {
		var diags diag.Diagnostics
		addRateLimitWait(&diags, client.WaitSum{Total: 83400 * time.Millisecond, ForAnswers: tc.forAnswers, Refused: tc.refused})
		if len(diags) != 1 || diags[0].Summary() != "Waited for the rate limit" || !strings.Contains(diags[0].Detail(), "waited 1m23s in all") {
			t.Fatalf("got %v, want one warning of a wait of 1m23s", diags)
		}
		detail := diags[0].Detail()
		if got := strings.Contains(detail, "3 time(s) told to by a 429 answer"); got != tc.told {
			t.Errorf("refused %d: the detail names the 429s: %v, want %v", tc.refused, got, tc.told)
		}
		if got := strings.Contains(detail, "Of that, 7s went waiting for the answers to this run's requests already sent"); got != (tc.forAnswers > 0) {
			t.Errorf("waited %s for answers: the detail says so: %v", tc.forAnswers, got)
		}
		// Refused, it does not claim to have held requests back rather than have them refused.
		if got := strings.Contains(detail, "rather than have them refused"); got == tc.told || tc.told && !strings.Contains(detail, "a 429 comes where they did not show it: another run or integration using the key spent the window first") {
			t.Errorf("refused %d: the detail claims no request was refused: %v: %s", tc.refused, got, detail)
		}
		if !strings.Contains(detail, "does not make it faster, but each link then waits behind fewer others") {
			t.Errorf("the detail does not say what a lower -parallelism does: %s", detail)
		}
		if !strings.Contains(detail, "Nothing failed.") {
			t.Errorf("the detail of a wait beside no error does not say that nothing failed: %s", detail)
		}
	}
	// Beside an error the wait is not what failed, and "nothing failed" would be false.
	var diags diag.Diagnostics
	diags.AddError("Could not create the link", "timeout")
	addRateLimitWait(&diags, client.WaitSum{Total: time.Minute})
	if detail := diags[1].Detail(); strings.Contains(detail, "Nothing failed") || !strings.Contains(detail, "the error says what did") {
		t.Errorf("beside an error: %s", detail)
	}
}

func TestAccLinkErrors_domainOfAnotherAccount(t *testing.T) {
	e := newTestEnv(t)
	other, err := e.srv.SeedFixture("other", "other.example.test")
	if err != nil {
		t.Fatal(err)
	}
	expectFailure(t, e.config(linkBody(other.DomainID, "https://example.com/a")), "with shortlink_link.test,", "domain_id", "400 invalid_request", "no such domain on this account", "domain_id must be the ID of one of the account's domains: the dashboard's Domains section lists them")
}

// A create refused for the rate limit asks to wait past its timeout (twice
// the default): it fails at once, saying which setting to raise, and so do
// the creates the same Retry-After holds, unsent. Nothing is created.
func TestAccLinkErrors_rateLimitWaitPastTimeout(t *testing.T) {
	e := newTestEnv(t)
	wait := 2 * defaults.CreateTimeout
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: http.StatusTooManyRequests, RetryAfter: int(wait / time.Second), Method: http.MethodPost})
	said := []string{"Could not create the link", "asked to wait " + wait.String(), "longer than this operation's timeout has left", "not carried out", "Raise the resource's create timeout (timeouts.create)"}
	expectFailure(t, e.config(testConfig(t, "link_count_of_links.tf.tmpl", 3, e.fx.DomainID)), slices.Concat(said, said, said)...) // one for each create
	if n := e.srv.LinkCount(e.fx.AccountID); n != 0 {
		t.Errorf("the account holds %d links, want none", n)
	}
	if n := e.srv.Count(http.MethodPost, "/api/links"); n != 1 {
		t.Errorf("the service received %d creates, want the one refused", n)
	}
}

// A read refused with a wait past its deadline (a read has no timeout of
// its own: defaults.ReadTimeout) fails at once, and says so rather than
// name a timeout the user could raise.
func TestAccLinkErrors_readWaitPastItsDeadline(t *testing.T) {
	e := newTestEnv(t)
	wait := 2 * defaults.ReadTimeout
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: http.StatusTooManyRequests, RetryAfter: int(wait / time.Second), Method: http.MethodGet})
	expectFailure(t, e.config(`data "shortlink_links" "all" {}`), "asked to wait "+wait.String(), "not carried out", "A read of a refresh, plan or data source has no timeout of its own and waits at most "+defaults.ReadTimeout.String())
	if n := e.srv.CountStatus(http.StatusTooManyRequests); n != 1 {
		t.Errorf("the service answered 429 %d times, want the one refusal", n)
	}
}

func TestAccLinkErrors_deletedBetweenRefreshAndUpdate(t *testing.T) {
	e := newTestEnv(t)
	e.testLink(t, []resource.TestStep{
		{Config: e.config(linkBody(e.fx.DomainID, "https://example.com/a"))},
		{
			// The service answers the PATCH as if the link had been
			// deleted after the refresh.
			PreConfig: func() {
				e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: 404, Method: "PATCH"})
			},
			Config:      e.config(linkBody(e.fx.DomainID, "https://example.com/b")),
			ExpectError: expectErr("was deleted outside Terraform", "terraform apply"),
		},
	})
}

// TestAccLinkErrors_slugTheServiceRefuses: the service's slug rule is not
// known to the provider, so a slug that is one path segment passes the
// plan; the service's refusal comes at apply, on the slug attribute, and
// nothing is created.
func TestAccLinkErrors_slugTheServiceRefuses(t *testing.T) {
	for _, slug := range []string{"spring.sale", "café"} {
		t.Run(slug, func(t *testing.T) {
			e := newTestEnv(t)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6Providers,
				Steps: []resource.TestStep{{
					Config: e.config(fmt.Sprintf(`
resource "shortlink_link" "test" {
  domain_id   = %q
  destination = "https://example.com/a"
  slug        = %q
}
`, e.fx.DomainID, slug)),
					ExpectError: expectErr("with shortlink_link.test,", "slug", "400 invalid_request", "slug: must be 1 to 64 characters"),
				}},
				CheckDestroy: e.checkNoLinks,
			})
		})
	}
}

// TestAccLinkErrors_createBeforeDestroyKeepsTheSlug: a replacement with
// create_before_destroy and a fixed slug cannot succeed (the old link holds
// the slug until it is destroyed); the 409 says so instead of suggesting to
// import the link being replaced.
func TestAccLinkErrors_createBeforeDestroyKeepsTheSlug(t *testing.T) {
	e := newTestEnv(t)
	link := func(expires string) string {
		return e.config(testConfig(t, "link_create_before_destroy_fixed_slug.tf.tmpl", e.fx.DomainID, expires))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{Config: link("2030-01-01T00:00:00Z")},
			{
				Config:      link("2031-01-01T00:00:00Z"),
				ExpectError: expectErr("409 slug_taken", "expiry differs", "replaced with create_before_destroy", "cannot be replaced create-before-destroy"),
			},
		},
	})
}

// A list answer the provider cannot read says what came back and that the
// configuration is not the cause; base_url is not the advice, since the
// service answered. The import of a link by its slug lists the links: by
// an import block (Terraform 1.5 and later) and by `terraform import`.
func TestAccLinkErrors_unreadableListing(t *testing.T) {
	huge := `[{"id":"x","slug":"x","destination":"https://example.com/` + strings.Repeat("a", 70<<10) + `"}]`
	for name, c := range map[string]struct {
		rewrite func([]byte) []byte
		want    string
	}{
		"cut short":             {func(b []byte) []byte { return b[:len(b)/2] }, "it was cut short"},
		"a link over the bound": {func([]byte) []byte { return []byte(huge) }, "item 0 of the list is larger than 64 KiB"},
	} {
		for _, block := range []bool{true, false} {
			by := "terraform import"
			if block {
				by = "import block"
			}
			t.Run(name+", "+by, func(t *testing.T) {
				unreadableListing(t, c.rewrite, c.want, block)
			})
		}
	}
}

// unreadableListing imports a link by its slug while the service's list
// answers are rewritten, and expects the error that says so.
func unreadableListing(t *testing.T, rewrite func([]byte) []byte, want string, block bool) {
	if block {
		skipBelowTerraform(t, 5, "an import block")
	}
	e := newTestEnv(t)
	e.seedLinks(t, e.fx.DomainID, "seeded", 50)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/api/links" {
			e.srv.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, r)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(rewrite(rec.Body.Bytes()))
	}))
	t.Cleanup(ts.Close)
	e.url = ts.URL
	id := e.fx.DomainID + "/seeded-0"
	step := resource.TestStep{
		Config:      e.linkConfig(`  destination = "https://example.com/seeded/0"`),
		ExpectError: expectErr(want, "the configuration is not the cause", "report it"),
	}
	if block {
		step.Config += fmt.Sprintf("import {\n  to = %s\n  id = %q\n}\n", linkAddr, id)
	} else {
		step.ResourceName, step.ImportState, step.ImportStateId = linkAddr, true, id
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps:                    []resource.TestStep{step},
	})
}

// What each failure says, built as the client and the creator build the
// errors: a message must not claim what did not happen, and must keep
// what the user needs (a create that may have made a link).
func TestAddServiceError_whatEachFailureSays(t *testing.T) {
	answer := func(status int, method, path, code string) *client.APIError {
		return &client.APIError{StatusCode: status, Method: method, Path: path, Code: code}
	}
	ambiguous := fmt.Errorf("%w; %w", answer(504, "POST", "/api/links", ""), client.ErrAmbiguous)
	thenListing := func(listErr error) error {
		return fmt.Errorf("%w; then listing the links to check whether it was created failed: %w", ambiguous, listErr)
	}
	held := fmt.Errorf("GET /api/links: stopped waiting for the rate limit: %w; %w",
		&client.WaitPastDeadlineError{Method: "GET", Wait: time.Hour}, client.ErrNotSent)
	for name, tc := range map[string]struct {
		err        error
		want       []string
		absent     []string
		attributed string // the attribute the error is on, if any
	}{
		"a read the service, unavailable, held past its deadline": {
			err: fmt.Errorf("GET /api/links: %w: %w", &client.WaitPastDeadlineError{Method: "GET", Wait: time.Hour, Status: 503},
				answer(503, "GET", "/api/links", "")),
			want:   []string{"unavailable (503) and asked to wait 1h0m0s", "Run again once the service is back"},
			absent: []string{"rate limit"},
		},
		"a change the service, unavailable, held past its deadline": {
			err: fmt.Errorf("PATCH /api/links/l-1: %w: %w", &client.WaitPastDeadlineError{Method: "PATCH", Wait: 2 * time.Minute, Status: 503},
				answer(503, "PATCH", "/api/links/l-1", "")),
			want: []string{"unavailable (503) and asked to wait 2m0s", "Run again once the service is back. To wait for it instead, raise the resource's update timeout (timeouts.update)."},
		},
		"a create held past its deadline by a window the answers said is spent": {
			err: fmt.Errorf("POST /api/links: stopped waiting for the rate limit: %w; %w",
				&client.WaitPastDeadlineError{Method: "POST", Wait: 58 * time.Second, Spent: true}, client.ErrNotSent),
			want:   []string{"nothing left of its window for about 58s", "stopped at once", "not carried out", "timeouts.create"},
			absent: []string{"asked to wait", "may have created"},
		},
		"a change that ran out of time waiting, unsent": {
			err:    fmt.Errorf("PATCH /api/links/l-1: stopped waiting for the rate limit: %w; %w", context.DeadlineExceeded, client.ErrNotSent),
			want:   []string{"ran out of time", "never sent: it changed nothing", "or for the service to answer the writes already sent", "Raise the timeouts"},
			absent: []string{"may have"},
		},
		"a change answered 502 to every retry": {
			err:  &client.APIError{StatusCode: 502, Method: "PATCH", Path: "/api/links/l-1", Attempts: 9, PageText: "502 Bad Gateway"},
			want: []string{"The service answered 502 (the last of 9 attempts); the answer was an HTML page", "This may be temporary"},
		},
		"a lookup whose listings kept shifting": {
			err:    snapshot.ErrListingsShifted,
			want:   []string{"run again once those deletions are over"},
			absent: []string{"base_url"},
		},
		"a create whose search for its link kept shifting": {
			err:  fmt.Errorf("%w; then listing the links to check whether it was created failed: %w", ambiguous, snapshot.ErrListingsShifted),
			want: []string{"run again once those deletions are over", "the service may have created the link", "for a resource without a slug a new link is created"},
		},
		"a change answered with a status the specification does not name": {
			err:    &client.APIError{StatusCode: 405, Method: "PATCH", Path: "/api/links/l-1", Attempts: 1, Message: "method not allowed"},
			want:   []string{"The service answered 405 to PATCH /api/links/l-1; the service said: \"method not allowed\". The provider does not expect this answer and does not retry it."},
			absent: []string{"temporary"},
		},
		"a change answered 502 once, retries off": {
			err:    &client.APIError{StatusCode: 502, Method: "PATCH", Path: "/api/links/l-1", Attempts: 1, RetriesOff: true},
			want:   []string{"The service answered 502 (one attempt: max_retries is 0). This may be temporary: run the command again, or raise max_retries"},
			absent: []string{"attempts"},
		},
		"a change answered 502, then its retry ran out of time waiting": {
			err:    fmt.Errorf("PATCH /api/links/l-1: stopped waiting for the rate limit: %w; %w (after 2 attempts); %w", context.DeadlineExceeded, client.ErrNotSent, client.ErrUnanswered),
			want:   []string{"ran out of time", "outcome unknown"},
			absent: []string{"never sent"},
		},
		"a change answered 502, then its retry held past its deadline": {
			err: fmt.Errorf("PATCH /api/links/l-1: stopped waiting for the rate limit: %w; %w; %w",
				&client.WaitPastDeadlineError{Method: "PATCH", Wait: time.Minute, Spent: true}, client.ErrNotSent, client.ErrUnanswered),
			want:   []string{"stopped at once", "an earlier attempt may have been carried out", "timeouts.update"},
			absent: []string{"was not carried out"},
		},
		"a create answered 504": {
			err:  ambiguous,
			want: []string{"504", "may have created the link", "If it did, the link is on the account"},
		},
		"a create answered 504, then the search found no link": {
			err:  fmt.Errorf("%w (no link was found on the account after it; gave up after 9 attempts)", ambiguous),
			want: []string{"may have created the link", "gave up after 9 attempts"},
		},
		"a create answered 504, then the service could not be reached": {
			err:    thenListing(fmt.Errorf("%w (tried for 20s): dial tcp: connection refused", client.ErrUnreachable)),
			want:   []string{"Cannot reach the short-link service", "Check base_url", "may have created the link"},
			absent: []string{"key would be refused", "rejected the API key"},
		},
		"a create answered 504, then the key was refused": {
			err:  thenListing(answer(401, "GET", "/api/links", "invalid_api_key")),
			want: []string{"The service rejected the API key", "401 invalid_api_key", "may have created the link"},
		},
		"a create answered 504, then the search was held past the timeout": {
			err:  thenListing(held),
			want: []string{"that request was not carried out", "timeouts.create", "may have created the link"},
		},
		"a create interrupted while it waited for its answer": {
			err:    fmt.Errorf("POST /api/links: %w; %w", context.Canceled, client.ErrAmbiguous),
			want:   []string{"Terraform was interrupted before the provider knew whether the service created the link", "stop_grace_period", "If it did, the link is on the account"},
			absent: []string{"base_url"},
		},
		"a create answered 504, then the search was cut by an interrupt": {
			err:    thenListing(fmt.Errorf("GET /api/links: %w", context.Canceled)),
			want:   []string{"504", "Terraform was interrupted before the provider knew whether the service created the link", "If it did, the link is on the account"},
			absent: []string{"This may be temporary", "run the command again"},
		},
		"a create answered 404": {
			err:    answer(404, "POST", "/api/links", "not_found"),
			want:   []string{"404 not_found to POST /api/links", "domain_id"},
			absent: []string{"no longer exists", "recreate"},
		},
		"a create answered 410": {
			err:    answer(410, "POST", "/api/links", "gone"),
			want:   []string{"The service answered 410 gone to POST /api/links"},
			absent: []string{"404"},
		},
		"a proxy's page answering 410 to a create, with no code of the service": {
			err:    &client.APIError{StatusCode: 410, Method: "POST", Path: "/api/links", Code: "not_found", CodeDerived: true},
			want:   []string{"The service answered 410 Gone to POST /api/links"},
			absent: []string{"404"},
		},
		"a proxy's page answering 401, with no code of the service": {
			err:    &client.APIError{StatusCode: 401, Method: "GET", Path: "/api/links", Code: "invalid_api_key", CodeDerived: true, PageText: "Authorization Required"},
			want:   []string{"The service rejected the API key (401 Unauthorized)", "Authorization Required"},
			absent: []string{"invalid_api_key"},
		},
		"a proxy's page answering 403, with no code of the service": {
			err:    &client.APIError{StatusCode: 403, Method: "POST", Path: "/api/links", Code: "insufficient_scope", CodeDerived: true},
			want:   []string{"lacks the scope this operation needs (403 Forbidden): POST /api/links needs links:write"},
			absent: []string{"insufficient_scope"},
		},
		"a proxy's page answering 404 to a create, with no code of the service": {
			err:    &client.APIError{StatusCode: 404, Method: "POST", Path: "/api/links", Code: "not_found", CodeDerived: true},
			want:   []string{"The service answered 404 Not Found to POST /api/links"},
			absent: []string{"not_found"},
		},
		"a proxy's page answering 402, with no code of the service": {
			err:    &client.APIError{StatusCode: 402, Method: "POST", Path: "/api/links", Code: "link_quota", CodeDerived: true},
			want:   []string{"quota of the account's plan is exhausted (402 Payment Required)"},
			absent: []string{"link_quota"},
		},
		"a 422 of the fraud filter": {
			err:        answer(422, "POST", "/api/links", "blocked_by_filter"),
			want:       []string{"fraud filter rejected the destination"},
			attributed: "destination",
		},
		"another 422": {
			err:    answer(422, "POST", "/api/links", "unprocessable_entity"),
			want:   []string{"422 unprocessable_entity"},
			absent: []string{"fraud filter"},
		},
		"a 409 slug_taken": {
			err:        answer(409, "POST", "/api/links", "slug_taken"),
			want:       []string{"409 slug_taken"},
			attributed: "slug",
		},
		"a change answered another 409": {
			err:  answer(409, "PATCH", "/api/links/l-1", "conflict"),
			want: []string{"409 conflict"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			var diags diag.Diagnostics
			addServiceError(&diags, "create the link", tc.err)
			expectDiagnostic(t, diags, tc.want, tc.absent, tc.attributed)
		})
	}
}

// expectDiagnostic checks that diags is one error that says every phrase
// of want, none of absent, on the attribute named (or none).
func expectDiagnostic(t *testing.T, diags diag.Diagnostics, want, absent []string, attribute string) {
	t.Helper()
	if len(diags) != 1 || !diags.HasError() {
		t.Fatalf("got %v, want one error", diags)
	}
	text := diags[0].Summary() + "\n" + diags[0].Detail()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("lacks %q:\n%s", w, text)
		}
	}
	for _, a := range absent {
		if strings.Contains(text, a) {
			t.Errorf("says %q:\n%s", a, text)
		}
	}
	on := ""
	if withPath, ok := diags[0].(diag.DiagnosticWithPath); ok {
		on = withPath.Path().String()
	}
	if on != attribute {
		t.Errorf("on attribute %q, want %q", on, attribute)
	}
}

// A new link whose UTM step failed says how to keep it (untaint) rather
// than have the next apply replace it, and does not call a rate-limit
// wait an interrupt.
func TestAddUTMStepError(t *testing.T) {
	link := &client.Link{ID: "l-1", ShortURL: "https://sho.rt/spring"}
	for name, tc := range map[string]struct {
		err          error
		want, absent []string
	}{
		"quota exhausted": {
			err:    &client.APIError{StatusCode: 402, Method: "PATCH", Path: "/api/links/l-1", Code: "link_quota"},
			want:   []string{"402 link_quota", "This request changed nothing", "Link l-1 (https://sho.rt/spring) was created", "terraform untaint"},
			absent: []string{"Nothing was changed"},
		},
		"interrupted": {
			err:  fmt.Errorf("PATCH /api/links/l-1: %w: %w", client.ErrNotSent, context.Canceled),
			want: []string{"Terraform was interrupted after the service created the link", "terraform untaint"},
		},
		"the new link answered 404": {
			err:    &client.APIError{StatusCode: 404, Method: "PATCH", Path: "/api/links/l-1", Code: "not_found"},
			want:   []string{"404", "Link l-1 (https://sho.rt/spring) was created", "run the apply again", "terraform untaint"},
			absent: []string{"recreate it", "base_url"},
		},
		"the new link missing from the listing after a change answered without it": {
			err:    links.ErrNotListed,
			want:   []string{"Link l-1 (https://sho.rt/spring) was created", "not in the account's list", "run the apply again"},
			absent: []string{"recreate it", "base_url"},
		},
		"held by the rate limit past the timeout": {
			err:    fmt.Errorf("PATCH /api/links/l-1: stopped waiting for the rate limit: %w; %w", &client.WaitPastDeadlineError{Method: "PATCH", Wait: time.Hour}, client.ErrNotSent),
			want:   []string{"timeouts.update", "terraform untaint"},
			absent: []string{"interrupted"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			var diags diag.Diagnostics
			addUTMStepError(&diags, link, tc.err)
			expectDiagnostic(t, diags, tc.want, tc.absent, "")
		})
	}
}

// An export that is not CSV at all (a proxy's page, a body over the
// client's bound) is not blamed on the CSV's format.
func TestAddExportError_notCSVIsNotACSVFault(t *testing.T) {
	for name, tc := range map[string]struct {
		linkID       string
		err          error
		want, absent []string
	}{
		"a page instead of the export": {
			err:    fmt.Errorf("GET /api/analytics/export: %w: status 200, Content-Type \"text/html\", expected CSV: the body is an HTML page", client.ErrUnexpectedResponse),
			want:   []string{"the body is an HTML page", "not as the provider can read"},
			absent: []string{"CSV with a header row"},
		},
		"a malformed record": {
			err:  fmt.Errorf("%w: line 3: wrong number of fields", analytics.ErrMalformed),
			want: []string{"CSV with a header row", "line 3", "(GET /api/analytics/export, the header", "to see what the service sent"},
		},
		"a malformed record of one link's export": {
			linkID: "2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60",
			err:    fmt.Errorf("%w: line 3: wrong number of fields", analytics.ErrMalformed),
			want:   []string{"(GET /api/analytics/export?linkId=2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60, the header"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			var diags diag.Diagnostics
			addExportError(&diags, nil, tc.linkID, tc.err)
			expectDiagnostic(t, diags, tc.want, tc.absent, "")
		})
	}
}

// The warning of a domain without links counts the account's links, and
// says so plainly of an account that has none.
func TestNoLinkOnDomain_saysWhatItFound(t *testing.T) {
	for total, want := range map[int]string{
		0: "The account has no links, so none is on domain d-1. If that is unexpected, check domain_id",
		8: "None of the account's 8 links is on domain d-1. If that is unexpected, check domain_id",
	} {
		diags := noLinkOnDomain("d-1", total)
		if len(diags) != 1 || !strings.HasPrefix(diags[0].Detail(), want) {
			t.Errorf("%d links: got %v, want a detail beginning %q", total, diags, want)
		}
	}
}
