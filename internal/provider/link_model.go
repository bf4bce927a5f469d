package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/links"
)

// linkModel is shortlink_link's state, and one element of shortlink_links.
type linkModel struct {
	ID          types.String      `tfsdk:"id"`
	DomainID    types.String      `tfsdk:"domain_id"`
	Destination types.String      `tfsdk:"destination"`
	Slug        types.String      `tfsdk:"slug"`
	ExpiresAt   instantValue      `tfsdk:"expires_at"`
	UTM         types.Object      `tfsdk:"utm"`
	ShortURL    types.String      `tfsdk:"short_url"`
	QRCodeURL   types.String      `tfsdk:"qr_code_url"`
	CreatedAt   timetypes.RFC3339 `tfsdk:"created_at"`
}

// linkResourceModel adds what only the resource has.
type linkResourceModel struct {
	linkModel
	Timeouts timeouts.Value `tfsdk:"timeouts"`
}

// utmAttrTypes is the utm object's type: a string per UTM parameter.
var utmAttrTypes = func() map[string]attr.Type {
	attrTypes := make(map[string]attr.Type, len(client.UTMParameters))
	for _, p := range client.UTMParameters {
		attrTypes[p] = types.StringType
	}
	return attrTypes
}()

var linkAttrTypes = map[string]attr.Type{
	"id":          types.StringType,
	"domain_id":   types.StringType,
	"destination": types.StringType,
	"slug":        types.StringType,
	"expires_at":  instantType{},
	"utm":         types.ObjectType{AttrTypes: utmAttrTypes},
	"short_url":   types.StringType,
	"qr_code_url": types.StringType,
	"created_at":  timetypes.RFC3339Type{},
}

// applyLink writes what the service answered into the model. Where the
// service spells a value differently but means the same thing (a timestamp,
// a normalised URL), the value already in the model is kept, so a plan never
// shows a difference the user did not make. Fields the answer lacks keep
// their value (the client completes answers from the list, so these are
// fields the service does not have at all); computed attributes it never
// gave become null rather than stay unknown.
func (m *linkModel) applyLink(l *client.Link) {
	if m.ID.IsNull() || m.ID.IsUnknown() || !client.SameID(m.ID.ValueString(), l.ID) {
		m.ID = types.StringValue(l.ID) // a data source's id keeps the case it was written in
	}
	if l.DomainID != "" && !sameIDString(m.DomainID, l.DomainID) {
		m.DomainID = types.StringValue(l.DomainID)
	}
	if l.UTMKnown {
		m.UTM = utmObject(l.UTM)
	}
	// The UTM parameters in force, which a service may have merged into
	// the destination's query.
	utm, _ := utmFromObject(context.Background(), m.UTM)
	if l.Destination != "" && !links.SameDestination(m.Destination.ValueString(), l.Destination, utm) {
		m.Destination = types.StringValue(links.WithoutMergedUTM(l.Destination, utm))
	}
	if l.Slug != "" {
		m.Slug = types.StringValue(l.Slug)
	}
	m.ExpiresAt = keepSameInstant(m.ExpiresAt, l.ExpiresAt)
	m.ShortURL = optionalString(l.ShortURL, m.ShortURL)
	// A QR code does not go away; an answer without one (a service that
	// leaves it out of some answers) keeps the one known.
	m.QRCodeURL = optionalString(l.QRCodeURL, m.QRCodeURL)
	if !l.CreatedAt.IsZero() {
		m.CreatedAt = keepSameInstant(instantValue{m.CreatedAt}, &l.CreatedAt).RFC3339
	}
	if m.UTM.IsNull() || m.UTM.IsUnknown() {
		m.UTM = types.ObjectNull(utmAttrTypes)
	}
	// Computed attributes the service never gave must not stay unknown
	// after apply.
	if m.Slug.IsUnknown() {
		m.Slug = types.StringNull()
	}
	if m.CreatedAt.IsUnknown() {
		m.CreatedAt = timetypes.NewRFC3339Null()
	}
}

// valueKept is an attribute the service kept otherwise than planned.
type valueKept struct {
	name, planned, kept string
	next                nextPlan
}

// nextPlan is what the next plan does about a value kept otherwise.
type nextPlan int

const (
	changesAgain nextPlan = iota // destination, utm: a change sets them
	replaces                     // a configured slug, expires_at, domain_id: only a new link has them
	acceptsIt                    // a slug left to the service: the state's is the one
)

// answeredOtherwise lists the attributes planned (known at plan) that an
// answer, applied to answered with applyLink, set to something else:
// applyLink keeps the planned spelling of what means the same, so each is
// a real difference. utm is compared only when the request sent it;
// slugConfigured says whether the slug was written or is the service's.
func answeredOtherwise(planned, answered linkModel, withUTM, slugConfigured bool) []valueKept {
	slugNext := replaces
	if !slugConfigured {
		slugNext = acceptsIt
	}
	type pair struct {
		name     string
		was, got attr.Value
		next     nextPlan
	}
	pairs := []pair{
		{"domain_id", planned.DomainID, answered.DomainID, replaces},
		{"destination", planned.Destination, answered.Destination, changesAgain},
		{"slug", planned.Slug, answered.Slug, slugNext},
		{"expires_at", planned.ExpiresAt, answered.ExpiresAt, replaces},
	}
	if withUTM {
		pairs = append(pairs, pair{"utm", planned.UTM, answered.UTM, changesAgain})
	}
	var kept []valueKept
	for _, p := range pairs {
		if !p.was.IsUnknown() && !p.was.Equal(p.got) {
			kept = append(kept, valueKept{p.name, p.was.String(), p.got.String(), p.next})
		}
	}
	return kept
}

