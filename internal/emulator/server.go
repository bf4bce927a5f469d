package emulator

import (
	"fmt"
	"net/http"
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

	mu         sync.Mutex // guards st and settings
	st         *store
	settings   Settings
	persistErr error

	limiter  *rateLimiter
	faults   *faultInjector
	counters *counters
}

// New builds a Server. It fails only when the settings make no sense or the
// data file cannot be read.
func New(opts Options) (*Server, error) {
	settings := opts.Settings
	if settings.Limits == (Limits{}) && settings.Variants == (Variants{}) {
		settings = DefaultSettings()
	}
	if err := settings.Validate(); err != nil {
		return nil, err
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	st := newStore()
	if opts.DataFile != "" {
		loaded, err := loadStore(opts.DataFile)
		if err != nil {
			return nil, err
		}
		st = loaded
	}
	return &Server{
		now:        now,
		dataFile:   opts.DataFile,
		adminToken: opts.AdminToken,
		st:         st,
		settings:   settings,
		limiter:    newRateLimiter(),
		faults:     newFaultInjector(),
		counters:   newCounters(),
	}, nil
}

// Settings returns the switches in force.
func (s *Server) Settings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

// SetSettings replaces the switches. Rate-limit windows already open keep
// their counts.
func (s *Server) SetSettings(settings Settings) error {
	if err := settings.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settings = settings
	return nil
}

// UpdateSettings applies change to a copy of the settings in force and
// installs the result.
func (s *Server) UpdateSettings(change func(*Settings)) error {
	s.mu.Lock()
	next := s.settings
	next.Filter.Blocked = append([]string(nil), s.settings.Filter.Blocked...)
	s.mu.Unlock()
	change(&next)
	return s.SetSettings(next)
}

// persistLocked writes the store when a data file is configured. Called with
// s.mu held, after every change, so that stopping the emulator loses nothing.
func (s *Server) persistLocked() error {
	if s.dataFile == "" {
		return nil
	}
	return saveStore(s.dataFile, s.st)
}

// ServeHTTP routes a request to the API, the admin API or a short link.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/api/"):
		s.serveAPI(w, r)
	case strings.HasPrefix(r.URL.Path, "/_emulator/"):
		s.serveAdmin(w, r)
	default:
		s.serveShortLink(w, r)
	}
}

// route names an API request by method and path pattern, for counters,
// rate-limit classes and scopes.
type route struct {
	method  string
	pattern string // "/api/links", "/api/links/{id}", "/api/analytics/export"
	id      string
}

func (rt route) class() string {
	if rt.method == http.MethodGet {
		return classRead
	}
	return classWrite
}

func (rt route) scope() string {
	if rt.method == http.MethodGet {
		return ScopeRead
	}
	return ScopeWrite
}

func matchRoute(r *http.Request) (route, bool) {
	p := r.URL.Path
	switch {
	case p == "/api/links" && (r.Method == http.MethodGet || r.Method == http.MethodPost):
		return route{method: r.Method, pattern: "/api/links"}, true
	case strings.HasPrefix(p, "/api/links/") && (r.Method == http.MethodPatch || r.Method == http.MethodDelete):
		id := strings.TrimPrefix(p, "/api/links/")
		if id == "" || strings.Contains(id, "/") {
			return route{}, false
		}
		return route{method: r.Method, pattern: "/api/links/{id}", id: id}, true
	case p == "/api/analytics/export" && r.Method == http.MethodGet:
		return route{method: r.Method, pattern: "/api/analytics/export"}, true
	}
	return route{}, false
}

// serveAPI runs the checks every endpoint shares, in the documented order,
// then the endpoint itself.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w}
	rt, ok := matchRoute(r)
	pattern := r.URL.Path
	if ok {
		pattern = rt.pattern
	}
	defer func() { s.counters.add(r.Method, pattern, rec.status) }()
	defer func() {
		// A connection closed on purpose by fault injection is counted as
		// status 0 and then closed by the HTTP server.
		if v := recover(); v != nil {
			rec.status = 0
			panic(v)
		}
	}()

	if !ok {
		s.writeError(rec, http.StatusNotFound, "not_found", fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path))
		return
	}
	acct, key, status := s.authenticate(r)
	token := bearerToken(r)
	settings := s.Settings()
	limit := settings.Limits.limitFor(rt.class())
	if status != 0 {
		setRateHeaders(rec, limit, limit, time.Duration(settings.Limits.Window))
		s.writeError(rec, http.StatusUnauthorized, "invalid_api_key", "the API key is unknown or revoked, or the account's plan no longer includes the API")
		return
	}
	if !s.keyHasScope(key, rt.scope(), settings) {
		d := s.limiter.peek(token, rt.class(), limit, time.Duration(settings.Limits.Window), s.now())
		setRateHeaders(rec, d.limit, d.remaining, d.reset)
		s.writeError(rec, http.StatusForbidden, "insufficient_scope", fmt.Sprintf("this key lacks the scope %s", rt.scope()))
		return
	}
	decision := s.limiter.take(token, rt.class(), limit, time.Duration(settings.Limits.Window), s.now())
	setRateHeaders(rec, decision.limit, decision.remaining, decision.reset)
	if !decision.allowed {
		rec.Header().Set("Retry-After", fmt.Sprint(ceilSeconds(decision.reset)))
		s.writeError(rec, http.StatusTooManyRequests, "rate_limited", "rate limit exceeded; retry after the time in Retry-After")
		return
	}
	s.withFaults(rec, r, rt, func(w http.ResponseWriter) { s.serveEndpoint(w, r, rt, acct) })
}

func (s *Server) serveEndpoint(w http.ResponseWriter, r *http.Request, rt route, acct string) {
	switch rt.pattern + " " + rt.method {
	case "/api/links POST":
		s.createLink(w, r, acct)
	case "/api/links GET":
		s.listLinks(w, r, acct)
	case "/api/links/{id} PATCH":
		s.changeDestination(w, r, acct, rt.id)
	case "/api/links/{id} DELETE":
		s.deleteLink(w, acct, rt.id)
	case "/api/analytics/export GET":
		s.exportClicks(w, r, acct)
	}
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
