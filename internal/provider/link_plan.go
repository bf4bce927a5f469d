package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/links"
	"github.com/shortlink/terraform-provider-shortlink/internal/planmodify"
)

var (
	_ resource.ResourceWithModifyPlan     = (*linkResource)(nil)
	_ resource.ResourceWithValidateConfig = (*linkResource)(nil)
)

// ValidateConfig refuses what no single attribute's validator can see: a
// UTM parameter given two values, and a timeout of nothing.
func (r *linkResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg linkResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	checkUTMConflicts(ctx, &resp.Diagnostics, cfg)
	checkTimeoutsPositive(&resp.Diagnostics, cfg.Timeouts)
	checkTimeoutsSetOne(&resp.Diagnostics, cfg.Timeouts)
}

// checkUTMConflicts refuses a UTM parameter given one value in the
// destination's query and another in utm: how the service combines them
// is not shown, so the campaign a visitor is counted under would be a guess.
func checkUTMConflicts(ctx context.Context, diags *diag.Diagnostics, cfg linkResourceModel) {
	if cfg.Destination.IsNull() || cfg.Destination.IsUnknown() {
		return
	}
	utm, d := utmFromObject(ctx, cfg.UTM)
	diags.Append(d...)
	for _, c := range links.UTMConflicts(cfg.Destination.ValueString(), utm) {
		addUTMConflict(diags, c)
	}
}

// checkTimeoutsPositive refuses a timeout of zero or less: the operation
// would fail before its first request. (Which strings are durations at
// all, the timeouts attribute's own validator says.)
func checkTimeoutsPositive(diags *diag.Diagnostics, t timeouts.Value) {
	if t.IsNull() || t.IsUnknown() {
		return
	}
	for _, op := range slices.Sorted(maps.Keys(t.Attributes())) {
		v, ok := t.Attributes()[op].(types.String)
		if !ok || v.IsNull() || v.IsUnknown() {
			continue
		}
		if d, err := time.ParseDuration(v.ValueString()); err == nil && d <= 0 {
			addTimeoutNotPositive(diags, op, v.ValueString())
		}
	}
}

// checkTimeoutsSetOne warns of a timeouts that sets none of its
// operations: Terraform drops a misspelt name ({ craete = "10m" }) before
// the provider sees it, so that is all that shows of the slip.
func checkTimeoutsSetOne(diags *diag.Diagnostics, t timeouts.Value) {
	if t.IsNull() || t.IsUnknown() {
		return
	}
	for _, v := range t.Attributes() {
		if !v.IsNull() {
			return
		}
	}
	addTimeoutsSetNone(diags)
}

// ModifyPlan adds what a plan owes its reader before anything is applied:
// a link another object of the plan names too, what a replacement loses,
// an expiry already past, a slug declared twice or already taken, a link
// another create of the plan would take over, and what the service could
// not be asked. It changes no planned value.
func (r *linkResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.data != nil && !req.State.Raw.IsNull() {
		r.plansTheOnlyObjectOfItsLink(ctx, req, &resp.Diagnostics)
	}
	if req.Plan.Raw.IsNull() {
		return // destroy: nothing to warn of
	}
	if req.Plan.Raw.Equal(req.State.Raw) {
		if r.data != nil { // no change: the resource keeps its link
			r.keepsNoLinkAnotherCreateWants(ctx, req.State, &resp.Diagnostics)
		}
		return
	}
	var plan linkResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if req.State.Raw.IsNull() {
		r.planNewLink(ctx, req, &resp.Diagnostics, plan)
		return
	}
	r.planChange(ctx, req, &resp.Diagnostics, plan)
}

// planNewLink is ModifyPlan for a link the plan creates (a replacement's
// create too, which Terraform plans in a call of its own).
func (r *linkResource) planNewLink(ctx context.Context, req resource.ModifyPlanRequest, diags *diag.Diagnostics, plan linkResourceModel) {
	warnOfPastExpiry(diags, plan, time.Now())
	var configuredSlug types.String
	diags.Append(req.Config.GetAttribute(ctx, path.Root("slug"), &configuredSlug)...)
	if r.data == nil || diags.HasError() {
		return
	}
	if configuredSlug.IsNull() {
		plan.Slug = types.StringNull() // the service chooses one: a create without a slug
	}
	r.checkNewLink(ctx, diags, plan, replanningToApply(req))
}

