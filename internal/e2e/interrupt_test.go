package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/clitest"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
	"github.com/shortlink/terraform-provider-shortlink/internal/testsupport"
)

// writeDelay is how long the emulator's fraud filter takes on every create
// and change of destination: the service's writes are slow, and a slow
// write is what an interrupt catches in flight.
const writeDelay = 4 * time.Second

// runLimit bounds one CLI run; it only turns a hang into a failure.
const runLimit = 5 * time.Minute

// instantFilter is the setting of a test whose writes need not be slow.
func instantFilter(st *emulator.Settings) { st.Filter.Delay = 0 }

// service is an emulator with slow writes, served on loopback, whose writes
// are tracked.
type service struct {
	srv    *emulator.Server
	fx     emulator.Fixture
	url    string
	writes *testsupport.WriteTracker
}

func newService(t *testing.T, change ...func(*emulator.Settings)) *service {
	t.Helper()
	s := &service{}
	svc := testsupport.Start(t, testsupport.Options{
		Settings: func(st *emulator.Settings) {
			st.Filter.Delay = emulator.Duration(writeDelay)
			for _, c := range change {
				c(st)
			}
		},
		Wrap: func(h http.Handler) http.Handler {
			s.writes = testsupport.NewWriteTracker(h)
			return s.writes
		},
	})
	s.srv, s.fx, s.url = svc.Server, svc.Fixture, svc.URL
	return s
}

// client is a client of s with the account's key, as the dashboard or
// another tool would change the account beside Terraform.
func (s *service) client(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{BaseURL: s.url, APIKey: s.fx.APIKey})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// workdir is a working directory configured for s.
func (s *service) workdir(t *testing.T, name, config string) *clitest.Workdir {
	t.Helper()
	w, err := cli(t).Workdir(name, map[string]string{"main.tf": clitest.RequiredProviders + config},
		"SHORTLINK_BASE_URL="+s.url, "SHORTLINK_API_KEY="+s.fx.APIKey)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// appliedWorkdir is workdir with config applied once, which must succeed:
// the start of a test about what later runs do to those links.
func (s *service) appliedWorkdir(t *testing.T, name, config string) *clitest.Workdir {
	t.Helper()
	w := s.workdir(t, name, config)
	if out, err := runCLI(context.Background(), w, "apply", "-auto-approve"); err != nil {
		t.Fatalf("the first apply: %v\n%s", err, out)
	}
	return w
}

// runCLI runs terraform in w as a pipeline does: no prompt, no colour.
func runCLI(ctx context.Context, w *clitest.Workdir, args ...string) (string, error) {
	return w.Terraform(ctx, runLimit, append(args, "-input=false", "-no-color")...)
}

// linkIDs are the IDs of the links the service holds.
func (s *service) linkIDs() []string {
	var ids []string
	for _, l := range s.srv.Links(s.fx.AccountID) {
		ids = append(ids, l.ID)
	}
	slices.Sort(ids)
	return ids
}

// campaign declares n links: with a slug when slugs(i), with UTM
// parameters on every third.
func campaign(domainID string, n int, slugs func(int) bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "provider \"shortlink\" {}\n")
	for i := range n {
		fmt.Fprintf(&b, "\nresource \"shortlink_link\" \"l%02d\" {\n  domain_id   = %q\n  destination = \"https://example.com/promo/%d\"\n", i, domainID, i)
		if slugs(i) {
			fmt.Fprintf(&b, "  slug        = \"promo-%d\"\n", i)
		}
		if i%3 == 0 {
			fmt.Fprintf(&b, "  utm = {\n    source   = \"newsletter\"\n    campaign = \"spring\"\n  }\n")
		}
		b.WriteString("}\n")
	}
	return b.String()
}

func halfWithSlugs(i int) bool { return i%2 == 0 }

