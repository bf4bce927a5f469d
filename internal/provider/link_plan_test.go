package provider

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func planned(slug, expires string) linkResourceModel {
	var m linkResourceModel
	m.ID, m.ShortURL = types.StringValue("l-1"), types.StringValue("https://go.example.test/abc")
	m.Slug = types.StringNull()
	if slug != "" {
		m.Slug = types.StringValue(slug)
	}
	m.ExpiresAt = instantNull()
	if expires != "" {
		m.ExpiresAt = instantValue{timetypes.NewRFC3339ValueMust(expires)}
	}
	return m
}

func TestWarnOfReplacement(t *testing.T) {
	withSlug := func(m linkResourceModel, slug types.String) linkResourceModel { m.Slug = slug; return m }
	for name, tc := range map[string]struct {
		state, plan linkResourceModel
		configured  types.String
		want        string
	}{
		"no slug": {planned("", "2027-01-01T00:00:00Z"), planned("", "2028-01-01T00:00:00Z"), types.StringNull(),
			"a new short URL (no slug is set"},
		"no slug, the generated one in the plan": {planned("abc", "2027-01-01T00:00:00Z"), withSlug(planned("", "2028-01-01T00:00:00Z"), types.StringUnknown()), types.StringNull(),
			"a new short URL (no slug is set"},
		"no slug, the old generated one kept in the plan": {planned("abc", "2027-01-01T00:00:00Z"), planned("abc", "2028-01-01T00:00:00Z"), types.StringNull(),
			"a new short URL (no slug is set"},
		"fixed slug": {planned("spring", "2027-01-01T00:00:00Z"), planned("spring", "2028-01-01T00:00:00Z"), types.StringValue("spring"),
			"the same short URL (the slug is kept; with create_before_destroy the create fails with 409"},
		"another slug": {planned("spring", "2027-01-01T00:00:00Z"), planned("summer", "2028-01-01T00:00:00Z"), types.StringValue("summer"),
			`a new short URL, at the slug "summer"`},
		"a slug known at apply": {planned("spring", "2027-01-01T00:00:00Z"), withSlug(planned("", "2028-01-01T00:00:00Z"), types.StringUnknown()), types.StringUnknown(),
			"a new short URL, at a slug known only at apply"},
	} {
		t.Run(name, func(t *testing.T) {
			var diags diag.Diagnostics
			warnOfReplacement(&diags, path.Paths{path.Root("expires_at")}, tc.state, tc.plan, tc.configured)
			if diags.WarningsCount() != 1 || diags.HasError() {
				t.Fatalf("diagnostics %v, want one warning", diags)
			}
			w := diags.Warnings()[0]
			for _, want := range []string{"Changing expires_at replaces link l-1 (https://go.example.test/abc)", "no click history", tc.want} {
				if !strings.Contains(w.Detail(), want) {
					t.Errorf("warning %q does not say %q", w.Detail(), want)
				}
			}
			if tc.want[:5] != "the s" && strings.Contains(w.Detail(), "create_before_destroy") {
				t.Errorf("warning %q speaks of create_before_destroy for a new short URL", w.Detail())
			}
		})
	}
	// The way to keep the link is what the link holds, which a change made
	// outside Terraform shows as a change the configuration never made.
	for held, want := range map[string]string{"2030-09-30T10:00:00Z": `make expires_at what the link holds: "2030-09-30T10:00:00Z"`, "": "remove expires_at: the link has none"} {
		var diags diag.Diagnostics
		warnOfReplacement(&diags, path.Paths{path.Root("expires_at")}, planned("", held), planned("", "2030-06-01T10:00:00Z"), types.StringNull())
		if w := diags.Warnings(); len(w) != 1 || !strings.Contains(w[0].Detail(), "To keep the link, "+want+".") {
			t.Errorf("the link holds %q: %v, want the warning to say %q", held, diags, want)
		}
	}
	var diags diag.Diagnostics
	warnOfReplacement(&diags, nil, planned("", ""), planned("", ""), types.StringNull())
	if len(diags) != 0 {
		t.Fatalf("an in-place change warned: %v", diags)
	}
}

func TestWarnOfPastExpiry(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for expires, warns := range map[string]bool{"": false, "2026-11-21T23:59:59Z": true, "2026-11-22T00:00:01Z": false} {
		var diags diag.Diagnostics
		warnOfPastExpiry(&diags, planned("", expires), now)
		if got := diags.WarningsCount() == 1; got != warns {
			t.Errorf("expires_at %q: warned %v, want %v (%v)", expires, got, warns, diags)
		}
	}
}

func TestReplacedBy(t *testing.T) {
	base := planned("spring", "2027-01-01T00:00:00Z")
	base.DomainID = types.StringValue("d-1")
	for name, tc := range map[string]struct {
		change func(*linkResourceModel)
		want   string
	}{
		"nothing": {func(*linkResourceModel) {}, ""},
		"respelled expiry": {func(m *linkResourceModel) {
			m.ExpiresAt = instantValue{timetypes.NewRFC3339ValueMust("2027-01-01T01:00:00+01:00")}
		}, ""},
		"other expiry": {func(m *linkResourceModel) {
			m.ExpiresAt = instantValue{timetypes.NewRFC3339ValueMust("2028-01-01T00:00:00Z")}
		}, "[expires_at]"},
		"expiry removed": {func(m *linkResourceModel) { m.ExpiresAt = instantNull() }, "[expires_at]"},
		"other slug":     {func(m *linkResourceModel) { m.Slug = types.StringValue("summer") }, "[slug]"},
		// Terraform replaces a link whose domain, slug or expiry is known
		// only at apply, whatever it turns out to be.
		"slug not yet known":   {func(m *linkResourceModel) { m.Slug = types.StringUnknown() }, "[slug]"},
		"domain not yet known": {func(m *linkResourceModel) { m.DomainID = types.StringUnknown() }, "[domain_id]"},
		"expiry not yet known": {func(m *linkResourceModel) { m.ExpiresAt = instantValue{timetypes.NewRFC3339Unknown()} }, "[expires_at]"},
		"expiry within the millisecond sent": {func(m *linkResourceModel) {
			m.ExpiresAt = instantValue{timetypes.NewRFC3339ValueMust("2027-01-01T00:00:00.0009Z")}
		}, ""},
		"other domain":         {func(m *linkResourceModel) { m.DomainID = types.StringValue("d-2") }, "[domain_id]"},
		"domain and slug both": {func(m *linkResourceModel) { m.DomainID, m.Slug = types.StringValue("d-2"), types.StringValue("x") }, "[domain_id,slug]"},
	} {
		plan := base
		tc.change(&plan)
		got := ""
		if paths := replacedBy(base, plan, plan.Slug); len(paths) > 0 {
			got = fmt.Sprint(paths)
		}
		if got != tc.want {
			t.Errorf("%s: replaced by %s, want %s", name, got, tc.want)
		}
	}
	// A slug left out of the configuration keeps the link's (the plan
	// holds the state's); it never replaces the link.
	unknown := base
	unknown.Slug = types.StringUnknown()
	if paths := replacedBy(base, unknown, types.StringNull()); len(paths) > 0 {
		t.Errorf("a slug left out of the configuration replaced the link: %v", paths)
	}
}