// planChange is ModifyPlan for a link the state holds, changed in place
// or replaced.
func (r *linkResource) planChange(ctx context.Context, req resource.ModifyPlanRequest, diags *diag.Diagnostics, plan linkResourceModel) {
	var state linkResourceModel
	var configuredSlug types.String
	diags.Append(req.State.Get(ctx, &state)...)
	diags.Append(req.Config.GetAttribute(ctx, path.Root("slug"), &configuredSlug)...)
	if diags.HasError() {
		return
	}
	// What the service holds decides a replacement, and is what the
	// warning tells to write, not a spelling the state took without it.
	if kept, ok := planmodify.KeptExpiry(ctx, req.Private); ok && !state.ExpiresAt.IsNull() {
		state.ExpiresAt = instantValue{timetypes.NewRFC3339ValueMust(kept)}
	}
	replacing := replacedBy(state, plan, configuredSlug)
	if len(replacing) == 0 && r.data != nil { // changed in place: it keeps its link
		r.keepsNoLinkAnotherCreateWants(ctx, req.State, diags)
	}
	warnOfReplacement(diags, replacing, state, plan, configuredSlug)
	if len(replacing) > 0 { // the replacement is a create
		warnOfPastExpiry(diags, plan, time.Now())
	}
	// Terraform plans the create of a replacement next, with no prior
	// state: tell that plan whether the old link holds its slug.
	if in, known := plannedCreate(plan); known && len(replacing) > 0 && r.data != nil {
		old, _ := state.createInput()
		r.data.plans.Replacing(old, in)
		r.checkReplacementSlug(ctx, diags, plan, old, in, replanningToApply(req))
	}
}

// plansTheOnlyObjectOfItsLink fails the plan of an object whose link
// another object of the walk's plans names too, whatever either plans (a
// destroy, a replacement or nothing): an import into a second resource,
// in its own run, before its apply or a later destroy deletes the link
// both name.
func (r *linkResource) plansTheOnlyObjectOfItsLink(ctx context.Context, req resource.ModifyPlanRequest, diags *diag.Diagnostics) {
	var id, shortURL types.String
	diags.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
	diags.Append(req.State.GetAttribute(ctx, path.Root("short_url"), &shortURL)...)
	if !diags.HasError() && r.data.plans.Planned(id.ValueString(), objectOf(ctx, req.Private)) {
		addManagedTwice(diags, id.ValueString(), shortURL.ValueString())
	}
}

// keepsNoLinkAnotherCreateWants fails the plan of a resource that keeps
// its link when a create planned earlier in the same plan would take that
// link over (a copied block, planned first): the apply, another process,
// would take it, and two resources would manage one link. A resource
// being destroyed or replaced is not asked: its link goes (a rename
// without a moved block, slugs swapped or shifted along a list).
func (r *linkResource) keepsNoLinkAnotherCreateWants(ctx context.Context, state tfsdk.State, diags *diag.Diagnostics) {
	var id, shortURL types.String
	diags.Append(state.GetAttribute(ctx, path.Root("id"), &id)...)
	diags.Append(state.GetAttribute(ctx, path.Root("short_url"), &shortURL)...)
	if wanted, ok := r.data.creator.WantedBy(id.ValueString()); ok {
		addWantedByAnotherCreate(diags, id.ValueString(), shortURL.ValueString(), wanted)
	}
}

// newShortURL says what becomes of the short URL when the link is
// replaced, for every way the slug can be written.
func newShortURL(state, plan linkResourceModel, configuredSlug types.String) string {
	switch {
	case configuredSlug.IsNull():
		// The plan may still hold the old link's generated slug (the
		// framework keeps a computed value from the state); the create
		// that replaces the link sends none.
		return "and a new short URL (no slug is set, so the service generates one)"
	case plan.Slug.IsUnknown():
		return "and a new short URL, at a slug known only at apply"
	case !plan.Slug.Equal(state.Slug):
		return fmt.Sprintf("and a new short URL, at the slug %q", plan.Slug.ValueString())
	case plan.DomainID.IsUnknown():
		return "and a short URL at the same slug on a domain known only at apply (a new one if it is another domain)"
	case !client.SameID(plan.DomainID.ValueString(), state.DomainID.ValueString()):
		return "and a new short URL on the other domain (the slug is kept)"
	}
	return "and, once the old link is deleted, the same short URL (the slug is kept; with create_before_destroy the create fails with 409, because the old link still holds the slug)"
}

