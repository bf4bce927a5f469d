package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/clitest"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// TestLeftovers_anotherCampaignIsNoLeftover: marketing makes several links
// to one landing page, one per campaign, told apart only by their UTM
// parameters. A new one is not warned of as if an earlier one were the
// leftover of an interrupted run: that link has other UTM parameters, which
// no create of the new resource could have set. A link with none, or with
// the new resource's own, still is. The earlier link is on the account and
// in no state, as a leftover is: a link a resource of the run manages is
// never one.
func TestLeftovers_anotherCampaignIsNoLeftover(t *testing.T) {
	s := newService(t, instantFilter)
	c := s.client(t)
	ctx := context.Background()
	const page = "https://shop.example.com/spring"
	earlier, err := c.CreateLink(ctx, client.CreateLinkInput{DomainID: s.fx.DomainID, Destination: page})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ChangeDestination(ctx, earlier.ID, client.ChangeDestinationInput{Destination: page, UTM: &client.UTM{Source: "newsletter"}}); err != nil {
		t.Fatal(err)
	}
	w := s.workdir(t, "another-campaign", "provider \"shortlink\" {}\n")
	for _, tc := range []struct {
		source string
		warned bool
	}{
		{"social", false},    // another campaign
		{"newsletter", true}, // what an interrupted create of this resource could have left
		{"", false},          // a resource without UTM parameters never sets any
	} {
		utm := ""
		if tc.source != "" {
			utm = fmt.Sprintf("  utm = { source = %q }\n", tc.source)
		}
		config := clitest.RequiredProviders + "provider \"shortlink\" {}\n" +
			fmt.Sprintf("resource \"shortlink_link\" \"added\" {\n  domain_id   = %q\n  destination = %q\n%s}\n", s.fx.DomainID, page, utm)
		if err := w.WriteFile("main.tf", config); err != nil {
			t.Fatal(err)
		}
		out, err := runCLI(ctx, w, "plan")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if warned := strings.Contains(out, "Possible leftover of an interrupted run"); warned != tc.warned {
			t.Errorf("a new link with utm.source %q beside one with %q: warned %t, want %t\n%s", tc.source, "newsletter", warned, tc.warned, out)
		}
	}
}

// TestLeftovers_slugHeldIsTakenOver: a link that an interrupted run left,
// or a script made, exactly what a resource declares (slug, destination),
// is named by the plan and taken over by the apply, not created twice.
// With adoption_window = "0s" it is left alone: the plan warns that the
// slug is taken and the apply fails on it, saying why.
func TestLeftovers_slugHeldIsTakenOver(t *testing.T) {
	s := newService(t, instantFilter)
	c := s.client(t)
	ctx := context.Background()
	left, err := c.CreateLink(ctx, client.CreateLinkInput{DomainID: s.fx.DomainID, Slug: "spring-sale", Destination: "https://shop.example.com/spring"})
	if err != nil {
		t.Fatal(err)
	}
	config := func(provider string) string {
		return "provider \"shortlink\" {\n" + provider + "}\n" + linkBlock("sale", s.fx.DomainID, "spring-sale", "https://shop.example.com/spring")
	}
	w := s.workdir(t, "slug-held", config("  adoption_window = \"0s\"\n"))
	out, err := runCLI(ctx, w, "plan")
	if err != nil || !strings.Contains(out, `Slug "spring-sale" already taken`) || strings.Contains(out, "would take over") {
		t.Fatalf("plan with adoption_window = \"0s\": %v; want the slug named as taken, not to be taken over\n%s", err, out)
	}
	if out, err := runCLI(ctx, w, "apply", "-auto-approve"); err == nil || !strings.Contains(out, "409 slug_taken") || !strings.Contains(out, left.ID) {
		t.Fatalf("apply with adoption_window = \"0s\": %v; want it to fail on the slug, naming link %s\n%s", err, left.ID, out)
	}

	if err := w.WriteFile("main.tf", clitest.RequiredProviders+config("")); err != nil {
		t.Fatal(err)
	}
	// The link was made with the API, as a script would: both warnings
	// name that among the likely makers, not an interrupted run alone.
	const madeOutside = "made outside Terraform (in the dashboard, by a script) with these very values"
	out, err = runCLI(ctx, w, "plan")
	if err != nil || !strings.Contains(out, `Slug "spring-sale" held by a link this resource would take over`) || !strings.Contains(out, left.ID) || !strings.Contains(strings.Join(strings.Fields(out), " "), madeOutside) {
		t.Fatalf("plan: %v; want it to name link %s, which the apply takes over, and who may have made it\n%s", err, left.ID, out)
	}
	out, err = runCLI(ctx, w, "apply", "-auto-approve")
	if err != nil || !strings.Contains(out, "Took over link "+left.ID) || !strings.Contains(strings.Join(strings.Fields(out), " "), madeOutside) {
		t.Fatalf("apply: %v; want link %s taken over, and who may have made it\n%s", err, left.ID, out)
	}
	if ids := stateIDs(t, w); len(ids) != 1 || ids[0] != left.ID {
		t.Errorf("the state holds %v, want the link left behind, %s", ids, left.ID)
	}
	if ids := s.linkIDs(); len(ids) != 1 {
		t.Errorf("the service holds %v, want the one link", ids)
	}
}