// interruptApply starts an apply of config and sends sig to its process
// group once the service has answered some writes and others are in
// flight. It returns when the CLI has ended.
func interruptApply(t *testing.T, s *service, w *clitest.Workdir, sig syscall.Signal) (output string, signalled time.Time) {
	t.Helper()
	run, err := w.Start("apply", "-auto-approve", "-input=false", "-no-color")
	if err != nil {
		t.Fatal(err)
	}
	s.awaitWritesInFlight(t, run)
	signalled = time.Now()
	if err := run.Signal(sig); err != nil {
		t.Fatal(err)
	}
	out, err := run.Wait(runLimit)
	if err == nil {
		t.Fatalf("the interrupted apply succeeded; want it stopped:\n%s", out)
	}
	t.Logf("%s: the CLI exited %s after the signal (exit code %d); %d writes were in flight then",
		sig, run.Exited.Sub(signalled).Round(time.Millisecond), clitest.ExitCode(err), len(s.writes.InFlightAt(signalled)))
	return out, signalled
}

// awaitWritesInFlight returns once the service has answered some of run's
// writes and others are in flight: the moment to interrupt it.
func (s *service) awaitWritesInFlight(t *testing.T, run *clitest.Run) {
	t.Helper()
	deadline := time.Now().Add(runLimit)
	for {
		inFlight, answered := s.writes.Counts()
		if answered >= 5 && inFlight >= 3 {
			return
		}
		if time.Now().After(deadline) {
			out, _ := run.Wait(time.Second)
			t.Fatalf("the apply never had writes in flight to interrupt:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stateIDs are the link IDs the working directory's state records.
func stateIDs(t *testing.T, w *clitest.Workdir) []string {
	t.Helper()
	st, err := w.State()
	if err != nil {
		t.Fatal(err)
	}
	return idsOf(st)
}

// idsOf are the link IDs of state instances, sorted.
func idsOf(st []clitest.StateInstance) []string {
	var ids []string
	for _, in := range st {
		ids = append(ids, in.ID)
	}
	slices.Sort(ids)
	return ids
}

// finish applies again, checks exactly want links, an empty plan, and a
// destroy that leaves none of the configuration's links.
func finish(t *testing.T, s *service, w *clitest.Workdir, want int) string {
	t.Helper()
	ctx := context.Background()
	out, err := runCLI(ctx, w, "apply", "-auto-approve")
	if err != nil {
		t.Fatalf("the apply after the interrupted one failed: %v", err)
	}
	if got := len(s.linkIDs()); got != want {
		t.Fatalf("the service holds %d links after the second apply, want %d\n%s", got, want, out)
	}
	if plan, err := runCLI(ctx, w, "plan", "-detailed-exitcode"); err != nil {
		t.Fatalf("the plan after the second apply is not empty: %v\n%s", err, plan)
	}
	if _, err := runCLI(ctx, w, "destroy", "-auto-approve"); err != nil {
		t.Fatal(err)
	}
	return out
}

// signalsProcessGroups skips a test that signals a run's process group
// where there are none (Windows delivers no SIGINT to another process).
func signalsProcessGroups(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("signals a process group, which Windows has not")
	}
}

// TestInterrupt_gracefulStop: SIGINT (a Ctrl-C, a runner's cancel) or
// SIGTERM while creates are in flight. The writes already sent finish, so
// afterwards the service and the state hold the same links; the next apply
// creates the rest without an error, and nothing is duplicated.
func TestInterrupt_gracefulStop(t *testing.T) {
	signalsProcessGroups(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			s := newService(t)
			w := s.workdir(t, "graceful-"+strings.ReplaceAll(sig.String(), " ", "-"), campaign(s.fx.DomainID, 20, halfWithSlugs))
			out, _ := interruptApply(t, s, w, sig)
			if !strings.Contains(out, "Interrupt received") {
				t.Fatalf("the CLI did not stop gracefully:\n%s", out)
			}
			onService, inState := s.linkIDs(), stateIDs(t, w)
			if len(onService) == 0 || len(onService) == 20 {
				t.Fatalf("the service holds %d links; the interrupt should have come mid-apply", len(onService))
			}
			if !slices.Equal(onService, inState) {
				t.Fatalf("after the interrupt the service holds %d links and the state %d:\nservice %v\nstate   %v\n%s",
					len(onService), len(inState), onService, inState, out)
			}
			finish(t, s, w, 20)
			if n := len(s.linkIDs()); n != 0 {
				t.Fatalf("%d links left after destroy", n)
			}
		})
	}
}

// The stages of GitHub Actions' cancellation of a step, as its
// documentation ("Canceling a workflow") gives them: SIGINT to the step's
// process; SIGTERM to it if it has not exited 7.5 s later; the whole
// process tree killed 2.5 s after that.
const (
	actionsTermAfter = 7500 * time.Millisecond
	actionsKillAfter = 2500 * time.Millisecond
)

// cancelAsGitHubActions cancels run, a step's shell, as GitHub Actions'
// runner does, and says whether the tree had to be killed.
func cancelAsGitHubActions(run *clitest.Run) (out string, killed bool) {
	for _, stage := range []struct {
		sig   syscall.Signal
		grace time.Duration
	}{{syscall.SIGINT, actionsTermAfter}, {syscall.SIGTERM, actionsKillAfter}} {
		_ = run.SignalProcess(stage.sig) // the shell may have gone, its children not
		select {
		case <-run.Done():
			out, _ = run.Wait(0)
			return out, false
		case <-time.After(stage.grace):
		}
	}
	out, _ = run.Wait(0) // past its limit, Wait kills the tree
	return out, true
}

// TestInterrupt_cancelledGitHubActionsStep: GitHub Actions signals a
// step's shell, not Terraform. A step that execs Terraform makes it the
// shell's process, so it hears the SIGINT and stops gracefully: the service
// and the state hold the same links. Run as the shell's child, Terraform
// hears nothing, and is killed with the tree 10 s later, as a lost runner
// is (TestInterrupt_killed says what the next apply does then). The
// interrupted-runs guide tells users to exec it.
func TestInterrupt_cancelledGitHubActionsStep(t *testing.T) {
	signalsProcessGroups(t)
	const apply = `"$TF" apply -auto-approve -input=false -no-color`
	for name, step := range map[string]struct {
		script     string
		wantKilled bool
	}{
		"exec terraform":                 {script: "exec " + apply + "\n"},
		"terraform as the shell's child": {script: apply + "\necho applied\n", wantKilled: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newService(t)
			// 50 links outlast the 10 s the runner gives the step.
			w := s.workdir(t, "actions", campaign(s.fx.DomainID, 50, halfWithSlugs))
			run, err := w.StartScript(step.script)
			if err != nil {
				t.Fatal(err)
			}
			s.awaitWritesInFlight(t, run)
			cancelled := time.Now()
			out, killed := cancelAsGitHubActions(run)
			t.Logf("the step ended %s after the cancel (killed: %t)", time.Since(cancelled).Round(time.Millisecond), killed)
			if killed != step.wantKilled || strings.Contains(out, "Interrupt received") == step.wantKilled {
				t.Fatalf("the step was killed with its tree: %t, want %t; Terraform heard the interrupt: %t, want %t\n%s",
					killed, step.wantKilled, strings.Contains(out, "Interrupt received"), !step.wantKilled, out)
			}
			if step.wantKilled {
				return
			}
			if onService, inState := s.linkIDs(), stateIDs(t, w); len(onService) == 0 || !slices.Equal(onService, inState) {
				t.Fatalf("after the cancel the service holds %d links and the state %d:\nservice %v\nstate   %v\n%s",
					len(onService), len(inState), onService, inState, out)
			}
		})
	}
}

