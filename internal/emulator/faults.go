package emulator

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FaultKind is what an injected fault does to a request.
type FaultKind string

const (
	// FaultStatus answers Status (500, 502, 503, 429, …) without doing the request.
	FaultStatus FaultKind = "status"
	// FaultDelay waits Delay, then does the request normally.
	FaultDelay FaultKind = "delay"
	// FaultCloseAfterCommit does the request, then closes the connection
	// without answering: the change is committed but the client never
	// learns it. The hardest case for a client that retries POSTs.
	FaultCloseAfterCommit FaultKind = "close-after-commit"
	// FaultClose closes the connection without doing the request.
	FaultClose FaultKind = "close"
	// FaultAnswerBeforeCommit answers Status (504 unless set) at once, as a
	// gateway in front of a slow service does when it gives up waiting, and
	// then does the request all the same: the change is made after the
	// client was told the request failed.
	FaultAnswerBeforeCommit FaultKind = "answer-before-commit"
)

// Fault is one injected failure. Method and Path (a path pattern such as
// /api/links/{id}), when set, restrict which requests it applies to.
type Fault struct {
	Kind       FaultKind `json:"kind"`
	Status     int       `json:"status,omitempty"`
	Delay      Duration  `json:"delay,omitempty"`
	RetryAfter int       `json:"retryAfter,omitempty"` // seconds, for an injected 429 or 503
	Method     string    `json:"method,omitempty"`
	Path       string    `json:"path,omitempty"`
}

func (f Fault) matches(rt route) bool {
	return (f.Method == "" || strings.EqualFold(f.Method, rt.method)) && (f.Path == "" || f.Path == rt.pattern)
}

// FaultPlan says which API requests fail and how. Script faults are used
// first, each by the next request it matches; then each request fails with
// probability Rate, with a fault drawn from Random.
type FaultPlan struct {
	Script []Fault `json:"script,omitempty"`
	Rate   float64 `json:"rate,omitempty"`
	Random []Fault `json:"random,omitempty"`
	Seed   int64   `json:"seed,omitempty"` // makes the random draws repeatable
}

// Validate says what in the plan the emulator could not do as asked: a
// kind it does not know, a status that is no error, a negative wait, a
// rate outside 0 to 1, a method or path no API request has (a fault that
// could never fire).
func (p FaultPlan) Validate() error {
	if p.Rate < 0 || p.Rate > 1 {
		return fmt.Errorf("rate %v is not between 0 and 1", p.Rate)
	}
	for i, f := range slices.Concat(p.Script, p.Random) {
		statusOK := f.Status >= 400 && f.Status <= 599
		switch {
		case !slices.Contains([]FaultKind{FaultStatus, FaultDelay, FaultCloseAfterCommit, FaultClose, FaultAnswerBeforeCommit}, f.Kind):
			return fmt.Errorf("fault %d: kind %q is not one of status, delay, close, close-after-commit, answer-before-commit", i, f.Kind)
		case f.Kind == FaultStatus && !statusOK, f.Kind == FaultAnswerBeforeCommit && f.Status != 0 && !statusOK:
			return fmt.Errorf("fault %d: status %d is not an error status (400-599)", i, f.Status)
		case f.RetryAfter < 0 || f.Delay < 0:
			return fmt.Errorf("fault %d: a negative wait", i)
		case f.Method != "" && !slices.Contains(apiMethods, strings.ToUpper(f.Method)):
			return fmt.Errorf("fault %d: method %q is not one of the API's: %s", i, f.Method, strings.Join(apiMethods, ", "))
		case f.Path != "" && !slices.Contains(apiPaths, f.Path):
			return fmt.Errorf("fault %d: path %q is not one of the API's path patterns (a link's ID is {id}): %s", i, f.Path, strings.Join(apiPaths, ", "))
		}
	}
	return nil
}