// TestLeftovers_copiedBlockIsCaughtBeforeItsLinkIsDeleted: a resource
// copied with another's slug and destination, planned after the other is
// refreshed (depends_on orders them here), is only warned of, since a
// -replace is planned the same way; the apply takes the link over and two
// resources name it. The next plan fails on it, before destroying either
// can delete the link both name, and `terraform state rm` ends it.
func TestLeftovers_copiedBlockIsCaughtBeforeItsLinkIsDeleted(t *testing.T) {
	s := newService(t, instantFilter)
	block := func(name, dependsOn string) string {
		return fmt.Sprintf("resource \"shortlink_link\" %q {\n  domain_id   = %q\n  slug        = \"spring\"\n  destination = \"https://shop.example.com/spring\"\n  depends_on  = [%s]\n}\n", name, s.fx.DomainID, dependsOn)
	}
	w := s.appliedWorkdir(t, "copied-block", "provider \"shortlink\" {}\n"+block("kept", ""))
	ctx := context.Background()
	kept := stateIDs(t, w)
	if err := w.WriteFile("main.tf", clitest.RequiredProviders+"provider \"shortlink\" {}\n"+block("kept", "")+block("copy", "shortlink_link.kept")); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(ctx, w, "apply", "-auto-approve"); err != nil || !strings.Contains(out, `Slug "spring" held by a link of this configuration`) {
		t.Fatalf("apply of the copy: %v; want it warned of\n%s", err, out)
	}
	for _, command := range [][]string{{"plan"}, {"destroy", "-auto-approve"}} {
		out, err := runCLI(ctx, w, command...)
		if err == nil || !strings.Contains(out, "Link managed twice") || !strings.Contains(out, kept[0]) {
			t.Fatalf("%s with two resources naming link %s: %v; want it refused, naming the link\n%s", command, kept[0], err, out)
		}
	}
	if out, err := w.Terraform(ctx, runLimit, "state", "rm", "shortlink_link.copy"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := w.WriteFile("main.tf", clitest.RequiredProviders+"provider \"shortlink\" {}\n"+block("kept", "")); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(ctx, w, "plan", "-detailed-exitcode"); err != nil {
		t.Fatalf("plan after state rm: %v; want no changes\n%s", err, out)
	}
	if links := s.srv.Links(s.fx.AccountID); len(links) != 1 || links[0].ID != kept[0] {
		t.Fatalf("the service holds %d links; want the one link %s, kept throughout", len(links), kept[0])
	}
}

// TestLeftovers_targetedRenameIsCaughtBeforeItsLinkIsDeleted: a resource
// renamed without a moved block and applied with -target on its new
// address takes over the link its old address holds, which that run does
// not read: the apply says what to do, and the next refreshed plan fails
// before destroying the old address can delete the link both name.
func TestLeftovers_targetedRenameIsCaughtBeforeItsLinkIsDeleted(t *testing.T) {
	s, w, linkID := targetedRename(t)
	ctx := context.Background()
	for _, plan := range [][]string{{"plan"}, {"plan", "-refresh=false"}} {
		out, err := runCLI(ctx, w, plan...)
		if err == nil || !strings.Contains(out, "Link managed twice") {
			t.Fatalf("%s with two addresses naming link %s: %v; want it refused\n%s", strings.Join(plan, " "), linkID, err, out)
		}
	}
	// A run that leaves the new address out is not stopped, as the
	// interrupted-runs guide says: its destroy of the old one would delete the link.
	if out, err := runCLI(ctx, w, "plan", "-destroy", "-target=shortlink_link.winter"); err != nil || !strings.Contains(out, "1 to destroy") {
		t.Fatalf("a destroy plan targeted at the old address: %v; want it to plan the destroy\n%s", err, out)
	}
	if out, err := w.Terraform(ctx, runLimit, "state", "rm", "shortlink_link.winter"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := runCLI(ctx, w, "plan", "-detailed-exitcode"); err != nil {
		t.Fatalf("plan after state rm of the old address: %v; want no changes\n%s", err, out)
	}
	if links := s.srv.Links(s.fx.AccountID); len(links) != 1 || links[0].ID != linkID {
		t.Fatalf("the service holds %d links; want the one link %s, kept throughout", len(links), linkID)
	}
}

// TestLeftovers_targetedDestroyOfTheOldAddressDeletesTheLink holds the
// interrupted-runs guide to what it says no check catches: after the
// targeted rename above, a destroy targeted at the old address reads only
// that address, so no plan sees two addresses name the link, and the
// destroy deletes the link the new address now holds. A `moved` block is
// the guide's answer; this test fails if the provider ever catches it,
// and the guide must then say so.
func TestLeftovers_targetedDestroyOfTheOldAddressDeletesTheLink(t *testing.T) {
	s, w, linkID := targetedRename(t)
	out, err := runCLI(context.Background(), w, "destroy", "-auto-approve", "-target=shortlink_link.winter")
	if err != nil {
		t.Fatalf("destroy -target of the old address: %v\n%s", err, out)
	}
	if links := s.srv.Links(s.fx.AccountID); len(links) != 0 {
		t.Fatalf("the service holds %d links after destroying the old address; the guide says link %s is deleted", len(links), linkID)
	}
}

// targetedRename applies a link at shortlink_link.winter, renames the
// resource to winter_sale without a moved block and applies -target on the
// new address, which takes over the link: both addresses then hold it.
func targetedRename(t *testing.T) (*service, *clitest.Workdir, string) {
	t.Helper()
	s := newService(t, instantFilter)
	block := func(name string) string {
		return "provider \"shortlink\" {}\n" + linkBlock(name, s.fx.DomainID, "winter", "https://shop.example.com/winter")
	}
	w := s.appliedWorkdir(t, "targeted-rename", block("winter"))
	kept := stateIDs(t, w)
	if err := w.WriteFile("main.tf", clitest.RequiredProviders+block("winter_sale")); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(context.Background(), w, "apply", "-auto-approve", "-target=shortlink_link.winter_sale")
	flat := strings.Join(strings.Fields(out), " ")
	if err != nil || !strings.Contains(flat, "Took over link "+kept[0]) || !strings.Contains(flat, "applied with -target") || !strings.Contains(flat, "run `terraform state rm` on that address") {
		t.Fatalf("targeted apply of the new address: %v; want link %s taken over, saying what to do\n%s", err, kept[0], out)
	}
	return s, w, kept[0]
}

// TestLeftovers_replaceCreatedBeforeDestroyKeepsTheLink: `apply -replace`
// of a link with a fixed slug and create_before_destroy meets its own old
// link on the slug. Within adoption_window the link stays on the service,
// the same link, named by the state; with "0s" (as for a link older than
// the window) the create fails with 409 and says what to do, and the link
// is kept as it was.
func TestLeftovers_replaceCreatedBeforeDestroyKeepsTheLink(t *testing.T) {
	s := newService(t, instantFilter)
	config := func(provider string) string {
		return "provider \"shortlink\" {" + provider + "}\n" + createdBeforeDestroy(linkBlock("sale", s.fx.DomainID, "sale", "https://shop.example.com/sale"))
	}
	w := s.appliedWorkdir(t, "replace-cbd", config(""))
	ctx := context.Background()
	before := stateIDs(t, w)
	out, err := runCLI(ctx, w, "apply", "-auto-approve", "-replace=shortlink_link.sale")
	t.Logf("apply -replace: %v\n%s", err, out)
	links := s.srv.Links(s.fx.AccountID)
	if after := stateIDs(t, w); len(links) != 1 || len(after) != 1 || links[0].ID != after[0] || after[0] != before[0] {
		t.Fatalf("the service holds %d links and the state %v (before %v); want the one link, the same, named by the state", len(links), after, before)
	}
	if !strings.Contains(out, "Warning: Link kept for the object that took it over") {
		t.Errorf("the replacement's destroy left the link without its warning:\n%s", out)
	}
	if out, err := runCLI(ctx, w, "plan", "-detailed-exitcode"); err != nil {
		t.Fatalf("plan after the replacement: %v; want no changes\n%s", err, out)
	}

	if err := w.WriteFile("main.tf", clitest.RequiredProviders+config("\n  adoption_window = \"0s\"\n")); err != nil {
		t.Fatal(err)
	}
	out, err = runCLI(ctx, w, "apply", "-auto-approve", "-replace=shortlink_link.sale")
	flat := strings.Join(strings.Fields(out), " ")
	if err == nil || !strings.Contains(flat, "409") || !strings.Contains(flat, "remove create_before_destroy") {
		t.Fatalf("apply -replace with adoption_window 0s: %v; want the create refused with 409, saying what to do\n%s", err, out)
	}
	if links := s.srv.Links(s.fx.AccountID); len(links) != 1 || links[0].ID != before[0] {
		t.Fatalf("the service holds %d links; want the one link %s, kept", len(links), before[0])
	}
	if after := stateIDs(t, w); len(after) != 1 || after[0] != before[0] {
		t.Fatalf("the state names %v; want the link %s it named before", after, before[0])
	}
}

// TestLeftovers_renamedOldLinksWithoutMovedLoseNoLink: the same rename of
// links older than adoption_window ("0s" here). A create that Terraform
// sends before the old link's delete meets a 409 whose holder it may not
// take over; it fails and says to apply again, which creates the link
// anew. No link is lost or made twice, whichever order Terraform takes.
func TestLeftovers_renamedOldLinksWithoutMovedLoseNoLink(t *testing.T) {
	s := newService(t, instantFilter)
	const n = 20
	config := func(name string) string {
		return fmt.Sprintf("provider \"shortlink\" {\n  adoption_window = \"0s\"\n}\nresource \"shortlink_link\" %q {\n  count       = %d\n  domain_id   = %q\n  slug        = \"sale-${count.index}\"\n  destination = \"https://shop.example.com/sale/${count.index}\"\n}\n", name, n, s.fx.DomainID)
	}
	w := s.appliedWorkdir(t, "renamed-old", config("old"))
	ctx := context.Background()
	for _, name := range []string{"renamed", "again"} {
		if err := w.WriteFile("main.tf", clitest.RequiredProviders+config(name)); err != nil {
			t.Fatal(err)
		}
		out, err := runCLI(ctx, w, "apply", "-auto-approve")
		if err != nil {
			failed := strings.Count(out, "Error: Could not create the link")
			if failed == 0 || strings.Count(strings.Join(strings.Fields(out), " "), "run the apply again once this one has ended") != failed {
				t.Fatalf("the rename to %s failed otherwise than on creates sent before their old link's delete, each saying to apply again:\n%s", name, out)
			}
			if out, err := runCLI(ctx, w, "apply", "-auto-approve"); err != nil {
				t.Fatalf("the apply after the rename to %s: %v\n%s", name, err, out)
			}
		}
		onService := map[string]bool{}
		for _, l := range s.srv.Links(s.fx.AccountID) {
			onService[l.ID] = true
		}
		ids := stateIDs(t, w)
		if len(onService) != n || len(ids) != n {
			t.Fatalf("after the rename to %s the service holds %d links and the state names %d, want %d each", name, len(onService), len(ids), n)
		}
		for _, id := range ids {
			if !onService[id] {
				t.Fatalf("after the rename to %s the state names link %s, which the service no longer has", name, id)
			}
		}
	}
}

// TestLeftovers_renamedWithoutMovedLosesNoLink: resources renamed without a
// moved block are destroyed and created again at the same slugs, in one
// apply, in any order. A create that meets a link whose delete this apply
// has sent (slow here) does not take it over, which would leave the state
// naming a deleted link: it waits for the delete and sends its POST again.
// The plan passes every time, whatever order Terraform plans in, and so
// does the apply, slow deletes or not.
func TestLeftovers_renamedWithoutMovedLosesNoLink(t *testing.T) {
	s := newService(t, instantFilter)
	const n = 20
	block := func(name string) string {
		return fmt.Sprintf("resource \"shortlink_link\" %q {\n  count       = %d\n  domain_id   = %q\n  slug        = \"sale-${count.index}\"\n  destination = \"https://shop.example.com/sale/${count.index}\"\n}\n", name, n, s.fx.DomainID)
	}
	w := s.appliedWorkdir(t, "renamed", "provider \"shortlink\" {}\n"+block("old"))
	ctx := context.Background()
	if err := w.WriteFile("main.tf", clitest.RequiredProviders+"provider \"shortlink\" {}\n"+block("renamed")); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		out, err := runCLI(ctx, w, "plan")
		if err != nil {
			t.Fatalf("plan of the rename: %v\n%s", err, out)
		}
		// Each slug has a warning of its own (the slug is in its title,
		// so Terraform folds none), and each names the moved block.
		flat := strings.Join(strings.Fields(out), " ")
		for i := range n {
			if !strings.Contains(out, fmt.Sprintf("Warning: Slug \"sale-%d\" ", i)) {
				t.Fatalf("the plan of the rename has no warning on the slug sale-%d:\n%s", i, out)
			}
		}
		if strings.Count(flat, "a moved block keeps") < n {
			t.Fatalf("the plan's warnings do not each name the moved block:\n%s", out)
		}
	}
	stateOnService := func(when string) (ids []string, onService map[string]bool) {
		onService = map[string]bool{}
		for _, l := range s.srv.Links(s.fx.AccountID) {
			onService[l.ID] = true
		}
		ids = stateIDs(t, w)
		for _, id := range ids {
			if !onService[id] {
				t.Errorf("%s, the state names link %s, which the service no longer has", when, id)
			}
		}
		return ids, onService
	}
	for _, slowDeletes := range []bool{false, true} {
		if slowDeletes {
			if err := w.WriteFile("main.tf", clitest.RequiredProviders+"provider \"shortlink\" {}\n"+block("again")); err != nil {
				t.Fatal(err)
			}
			for range n {
				s.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultDelay, Delay: emulator.Duration(time.Second), Method: http.MethodDelete, Path: "/api/links/{id}"})
			}
		}
		if out, err := runCLI(ctx, w, "apply", "-auto-approve"); err != nil {
			t.Fatalf("the rename's apply (slow deletes %t): %v\n%s", slowDeletes, err, out)
		}
		stateOnService(fmt.Sprintf("after the rename's apply (slow deletes %t)", slowDeletes))
	}
	ids, onService := stateOnService("at the end")
	if len(ids) != n || len(onService) != n {
		t.Errorf("the state names %d links and the service holds %d, want %d each", len(ids), len(onService), n)
	}
	if out, err := runCLI(ctx, w, "plan", "-detailed-exitcode"); err != nil {
		t.Fatalf("plan after: %v; want no changes\n%s", err, out)
	}
}

