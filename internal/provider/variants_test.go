// The provider must work against every reasonable shape of the real service
// (DESIGN.md, "read tolerantly"; EMULATOR.md, "What the provider reads
// beyond the contract", points here). TestAccVariants runs the whole life
// of a link against the emulator switched to each of those shapes: create
// with slug, utm and expires_at; import by ID; a plan that proves nothing
// changed; an in-place change of destination; drift made outside
// Terraform; destroy. It stands alone, rather than in
// link_resource_test.go, because its subject is the service's shape, not
// one file: each subtest crosses the client's tolerant reader
// (internal/client, whose tolerant_test.go tests it without Terraform),
// the model (link_model.go) and every operation of the resource
// (link_resource.go, whose own tests mostly use the canonical shape).

package provider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// variantSeeded is how many links every variant's account holds besides the
// managed one. With variantPageSize links per page the managed link, created
// after them, is only on the third page, so a Read that did not follow the
// pages would lose it and the plan-only step would fail.
const (
	variantSeeded   = 5
	variantPageSize = 2
)

// variant is one shape of the service.
type variant struct {
	name   string
	change func(*emulator.Settings)
	// dest1 and dest2 are the configured destinations before and after the
	// in-place change; svc1 and svc2 what the service stores for them.
	dest1, dest2, svc1, svc2 string
	// writeKey configures the provider with the links:write key only.
	writeKey bool
	// importIgnore lists attributes the service's answers cannot carry as
	// the user wrote them; importCheck then proves the imported values mean
	// the same.
	importIgnore []string
	importCheck  func(imported map[string]string) error
	// signs and after prove, once the lifecycle is done, that the variant
	// was in force: signs in what the service answered, after in the
	// service's counts (e.g. that it answered the status it was switched
	// to). Every variant has one or the other, or the test could pass on a
	// switch that changed nothing.
	signs []sign
	after func(t *testing.T, e *testEnv)
	// wrap, if set, puts a handler in front of the emulator that changes
	// its answers in ways no switch does.
	wrap func(http.Handler) http.Handler
}

// withPaging switches the service to paging mode, variantPageSize links a
// page.
func withPaging(mode string) func(*emulator.Settings) {
	return func(s *emulator.Settings) { s.Variants.Paging, s.Variants.PageSize = mode, variantPageSize }
}

// expectStatus is a variant's after: the service answered method pattern
// with status at least once.
func expectStatus(method, pattern string, status int) func(*testing.T, *testEnv) {
	return func(t *testing.T, e *testEnv) {
		t.Helper()
		if n := e.srv.Count(method, pattern, status); n == 0 {
			t.Errorf("the service never answered %s %s with %d: the variant was not in force (counts %v)", method, pattern, status, e.srv.Counts())
		}
	}
}

// sign is a mark of a variant in the service's answers: some answer to a
// request whose method is method ("" for any) and whose URI starts with
// uri has a body or Link header that text matches (. matching newlines
// too); with absent, none has.
type sign struct {
	method, uri string
	text        string // a regular expression
	absent      bool
}

// answered is a sign that an answer to a request on /api/links matches text.
func answered(method, text string) sign { return sign{method: method, uri: "/api/links", text: text} }

// answer is one answer as the provider received it.
type answer struct{ method, uri, body, link string }

// answerLog records every answer of a handler.
type answerLog struct {
	mu      sync.Mutex
	answers []answer
}

func (a *answerLog) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		a.mu.Lock()
		a.answers = append(a.answers, answer{r.Method, r.URL.RequestURI(), rec.Body.String(), rec.Header().Get("Link")})
		a.mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// check reports each sign the answers do not bear out.
func (a *answerLog) check(t *testing.T, signs []sign) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, sg := range signs {
		re, found := regexp.MustCompile("(?s)"+sg.text), false
		for _, an := range a.answers {
			if (sg.method == "" || an.method == sg.method) && strings.HasPrefix(an.uri, sg.uri) && (re.MatchString(an.body) || re.MatchString(an.link)) {
				found = true
				break
			}
		}
		switch {
		case found && sg.absent:
			t.Errorf("an answer to %s %s matches %s, which this variant never sends", sg.method, sg.uri, sg.text)
		case !found && !sg.absent:
			t.Errorf("no answer to %s %s* matches %s: the variant was not in force", sg.method, sg.uri, sg.text)
		}
	}
}