// replacedBy lists the attributes whose planned change replaces the link,
// as their plan modifiers decide (which the resource's ModifyPlan is not
// told): another domain, another slug, another instant of expiry, or a
// value known only at apply, which Terraform plans as a replacement
// whatever it turns out to be. A slug replaces only as written
// (configuredSlug not null): one left out keeps the link's.
func replacedBy(state, plan linkResourceModel, configuredSlug types.String) path.Paths {
	var out path.Paths
	if plan.DomainID.IsUnknown() || !client.SameID(state.DomainID.ValueString(), plan.DomainID.ValueString()) {
		out = append(out, path.Root("domain_id"))
	}
	if !configuredSlug.IsNull() && (plan.Slug.IsUnknown() || !state.Slug.Equal(plan.Slug)) {
		out = append(out, path.Root("slug"))
	}
	if plan.ExpiresAt.IsUnknown() || state.ExpiresAt.IsNull() != plan.ExpiresAt.IsNull() ||
		!state.ExpiresAt.IsNull() && !links.SameRFC3339Instant(plan.ExpiresAt.ValueString(), state.ExpiresAt.ValueString()) {
		out = append(out, path.Root("expires_at"))
	}
	return out
}

// warnOfReplacement says, on each attribute that forces it, what replacing
// the link loses: the service takes domain_id, slug and expires_at only on
// create, so the link is deleted and a new one made. configuredSlug is the
// slug as written (null, unknown until apply, or a value).
func warnOfReplacement(diags *diag.Diagnostics, replacing path.Paths, state, plan linkResourceModel, configuredSlug types.String) {
	if len(replacing) == 0 {
		return
	}
	shortURL := newShortURL(state, plan, configuredSlug)
	held := map[string]string{"domain_id": state.DomainID.ValueString(), "slug": state.Slug.ValueString(), "expires_at": state.ExpiresAt.ValueString()}
	for _, p := range replacing {
		addReplacementWarning(diags, p, state.ID.ValueString(), state.ShortURL.ValueString(), shortURL, held[p.String()])
	}
}

// warnOfPastExpiry warns, for a link about to be created, that its expiry
// has passed: the service would make a link that answers 410 at once. A
// link that simply expired after it was made is not the plan's concern.
func warnOfPastExpiry(diags *diag.Diagnostics, plan linkResourceModel, now time.Time) {
	if plan.ExpiresAt.IsNull() || plan.ExpiresAt.IsUnknown() {
		return
	}
	t, d := plan.ExpiresAt.ValueRFC3339Time()
	if d.HasError() || t.After(now) {
		return
	}
	addPastExpiry(diags, plan.ExpiresAt.ValueString())
}

// replanningToApply is whether Terraform asks for this plan again just
// before it applies it, rather than to make the plan the user reviews:
// Terraform's apply walk allows deferred actions, its plan walk does not
// (unless run with the experimental -allow-deferral, or as a Stack). The
// client cannot say so otherwise; OpenTofu never allows them, and there
// the apply asks the service again, as before.
func replanningToApply(req resource.ModifyPlanRequest) bool {
	return req.ClientCapabilities.DeferralAllowed
}