// TestLeftovers_replaceWithoutSlugWhoseAnswerIsLost: `apply -replace` of a
// link without a slug, with create_before_destroy, whose create is
// answered 504 before the service makes the link. The old link is
// identical and seconds old, so the create's search cannot tell it from
// the new one by what it declares or when it was made.
//   - The service makes the link before the search lists: the search
//     takes the newer link, the old one is deleted, and the state names the
//     new one.
//   - The service makes it after, but before the create has looked again
//     (1, 2 and 4 s later): the create takes the newer link, as above.
//   - The service makes it after the create has looked again (about 11 s):
//     the search takes the old link, which stays, and the old object's
//     destroy finds the link the create made and names it in a warning,
//     for no state records it.
func TestLeftovers_replaceWithoutSlugWhoseAnswerIsLost(t *testing.T) {
	for name, tc := range map[string]struct {
		serviceTakes time.Duration // from the 504 to the link made
		replaced     bool
	}{
		"made before the search": {0, true},
		"made after the search":  {4 * time.Second, true},
		// The create lists at about 1, 3, 6 and 11 s, the old object's
		// destroy at about 12, 14 and 17 s: 14 s lies between them.
		"made after the create looks": {14 * time.Second, false},
	} {
		t.Run(name, func(t *testing.T) {
			s := newService(t, instantFilter)
			config := createdBeforeDestroy(linkBlock("spring", s.fx.DomainID, "", "https://shop.example.com/spring"))
			w := s.appliedWorkdir(t, "replace-lost-"+strings.Join(strings.Fields(name)[1:], "-"), config)
			before := stateIDs(t, w)
			s.loseNextCreateAnswer(t, tc.serviceTakes)
			out, err := runCLI(context.Background(), w, "apply", "-auto-approve", "-replace=shortlink_link.spring")
			if err != nil {
				t.Fatalf("apply -replace: %v\n%s", err, out)
			}
			after, held := stateIDs(t, w), s.linkIDs()
			if !tc.replaced {
				var made string
				for _, id := range held {
					if id != before[0] {
						made = id
					}
				}
				if len(held) != 2 || len(after) != 1 || after[0] != before[0] {
					t.Fatalf("the service holds %v, the state %v (before %v); want the old link kept in the state, and the create's beside it", held, after, before)
				}
				flat := strings.Join(strings.Fields(out), " ")
				if !strings.Contains(flat, "Warning: Link kept: a create without a slug took it for its own") || !strings.Contains(flat, "The service made link "+made) {
					t.Errorf("the old object's destroy did not name the link %s the create made:\n%s", made, out)
				}
				return
			}
			if len(held) != 1 || len(after) != 1 || after[0] != held[0] || after[0] == before[0] {
				t.Fatalf("the service holds %v, the state %v (before %v); want the new link alone, named by the state", held, after, before)
			}
		})
	}
}