// clone copies the plan's lists, so the injector and its callers never
// share one: a caller that edits its plan after SetFaults changes nothing.
func (p FaultPlan) clone() FaultPlan {
	p.Script = slices.Clone(p.Script)
	p.Random = slices.Clone(p.Random)
	return p
}

// DefaultRandomFaults is the mix drawn from when FaultPlan.Random is empty.
func DefaultRandomFaults() []Fault {
	return []Fault{
		{Kind: FaultStatus, Status: http.StatusInternalServerError},
		{Kind: FaultStatus, Status: http.StatusBadGateway},
		{Kind: FaultStatus, Status: http.StatusServiceUnavailable},
		{Kind: FaultDelay, Delay: Duration(150 * time.Millisecond)},
		{Kind: FaultCloseAfterCommit},
	}
}

type faultInjector struct {
	mu   sync.Mutex
	plan FaultPlan
	rng  *rand.Rand
}

func newFaultInjector() *faultInjector {
	return &faultInjector{rng: rand.New(rand.NewSource(1))}
}

func (fi *faultInjector) set(plan FaultPlan) {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	plan = plan.clone()
	if len(plan.Random) == 0 {
		plan.Random = DefaultRandomFaults()
	}
	fi.plan = plan
	fi.rng = rand.New(rand.NewSource(plan.Seed))
}

func (fi *faultInjector) get() FaultPlan {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	return fi.plan.clone()
}

func (fi *faultInjector) push(faults ...Fault) {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	fi.plan.Script = append(fi.plan.Script, faults...)
}

// next takes the fault for this request, if any.
func (fi *faultInjector) next(rt route) (Fault, bool) {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	for i, f := range fi.plan.Script {
		if f.matches(rt) {
			fi.plan.Script = append(fi.plan.Script[:i], fi.plan.Script[i+1:]...)
			return f, true
		}
	}
	if fi.plan.Rate <= 0 || fi.rng.Float64() >= fi.plan.Rate {
		return Fault{}, false
	}
	var candidates []Fault
	for _, f := range fi.plan.Random {
		if f.matches(rt) {
			candidates = append(candidates, f)
		}
	}
	if len(candidates) == 0 {
		return Fault{}, false
	}
	return candidates[fi.rng.Intn(len(candidates))], true
}

// SetFaults replaces the fault plan; the zero FaultPlan turns faults off.
func (s *Server) SetFaults(plan FaultPlan) { s.faults.set(plan) }

// Faults returns the plan in force, with what is left of its script.
func (s *Server) Faults() FaultPlan { return s.faults.get() }

// InjectFaults appends faults to the script.
func (s *Server) InjectFaults(faults ...Fault) { s.faults.push(faults...) }

// Burst429 makes the next n API requests answer 429 with Retry-After.
func (s *Server) Burst429(n, retryAfterSeconds int) {
	for range n {
		s.faults.push(Fault{Kind: FaultStatus, Status: http.StatusTooManyRequests, RetryAfter: retryAfterSeconds})
	}
}

// withFaults runs handle, or the fault this request draws instead.
func (s *Server) withFaults(w http.ResponseWriter, r *http.Request, rt route, handle func(http.ResponseWriter)) {
	f, ok := s.faults.next(rt)
	if !ok {
		handle(w)
		return
	}
	switch f.Kind {
	case FaultStatus:
		s.writeFaultStatus(w, f)
	case FaultDelay:
		if s.delay(r, time.Duration(f.Delay)) {
			handle(w)
		}
	case FaultCloseAfterCommit:
		handle(discardWriter{header: http.Header{}})
		panic(http.ErrAbortHandler) // the server closes the connection without an answer
	case FaultClose:
		panic(http.ErrAbortHandler)
	case FaultAnswerBeforeCommit:
		// Once the answer is written the request's body can no longer be
		// read: read it first, for the request that is done afterwards.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.answerNow(w, Fault{Kind: FaultStatus, Status: cmp.Or(f.Status, http.StatusGatewayTimeout)})
		handle(discardWriter{header: http.Header{}})
	default:
		handle(w)
	}
}

