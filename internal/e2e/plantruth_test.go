package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/clitest"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
	"github.com/shortlink/terraform-provider-shortlink/internal/links"
)

// The plan must tell the truth: random sequences of configuration edits,
// each planned, applied from the saved plan and planned again, against a
// model of the rules docs/resources/link.md states. A seed names one
// sequence, so a failure is replayed by running its seed alone.

// EnvPlanTruthSeeds widens the seeds run, for a longer search on one's own
// machine: a comma-separated list of seeds and ranges, such as "1-200" or
// "4,17,30-40".
const EnvPlanTruthSeeds = "PLANTRUTH_SEEDS"

// planTruthSeeds are the sequences CI runs; planTruthSteps the edits in
// each, after the first apply: three of eight, each against the two
// planTruthServices, take some 20 s on two cores.
var planTruthSeeds = []uint64{1, 2, 3}

const planTruthSteps = 8

// planFile is the saved plan each step applies: the apply carries out what
// was checked, not a plan made again.
const planFile = "tfplan"

// TestPlanTruth_randomEdits: at each step of a random sequence of edits
// (destination, UTM parameters, slug, expiry, domain; a link added or
// removed) the plan's action for each link is the one the documentation
// states, the apply sends exactly the writes that action implies, the plan
// after it is empty, and the service holds what the configuration says.
func TestPlanTruth_randomEdits(t *testing.T) {
	t.Parallel()
	cli(t) // skipped without TF_ACC, before any service starts
	for _, seed := range planTruthSeedsToRun(t) {
		for name, implementation := range planTruthServices {
			t.Run(fmt.Sprintf("seed=%d/%s", seed, name), func(t *testing.T) {
				t.Parallel()
				newTruthRun(t, seed, implementation).run()
			})
		}
	}
}

// planTruthServices are the services each seed runs against: the emulator
// as the contract reads the spec, and another implementation of the same
// spec, many of the emulator's switches at once (EMULATOR.md, "Switches"):
// other envelopes, field names and statuses, paging, UTM parameters merged
// into the destination, whole seconds.
var planTruthServices = map[string]func(*emulator.Settings){
	"spec": func(*emulator.Settings) {},
	"another implementation": func(s *emulator.Settings) {
		v := &s.Variants
		v.ObjectEnvelope, v.ListEnvelope, v.FieldStyle = "link", "items", "snake"
		v.CreateStatus, v.ChangeStatus, v.DeleteStatus = http.StatusOK, http.StatusNoContent, http.StatusOK
		v.Paging, v.PageSize = "cursor", 2
		v.UTMStyle, v.TimeFormat = "merged", "seconds"
	},
}

// planTruthSeedsToRun are planTruthSeeds, or those EnvPlanTruthSeeds names.
func planTruthSeedsToRun(t *testing.T) []uint64 {
	t.Helper()
	spec := os.Getenv(EnvPlanTruthSeeds)
	if spec == "" {
		return planTruthSeeds
	}
	var seeds []uint64
	for part := range strings.SplitSeq(spec, ",") {
		first, last, isRange := strings.Cut(strings.TrimSpace(part), "-")
		if !isRange {
			last = first
		}
		from, errFrom := strconv.ParseUint(first, 10, 64)
		to, errTo := strconv.ParseUint(last, 10, 64)
		if errFrom != nil || errTo != nil || to < from {
			t.Fatalf("%s=%q: want seeds and ranges such as 1-200,317", EnvPlanTruthSeeds, spec)
		}
		for seed := from; seed <= to; seed++ {
			seeds = append(seeds, seed)
		}
	}
	return seeds
}