// variants is the table of shapes, one entry a shape, each run by
// TestAccVariants. It is long because the emulator has that many switches
// (EMULATOR.md lists them); most entries are one switch, and an entry that
// needs more says why in its comment.
func variants() []variant {
	// cursorFollowed: the provider asked for a page after the first.
	cursorFollowed := sign{method: "GET", uri: "/api/links?cursor=", text: `^[\[{]`}
	vs := []variant{
		{name: "canonical", signs: []sign{answered("POST", `^\{"id":.*"shortUrl":`), answered("GET", `^\[`), answered("PATCH", `"utm":\{"source"`)}},
		{name: "objectEnvelope=data", change: func(s *emulator.Settings) { s.Variants.ObjectEnvelope = "data" }, signs: []sign{answered("POST", `^\{"data":\{`)}},
		{name: "objectEnvelope=link", change: func(s *emulator.Settings) { s.Variants.ObjectEnvelope = "link" }, signs: []sign{answered("POST", `^\{"link":\{`)}},
		{name: "listEnvelope=data", change: func(s *emulator.Settings) { s.Variants.ListEnvelope = "data" }, signs: []sign{answered("GET", `^\{"data":\[`)}},
		{name: "listEnvelope=links", change: func(s *emulator.Settings) { s.Variants.ListEnvelope = "links" }, signs: []sign{answered("GET", `^\{"links":\[`)}},
		{name: "listEnvelope=items", change: func(s *emulator.Settings) { s.Variants.ListEnvelope = "items" }, signs: []sign{answered("GET", `^\{"items":\[`)}},
		{name: "fieldStyle=snake", change: func(s *emulator.Settings) { s.Variants.FieldStyle = "snake" }, signs: []sign{answered("", `"short_url":`), {uri: "/api/links", text: `"shortUrl":`, absent: true}}},
		{name: "fieldStyle=alias", change: func(s *emulator.Settings) { s.Variants.FieldStyle = "alias" }, signs: []sign{answered("", `"shortLink":.*"qrCode":`), {uri: "/api/links", text: `"shortUrl":`, absent: true}}},
		{
			name: "createStatus=200", change: func(s *emulator.Settings) { s.Variants.CreateStatus = http.StatusOK },
			after: expectStatus("POST", "/api/links", http.StatusOK),
		},
		{
			name: "changeStatus=204", change: func(s *emulator.Settings) { s.Variants.ChangeStatus = http.StatusNoContent },
			after: expectStatus("PATCH", "/api/links/{id}", http.StatusNoContent),
		},
		{
			name: "deleteStatus=200", change: func(s *emulator.Settings) { s.Variants.DeleteStatus = http.StatusOK },
			after: expectStatus("DELETE", "/api/links/{id}", http.StatusOK),
		},
		{name: "paging=cursor", change: withPaging("cursor"), signs: []sign{answered("GET", `"nextCursor":"`), cursorFollowed}},
		{name: "paging=next", change: withPaging("next"), signs: []sign{answered("GET", `"next":"http`), cursorFollowed}},
		{name: "paging=link", change: withPaging("link"), signs: []sign{answered("GET", `rel="next"`), cursorFollowed}},
		{name: "utmStyle=prefixed", change: func(s *emulator.Settings) { s.Variants.UTMStyle = "prefixed" }, signs: []sign{answered("PATCH", `"utm_source":"newsletter"`)}},
		{
			// The service never says which UTM parameters a link has, so an
			// import cannot know them: utm is null after import.
			name: "utmStyle=absent", change: func(s *emulator.Settings) { s.Variants.UTMStyle = "absent" },
			importIgnore: []string{"utm"},
			importCheck: func(imported map[string]string) error {
				return expectAttrs(imported, map[string]string{"destination": "https://example.com/sale"}, "utm.")
			},
			signs: []sign{answered("PATCH", `^\{"id"`), {uri: "/api/links", text: `"utm`, absent: true}},
		},
		{
			// The service answers the UTM parameters inside the destination's
			// query, so an import holds them there, which means the same.
			name: "utmStyle=merged", change: func(s *emulator.Settings) { s.Variants.UTMStyle = "merged" },
			importIgnore: []string{"destination", "utm"},
			importCheck: func(imported map[string]string) error {
				return expectAttrs(imported, map[string]string{
					"destination": "https://example.com/sale?utm_campaign=spring&utm_medium=email&utm_source=newsletter",
				}, "utm.")
			},
			signs: []sign{answered("PATCH", `"destination":"https://example.com/sale\?utm_`)},
		},
		{name: "timeFormat=seconds", change: func(s *emulator.Settings) { s.Variants.TimeFormat = "seconds" }, signs: []sign{answered("POST", `"createdAt":"[0-9-]+T[0-9:]+Z"`)}},
		{name: "timeFormat=offset", change: func(s *emulator.Settings) { s.Variants.TimeFormat = "offset" }, signs: []sign{answered("POST", `"createdAt":"[^"]+\+00:00"`)}},
		{
			// The service lower-cases scheme and host, writes a Unicode
			// host in ASCII and the path's non-ASCII percent-encoded (an
			// escaped slash stays), and adds the empty path's slash; the
			// state keeps the user's spelling. An import
			// can only hold the service's spelling, which means the same.
			name: "normalizeDestination", change: func(s *emulator.Settings) { s.Variants.NormalizeDestination = true },
			dest1: "HTTPS://Example.COM", svc1: "https://example.com/",
			dest2: "HTTPS://Bücher.Example/it's/a%2Fb/Frühling", svc2: "https://xn--bcher-kva.example/it's/a%2Fb/Fr%C3%BChling",
			importIgnore: []string{"destination"},
			importCheck: func(imported map[string]string) error {
				return expectAttrs(imported, map[string]string{"destination": "https://example.com/"})
			},
			signs: []sign{answered("PATCH", `"destination":"https://xn--bcher-kva.example/it's/a%2Fb/Fr%C3%BChling"`)},
		},
		{
			name: "writeGrantsRead", change: func(s *emulator.Settings) { s.Variants.WriteGrantsRead = true },
			writeKey: true,
			after:    expectStatus("GET", "/api/links", http.StatusOK),
		},
		// htmlErrors changes only error answers, which this lifecycle has
		// none of: testVariantHTMLError runs it.
		{
			// Create answers only the ID and short URL, change answers an
			// acknowledgement: what the answers lack comes from the list.
			name: "partialAnswers", wrap: partialAnswers,
			signs: []sign{answered("POST", `^\{"id":"[^"]+","shortUrl":"[^"]+"\}$`), answered("PATCH", `^\{"updated":true\}$`)},
		},
		{
			// Many switches at once, as one real service might answer.
			name: "combined",
			change: func(s *emulator.Settings) {
				v := &s.Variants
				v.ObjectEnvelope, v.ListEnvelope, v.FieldStyle = "link", "items", "snake"
				v.CreateStatus, v.ChangeStatus, v.DeleteStatus = http.StatusOK, http.StatusNoContent, http.StatusOK
				v.Paging, v.PageSize = "cursor", variantPageSize
				v.UTMStyle, v.TimeFormat = "prefixed", "offset"
			},
			signs: []sign{
				answered("POST", `^\{"link":\{.*"short_url":.*"created_at":"[^"]+\+00:00"`), answered("GET", `^\{"items":\[.*"next_cursor":"`), answered("GET", `"utm_source":"newsletter"`), cursorFollowed,
			},
			after: func(t *testing.T, e *testEnv) {
				t.Helper()
				expectStatus("POST", "/api/links", http.StatusOK)(t, e)
				expectStatus("PATCH", "/api/links/{id}", http.StatusNoContent)(t, e)
				expectStatus("DELETE", "/api/links/{id}", http.StatusOK)(t, e)
			},
		},
	}
	for i := range vs {
		v := &vs[i]
		if v.dest1 == "" {
			v.dest1, v.svc1 = "https://example.com/sale", "https://example.com/sale"
			v.dest2, v.svc2 = "https://example.com/summer", "https://example.com/summer"
		}
	}
	return vs
}