// answerNow sends the fault's whole answer, with its length, before the
// handler goes on: the client has it while the request is still being done.
func (s *Server) answerNow(w http.ResponseWriter, f Fault) {
	var answer bufferedAnswer
	answer.header = http.Header{}
	s.writeFaultStatus(&answer, f)
	for k, v := range answer.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(answer.body.Len()))
	// The connection stays busy with the request: the client must not send
	// its next one on it, as it could on a gateway's.
	w.Header().Set("Connection", "close")
	w.WriteHeader(answer.status)
	_, _ = w.Write(answer.body.Bytes())
	_ = http.NewResponseController(w).Flush() // a writer that cannot flush sends it when the handler is done

}

// bufferedAnswer is an answer written to memory.
type bufferedAnswer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedAnswer) Header() http.Header         { return b.header }
func (b *bufferedAnswer) Write(p []byte) (int, error) { return b.body.Write(p) }
func (b *bufferedAnswer) WriteHeader(status int)      { b.status = status }

func (s *Server) writeFaultStatus(w http.ResponseWriter, f Fault) {
	switch f.Status {
	case http.StatusTooManyRequests:
		w.Header().Set("Retry-After", fmt.Sprint(f.RetryAfter))
		s.writeError(w, f.Status, "rate_limited", "rate limit exceeded; retry after the time in Retry-After")
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		// What a proxy in front of a real service answers: not JSON. A 503
		// may say when to come back (RFC 9110, 10.2.3).
		if f.Status == http.StatusServiceUnavailable && f.RetryAfter > 0 {
			w.Header().Set("Retry-After", fmt.Sprint(f.RetryAfter))
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(f.Status)
		fmt.Fprintf(w, "<html><body><h1>%d %s</h1></body></html>\n", f.Status, http.StatusText(f.Status))
	default:
		s.writeError(w, f.Status, faultCode(f.Status), "injected fault")
	}
}

// faultCode is the error code of an injected status, so that an injected
// 404 reads like the service's own (a link deleted by someone else between
// a refresh and an apply): the spec's code where it has one, internal_error
// for a 5xx, and for any other status its name in snake case (gone,
// method_not_allowed; status_499 for one without a name), as services
// whose codes the spec does not show answer.
func faultCode(status int) string {
	if code, ok := specCodes[status]; ok {
		return code
	}
	if status >= 500 {
		return "internal_error"
	}
	name := http.StatusText(status)
	if name == "" {
		return fmt.Sprintf("status_%d", status)
	}
	return strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			return r
		}
		return '_'
	}, strings.ToLower(name))
}

var specCodes = map[int]string{
	http.StatusBadRequest:          "invalid_request",
	http.StatusUnauthorized:        "invalid_api_key",
	http.StatusPaymentRequired:     "link_quota",
	http.StatusForbidden:           "insufficient_scope",
	http.StatusNotFound:            "not_found",
	http.StatusConflict:            "slug_taken",
	http.StatusUnprocessableEntity: "blocked_by_filter",
	http.StatusTooManyRequests:     "rate_limited",
}

// delay makes a request wait d. A real server that has received a request
// carries it out even if the client goes away meanwhile (its answer is
// simply lost), so the wait runs to its end; with the AbortOnDisconnect
// switch it ends when the client goes, and delay reports false.
func (s *Server) delay(r *http.Request, d time.Duration) bool {
	if s.Settings().Filter.AbortOnDisconnect {
		return sleepCtx(r, d)
	}
	time.Sleep(d)
	return true
}

// sleepCtx waits d or until the request is cancelled; it reports whether the
// whole wait passed.
func sleepCtx(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// discardWriter swallows a response that will never be sent.
type discardWriter struct{ header http.Header }

func (d discardWriter) Header() http.Header         { return d.header }
func (d discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d discardWriter) WriteHeader(int)             {}