// The values the generator writes. Each inner list spells one value in
// ways the documentation says mean the same; the instants are far apart
// and exact to the millisecond, away from the rounding of sub-second
// expiries to a service's precision, which is dealt with elsewhere.
var (
	destinationSpellings = [][]string{
		{"https://example.com/spring", "https://EXAMPLE.com/spring", "https://example.com:443/spring"},
		{"https://shop.example.com/sale?ref=nl", "https://Shop.Example.COM/sale?ref=nl", "https://shop.example.com:443/sale?ref=nl"},
		{"http://example.org/webinar", "http://EXAMPLE.ORG/webinar", "http://example.org:80/webinar"},
	}
	expirySpellings = [][]string{
		{"2027-01-31T23:59:59Z", "2027-01-31T23:59:59+00:00", "2027-02-01T00:59:59+01:00", "2027-01-31T23:59:59.000Z"},
		{"2027-03-01T12:00:00Z", "2027-03-01T07:00:00-05:00", "2027-03-01t12:00:00z"},
		{"2027-05-15T08:30:00.500Z", "2027-05-15T08:30:00.5Z", "2027-05-15T10:30:00.5+02:00"},
		{"2027-07-04T18:45:30.125Z", "2027-07-04T18:45:30.125+00:00"},
	}
	utmKeys   = []string{"source", "medium", "campaign", "content", "term"}
	utmValues = []string{"newsletter", "email", "spring", "banner"}
	linkKeys  = []string{"a", "b", "c", "d"} // the for_each keys; at most these many links
)

// declaredLink is one link as the configuration spells it.
type declaredLink struct {
	domainID, destination string
	slug                  string            // "" leaves it to the service
	expiresAt             string            // "" for none
	utm                   map[string]string // nil for no utm attribute
}

func (l declaredLink) clone() declaredLink {
	l.utm = maps.Clone(l.utm)
	return l
}

// appliedLink is a link as the last apply left it.
type appliedLink struct {
	declared declaredLink
	id, slug string // the slug the link holds, the service's when none is declared
}

// writeCounts are the writes one step sends, by kind.
type writeCounts struct{ POST, PATCH, DELETE int }

func (c *writeCounts) add(o writeCounts) {
	c.POST, c.PATCH, c.DELETE = c.POST+o.POST, c.PATCH+o.PATCH, c.DELETE+o.DELETE
}

// truthRun is one seed's sequence of edits on one service.
type truthRun struct {
	t        *testing.T
	seed     uint64
	rnd      *rand.Rand
	s        *service
	w        *clitest.Workdir
	domains  []string // the account's two domains
	declared map[string]declaredLink
	applied  map[string]appliedLink
	now      stepReport
}

func newTruthRun(t *testing.T, seed uint64, implementation func(*emulator.Settings)) *truthRun {
	// A service that spells destinations its own way (the host in lower
	// case) is what the provider's comparison of URLs is for.
	s := newService(t, instantFilter, func(st *emulator.Settings) { st.Variants.NormalizeDestination = true }, implementation)
	other, err := s.srv.AddDomain(s.fx.AccountID, "promo.example.test")
	if err != nil {
		t.Fatal(err)
	}
	r := &truthRun{
		t: t, seed: seed, s: s,
		rnd:     rand.New(rand.NewPCG(seed, 0)), //nolint:gosec // a seeded draw, so a failure replays
		domains: []string{s.fx.DomainID, other}, declared: map[string]declaredLink{}, applied: map[string]appliedLink{},
	}
	for _, key := range linkKeys[:2] {
		r.declared[key] = r.randomLink(key)
	}
	r.w = s.workdir(t, fmt.Sprintf("plantruth-%d", seed), r.config())
	return r
}

func (r *truthRun) run() {
	r.checkStep(0, "the first apply")
	for step := 1; step <= planTruthSteps; step++ {
		edit := r.editOneThing()
		if err := r.w.WriteFile("main.tf", clitest.RequiredProviders+r.config()); err != nil {
			r.t.Fatal(err)
		}
		r.checkStep(step, edit)
	}
}

// stepReport is what a failure names so that it can be replayed and read.
type stepReport struct {
	step              int
	edit              string
	planned, expected map[string][]string // actions by for_each key
}