func TestAccVariants(t *testing.T) {
	for _, v := range variants() {
		t.Run(v.name, func(t *testing.T) {
			testVariantLifecycle(t, v)
		})
	}
	t.Run("htmlErrors/blocked destination", testVariantHTMLError)
	t.Run("partialAnswers/create without utm", testVariantPartialCreate)
	for _, format := range []string{"millis", "seconds", "offset"} {
		t.Run("timeFormat="+format+"/sub-millisecond expiry", func(t *testing.T) { testVariantExpiryPrecision(t, format) })
	}
}

// testVariantExpiryPrecision: the provider sends expiresAt with
// milliseconds, and a service may answer whole seconds, so an expires_at
// written with more precision comes back shortened. It is the same expiry:
// the state keeps the user's spelling, and nothing is planned.
func testVariantExpiryPrecision(t *testing.T, timeFormat string) {
	e := newTestEnv(t, func(s *emulator.Settings) { s.Variants.TimeFormat = timeFormat })
	const expires = "2027-04-01T01:59:59.123456+02:00"
	config := func(dest string) string {
		return e.linkConfig(`
  destination = "` + dest + `"
  expires_at  = "` + expires + `"`)
	}
	sameID := statecheck.CompareValue(compare.ValuesSame())
	step := func(dest string, action plancheck.ResourceActionType) resource.TestStep {
		return resource.TestStep{
			Config:           config(dest),
			ConfigPlanChecks: expectAction(action),
			ConfigStateChecks: []statecheck.StateCheck{
				sameID.AddStateValue(linkAddr, tfjsonpath.New("id")),
				statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("expires_at"), knownvalue.StringExact(expires)),
			},
			Check: func(*terraform.State) error {
				l := e.onlyLink(t)
				if got := l.ExpiresAt.UTC().Format("2006-01-02T15:04:05.000000Z"); got != "2027-03-31T23:59:59.123000Z" {
					return fmt.Errorf("the service holds expiry %s, want the instant to the millisecond", got)
				}
				return nil
			},
		}
	}
	e.testLink(t, []resource.TestStep{
		step("https://example.com/sale", plancheck.ResourceActionCreate),
		{Config: config("https://example.com/sale"), PlanOnly: true},
		step("https://example.com/summer", plancheck.ResourceActionUpdate),
	})
}