// TestInterrupt_killed: SIGKILL of the CLI and the provider while creates
// are in flight, as when a runner dies. The service carries the creates
// out, and no state records them. The next apply takes over every leftover
// that has a slug (a warning names each), so links with slugs end up
// exactly once; a leftover without a slug cannot be told apart from
// another configuration's link, so the plan names it in a warning (for the
// user to import or delete) and the apply creates a new link.
func TestInterrupt_killed(t *testing.T) {
	signalsProcessGroups(t)
	for name, slugs := range map[string]func(int) bool{
		"with slugs":    func(int) bool { return true },
		"without slugs": func(int) bool { return false },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, w, inState := killedApply(t, name, slugs)
			var leftovers []string
			for _, id := range s.linkIDs() {
				if !slices.Contains(inState, id) {
					leftovers = append(leftovers, id)
				}
			}
			if len(leftovers) == 0 {
				t.Fatal("the kill left no link unrecorded; it should have come while creates were in flight")
			}
			warning, want := ", which already held the slug", 20
			if !slugs(0) {
				warning, want = "Possible leftover of an interrupted run", 20+len(leftovers)
				// The plan names them, before the apply makes their twins.
				plan, err := runCLI(context.Background(), w, "plan")
				if err != nil {
					t.Fatal(err)
				}
				for _, id := range leftovers {
					if !strings.Contains(plan, "Warning: Possible leftover of an interrupted run: "+id) {
						t.Errorf("the plan's warnings do not name leftover %s:\n%s", id, plan)
					}
				}
			}
			out := finish(t, s, w, want)
			if got := strings.Count(out, warning); got < 1 {
				t.Fatalf("no warning %q in the second apply:\n%s", warning, out)
			}
			for _, id := range leftovers {
				if !strings.Contains(out, "Warning: Took over link "+id) && !strings.Contains(out, "Warning: Possible leftover of an interrupted run: "+id) {
					t.Errorf("the second apply's warnings do not name leftover %s:\n%s", id, out)
				}
			}
			var wantLeft []string // destroy removes what the state records
			if !slugs(0) {
				wantLeft = sorted(leftovers)
			}
			if remaining := s.linkIDs(); !slices.Equal(remaining, wantLeft) {
				t.Fatalf("after destroy the service holds %v, want %v", remaining, wantLeft)
			}
		})
	}
}