// checkStep plans the configuration, compares the plan with the model,
// applies the saved plan and checks the writes, the next plan and the
// service.
func (r *truthRun) checkStep(step int, edit string) {
	expected, writes := r.expectedChanges()
	r.now = stepReport{step: step, edit: edit, expected: expected}
	r.cli("plan", "-out="+planFile)
	r.now.planned = r.plannedActions()
	if !maps.EqualFunc(r.now.planned, expected, slices.Equal) {
		r.fail("the plan's actions are not the documented ones")
	}
	r.t.Logf("step %d: %s; planned %v", step, edit, r.now.planned)
	r.s.srv.ResetCounts()
	r.cli("apply", planFile)
	if sent := r.writesSent(); sent != writes {
		r.fail("the apply sent %+v, want %+v", sent, writes)
	}
	if out, err := runCLI(context.Background(), r.w, "plan", "-detailed-exitcode"); err != nil {
		r.fail("the plan after the apply is not empty (exit code %d):\n%s", clitest.ExitCode(err), out)
	}
	if problems := r.readService(expected); len(problems) > 0 {
		r.fail("the service does not hold what the configuration says:\n  %s", strings.Join(problems, "\n  "))
	}
}

// fail ends the seed's run with what went wrong at the current step.
func (r *truthRun) fail(format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf("seed %d, step %d (%s): %s\nreplay: %s=%d\nplanned actions: %v\nthe model's:     %v\nconfiguration:\n%s",
		r.seed, r.now.step, r.now.edit, fmt.Sprintf(format, args...), EnvPlanTruthSeeds, r.seed, r.now.planned, r.now.expected, r.config())
}

// cli runs one command that must succeed, its options before its
// arguments (runCLI puts them after, where `apply tfplan` refuses them).
func (r *truthRun) cli(command string, args ...string) string {
	r.t.Helper()
	out, err := r.w.Terraform(context.Background(), runLimit, append([]string{command, "-input=false", "-no-color"}, args...)...)
	if err != nil {
		r.fail("%v", err)
	}
	return out
}