// TestLeftovers_linkAddedBesideIdenticalOnesWhoseAnswerIsLost: a count
// grown by one link without a slug, identical to the one already there,
// whose create is answered 504 before the service makes the link. The
// apply never read the first link, which is seconds old, so the create's
// search finds it before the service has made the new one, and no destroy
// tells the provider so. The create looks again, takes the newer link, and
// each instance names its own.
func TestLeftovers_linkAddedBesideIdenticalOnesWhoseAnswerIsLost(t *testing.T) {
	s := newService(t, instantFilter)
	config := func(n int) string {
		return fmt.Sprintf("resource \"shortlink_link\" \"spring\" {\n  count       = %d\n  domain_id   = %q\n  destination = \"https://shop.example.com/spring\"\n}\n", n, s.fx.DomainID)
	}
	w := s.appliedWorkdir(t, "added-beside-identical", config(1))
	if err := w.WriteFile("main.tf", clitest.RequiredProviders+config(2)); err != nil {
		t.Fatal(err)
	}
	s.loseNextCreateAnswer(t, 4*time.Second)
	out, err := runCLI(context.Background(), w, "apply", "-auto-approve")
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	state, held := sorted(stateIDs(t, w)), sorted(s.linkIDs())
	if len(state) != 2 || state[0] == state[1] || strings.Join(state, " ") != strings.Join(held, " ") {
		t.Fatalf("the state names %v, the service holds %v; want each instance to name its own link, and no other", state, held)
	}
}

