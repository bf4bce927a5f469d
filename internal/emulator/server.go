package emulator

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
)

// Options configure a Server at construction.
type Options struct {
	Settings Settings // zero value → DefaultSettings()
	// DataFile, when set, is where the store is kept: loaded by New and
	// written atomically after every change.
	DataFile string
	// AdminToken enables the admin API under /_emulator/ for requests that
	// carry it in the X-Emulator-Admin-Token header. Empty disables it.
	AdminToken string
	// Now is the clock; nil means time.Now. Tests move it to expire links.
	Now func() time.Time
}

// Server is the emulated service: an http.Handler.
type Server struct {
	now        func() time.Time
	dataFile   string
	adminToken string

	mu         sync.Mutex // guards st, settings and the journal
	st         *store
	settings   Settings
	persistErr error
	// journal is the data file's journal, open once a change was written
	// to it; journalLines, how many lines it holds (journal.go).
	journal      *os.File
	journalLines int
	// folding: a fold is being written in the background; linesSinceFold,
	// the journal's lines since it copied the store; snapshots numbers the
	// snapshots begun, savedSnapshot the latest in the data file's place;
	// folds, the fold under way, which Close waits for.
	folding                  bool
	linesSinceFold           [][]byte
	snapshots, savedSnapshot int64
	folds                    sync.WaitGroup
	writeFold                func(dataFile string, st *store) (tmpPath string, err error) // writeStoreBeside; tests hold it
	// writes counts the API writes under way: Close waits for them, so
	// that a write received before a stop is carried out, however long
	// its filter takes.
	writes sync.WaitGroup

	limiter  *rateLimiter
	faults   *faultInjector
	counters *counters
	mux      *http.ServeMux
}

// New builds a Server. It fails only when the settings make no sense or the
// data file cannot be read.
func New(opts Options) (*Server, error) {
	settings := opts.Settings
	if reflect.ValueOf(settings).IsZero() { // only none at all: a partial one is refused by Validate, not replaced
		settings = DefaultSettings()
	}
	if err := settings.Validate(); err != nil {
		return nil, err
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	st, journalLines := newStore(), 0
	if opts.DataFile != "" {
		loaded, err := loadStore(opts.DataFile)
		if err != nil {
			return nil, err
		}
		st = loaded
		if journalLines, err = replayJournal(journalPath(opts.DataFile), st); err != nil {
			return nil, err
		}
	}
	s := &Server{
		journalLines: journalLines,
		now:          now,
		dataFile:     opts.DataFile,
		adminToken:   opts.AdminToken,
		st:           st,
		settings:     settings,
		limiter:      newRateLimiter(),
		faults:       newFaultInjector(),
		counters:     newCounters(),
		writeFold:    writeStoreBeside,
	}
	s.mux = s.routes()
	return s, nil
}

// Settings returns the switches in force.
func (s *Server) Settings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings.clone()
}

// SetSettings replaces the switches. Rate-limit windows already open keep
// their counts.
func (s *Server) SetSettings(settings Settings) error {
	if err := settings.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settings = settings.clone()
	return nil
}

// UpdateSettings applies change to a copy of the settings in force and
// installs the result.
func (s *Server) UpdateSettings(change func(*Settings)) error {
	s.mu.Lock()
	next := s.settings.clone()
	s.mu.Unlock()
	change(&next)
	return s.SetSettings(next)
}

// ServeHTTP routes a request to the API, the admin API or a short link.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

// The API's path patterns: its routes, and what a fault may name.
const (
	apiPrefix  = "/api/" // counts every request that names no endpoint
	pathLinks  = "/api/links"
	pathLink   = "/api/links/{id}"
	pathExport = "/api/analytics/export"
)

// apiPaths and apiMethods are what a fault may be restricted to.
var (
	apiPaths   = []string{pathLinks, pathLink, pathExport}
	apiMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPatch, http.MethodDelete}
)

// noEndpointMethod is the method a request to no endpoint is counted
// under: an API method as it came, any other as OTHER.
func noEndpointMethod(method string) string {
	if slices.Contains(apiMethods, method) {
		return method
	}
	return "OTHER"
}

// failedRead ends a body read ahead with the error the read met (none: EOF).
type failedRead struct{ err error }

func (f failedRead) Read([]byte) (int, error) { return 0, cmp.Or(f.err, io.EOF) }

// apiHandler is one API operation, called once the shared checks passed.
type apiHandler func(w http.ResponseWriter, r *http.Request, acct string)