// testVariantLifecycle runs the life of one link (the steps the top of this
// file lists) against the service switched to v, then checks that nothing
// recreated the link and that the variant was in force. The steps are
// built by variantLifecycle's methods, one a kind of step, rather than in
// one long closure; they are methods because they share what spans steps:
// the comparisons proving that ID and short URL never change, and the ID
// recorded after create.
func testVariantLifecycle(t *testing.T, v variant) {
	lc := newVariantLifecycle(t, v)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             lc.e.checkOnlySeeded(lc.seeded),
		Steps: []resource.TestStep{
			lc.apply(v.dest1, v.svc1, plancheck.ResourceActionCreate),
			lc.importByID(),
			// The configuration plans nothing after create, refresh and import.
			{Config: lc.config(v.dest1), PlanOnly: true},
			lc.apply(v.dest2, v.svc2, plancheck.ResourceActionUpdate),
			lc.repairDrift(v.dest2, v.svc2),
		},
	})
	lc.e.expectRequests(t, "POST", "/api/links", 1, "nothing may recreate the link")
	if len(v.signs) == 0 && v.after == nil {
		t.Fatalf("variant %s has nothing to prove it was in force", v.name)
	}
	lc.answers.check(t, v.signs)
	if v.after != nil {
		v.after(t, lc.e)
	}
}

// variantLifecycle is what the steps of one variant's lifecycle share.
type variantLifecycle struct {
	t      *testing.T
	v      variant
	e      *testEnv
	key    string          // the provider's key: the links:write key only for writeKey variants
	seeded []emulator.Link // the account's links besides the managed one
	// sameID and sameShortURL collect the managed link's ID and short URL
	// at every step that applies: none may replace the link.
	sameID, sameShortURL valueComparison
	// linkID is the managed link's ID, recorded by the first check of the
	// service.
	linkID string
	// answers holds every answer the provider received.
	answers *answerLog
}

// valueComparison is what statecheck.CompareValue returns, whose type is
// not exported.
type valueComparison interface {
	AddStateValue(resourceAddress string, attributePath tfjsonpath.Path) statecheck.StateCheck
}

