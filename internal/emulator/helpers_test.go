// The harness every test file of the package uses: env, one emulator served
// over real HTTP with a seeded fixture and a test clock, and the helpers to
// send API requests and read their answers (do, try, wantStatus,
// wantError, create, list, visit). It is not paired with one source file
// because it exercises none in particular; it is longer than some of the
// files it serves because every test goes through it, over real
// connections, as a client of the service would.

package emulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/testclock"
)

// env is one emulator served over real HTTP (so fault injection can close
// connections), with one seeded fixture.
type env struct {
	srv    *Server
	ts     *httptest.Server
	fx     Fixture
	clock  *testclock.Clock
	client *http.Client
}

// testSettings are the canonical settings without the filter delay.
func testSettings(change ...func(*Settings)) Settings {
	s := DefaultSettings()
	s.Filter.Delay = 0
	for _, c := range change {
		c(&s)
	}
	return s
}

// newEnv starts an emulator with the test settings changed by change.
func newEnv(t *testing.T, change ...func(*Settings)) *env {
	t.Helper()
	return newEnvWith(t, Options{Settings: testSettings(change...)})
}

// newEnvWith starts an emulator with opts; a nil opts.Now gets a test clock.
// The fixture "test" is reused when the data file holds it.
func newEnvWith(t *testing.T, opts Options) *env {
	t.Helper()
	e := &env{clock: testclock.New()}
	if opts.Now == nil {
		opts.Now = e.clock.Now
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.srv = srv
	fx, ok := srv.ReuseFixture("test") // reloaded from opts.DataFile
	if !ok {
		if fx, err = srv.SeedFixture("test", "go.example.test"); err != nil {
			t.Fatalf("SeedFixture: %v", err)
		}
	}
	e.fx = fx
	e.ts = httptest.NewServer(srv)
	t.Cleanup(e.ts.Close)
	e.client = &http.Client{
		Timeout: 20 * time.Second,
		// Short links answer 302; the tests look at the redirect itself.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		// No keep-alive: a connection closed by fault injection must reach
		// the test as an error, never be retried by the transport.
		Transport: &http.Transport{DisableKeepAlives: true},
	}
	return e
}

// response is a fully read HTTP answer.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// do sends an API request. key "" sends no Authorization header; body nil
// sends no body, a string or []byte is sent as is, anything else as JSON.
func (e *env) do(t *testing.T, method, path, key string, body any) *response {
	t.Helper()
	resp, err := e.try(method, path, key, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// try is do without failing the test on a transport error.
func (e *env) try(method, path, key string, body any) (*response, error) {
	req, err := e.request(method, path, key, body)
	if err != nil {
		return nil, err
	}
	return e.send(req)
}

func (e *env) request(method, path, key string, body any) (*http.Request, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	target := path
	if !strings.HasPrefix(path, "http://") {
		target = e.ts.URL + path
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

func (e *env) send(req *http.Request) (*response, error) {
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

func (r *response) String() string {
	return fmt.Sprintf("%d %s", r.Status, bytes.TrimSpace(r.Body))
}

// object decodes a JSON object body.
func (r *response) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

// array decodes a JSON array of objects.
func (r *response) array(t *testing.T) []map[string]any {
	t.Helper()
	var a []map[string]any
	if err := json.Unmarshal(r.Body, &a); err != nil {
		t.Fatalf("body is not a JSON array: %v: %s", err, r.Body)
	}
	return a
}

func (r *response) headerInt(t *testing.T, name string) int {
	t.Helper()
	v := r.Header.Get(name)
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("header %s = %q, want an integer (response %s)", name, v, r)
	}
	return n
}

// wantStatus fails unless the response has the status.
func wantStatus(t *testing.T, r *response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d; body: %s", r.Status, status, bytes.TrimSpace(r.Body))
	}
}

// wantError checks a canonical error answer: status, JSON body with the code
// and a message that starts with field (when field is not empty).
func wantError(t *testing.T, r *response, status int, code, field string) {
	t.Helper()
	wantStatus(t, r, status)
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	body := r.object(t)
	if body["error"] != code {
		t.Errorf("error = %v, want %q (body %s)", body["error"], code, r.Body)
	}
	msg, _ := body["message"].(string)
	if msg == "" {
		t.Errorf("message is empty (body %s)", r.Body)
	}
	if field != "" && !strings.HasPrefix(msg, field+":") {
		t.Errorf("message = %q, want it to name the field %q", msg, field)
	}
}

// wantRateHeaders checks that the three X-RateLimit headers are integers.
func wantRateHeaders(t *testing.T, r *response) (limit, remaining, reset int) {
	t.Helper()
	return r.headerInt(t, "X-RateLimit-Limit"), r.headerInt(t, "X-RateLimit-Remaining"), r.headerInt(t, "X-RateLimit-Reset")
}

// seedLinks seeds n links on domainID, slugs prefix-0, prefix-1, …
func (e *env) seedLinks(t *testing.T, domainID, prefix string, n int) []Link {
	t.Helper()
	links, err := e.srv.SeedLinks(domainID, prefix, n)
	if err != nil {
		t.Fatal(err)
	}
	return links
}

// seedFixture seeds another account, with its domain host and its keys.
func (e *env) seedFixture(t *testing.T, name, host string) Fixture {
	t.Helper()
	fx, err := e.srv.SeedFixture(name, host)
	if err != nil {
		t.Fatal(err)
	}
	return fx
}

// createBody is the request body of a link on the fixture's domain.
func (e *env) createBody(dest string, extra ...any) map[string]any {
	b := map[string]any{"destination": dest, "domainId": e.fx.DomainID}
	for i := 0; i+1 < len(extra); i += 2 {
		b[extra[i].(string)] = extra[i+1]
	}
	return b
}

// create makes a link through the API and returns its JSON object.
func (e *env) create(t *testing.T, dest string, extra ...any) map[string]any {
	t.Helper()
	r := e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody(dest, extra...))
	wantStatus(t, r, http.StatusCreated)
	return r.object(t)
}

// list returns the fixture account's links through the API.
func (e *env) list(t *testing.T) []map[string]any {
	t.Helper()
	r := e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil)
	wantStatus(t, r, http.StatusOK)
	return r.array(t)
}

// visit requests a short link by its path form with a Referer.
func (e *env) visit(t *testing.T, host, slug, referrer string) *response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.ts.URL+"/r/"+host+"/"+slug, nil)
	if err != nil {
		t.Fatal(err)
	}
	if referrer != "" {
		req.Header.Set("Referer", referrer)
	}
	req.Header.Set("User-Agent", "test-visitor/1.0")
	r, err := e.send(req)
	if err != nil {
		t.Fatalf("visit %s/%s: %v", host, slug, err)
	}
	return r
}

func ids(links []map[string]any) []string {
	out := make([]string, len(links))
	for i, l := range links {
		out[i], _ = l["id"].(string)
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
