package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/shortlink/terraform-provider-shortlink/internal/clitest"
)

// TestLeftovers_anotherCampaignIsNoLeftover: marketing makes several links
// to one landing page, one per campaign, told apart only by their UTM
// parameters. A new one is not warned of as if an earlier one were the
// leftover of an interrupted run: that link has other UTM parameters, which
// no create of the new resource could have set. A link with none, or with
// the new resource's own, still is. The plans run with -refresh=false, so
// that no resource has read the earlier link when the new one is checked.
func TestLeftovers_anotherCampaignIsNoLeftover(t *testing.T) {
	s := newService(t, instantFilter)
	link := func(name, source string) string {
		utm := ""
		if source != "" {
			utm = fmt.Sprintf("  utm = { source = %q }\n", source)
		}
		return fmt.Sprintf("resource \"shortlink_link\" %q {\n  domain_id   = %q\n  destination = \"https://shop.example.com/spring\"\n%s}\n", name, s.fx.DomainID, utm)
	}
	w := s.workdir(t, "another-campaign", "provider \"shortlink\" {}\n"+link("newsletter", "newsletter"))
	ctx := context.Background()
	if out, err := w.Terraform(ctx, runLimit, "apply", "-auto-approve", "-input=false", "-no-color"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, tc := range []struct {
		source string
		warned bool
	}{
		{"social", false},    // another campaign
		{"newsletter", true}, // what an interrupted create of this resource could have left
		{"", false},          // a resource without UTM parameters never sets any
	} {
		config := clitest.RequiredProviders + "provider \"shortlink\" {}\n" + link("newsletter", "newsletter") + link("added", tc.source)
		if err := w.WriteFile("main.tf", config); err != nil {
			t.Fatal(err)
		}
		out, err := w.Terraform(ctx, runLimit, "plan", "-refresh=false", "-input=false", "-no-color")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if warned := strings.Contains(out, "Possible leftover of an interrupted run"); warned != tc.warned {
			t.Errorf("a new link with utm.source %q beside one with %q: warned %t, want %t\n%s", tc.source, "newsletter", warned, tc.warned, out)
		}
	}
}