// newVariantLifecycle starts the emulator switched to v, behind v.wrap if
// set, and seeds the links among which the managed one must be found.
func newVariantLifecycle(t *testing.T, v variant) *variantLifecycle {
	var changes []func(*emulator.Settings)
	if v.change != nil {
		changes = append(changes, v.change)
	}
	e := newTestEnv(t, changes...)
	var h http.Handler = e.srv
	if v.wrap != nil {
		h = v.wrap(h)
	}
	answers := &answerLog{}
	ts := httptest.NewServer(answers.record(h))
	t.Cleanup(ts.Close)
	e.url = ts.URL
	seeded := e.seedLinks(t, e.fx.DomainID, "seeded", variantSeeded)
	key := e.fx.APIKey
	if v.writeKey {
		key = e.fx.WriteKey
	}
	return &variantLifecycle{
		t: t, v: v, e: e, key: key, seeded: seeded, answers: answers,
		sameID:       statecheck.CompareValue(compare.ValuesSame()),
		sameShortURL: statecheck.CompareValue(compare.ValuesSame()),
	}
}

// config is the managed link with destination dest (springLink).
func (lc *variantLifecycle) config(dest string) string {
	return lc.e.springLink(lc.t, lc.key, dest)
}

// apply is a step that applies the link with destination dest, planned as
// action, then checks the state and that the service stores svc.
func (lc *variantLifecycle) apply(dest, svc string, action plancheck.ResourceActionType) resource.TestStep {
	return resource.TestStep{
		Config:            lc.config(dest),
		ConfigPlanChecks:  expectAction(action),
		ConfigStateChecks: lc.stateChecks(dest),
		Check:             lc.serviceHolds(svc),
	}
}

// repairDrift is apply after someone else changed the link's destination:
// the plan changes it back in place.
func (lc *variantLifecycle) repairDrift(dest, svc string) resource.TestStep {
	step := lc.apply(dest, svc, plancheck.ResourceActionUpdate)
	step.PreConfig = func() {
		if err := lc.e.srv.ChangeLinkOutOfBand(lc.linkID, "https://example.com/theirs"); err != nil {
			lc.t.Fatal(err)
		}
	}
	return step
}

// importByID imports the link by its ID; the import must equal the state
// but for what the variant's answers cannot carry (importIgnore), which
// importCheck then checks means the same.
func (lc *variantLifecycle) importByID() resource.TestStep {
	step := resource.TestStep{
		ResourceName:            linkAddr,
		ImportState:             true,
		ImportStateVerify:       true,
		ImportStateVerifyIgnore: append([]string{"timeouts"}, lc.v.importIgnore...),
	}
	if check := lc.v.importCheck; check != nil {
		step.ImportStateCheck = func(states []*terraform.InstanceState) error {
			if len(states) != 1 {
				return fmt.Errorf("import produced %d instances, want 1", len(states))
			}
			return check(states[0].Attributes)
		}
	}
	return step
}