// killAttempts bounds the kills tried until one leaves a readable state.
const killAttempts = 3

// killedApply kills an apply while creates are in flight and returns the
// service, the working directory and the IDs its state records. A kill
// that lands while the CLI writes its local state leaves the file cut
// short, unreadable by Terraform too; that is the local backend's risk,
// not what this test is about, so the kill is tried again on a fresh
// service.
func killedApply(t *testing.T, name string, slugs func(int) bool) (*service, *clitest.Workdir, []string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		s := newService(t)
		w := s.workdir(t, fmt.Sprintf("killed-%s-%d", strings.ReplaceAll(name, " ", "-"), attempt), campaign(s.fx.DomainID, 20, slugs))
		interruptApply(t, s, w, syscall.SIGKILL)
		if err := s.writes.WaitIdle(2 * writeDelay); err != nil {
			t.Fatal(err)
		}
		st, err := w.State()
		if errors.Is(err, clitest.ErrStateCutShort) && attempt < killAttempts {
			t.Logf("attempt %d: %v; killing again", attempt, err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		return s, w, idsOf(st)
	}
}

func sorted(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// TestInterrupt_changeOutlivingGrace: a Ctrl-C while changes of
// destination are in the service's fraud filter, for longer than
// stop_grace_period. The service carries them out although the provider
// stopped waiting, so the error must not say nothing was changed: it says
// the change may have been made, and the next plan, which reads the links,
// finds every change made and has nothing to do.
func TestInterrupt_changeOutlivingGrace(t *testing.T) {
	signalsProcessGroups(t)
	s := newService(t)
	config := func(path string) string {
		c := campaign(s.fx.DomainID, 6, func(int) bool { return true })
		c = strings.Replace(c, `provider "shortlink" {}`, `provider "shortlink" { stop_grace_period = "500ms" }`, 1)
		return strings.ReplaceAll(c, "/promo/", path)
	}
	w := s.workdir(t, "change-outliving-grace", config("/promo/"))
	ctx := context.Background()
	if out, err := runCLI(ctx, w, "apply", "-auto-approve"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := w.WriteFile("main.tf", clitest.RequiredProviders+config("/autumn/")); err != nil {
		t.Fatal(err)
	}
	run, err := w.Start("apply", "-auto-approve", "-input=false", "-no-color")
	if err != nil {
		t.Fatal(err)
	}
	// The first change goes alone (its answer tells the rate limit), the
	// next alone too (its answer counts the runs on the key), the other
	// four together.
	deadline := time.Now().Add(time.Minute)
	for inFlight, _ := s.writes.Counts(); inFlight < 3; inFlight, _ = s.writes.Counts() {
		if time.Now().After(deadline) {
			out, _ := run.Wait(time.Second)
			t.Fatalf("the apply never had three changes in flight to interrupt:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	signalled := time.Now()
	if err := run.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	out, err := run.Wait(runLimit)
	if err == nil {
		t.Fatalf("the interrupted apply succeeded; want it stopped:\n%s", out)
	}
	if err := s.writes.WaitIdle(2 * writeDelay); err != nil {
		t.Fatal(err)
	}
	// A change may still leave between the signal and the provider's
	// cancellation, so the reports are counted against the changes the
	// provider stopped waiting for, of which those in flight at the signal
	// are a part.
	inFlight, abandoned := len(s.writes.InFlightAt(signalled)), s.writes.Abandoned()
	if abandoned < inFlight {
		t.Fatalf("%d changes were in flight at the signal, but the provider stopped waiting for only %d:\n%s", inFlight, abandoned, out)
	}
	unwrapped := strings.Join(strings.Fields(out), " ") // Terraform wraps diagnostics to its width
	if n := strings.Count(unwrapped, "The service may have carried it out"); n != abandoned {
		t.Fatalf("%d reports of a change possibly carried out; want one for each of the %d changes the provider stopped waiting for:\n%s", n, abandoned, out)
	}
	if plan, err := runCLI(ctx, w, "plan", "-detailed-exitcode"); err != nil {
		t.Fatalf("the plan after the interrupt is not empty, though the service made every change: %v\n%s", err, plan)
	}
}

// TestInterrupt_planWaitingToList: a Ctrl-C while a plan of new links waits
// for the read limit to list the account. The plan stops, and says only
// that it stopped: no warning that it "goes on without the check", which
// it does not.
func TestInterrupt_planWaitingToList(t *testing.T) {
	signalsProcessGroups(t)
	s := newService(t, func(st *emulator.Settings) {
		st.Variants.Paging, st.Variants.PageSize = "cursor", 1
		st.Limits.Read, st.Limits.Window = 1, emulator.Duration(time.Hour) // the second page waits an hour
	})
	if _, err := s.srv.SeedLinks(s.fx.DomainID, "seeded", 2); err != nil {
		t.Fatal(err)
	}
	w := s.workdir(t, "plan-waiting-to-list", campaign(s.fx.DomainID, 3, halfWithSlugs))
	run, err := w.Start("plan", "-input=false", "-no-color")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for s.srv.Count(http.MethodGet, "/api/links") < 1 {
		if time.Now().After(deadline) {
			out, _ := run.Wait(time.Second)
			t.Fatalf("the plan never listed:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // the first page answered; the second waits for the window
	if err := run.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	out, err := run.Wait(runLimit)
	if err == nil {
		t.Fatalf("the interrupted plan succeeded:\n%s", out)
	}
	unwrapped := strings.Join(strings.Fields(out), " ")
	for _, wrong := range []string{"not checked against the service", "goes on without the check"} {
		if strings.Contains(unwrapped, wrong) {
			t.Errorf("the interrupted plan says %q:\n%s", wrong, out)
		}
	}
	if !strings.Contains(out, "Interrupt received") {
		t.Errorf("the CLI did not stop gracefully:\n%s", out)
	}
}

// TestInterrupt_destroyOutlivingGrace: a Ctrl-C while the last deletes of
// a destroy are in the service, for longer than stop_grace_period. The
// service carries them out after the provider stopped waiting, so the
// domain is left with no link while the state still records them. A plan
// then warns that each such link was deleted after the interrupted run, and
// running the destroy again must finish it: the links the interrupted
// destroy deleted are not taken for the sign of another account's key (a
// domain that lists no link), which would stop the refresh.
func TestInterrupt_destroyOutlivingGrace(t *testing.T) {
	signalsProcessGroups(t)
	s := newService(t, instantFilter)
	w, out := s.destroyStoppedMidDelete(t, "destroy-outliving-grace", `stop_grace_period = "500ms"`, "bye", syscall.SIGINT)
	if n := len(stateIDs(t, w)); n == 0 {
		t.Fatalf("the state records no link; the signal should have come while a delete was in flight:\n%s", out)
	}
	// A plan's refresh says why the link leaves the state; a destroy's
	// says nothing, for Terraform drops the warnings of the refresh that
	// begins a destroy.
	if out, err := runCLI(context.Background(), w, "plan"); err != nil || !strings.Contains(out, "Warning: Link deleted by an earlier run") {
		t.Fatalf("the plan after the interrupted destroy: %v; want it to warn that the link was deleted after the interrupted run\n%s", err, out)
	}
	if out, err := runCLI(context.Background(), w, "destroy", "-auto-approve"); err != nil {
		t.Fatalf("the destroy after the interrupted one failed: %v\n%s", err, out)
	}
	if n := len(stateIDs(t, w)); n != 0 {
		t.Fatalf("the state still records %d links after the second destroy", n)
	}
}

// destroyStoppedMidDelete applies three links (slugs prefix-0 to prefix-2,
// the provider block holding settings), then destroys them while the
// service takes 3 s over each delete, and sends sig once the first two are
// answered and the last is in flight. It returns the working directory and
// the stopped destroy's output once the service has carried out every
// delete, which it checks.
func (s *service) destroyStoppedMidDelete(t *testing.T, name, settings, prefix string, sig syscall.Signal) (*clitest.Workdir, string) {
	t.Helper()
	config := "provider \"shortlink\" {\n  " + settings + "\n}\n"
	for i := range 3 {
		config += fmt.Sprintf("\nresource \"shortlink_link\" \"l%d\" {\n  domain_id   = %q\n  slug        = \"%s-%d\"\n  destination = \"https://example.com/%s/%d\"\n}\n", i, s.fx.DomainID, prefix, i, prefix, i)
	}
	w := s.appliedWorkdir(t, name, config)
	slowDelete := emulator.Fault{Kind: emulator.FaultDelay, Delay: emulator.Duration(3 * time.Second), Method: http.MethodDelete, Path: "/api/links/{id}"}
	s.srv.SetFaults(emulator.FaultPlan{Script: []emulator.Fault{slowDelete, slowDelete, slowDelete}})
	_, created := s.writes.Counts()
	run, err := w.Start("destroy", "-auto-approve", "-input=false", "-no-color")
	if err != nil {
		t.Fatal(err)
	}
	// The first delete goes alone, the second alone too (its answer counts
	// the runs on the key); the signal comes while the last is in flight.
	deadline := time.Now().Add(time.Minute)
	for inFlight, answered := s.writes.Counts(); inFlight < 1 || answered < created+2; inFlight, answered = s.writes.Counts() {
		if time.Now().After(deadline) {
			out, _ := run.Wait(time.Second)
			t.Fatalf("the destroy never had its last delete in flight to stop:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := run.Signal(sig); err != nil {
		t.Fatal(err)
	}
	out, err := run.Wait(runLimit)
	if err == nil {
		t.Fatalf("the destroy went on to succeed after %s; want it stopped:\n%s", sig, out)
	}
	if err := s.writes.WaitIdle(2 * writeDelay); err != nil {
		t.Fatal(err)
	}
	if n := len(s.linkIDs()); n != 0 {
		t.Fatalf("the service holds %d links; the stopped destroy's deletes should all have been carried out", n)
	}
	return w, out
}

// TestInterrupt_destroyKilled: a SIGKILL while the last deletes of a
// destroy are in the service. The service carries them out and no state
// records it, so the next destroy's refresh finds the domain empty, which
// is also what another account's key lists: it stops, keeping the state.
// Its error must name the killed destroy among the causes, and the way
// out it gives, a destroy that does not refresh, must finish the job.
func TestInterrupt_destroyKilled(t *testing.T) {
	signalsProcessGroups(t)
	s := newService(t, instantFilter)
	w, _ := s.destroyStoppedMidDelete(t, "destroy-killed", "", "gone", syscall.SIGKILL)
	st, err := w.State()
	if errors.Is(err, clitest.ErrStateCutShort) {
		t.Skipf("the kill cut the local state short, which is not what this test is about: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(st) == 0 {
		t.Fatal("the state records no link; the kill should have come while a delete was in flight")
	}
	ctx := context.Background()
	out, err := runCLI(ctx, w, "destroy", "-auto-approve")
	if err == nil {
		t.Fatalf("the destroy after the killed one succeeded; its refresh cannot tell the deleted links from another account's key:\n%s", out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"by a destroy or a replacement that was killed", "`terraform destroy -refresh=false`"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the destroy's error lacks %q:\n%s", want, out)
		}
	}
	if out, err := runCLI(ctx, w, "destroy", "-refresh=false", "-auto-approve"); err != nil {
		t.Fatalf("the destroy the error proposes failed: %v\n%s", err, out)
	}
	if n := len(stateIDs(t, w)); n != 0 {
		t.Fatalf("the state still records %d links", n)
	}
}