// checkNewLink checks a link the plan creates against the rest of the run
// and against the service: a slug another resource of this run declares
// too is an error; a slug held on the service is a warning, not an error,
// because the same apply may free it (deleting or replacing that link
// first) and the leftover of an interrupted run is taken over. A link
// without a slug gets a warning naming the links an interrupted run may
// have left with what it declares: the apply cannot tell them from another
// configuration's and creates another, so the user is told in time to
// import one instead. Replanning to apply, it does not list: the plan
// asked already, a listing is the whole account (17 minutes for a million
// links paged by 100 at the spec's read limit), and what it finds would
// only warn again as the create goes, which handles a held slug itself.
func (r *linkResource) checkNewLink(ctx context.Context, diags *diag.Diagnostics, plan linkResourceModel, applying bool) {
	in, known := plannedCreate(plan)
	ownSlug := false
	if known {
		var earlier client.CreateLinkInput
		var collides bool
		if earlier, collides, ownSlug = r.data.plans.Declare(in); collides {
			addDuplicateSlug(diags, in, earlier)
			return
		}
	}
	if applying {
		return
	}
	listed, ok := r.listingToCheck(ctx, diags)
	if !ok {
		return
	}
	switch {
	case !known || ownSlug:
	case in.Slug == "":
		if !utmKnown(plan.UTM) {
			return // which leftovers it could have left depends on its utm
		}
		utm, d := utmFromObject(ctx, plan.UTM)
		diags.Append(d...)
		if found := r.data.creator.ProbableLeftovers(ctx, in, utm, listed); len(found) > 0 && !d.HasError() {
			addProbableLeftovers(diags, found, r.data.creator.AdoptionWindow())
		}
	default:
		r.warnOfSlugHolder(ctx, diags, plan, in, listed)
	}
}

// warnOfSlugHolder warns when a link of listed holds the slug of the link
// that in creates: the create would take it over, or fail with 409.
func (r *linkResource) warnOfSlugHolder(ctx context.Context, diags *diag.Diagnostics, plan linkResourceModel, in client.CreateLinkInput, listed client.Listing) {
	// Whether a holder with UTM parameters can be taken over depends on
	// the resource's, which may be known only at apply.
	known := utmKnown(plan.UTM)
	var utm *client.UTM
	if known {
		var d diag.Diagnostics
		utm, d = utmFromObject(ctx, plan.UTM)
		if diags.Append(d...); d.HasError() {
			return
		}
	}
	if holder, problem := r.data.creator.SlugHolder(listed, in, utm); holder != nil && (known || problem != links.OtherUTM) {
		addSlugHeld(diags, in, holder, problem)
	}
}

// checkReplacementSlug checks, as checkNewLink does for a new link, the
// slug at which a replacement creates its link, when it is another domain
// or slug than the old link's. Terraform plans the create of a
// replacement with a second call and no prior state, but shows only that
// call's errors, never its warnings (they would repeat this call's): a
// slug another link holds would pass the plan unsaid, and the apply would
// delete the old link before its create fails with 409 slug_taken.
func (r *linkResource) checkReplacementSlug(ctx context.Context, diags *diag.Diagnostics, plan linkResourceModel, old, in client.CreateLinkInput, applying bool) {
	if applying || in.Slug == "" || links.KeepsSlug(old, in) {
		return
	}
	if listed, ok := r.listingToCheck(ctx, diags); ok {
		r.warnOfSlugHolder(ctx, diags, plan, in, listed)
	}
}

// listingToCheck is the account's listing that a plan checks a new link
// against: the shared one that serves the refreshes, so it costs a
// request only when nothing in the state needed refreshing (a plan of new
// links on a large account lists it here). ok is false when the service
// could not be asked, which the plan does not pass silently
// (addServiceNotAsked).
func (r *linkResource) listingToCheck(ctx context.Context, diags *diag.Diagnostics) (_ client.Listing, ok bool) {
	ctx, done := trackReadWaits(ctx, diags)
	defer done()
	listed, err := r.data.listing.Current(ctx)
	if err != nil {
		addServiceNotAsked(diags, r.data.reports, err)
		return nil, false
	}
	return listed, true
}

// utmKnown is whether every UTM parameter of a plan is known.
func utmKnown(o types.Object) bool {
	if o.IsUnknown() {
		return false
	}
	for _, v := range o.Attributes() {
		if v.IsUnknown() {
			return false
		}
	}
	return true
}

// plannedCreate is the create a plan declares; known is false while a
// value it needs is known only at apply.
func plannedCreate(plan linkResourceModel) (in client.CreateLinkInput, known bool) {
	if plan.Slug.IsUnknown() || plan.DomainID.IsUnknown() || plan.Destination.IsUnknown() || plan.ExpiresAt.IsUnknown() {
		return client.CreateLinkInput{}, false
	}
	in, diags := plan.createInput()
	return in, !diags.HasError()
}