// identicalPair applies two identical links without a slug, with
// create_before_destroy (count = 2), made a second apart: createdAt is
// kept to the second. It returns the working directory and the older
// link's ID.
func (s *service) identicalPair(t *testing.T, name string) (*clitest.Workdir, string) {
	t.Helper()
	config := func(n int) string {
		return fmt.Sprintf("resource \"shortlink_link\" \"spring\" {\n  count       = %d\n  domain_id   = %q\n  destination = \"https://shop.example.com/spring\"\n  lifecycle {\n    create_before_destroy = true\n  }\n}\n", n, s.fx.DomainID)
	}
	w := s.appliedWorkdir(t, name, config(1))
	older := stateIDs(t, w)[0]
	time.Sleep(time.Second)
	if err := w.WriteFile("main.tf", clitest.RequiredProviders+config(2)); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(context.Background(), w, "apply", "-auto-approve"); err != nil {
		t.Fatalf("the second apply: %v\n%s", err, out)
	}
	return w, older
}

// TestLeftovers_replaceTheNewerOfIdenticalLinksWhoseAnswerIsLost: `apply
// -replace` of the newer of two identical links without a slug, with
// create_before_destroy, whose create is answered 504 and whose link the
// service makes only after every look. The search takes the replaced
// object's link, the newest, and its destroy looks for the link the create
// made: the other instance's link, older and never read by the apply, is
// not it, and the warning does not name it as a link to delete.
func TestLeftovers_replaceTheNewerOfIdenticalLinksWhoseAnswerIsLost(t *testing.T) {
	s := newService(t, instantFilter)
	w, older := s.identicalPair(t, "replace-newer")
	ctx := context.Background()
	s.loseNextCreateAnswer(t, 25*time.Second)
	out, err := runCLI(ctx, w, "apply", "-auto-approve", "-replace=shortlink_link.spring[1]")
	if err != nil {
		t.Fatalf("apply -replace: %v\n%s", err, out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	if strings.Contains(flat, "The service made link "+older) || !strings.Contains(flat, "The service may still make a link for that create") {
		t.Errorf("the warning names the other instance's link %s, or not the link still to come:\n%s", older, out)
	}
}

// TestLeftovers_replaceTheOlderOfIdenticalLinksWhoseAnswerIsLost: `apply
// -replace` of the older of two identical links without a slug, with
// create_before_destroy, whose create is answered 504 and whose link the
// service makes only after the create has looked again (about 11 s; at
// 14 s). The
// search takes the newest identical link, the other instance's, which two
// objects then name; the replaced object's link is deleted. Its destroy
// finds the link the create made and names it in a warning, for no state
// records it, and the next plan stops on the link two objects name.
func TestLeftovers_replaceTheOlderOfIdenticalLinksWhoseAnswerIsLost(t *testing.T) {
	s := newService(t, instantFilter)
	w, _ := s.identicalPair(t, "replace-older")
	ctx := context.Background()
	s.loseNextCreateAnswer(t, 14*time.Second)
	out, err := runCLI(ctx, w, "apply", "-auto-approve", "-replace=shortlink_link.spring[0]")
	if err != nil {
		t.Fatalf("apply -replace: %v\n%s", err, out)
	}
	var made []string
	state := stateIDs(t, w)
	for _, id := range s.linkIDs() {
		if !slices.Contains(state, id) {
			made = append(made, id)
		}
	}
	if len(made) != 1 || !strings.Contains(out, "Warning: Link "+made[0]+" is in no state") {
		t.Fatalf("the service holds %v besides the state's %v; want the one link the create made, named in a warning:\n%s", made, state, out)
	}
	// Two objects now name one link: the next plan stops on it, before a
	// destroy of either could delete it.
	held := s.linkIDs()
	if out, err := runCLI(ctx, w, "plan"); err == nil || !strings.Contains(out, "Error: Link managed twice") {
		t.Errorf("the plan after: %v; want it to fail on the link two objects name\n%s", err, out)
	}
	if got := s.linkIDs(); !slices.Equal(got, held) {
		t.Errorf("the service holds %v after the plan, want %v", got, held)
	}
}

// TestLeftovers_twoAliasesShareOneSlugsLink holds the interrupted-runs
// guide to the limit it states: resources under two provider
// configurations on one key, which Terraform runs in two processes, that
// declare one slug are not refused as a slug declared twice. The apply
// that comes second takes over the link the first made, saying so, both
// objects name the link, and the next plan sees nothing wrong. This test
// fails if the provider ever catches it, and the guide must then say so.
func TestLeftovers_twoAliasesShareOneSlugsLink(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	var config strings.Builder
	for _, alias := range []string{"east", "west"} {
		fmt.Fprintf(&config, "provider \"shortlink\" {\n  alias = %q\n}\nresource \"shortlink_link\" %q {\n  provider    = shortlink.%s\n  domain_id   = %q\n  slug        = \"launch\"\n  destination = \"https://shop.example.com/launch\"\n}\n", alias, alias, alias, s.fx.DomainID)
	}
	w := s.workdir(t, "two-aliases", config.String())
	ctx := context.Background()
	out, err := runCLI(ctx, w, "apply", "-auto-approve")
	if err != nil || !strings.Contains(out, "Warning: Took over link") {
		t.Fatalf("apply of one slug under two aliases: %v; want it applied, the second taking over the first's link\n%s", err, out)
	}
	ids := stateIDs(t, w)
	if len(ids) != 2 || ids[0] != ids[1] || len(s.linkIDs()) != 1 {
		t.Fatalf("the state names links %v and the service holds %v; want both objects naming the one link", ids, s.linkIDs())
	}
	if out, err := runCLI(ctx, w, "plan", "-detailed-exitcode"); err != nil {
		t.Fatalf("plan after the apply: %v; the guide says nothing catches two aliases naming one link\n%s", err, out)
	}
}

// TestLeftovers_importIntoASecondResourceFailsItsPlan holds the
// troubleshooting guide to what it states: an import block that brings a
// link another resource manages into a second resource fails its own plan
// with "Link managed twice", whether the second resource declares the
// link as it is or with another slug (which would plan a replacement that
// deletes the link the first names), and the link is kept; without the
// import block and its resource, the plan has no changes. The import
// command, which plans nothing, brings the link in all the same: every
// plan after it, a destroy's too, fails so, and following the error's
// advice (state rm of the imported address, its block removed) leaves a
// plan with no changes.
func TestLeftovers_importIntoASecondResourceFailsItsPlan(t *testing.T) {
	t.Parallel()
	for name, copySlug := range map[string]string{"same values": "summer", "another slug": "summer-2"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newService(t, instantFilter)
			original := linkBlock("summer", s.fx.DomainID, "summer", summerPage)
			w := s.appliedWorkdir(t, "import-twice", "provider \"shortlink\" {}\n"+original)
			skipBelow(t, w, 5, 6, "an import block")
			linkID := stateIDs(t, w)[0]
			config := clitest.RequiredProviders + "provider \"shortlink\" {}\n" + original + linkBlock("summer_copy", s.fx.DomainID, copySlug, summerPage) +
				fmt.Sprintf("import {\n  to = shortlink_link.summer_copy\n  id = %q\n}\n", linkID)
			if err := w.WriteFile("main.tf", config); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			// The advice the troubleshooting guide quotes for this mistake.
			const advice = "Keep it in one: remove an import block of this run that brings the link in (with its resource block), or run terraform state rm on the address that should let the link go"
			for _, command := range [][]string{{"plan"}, {"apply", "-auto-approve"}} {
				out, err := runCLI(ctx, w, command...)
				if err == nil || !strings.Contains(out, "Link managed twice") || !strings.Contains(strings.Join(strings.Fields(strings.ReplaceAll(out, "`", "")), " "), advice) {
					t.Fatalf("%s of the import into a second resource: %v; want it to fail with Link managed twice, advising %q\n%s", command[0], err, advice, out)
				}
			}
			if ids := stateIDs(t, w); len(ids) != 1 || ids[0] != linkID {
				t.Fatalf("the state names links %v; want only link %s", ids, linkID)
			}
			// What the error advises first: the import block removed, with its resource block.
			if err := w.WriteFile("main.tf", clitest.RequiredProviders+"provider \"shortlink\" {}\n"+original); err != nil {
				t.Fatal(err)
			}
			if out, err := runCLI(ctx, w, "plan", "-detailed-exitcode"); err != nil {
				t.Fatalf("plan without the import block: %v; want no changes\n%s", err, out)
			}
			// The import command plans nothing: the plans after it fail.
			if err := w.WriteFile("main.tf", clitest.RequiredProviders+"provider \"shortlink\" {}\n"+original+linkBlock("summer_copy", s.fx.DomainID, copySlug, summerPage)); err != nil {
				t.Fatal(err)
			}
			if out, err := w.Terraform(ctx, runLimit, "import", "shortlink_link.summer_copy", linkID); err != nil {
				t.Fatalf("terraform import into a second resource: %v\n%s", err, out)
			}
			for _, command := range [][]string{{"plan"}, {"destroy", "-auto-approve"}} {
				out, err := runCLI(ctx, w, command...)
				if err == nil || !strings.Contains(out, "Link managed twice") {
					t.Fatalf("%s after terraform import: %v; want it to fail with Link managed twice\n%s", command[0], err, out)
				}
			}
			// A run that leaves the other address out is not stopped, as the
			// resource's page says: the provider sees only what a run includes.
			leaveOut := []string{"-target=shortlink_link.summer_copy"}
			if isOpenTofu(t, w) {
				leaveOut = append(leaveOut, "-exclude=shortlink_link.summer")
			}
			for _, flag := range leaveOut {
				if out, err := runCLI(ctx, w, "plan", "-destroy", flag); err != nil || !strings.Contains(out, "1 to destroy") {
					t.Fatalf("a destroy plan with %s: %v; want it to plan the imported address's destroy\n%s", flag, err, out)
				}
			}
			if ids := s.linkIDs(); len(ids) != 1 || ids[0] != linkID {
				t.Fatalf("the service holds links %v; want link %s kept", ids, linkID)
			}
			// What the error advises: state rm on the address imported, its block removed.
			if out, err := w.Terraform(ctx, runLimit, "state", "rm", "shortlink_link.summer_copy"); err != nil {
				t.Fatalf("state rm of the imported address: %v\n%s", err, out)
			}
			if err := w.WriteFile("main.tf", clitest.RequiredProviders+"provider \"shortlink\" {}\n"+original); err != nil {
				t.Fatal(err)
			}
			if out, err := runCLI(ctx, w, "plan", "-detailed-exitcode"); err != nil {
				t.Fatalf("plan once the import is undone: %v; want no changes\n%s", err, out)
			}
		})
	}
}

