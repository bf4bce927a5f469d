package provider

import (
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

// A link the service describes only in part never leaves an attribute
// unknown, and keeps what the model knew of fields the answer lacks.
func TestApplyLinkPartialAnswer(t *testing.T) {
	m := linkModel{
		ID:          types.StringUnknown(),
		DomainID:    types.StringValue("2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60"),
		Destination: types.StringValue("HTTPS://Example.COM"),
		Slug:        types.StringUnknown(),
		ExpiresAt:   instantValue{timetypes.NewRFC3339ValueMust("2027-04-01T01:59:59+02:00")},
		UTM:         utmObject(&client.UTM{Source: "newsletter"}),
		ShortURL:    types.StringUnknown(),
		QRCodeURL:   types.StringUnknown(),
		CreatedAt:   timetypes.NewRFC3339Unknown(),
	}
	expires := time.Date(2027, 3, 31, 23, 59, 59, 0, time.UTC)
	m.applyLink(&client.Link{ID: "l-1", Destination: "https://example.com/?utm_source=newsletter", ExpiresAt: &expires})
	for name, v := range map[string]interface{ IsUnknown() bool }{
		"id": m.ID, "slug": m.Slug, "short_url": m.ShortURL, "qr_code_url": m.QRCodeURL, "created_at": m.CreatedAt,
	} {
		if v.IsUnknown() {
			t.Errorf("%s is still unknown", name)
		}
	}
	if m.Destination.ValueString() != "HTTPS://Example.COM" || m.ExpiresAt.ValueString() != "2027-04-01T01:59:59+02:00" {
		t.Errorf("the user's spellings were not kept: %s, %s", m.Destination, m.ExpiresAt)
	}
	if m.UTM.IsNull() {
		t.Error("utm, absent from the answer, was dropped")
	}

	// A later answer without a QR code keeps the one known.
	m.QRCodeURL = types.StringValue("https://go.example.test/qr/x.png")
	m.applyLink(&client.Link{ID: "l-1"})
	if m.QRCodeURL.ValueString() != "https://go.example.test/qr/x.png" {
		t.Errorf("qr_code_url = %s", m.QRCodeURL)
	}
}

// Drift shows the destination someone else set, without the UTM parameters
// the service merged into it.
func TestApplyLinkDriftWithMergedUTM(t *testing.T) {
	m := linkModel{
		Destination: types.StringValue("https://example.com/sale"),
		UTM:         utmObject(&client.UTM{Source: "newsletter", Medium: "email"}),
	}
	m.applyLink(&client.Link{ID: "l-1", Destination: "https://example.com/theirs?utm_medium=email&utm_source=newsletter"})
	if got := m.Destination.ValueString(); got != "https://example.com/theirs" {
		t.Errorf("destination = %q", got)
	}
}

// equal tells apart models that differ in any one attribute: a read that
// finds the link changed must write the state.
func TestLinkModelEqual(t *testing.T) {
	base := func() linkModel {
		m := nullLinkModel()
		m.applyLink(&client.Link{ID: "l-1", DomainID: "2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60", Destination: "https://example.com/", Slug: "s",
			ShortURL: "https://go.example.test/s", QRCodeURL: "https://go.example.test/qr/s.png", UTM: &client.UTM{Source: "a"}, UTMKnown: true,
			CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
		return m
	}
	if !base().equal(base()) {
		t.Fatal("a model is not equal to itself")
	}
	for name, change := range map[string]func(*linkModel){
		"id":          func(m *linkModel) { m.ID = types.StringValue("l-2") },
		"domain_id":   func(m *linkModel) { m.DomainID = types.StringValue("other") },
		"destination": func(m *linkModel) { m.Destination = types.StringValue("https://example.com/b") },
		"slug":        func(m *linkModel) { m.Slug = types.StringValue("t") },
		"expires_at":  func(m *linkModel) { m.ExpiresAt = instantValue{timetypes.NewRFC3339ValueMust("2027-01-01T00:00:00Z")} },
		"utm":         func(m *linkModel) { m.UTM = utmObject(&client.UTM{Source: "b"}) },
		"short_url":   func(m *linkModel) { m.ShortURL = types.StringValue("https://go.example.test/t") },
		"qr_code_url": func(m *linkModel) { m.QRCodeURL = types.StringNull() },
		"created_at":  func(m *linkModel) { m.CreatedAt = timetypes.NewRFC3339ValueMust("2026-01-02T00:00:00Z") },
	} {
		m := base()
		change(&m)
		if m.equal(base()) {
			t.Errorf("a model with another %s is equal", name)
		}
	}
}