// keptAsPlanned reports whether the service's answer l holds every planned
// value of the link.
func keptAsPlanned(planned linkModel, l *client.Link) bool {
	answered := planned
	answered.applyLink(l)
	return len(answeredOtherwise(planned, answered, true, true)) == 0
}

// equal reports whether every attribute of m is that of o.
func (m linkModel) equal(o linkModel) bool {
	return m.ID.Equal(o.ID) && m.DomainID.Equal(o.DomainID) && m.Destination.Equal(o.Destination) &&
		m.Slug.Equal(o.Slug) && m.ExpiresAt.Equal(o.ExpiresAt) && m.UTM.Equal(o.UTM) &&
		m.ShortURL.Equal(o.ShortURL) && m.QRCodeURL.Equal(o.QRCodeURL) && m.CreatedAt.Equal(o.CreatedAt)
}

func optionalString(v string, prior types.String) types.String {
	if v == "" {
		if prior.IsUnknown() {
			return types.StringNull()
		}
		return prior
	}
	return types.StringValue(v)
}

// sameIDString reports whether v, known, names the ID s (client.SameID).
func sameIDString(v types.String, s string) bool {
	return !v.IsNull() && !v.IsUnknown() && client.SameID(v.ValueString(), s)
}

// keepSameInstant returns prior when it is taken for the same instant as t
// (links.OneExpiry, as the plan takes it), else t spelled in RFC 3339.
func keepSameInstant(prior instantValue, t *time.Time) instantValue {
	if t == nil {
		return instantNull()
	}
	if !prior.IsNull() && !prior.IsUnknown() {
		if p, diags := prior.ValueRFC3339Time(); !diags.HasError() && links.OneExpiry(p, *t) {
			return prior
		}
	}
	return instantValue{timetypes.NewRFC3339ValueMust(t.UTC().Format(time.RFC3339Nano))}
}

func utmObject(u *client.UTM) types.Object {
	if u == nil || *u == (client.UTM{}) {
		return types.ObjectNull(utmAttrTypes)
	}
	return types.ObjectValueMust(utmAttrTypes, map[string]attr.Value{
		"source":   stringOrNull(u.Source),
		"medium":   stringOrNull(u.Medium),
		"campaign": stringOrNull(u.Campaign),
		"term":     stringOrNull(u.Term),
		"content":  stringOrNull(u.Content),
	})
}

func stringOrNull(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

type utmModel struct {
	Source   types.String `tfsdk:"source"`
	Medium   types.String `tfsdk:"medium"`
	Campaign types.String `tfsdk:"campaign"`
	Term     types.String `tfsdk:"term"`
	Content  types.String `tfsdk:"content"`
}

// utmFromObject reads the configured utm; nil when it is null.
func utmFromObject(ctx context.Context, o types.Object) (*client.UTM, diag.Diagnostics) {
	if o.IsNull() || o.IsUnknown() {
		return nil, nil
	}
	var m utmModel
	diags := o.As(ctx, &m, basetypes.ObjectAsOptions{})
	return &client.UTM{
		Source:   m.Source.ValueString(),
		Medium:   m.Medium.ValueString(),
		Campaign: m.Campaign.ValueString(),
		Term:     m.Term.ValueString(),
		Content:  m.Content.ValueString(),
	}, diags
}

// nullLinkModel is a link of which nothing is known: what an import
// leaves in the state before the first read, which applyLink then fills.
func nullLinkModel() linkModel {
	return linkModel{
		ID:          types.StringNull(),
		DomainID:    types.StringNull(),
		Destination: types.StringNull(),
		Slug:        types.StringNull(),
		ExpiresAt:   instantNull(),
		UTM:         types.ObjectNull(utmAttrTypes),
		ShortURL:    types.StringNull(),
		QRCodeURL:   types.StringNull(),
		CreatedAt:   timetypes.NewRFC3339Null(),
	}
}

// importedLinkState is the resource state of a link as an import followed
// by a refresh records it (applyLink on a null model, no timeouts), so a
// resource built from it plans no change after that import.
func importedLinkState(ctx context.Context, l *client.Link) linkResourceModel {
	m := linkResourceModel{linkModel: nullLinkModel(), Timeouts: nullTimeouts(ctx)}
	m.applyLink(l)
	return m
}

// nullTimeouts is an unset timeouts attribute. Its type comes from the
// schema helper itself so that the two cannot drift apart; a helper that
// changed its type would make the state fail to set (a diagnostic), not
// panic.
func nullTimeouts(ctx context.Context) timeouts.Value {
	t, _ := timeouts.Attributes(ctx, linkTimeoutOpts).GetType().(timeouts.Type)
	return timeouts.Value{Object: types.ObjectNull(t.AttrTypes)}
}

// linkObject turns a link into an element of shortlink_links.
func linkObject(l *client.Link) types.Object {
	m := nullLinkModel()
	m.applyLink(l)
	return types.ObjectValueMust(linkAttrTypes, map[string]attr.Value{
		"id":          m.ID,
		"domain_id":   m.DomainID,
		"destination": m.Destination,
		"slug":        m.Slug,
		"expires_at":  m.ExpiresAt,
		"utm":         m.UTM,
		"short_url":   m.ShortURL,
		"qr_code_url": m.QRCodeURL,
		"created_at":  m.CreatedAt,
	})
}
