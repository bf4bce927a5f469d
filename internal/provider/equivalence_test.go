package provider

import (
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

func TestSameDestination(t *testing.T) {
	utm := &client.UTM{Source: "newsletter", Medium: "email", Campaign: "spring"}
	tests := []struct {
		configured, answered string
		utm                  *client.UTM
		same                 bool
	}{
		{"https://example.com/a", "https://example.com/a", nil, true},
		{"HTTPS://Example.COM", "https://example.com/", nil, true},
		{"https://example.com/", "https://example.com", nil, true},
		{"https://example.com/sale/", "https://example.com/sale", nil, true},
		{"https://example.com/sale", "https://example.com/sale/", nil, true},
		{"https://example.com:443/a", "https://example.com/a", nil, true},
		{"http://example.com:80/a", "http://example.com/a", nil, true},
		{"http://[::1]:80/a", "http://[::1]/a", nil, true},
		{"https://example.com/a?", "https://example.com/a", nil, true},
		{"https://example.com/a?b=2&a=1", "https://example.com/a?a=1&b=2", nil, true},
		{"https://example.com/%7Euser", "https://example.com/~user", nil, true},
		{"https://example.com/sale", "https://example.com/sale?utm_campaign=spring&utm_medium=email&utm_source=newsletter", utm, true},
		{"https://example.com/sale?ref=1", "https://example.com/sale?ref=1&utm_source=newsletter&utm_medium=email&utm_campaign=spring", utm, true},
		// The user also wrote the parameters into the destination.
		{"HTTPS://example.com/sale?utm_source=newsletter", "https://example.com/sale?utm_campaign=spring&utm_medium=email&utm_source=newsletter", utm, true},
		// Real differences.
		{"https://example.com/sale", "https://example.com/theirs", nil, false},
		{"https://example.com/Sale", "https://example.com/sale", nil, false},
		{"https://example.com/a", "http://example.com/a", nil, false},
		{"https://example.com:8443/a", "https://example.com/a", nil, false},
		{"https://example.com/a?x=1", "https://example.com/a?x=2", nil, false},
		{"https://example.com/a#top", "https://example.com/a", nil, false},
		{"https://example.com/sale", "https://example.com/sale?utm_source=newsletter", nil, false},
		{"https://example.com/sale", "https://example.com/sale?utm_source=other", utm, false},
		{"https://example.com/a", "://bad", nil, false},
	}
	for _, tt := range tests {
		if got := sameDestination(tt.configured, tt.answered, tt.utm); got != tt.same {
			t.Errorf("sameDestination(%q, %q, %v) = %v, want %v", tt.configured, tt.answered, tt.utm, got, tt.same)
		}
	}
}

func TestWithoutMergedUTM(t *testing.T) {
	utm := &client.UTM{Source: "newsletter", Campaign: "spring sale"}
	tests := []struct {
		dest string
		utm  *client.UTM
		want string
	}{
		{"https://example.com/theirs?utm_campaign=spring+sale&utm_source=newsletter", utm, "https://example.com/theirs"},
		{"HTTPS://Example.COM/x?b=2&utm_source=newsletter&a=%2F#frag", utm, "HTTPS://Example.COM/x?b=2&a=%2F#frag"},
		{"https://example.com/x?utm_source=other", utm, "https://example.com/x?utm_source=other"},
		{"https://example.com/x?utm_source=newsletter", nil, "https://example.com/x?utm_source=newsletter"},
		{"https://example.com/x", utm, "https://example.com/x"},
		{"https://example.com/x?utm_campaign=spring%20sale#f", utm, "https://example.com/x#f"},
	}
	for _, tt := range tests {
		if got := withoutMergedUTM(tt.dest, tt.utm); got != tt.want {
			t.Errorf("withoutMergedUTM(%q) = %q, want %q", tt.dest, got, tt.want)
		}
	}
}

// A link the service describes only in part never leaves an attribute
// unknown, and keeps what the model knew of fields the answer lacks.
func TestApplyLinkPartialAnswer(t *testing.T) {
	m := linkModel{
		ID:          types.StringUnknown(),
		DomainID:    types.StringValue("2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60"),
		Destination: types.StringValue("HTTPS://Example.COM"),
		Slug:        types.StringUnknown(),
		ExpiresAt:   timetypes.NewRFC3339ValueMust("2027-04-01T01:59:59+02:00"),
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