// stateChecks checks every attribute of the managed link in the state,
// with destination dest.
func (lc *variantLifecycle) stateChecks(dest string) []statecheck.StateCheck {
	return []statecheck.StateCheck{
		lc.sameID.AddStateValue(linkAddr, tfjsonpath.New("id")),
		lc.sameShortURL.AddStateValue(linkAddr, tfjsonpath.New("short_url")),
		statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("id"), knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f-]{36}$`))),
		statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("destination"), knownvalue.StringExact(dest)),
		statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("slug"), knownvalue.StringExact("spring")),
		statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("short_url"), knownvalue.StringExact("https://go.example.test/spring")),
		statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("qr_code_url"), knownvalue.StringExact("https://go.example.test/qr/spring.png")),
		statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("expires_at"), knownvalue.StringExact("2027-03-31T23:59:59Z")),
		statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("created_at"), knownvalue.NotNull()),
		statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("utm"), springUTM()),
	}
}

// serviceHolds checks the managed link as the service stores it, with
// destination dest, and records its ID.
func (lc *variantLifecycle) serviceHolds(dest string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		l, err := lc.e.managedLink(lc.seeded)
		if err != nil {
			return err
		}
		lc.linkID = l.ID
		if got := s.RootModule().Resources[linkAddr].Primary.ID; got != l.ID {
			return fmt.Errorf("state ID %q, service ID %q", got, l.ID)
		}
		if l.Destination != dest {
			return fmt.Errorf("the service holds destination %q, want %q", l.Destination, dest)
		}
		if l.UTM == nil || *l.UTM != (emulator.UTM{Source: "newsletter", Medium: "email", Campaign: "spring"}) {
			return fmt.Errorf("the service holds UTM %+v", l.UTM)
		}
		if l.ExpiresAt == nil || l.ExpiresAt.UTC().Format("2006-01-02T15:04:05.000Z") != "2027-03-31T23:59:59.000Z" {
			return fmt.Errorf("the service holds expiry %v", l.ExpiresAt)
		}
		return nil
	}
}

// testVariantHTMLError: an error answered with an HTML page (as from a proxy)
// still says what happened, from the status alone.
func testVariantHTMLError(t *testing.T) {
	e := newTestEnv(t, func(s *emulator.Settings) { s.Variants.HTMLErrors = true })
	e.testLink(t, []resource.TestStep{{
		Config: e.config(linkBody(e.fx.DomainID, "https://blocked.example/win")),
		ExpectError: expectErr("with shortlink_link.test,", "destination", "(422 Unprocessable Entity)",
			"an HTML page", `which says: Unprocessable Entity destination: rejected by the fraud filter (rule "blocked.example")`,
			"Choose another destination"),
	}})
}

// testVariantPartialCreate: without utm, nothing but the create's answer
// describes the new link, so what it lacks must come from the list: a
// guessed expiry or creation time would make the apply inconsistent.
func testVariantPartialCreate(t *testing.T) {
	e := newTestEnv(t)
	ts := httptest.NewServer(partialAnswers(e.srv))
	t.Cleanup(ts.Close)
	e.url = ts.URL
	e.testLink(t, []resource.TestStep{{
		Config: e.linkConfig(`
  destination = "https://example.com/sale"
  expires_at  = "2027-04-01T01:59:59+02:00"`),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("expires_at"), knownvalue.StringExact("2027-04-01T01:59:59+02:00")),
			statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("slug"), knownvalue.StringRegexp(regexp.MustCompile(`^[A-Za-z0-9]{7}$`))),
			statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("qr_code_url"), knownvalue.StringRegexp(regexp.MustCompile(`^https://go\.example\.test/qr/[A-Za-z0-9]{7}\.png$`))),
			statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("created_at"), knownvalue.NotNull()),
		},
	}})
}

// managedLink returns the account's one link that is not seeded.
func (e *testEnv) managedLink(seeded []emulator.Link) (emulator.Link, error) {
	var found []emulator.Link
	for _, l := range e.srv.Links(e.fx.AccountID) {
		if !containsLink(seeded, l.ID) {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		return emulator.Link{}, fmt.Errorf("the service holds %d links besides the seeded ones, want 1", len(found))
	}
	return found[0], nil
}

// checkOnlySeeded is a CheckDestroy: no link is left but the seeded ones.
func (e *testEnv) checkOnlySeeded(seeded []emulator.Link) resource.TestCheckFunc {
	return func(*terraform.State) error {
		links := e.srv.Links(e.fx.AccountID)
		for _, l := range links {
			if !containsLink(seeded, l.ID) {
				return fmt.Errorf("the service still holds link %s (%s) after destroy", l.ID, l.Slug)
			}
		}
		if len(links) != len(seeded) {
			return fmt.Errorf("the service holds %d links after destroy, want the %d seeded ones", len(links), len(seeded))
		}
		return nil
	}
}

func containsLink(links []emulator.Link, id string) bool {
	for _, l := range links {
		if l.ID == id {
			return true
		}
	}
	return false
}

// expectAttrs checks flatmap attributes of an imported instance; every
// attribute under each of nullPrefixes must be absent or empty.
func expectAttrs(attrs, want map[string]string, nullPrefixes ...string) error {
	for k, v := range want {
		if attrs[k] != v {
			return fmt.Errorf("imported %s = %q, want %q", k, attrs[k], v)
		}
	}
	for k, v := range attrs {
		for _, p := range nullPrefixes {
			if len(k) > len(p) && k[:len(p)] == p && k != p+"%" && v != "" {
				return fmt.Errorf("imported %s = %q, want it unset", k, v)
			}
		}
	}
	return nil
}

// partialAnswers answers a successful create with only the new link's ID
// and short URL, and a successful change of destination with an
// acknowledgement, as some services do.
func partialAnswers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost && r.Method != http.MethodPatch {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		var link map[string]any
		if rec.Code/100 != 2 || json.Unmarshal(rec.Body.Bytes(), &link) != nil {
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
			return
		}
		body := []byte(`{"updated":true}`)
		if r.Method == http.MethodPost {
			body, _ = json.Marshal(map[string]any{"id": link["id"], "shortUrl": link["shortUrl"]})
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}