// plannedActions reads the saved plan's action for each link, by key.
func (r *truthRun) plannedActions() map[string][]string {
	r.t.Helper()
	out, err := r.w.Terraform(context.Background(), runLimit, "show", "-json", "-no-color", planFile)
	if err != nil {
		r.fail("%v", err)
	}
	var plan struct {
		ResourceChanges []struct {
			Type   string `json:"type"`
			Index  string `json:"index"`
			Change struct {
				Actions []string `json:"actions"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	// The JSON is on stdout; the output may start with warnings from stderr.
	start := strings.Index(out, "{")
	if start < 0 {
		r.fail("terraform show -json printed no JSON:\n%s", out)
	}
	if err := json.NewDecoder(strings.NewReader(out[start:])).Decode(&plan); err != nil {
		r.fail("the plan's JSON: %v\n%s", err, out)
	}
	actions := map[string][]string{}
	for _, rc := range plan.ResourceChanges {
		if rc.Type == "shortlink_link" {
			actions[rc.Index] = rc.Change.Actions
		}
	}
	return actions
}

// writesSent counts the writes the service received since its counters
// were reset.
func (r *truthRun) writesSent() writeCounts {
	count := r.s.srv.Count
	return writeCounts{
		POST:   count(http.MethodPost, "/api/links"),
		PATCH:  count(http.MethodPatch, "/api/links/{id}"),
		DELETE: count(http.MethodDelete, "/api/links/{id}"),
	}
}

// expectedChanges is the model: each link's action as the documentation
// states it, and the writes of the whole step.
func (r *truthRun) expectedChanges() (map[string][]string, writeCounts) {
	actions := map[string][]string{}
	var writes writeCounts
	for _, key := range linkKeys {
		was, wasApplied := r.applied[key]
		now, declared := r.declared[key]
		var action []string
		var sent writeCounts
		switch {
		case !wasApplied && !declared:
			continue
		case !wasApplied:
			action, sent = []string{"create"}, creates(now)
		case !declared:
			action, sent = []string{"delete"}, writeCounts{DELETE: 1}
		default:
			action, sent = change(was, now)
		}
		actions[key] = action
		writes.add(sent)
	}
	return actions, writes
}

// creates are the writes of a new link: a create, and a change that sets
// its UTM parameters, which the service takes only on a change.
func creates(l declaredLink) writeCounts {
	if l.utm != nil {
		return writeCounts{POST: 1, PATCH: 1}
	}
	return writeCounts{POST: 1}
}

// change is the action on a link both applied and declared: a new domain,
// a new slug or a new instant of expiry replaces it; a new destination or
// new UTM parameters change it with one PATCH; another spelling of the
// same domain ID or instant updates only the state. A slug taken out of
// the configuration keeps the link's.
func change(was appliedLink, now declaredLink) ([]string, writeCounts) {
	switch {
	case !client.SameID(was.declared.domainID, now.domainID),
		now.slug != "" && now.slug != was.slug,
		!sameInstant(was.declared.expiresAt, now.expiresAt):
		sent := creates(now)
		sent.DELETE = 1
		return []string{"delete", "create"}, sent
	// A destination respelled (host case, :443) is sent like any other
	// new destination: the documentation makes no exception for it, as it
	// does for the spellings of an expiry or a domain ID.
	case was.declared.destination != now.destination, !maps.Equal(was.declared.utm, now.utm):
		return []string{"update"}, writeCounts{PATCH: 1}
	case was.declared.domainID != now.domainID, was.declared.expiresAt != now.expiresAt:
		return []string{"update"}, writeCounts{}
	}
	return []string{"no-op"}, writeCounts{}
}

// sameInstant compares expiries as the service keeps them, to the
// millisecond; "" is none.
func sameInstant(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	return expiryInstant(a).Equal(expiryInstant(b))
}

func expiryInstant(s string) time.Time {
	at, err := links.ParseRFC3339(s)
	if err != nil {
		panic(fmt.Sprintf("the generator wrote an expiry that is not RFC 3339: %q", s))
	}
	return at.Truncate(time.Millisecond)
}

// readService checks the service's links against the configuration and
// each link's ID against its action (kept by an update, new after a
// create or replacement), and records them as applied.
func (r *truthRun) readService(actions map[string][]string) []string {
	ids := r.stateIDsByKey()
	held := map[string]emulator.Link{}
	for _, l := range r.s.srv.Links(r.s.fx.AccountID) {
		held[l.ID] = l
	}
	var problems []string
	if len(held) != len(r.declared) {
		problems = append(problems, fmt.Sprintf("the service holds %d links, the configuration declares %d", len(held), len(r.declared)))
	}
	applied := map[string]appliedLink{}
	for _, key := range slices.Sorted(maps.Keys(r.declared)) {
		l, ok := held[ids[key]]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: the state's link %q is not on the service", key, ids[key]))
			continue
		}
		kept := ids[key] == r.applied[key].id
		if replaced := slices.Contains(actions[key], "create"); kept == replaced {
			problems = append(problems, fmt.Sprintf("%s: planned %v, but the link's ID went from %q to %q", key, actions[key], r.applied[key].id, l.ID))
		}
		problems = append(problems, differences(key, r.declared[key], l)...)
		applied[key] = appliedLink{declared: r.declared[key].clone(), id: l.ID, slug: l.Slug}
	}
	r.applied = applied
	return problems
}

// stateIDsByKey are the link IDs the state records, by for_each key.
func (r *truthRun) stateIDsByKey() map[string]string {
	st, err := r.w.State()
	if err != nil {
		r.t.Fatal(err)
	}
	ids := map[string]string{}
	for _, in := range st {
		ids[strings.TrimSuffix(strings.TrimPrefix(in.Address, "shortlink_link.link["), "]")] = in.ID
	}
	return ids
}

// differences lists where the service's link is not what is declared.
func differences(key string, want declaredLink, got emulator.Link) []string {
	var out []string
	differ := func(what string, want, got any) {
		out = append(out, fmt.Sprintf("%s: %s is %v on the service, want %v", key, what, got, want))
	}
	if !client.SameID(want.domainID, got.DomainID) {
		differ("domain_id", want.domainID, got.DomainID)
	}
	if !sameURL(want.destination, got.Destination) {
		differ("destination", want.destination, got.Destination)
	}
	if want.slug != "" && want.slug != got.Slug {
		differ("slug", want.slug, got.Slug)
	}
	if gotUTM := utmOf(got.UTM); gotUTM != utmFromMap(want.utm) {
		differ("utm", utmFromMap(want.utm), gotUTM)
	}
	if gotExpiry := expiryText(got.ExpiresAt); !sameInstant(want.expiresAt, gotExpiry) {
		differ("expires_at", want.expiresAt, gotExpiry)
	}
	return out
}

// sameURL compares destinations as the emulator normalises them: the
// scheme and host in any case, the default port written or not. It is the
// test's own, so that a fault in the provider's comparison cannot hide here.
func sameURL(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	return errA == nil && errB == nil && comparableURL(ua) == comparableURL(ub)
}

func comparableURL(u *url.URL) string {
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if port == map[string]string{"http": "80", "https": "443"}[scheme] {
		port = ""
	}
	return scheme + "://" + host + ":" + port + u.RequestURI()
}

func utmFromMap(m map[string]string) emulator.UTM {
	return emulator.UTM{Source: m["source"], Medium: m["medium"], Campaign: m["campaign"], Content: m["content"], Term: m["term"]}
}

// utmOf is the link's parameters; none is the zero UTM.
func utmOf(u *emulator.UTM) emulator.UTM {
	if u == nil {
		return emulator.UTM{}
	}
	return *u
}

// expiryText is the service's expiry in RFC 3339, "" for none.
func expiryText(at *time.Time) string {
	if at == nil {
		return ""
	}
	return at.Format(time.RFC3339Nano)
}

// config is the configuration: the links in a map, one resource for_each.
func (r *truthRun) config() string {
	var b strings.Builder
	b.WriteString("locals {\n  links = {\n")
	for _, key := range slices.Sorted(maps.Keys(r.declared)) {
		l := r.declared[key]
		fmt.Fprintf(&b, "    %s = {\n      domain_id   = %q\n      destination = %q\n", key, l.domainID, l.destination)
		fmt.Fprintf(&b, "      slug        = %s\n      expires_at  = %s\n      utm         = %s\n    }\n", hclString(l.slug), hclString(l.expiresAt), hclUTM(l.utm))
	}
	b.WriteString(`  }
}

resource "shortlink_link" "link" {
  for_each    = local.links
  domain_id   = each.value.domain_id
  destination = each.value.destination
  slug        = each.value.slug
  expires_at  = each.value.expires_at
  utm         = each.value.utm
}
`)
	return b.String()
}

// hclString is s quoted, or null for "".
func hclString(s string) string {
	if s == "" {
		return "null"
	}
	return strconv.Quote(s)
}

func hclUTM(utm map[string]string) string {
	if utm == nil {
		return "null"
	}
	var pairs []string
	for _, k := range slices.Sorted(maps.Keys(utm)) {
		pairs = append(pairs, fmt.Sprintf("%s = %q", k, utm[k]))
	}
	return "{ " + strings.Join(pairs, ", ") + " }"
}

// randomLink is a new link for key, with each optional attribute set or
// not at random.
func (r *truthRun) randomLink(key string) declaredLink {
	l := declaredLink{domainID: r.spellDomain(pick(r.rnd, r.domains)), destination: pick(r.rnd, pick(r.rnd, destinationSpellings))}
	if r.rnd.IntN(2) == 0 {
		l.slug = fmt.Sprintf("%s-%d", key, 1+r.rnd.IntN(2))
	}
	if r.rnd.IntN(2) == 0 {
		l.expiresAt = pick(r.rnd, pick(r.rnd, expirySpellings))
	}
	if r.rnd.IntN(2) == 0 {
		l.utm = map[string]string{pick(r.rnd, utmKeys): pick(r.rnd, utmValues)}
	}
	return l
}

// spellDomain writes a domain ID in lower or upper case: the same domain.
func (r *truthRun) spellDomain(id string) string {
	if r.rnd.IntN(2) == 0 {
		return strings.ToUpper(id)
	}
	return strings.ToLower(id)
}

func pick[T any](rnd *rand.Rand, from []T) T { return from[rnd.IntN(len(from))] }

// editOneThing makes one random edit of the configuration and describes
// it.
func (r *truthRun) editOneThing() string {
	key := pick(r.rnd, slices.Sorted(maps.Keys(r.declared)))
	l := r.declared[key].clone()
	var what string
	switch r.rnd.IntN(7) {
	case 0:
		what = r.editDestination(&l)
	case 1:
		what = r.editUTM(&l)
	case 2:
		what = r.editSlug(&l, key)
	case 3:
		what = r.editExpiry(&l)
	case 4:
		what = r.editDomain(&l)
	case 5:
		if added, ok := r.addLink(); ok {
			return added
		}
		return r.editOneThing()
	default:
		if len(r.declared) == 1 {
			return r.editOneThing()
		}
		delete(r.declared, key)
		return "remove " + key
	}
	r.declared[key] = l
	return key + ": " + what
}

// addLink declares a link under a key not in use, if one is left.
func (r *truthRun) addLink() (string, bool) {
	var free []string
	for _, key := range linkKeys {
		if _, used := r.declared[key]; !used {
			free = append(free, key)
		}
	}
	if len(free) == 0 {
		return "", false
	}
	key := pick(r.rnd, free)
	r.declared[key] = r.randomLink(key)
	return "add " + key, true
}

// editDestination respells the destination, or points it elsewhere.
func (r *truthRun) editDestination(l *declaredLink) string {
	was := l.destination
	for l.destination == was {
		l.destination = pick(r.rnd, pick(r.rnd, destinationSpellings))
		if r.rnd.IntN(2) == 0 { // another spelling of the same URL
			l.destination = pick(r.rnd, spellingsOf(destinationSpellings, was))
		}
	}
	return fmt.Sprintf("destination %s -> %s", was, l.destination)
}

// spellingsOf is the list of spellings that holds v.
func spellingsOf(lists [][]string, v string) []string {
	for _, spellings := range lists {
		if slices.Contains(spellings, v) {
			return spellings
		}
	}
	panic("no list holds " + v)
}

// editUTM adds, changes or removes one parameter, or the attribute.
func (r *truthRun) editUTM(l *declaredLink) string {
	key, value := pick(r.rnd, utmKeys), pick(r.rnd, utmValues)
	switch {
	case l.utm == nil:
		l.utm = map[string]string{key: value}
		return fmt.Sprintf("utm set to %v", l.utm)
	case r.rnd.IntN(4) == 0:
		l.utm = nil
		return "utm removed"
	case l.utm[key] != "" && r.rnd.IntN(2) == 0:
		delete(l.utm, key)
		if len(l.utm) == 0 { // an empty utm is no utm; keep to what is documented
			l.utm = nil
		}
		return "utm." + key + " removed"
	}
	was := l.utm[key]
	for l.utm[key] == was {
		l.utm[key] = pick(r.rnd, utmValues)
	}
	return fmt.Sprintf("utm.%s %q -> %q", key, was, l.utm[key])
}

// editSlug sets, changes or unsets the slug.
func (r *truthRun) editSlug(l *declaredLink, key string) string {
	was := l.slug
	switch {
	case was != "" && r.rnd.IntN(2) == 0:
		l.slug = ""
	case was == key+"-1":
		l.slug = key + "-2"
	default:
		l.slug = key + "-1"
	}
	return fmt.Sprintf("slug %q -> %q", was, l.slug)
}

// editExpiry sets, respells, moves or unsets the expiry.
func (r *truthRun) editExpiry(l *declaredLink) string {
	was := l.expiresAt
	switch n := r.rnd.IntN(3); {
	case was != "" && n == 0:
		l.expiresAt = ""
	case was != "" && n == 1:
		for l.expiresAt == was {
			l.expiresAt = pick(r.rnd, spellingsOf(expirySpellings, was))
		}
	default:
		for l.expiresAt == was {
			l.expiresAt = pick(r.rnd, pick(r.rnd, expirySpellings))
		}
	}
	return fmt.Sprintf("expires_at %q -> %q", was, l.expiresAt)
}

// editDomain changes the domain ID's letter case, or the domain.
func (r *truthRun) editDomain(l *declaredLink) string {
	was := l.domainID
	for l.domainID == was {
		l.domainID = r.spellDomain(pick(r.rnd, r.domains))
	}
	return fmt.Sprintf("domain_id %s -> %s", was, l.domainID)
}

// TestPlanTruth_refreshOnlyAfterCreate: a refresh-only plan right after
// the apply that created the links, with nothing changed since, exits 0
// under -detailed-exitcode, as a scheduled drift check expects: the
// refresh finds the state (its private part too) as the create left it.
func TestPlanTruth_refreshOnlyAfterCreate(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	config := fmt.Sprintf(`
provider "shortlink" {}

resource "shortlink_link" "plain" {
  domain_id   = %[1]q
  slug        = "plain"
  destination = "https://example.com/plain"
}

resource "shortlink_link" "expiring" {
  domain_id   = %[1]q
  destination = "https://example.com/expiring"
  expires_at  = "2099-01-01T00:00:00+02:00"
  utm         = { source = "newsletter" }
}
`, s.fx.DomainID)
	w := s.workdir(t, "refresh-only", config)
	ctx := context.Background()
	if out, err := runCLI(ctx, w, "apply", "-auto-approve"); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	for _, args := range [][]string{{"plan", "-detailed-exitcode"}, {"plan", "-refresh-only", "-detailed-exitcode"}} {
		if out, err := runCLI(ctx, w, args...); err != nil {
			t.Errorf("terraform %s after the apply exits %d, want 0: %v\n%s", strings.Join(args, " "), clitest.ExitCode(err), err, out)
		}
	}
}

// TestPlanTruth_refreshOnlyFindsALinkDeletedOutside: a link deleted in
// the dashboard is told of by a -refresh-only apply, which drops it from
// the state and creates nothing, as the warning says; the next plan
// creates it anew.
func TestPlanTruth_refreshOnlyFindsALinkDeletedOutside(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	w := s.appliedWorkdir(t, "refresh-only-deleted", fmt.Sprintf(`
provider "shortlink" {}

resource "shortlink_link" "spring" {
  domain_id   = %[1]q
  slug        = "spring"
  destination = "https://example.com/spring"
}

# A domain left with no link at all is read as another account's.
resource "shortlink_link" "summer" {
  domain_id   = %[1]q
  slug        = "summer"
  destination = "https://example.com/summer"
}
`, s.fx.DomainID))
	if err := s.srv.DeleteLinkOutOfBand(s.linksBySlug()["spring"].ID); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out, err := runCLI(ctx, w, "apply", "-refresh-only", "-auto-approve")
	flat := strings.Join(strings.Fields(out), " ")
	if err != nil || !strings.Contains(flat, "Warning: Link no longer exists") || !strings.Contains(flat, "(after a -refresh-only plan or apply, the next plan does)") {
		t.Fatalf("the refresh-only apply: %v, want the warning saying what follows a refresh-only run:\n%s", err, out)
	}
	if state, err := w.State(); err != nil || len(state) != 1 || len(s.linkIDs()) != 1 {
		t.Fatalf("after the refresh-only apply: state %v (%v), service %v; want the other link alone in both", state, err, s.linkIDs())
	}
	if out, err := runCLI(ctx, w, "plan", "-detailed-exitcode"); clitest.ExitCode(err) != 2 || !strings.Contains(out, "1 to add, 0 to change, 0 to destroy") {
		t.Fatalf("the next plan: %v, want the link created anew:\n%s", err, out)
	}
}