// routes builds the emulator's routing table once: the API's endpoints
// behind the checks they share, the admin API behind its token, and every
// other path as a short link.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	api := map[string]apiHandler{
		"POST " + pathLinks: s.createLink,
		"GET " + pathLinks:  s.listLinks,
		"PATCH " + pathLink: func(w http.ResponseWriter, r *http.Request, acct string) {
			s.changeDestination(w, r, acct, r.PathValue("id"))
		},
		"DELETE " + pathLink: func(w http.ResponseWriter, r *http.Request, acct string) {
			s.deleteLink(w, acct, r.PathValue("id"))
		},
		"GET " + pathExport: s.exportClicks,
	}
	for pattern, handle := range api {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) { s.serveAPI(w, r, handle) })
	}
	// Any other request under /api/ is a JSON 404, counted like the others
	// (ServeMux would answer 405 or a text 404).
	mux.HandleFunc(apiPrefix, func(w http.ResponseWriter, r *http.Request) { s.serveAPI(w, r, nil) })
	for pattern, handle := range s.adminRoutes() {
		mux.HandleFunc(pattern, s.admin(handle))
	}
	mux.HandleFunc("/_emulator/", s.admin(nil))
	mux.HandleFunc("/", s.serveShortLink)
	return mux
}

// route names an API request by method and path pattern, for counters,
// rate-limit classes, scopes and faults.
type route struct {
	method  string
	pattern string // one of apiPaths
}

// routeOf is the route of a request the mux matched to an endpoint.
func routeOf(r *http.Request) route {
	_, pattern, _ := strings.Cut(r.Pattern, " ")
	return route{method: r.Method, pattern: pattern}
}

// isRead is whether the route reads: GET, and HEAD, which is a GET
// without its body.
func (rt route) isRead() bool { return rt.method == http.MethodGet || rt.method == http.MethodHead }

func (rt route) class() string {
	if rt.isRead() {
		return classRead
	}
	return classWrite
}

func (rt route) scope() string {
	if rt.isRead() {
		return ScopeRead
	}
	return ScopeWrite
}

// serveAPI runs the checks every endpoint shares, in the documented order,
// then the endpoint itself (nil: no such endpoint).
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, handle apiHandler) {
	rec := &statusRecorder{ResponseWriter: w}
	rt := routeOf(r)
	if handle != nil && rt.class() == classWrite {
		// Received once its body is in: a stop waits for the write, not
		// for a client that never sends the rest of its body.
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), failedRead{err}))
		s.writes.Add(1)
		defer s.writes.Done()
	}
	method, pattern := r.Method, rt.pattern
	if handle == nil {
		// One row for every request that names no endpoint, whatever its
		// path and method, so that no client can grow the counters.
		method, pattern = noEndpointMethod(r.Method), apiPrefix
	}
	defer func() { s.counters.add(method, pattern, rec.status) }()
	defer func() {
		// A connection closed on purpose by fault injection is counted as
		// status 0 and then closed by the HTTP server.
		if v := recover(); v != nil {
			rec.status = 0
			panic(v)
		}
	}()

	if handle == nil {
		s.writeError(rec, http.StatusNotFound, "not_found", fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path))
		return
	}
	acct, key, status := s.authenticate(r)
	token := bearerToken(r)
	settings := s.Settings()
	limit := settings.Limits.limitFor(rt.class())
	if status != 0 {
		setRateHeaders(rec, settings.Limits, limit, limit, 0) // no key: nothing counted, the allowance is whole
		s.writeError(rec, http.StatusUnauthorized, "invalid_api_key", "the API key is unknown or revoked, or the account's plan no longer includes the API")
		return
	}
	if !s.keyHasScope(key, rt.scope(), settings) {
		d := s.limiter.peek(token, rt.class(), settings.Limits, s.now())
		setRateHeaders(rec, settings.Limits, d.limit, d.remaining, d.reset)
		s.writeError(rec, http.StatusForbidden, "insufficient_scope", fmt.Sprintf("this key lacks the scope %s", rt.scope()))
		return
	}
	decision := s.limiter.take(token, rt.class(), settings.Limits, s.now())
	setRateHeaders(rec, settings.Limits, decision.limit, settings.Limits.RemainingSaid(decision.allowed, decision.remaining), decision.reset)
	if !decision.allowed {
		rec.Header().Set("Retry-After", fmt.Sprint(settings.Limits.WholeSeconds(decision.retry)))
		s.writeError(rec, http.StatusTooManyRequests, "rate_limited", "rate limit exceeded; retry after the time in Retry-After")
		return
	}
	s.withFaults(rec, r, rt, func(w http.ResponseWriter) { handle(w, r, acct) })
}

func bearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "Bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// authenticate finds the account of the request's key. status is non-zero
// (401) when the key is missing, unknown, revoked or its account's plan no
// longer includes the API.
func (s *Server) authenticate(r *http.Request) (accountID string, key APIKey, status int) {
	token := bearerToken(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.st.Keys[token]
	if token == "" || !ok || k.Revoked {
		return "", APIKey{}, http.StatusUnauthorized
	}
	acct, ok := s.st.Accounts[k.AccountID]
	if !ok || !acct.APIEnabled {
		return "", APIKey{}, http.StatusUnauthorized
	}
	return acct.ID, *k, 0
}

func (s *Server) keyHasScope(k APIKey, scope string, settings Settings) bool {
	if k.has(scope) {
		return true
	}
	return scope == ScopeRead && settings.Variants.WriteGrantsRead && k.has(ScopeWrite)
}

// statusRecorder remembers the status written, for the counters.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

// Unwrap lets http.ResponseController reach the connection (to flush).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}