// TestLeftovers_removedAndImportedInOneRunMovesTheLink: a removed block
// that lets a resource go and an import block that brings its link into
// another address, in one run, move the link by hand (what a moved block
// does): the plan names one object per link, and the apply keeps the link.
func TestLeftovers_removedAndImportedInOneRunMovesTheLink(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	w := s.appliedWorkdir(t, "move-by-hand", "provider \"shortlink\" {}\n"+linkBlock("summer", s.fx.DomainID, "summer", summerPage))
	skipBelow(t, w, 7, 10, "a removed block with a lifecycle block")
	linkID := stateIDs(t, w)[0]
	config := clitest.RequiredProviders + "provider \"shortlink\" {}\n" + linkBlock("summer_sale", s.fx.DomainID, "summer", summerPage) +
		"removed {\n  from = shortlink_link.summer\n  lifecycle {\n    destroy = false\n  }\n}\n" +
		fmt.Sprintf("import {\n  to = shortlink_link.summer_sale\n  id = %q\n}\n", linkID)
	if err := w.WriteFile("main.tf", config); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(context.Background(), w, "apply", "-auto-approve"); err != nil || !strings.Contains(out, "1 imported, 0 added, 0 changed, 0 destroyed") {
		t.Fatalf("apply of the move by hand: %v; want the link imported at its new address\n%s", err, out)
	}
	if ids := stateIDs(t, w); len(ids) != 1 || ids[0] != linkID {
		t.Fatalf("the state names links %v; want only link %s", ids, linkID)
	}
	if ids := s.linkIDs(); len(ids) != 1 || ids[0] != linkID {
		t.Fatalf("the service holds links %v; want link %s kept", ids, linkID)
	}
}

// summerPage is where the links of the import and move tests lead.
const summerPage = "https://shop.example.com/summer"

// linkBlock is a shortlink_link resource named name, at slug on domainID
// (none where slug is empty), that leads to destination.
func linkBlock(name, domainID, slug, destination string) string {
	block := fmt.Sprintf("resource \"shortlink_link\" %q {\n  domain_id   = %q\n", name, domainID)
	if slug != "" {
		block += fmt.Sprintf("  slug        = %q\n", slug)
	}
	return block + fmt.Sprintf("  destination = %q\n}\n", destination)
}

// createdBeforeDestroy gives a block of linkBlock's the lifecycle that
// replaces its link by creating the new one first.
func createdBeforeDestroy(block string) string {
	return strings.TrimSuffix(block, "}\n") + "  lifecycle {\n    create_before_destroy = true\n  }\n}\n"
}

// loseNextCreateAnswer has the gateway answer the next create 504 before
// the service makes its link, which the service then makes serviceTakes
// later (its filter).
func (s *service) loseNextCreateAnswer(t *testing.T, serviceTakes time.Duration) {
	t.Helper()
	if err := s.srv.UpdateSettings(func(st *emulator.Settings) { st.Filter.Delay = emulator.Duration(serviceTakes) }); err != nil {
		t.Fatal(err)
	}
	s.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultAnswerBeforeCommit, Method: http.MethodPost})
}
