// Package client is the typed HTTP client of the short-link service.
//
// It sends exactly what the service's specification shows and reads
// tolerantly whatever a reasonable implementation of the unspecified parts
// could answer (see DESIGN.md). The package is split by
// concern, in the manner of hashicorp/go-tfe:
//
//   - client.go: configuration, construction, and the single request path
//     every operation goes through;
//   - links.go, export.go: one file per resource;
//   - retry.go: when to retry and how long to wait, as pure functions;
//   - ratelimit.go: the X-RateLimit-* headers;
//   - paging.go: following the pages of the link list;
//   - decode.go: the tolerant reader of response bodies;
//   - errors.go: APIError and the sentinel errors callers match with errors.Is;
//   - logging.go: tflog output, with the API key redacted.
package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// Defaults applied by New to zero fields of Config.
const (
	DefaultMaxRetries   = 8
	DefaultRetryWaitMin = 1 * time.Second
	DefaultRetryWaitMax = 30 * time.Second
	DefaultMaxPages     = 1000
	DefaultUserAgent    = "terraform-provider-shortlink"

	// DefaultReadAttemptTimeout bounds one attempt of a read, so that a
	// hung connection is retried instead of waited on for the whole
	// operation. Writes have no per-attempt bound: they run through the
	// service's slow fraud filter, and a write cut short is ambiguous (it
	// may have been carried out), so only the operation's deadline (the
	// resource's timeouts) ends them.
	DefaultReadAttemptTimeout = time.Minute
)

// Bounds on how much of a response body is read. A misbehaving server or a
// proxy must not be able to exhaust the provider's memory.
const (
	// MaxJSONBodyBytes bounds a successful JSON response (a link or one page
	// of the list). A larger body is an error.
	MaxJSONBodyBytes int64 = 32 << 20
	// MaxCSVBodyBytes bounds the analytics export. A larger body is an error.
	MaxCSVBodyBytes int64 = 512 << 20
	// maxErrorBodyBytes bounds an error response; it is only needed for its
	// code and message, so a longer one is silently truncated.
	maxErrorBodyBytes int64 = 1 << 20
)

// Rate-limit classes passed to Config.OnRateLimit. The service counts its
// limits per key and separately for read and write endpoints.
const (
	ClassRead  = "read"
	ClassWrite = "write"
)

// Config configures a Client. Only BaseURL and APIKey are required.
type Config struct {
	// BaseURL is the service's address, e.g. http://127.0.0.1:8080, without
	// the trailing /api; it may carry a path prefix.
	BaseURL string
	// APIKey is sent as a Bearer token and never logged.
	APIKey string
	// UserAgent names the provider and its version; DefaultUserAgent if empty.
	UserAgent string
	// MaxRetries is the number of retries after the first attempt;
	// DefaultMaxRetries if nil (0 means none).
	MaxRetries *int
	// ReadAttemptTimeout bounds one attempt of a GET;
	// DefaultReadAttemptTimeout if zero.
	ReadAttemptTimeout time.Duration
	// HTTPClient is the base client; a fresh one if nil (its Timeout, if
	// any, is removed: see DefaultReadAttemptTimeout).
	// if nil. Tests pass httptest clients.
	HTTPClient *http.Client
	// RetryWaitMin and RetryWaitMax bound the exponential back-off
	// (defaults DefaultRetryWaitMin and DefaultRetryWaitMax). A Retry-After
	// header sent by the service is honoured even when it is longer.
	RetryWaitMin, RetryWaitMax time.Duration
	// MaxPages bounds the pages ListLinks follows; DefaultMaxPages if <= 0.
	MaxPages int
	// UnreachableAfter bounds the time spent retrying failures to reach
	// the service at all, across every operation of the Client;
	// DefaultUnreachableAfter if zero.
	UnreachableAfter time.Duration
	// MaxRateShare caps the part of each rate-limit window (read and write
	// alike) this Client uses, for a key other integrations must keep
	// theirs of: 0.5 leaves half of every window. 0 or 1 means no cap.
	MaxRateShare float64
	// Stop, if set, is the provider's stop signal: once it begins nothing
	// new is sent, and writes already sent may finish within its grace.
	Stop *Stop
	// OnRateLimit, if set, is called with the X-RateLimit-* headers of every
	// response that carries any of them; class is ClassRead (GET) or
	// ClassWrite (POST, PATCH, DELETE). It may be called concurrently.
	OnRateLimit func(class string, rl RateLimit)
}

// Client talks to the short-link service. It is safe for concurrent use.
type Client struct {
	base        string // BaseURL without trailing slashes
	baseURL     *url.URL
	apiKey      string
	userAgent   string
	http        *http.Client
	maxRetries  int
	waitMin     time.Duration
	waitMax     time.Duration
	maxPages    int
	onRateLimit func(string, RateLimit)
	stop        *Stop
	reach       *verdict
}

// New checks cfg and returns a Client. Errors never contain the API key.
func New(cfg Config) (*Client, error) {
	base, err := parseBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	key, err := checkAPIKey(cfg.APIKey)
	if err != nil {
		return nil, err
	}
	stop := cfg.Stop
	if stop == nil {
		stop = NewStop() // never begun
	}
	maxRetries := DefaultMaxRetries
	if cfg.MaxRetries != nil {
		maxRetries = max(*cfg.MaxRetries, 0)
	}
	c := &Client{
		stop:        stop,
		reach:       &verdict{patience: cmpOr(cfg.UnreachableAfter, DefaultUnreachableAfter)},
		base:        strings.TrimRight(base.String(), "/"),
		baseURL:     base,
		apiKey:      key,
		userAgent:   cmpOr(cfg.UserAgent, DefaultUserAgent),
		http:        httpClient(cfg.HTTPClient, cmpOr(cfg.ReadAttemptTimeout, DefaultReadAttemptTimeout), stop, cfg.MaxRateShare),
		maxRetries:  maxRetries,
		waitMin:     cmpOr(cfg.RetryWaitMin, DefaultRetryWaitMin),
		waitMax:     cmpOr(cfg.RetryWaitMax, DefaultRetryWaitMax),
		maxPages:    cfg.MaxPages,
		onRateLimit: cfg.OnRateLimit,
	}
	if c.maxPages <= 0 {
		c.maxPages = DefaultMaxPages
	}
	if c.waitMax < c.waitMin {
		c.waitMax = c.waitMin
	}
	return c, nil
}

// CheckBaseURL says what is wrong with a base URL New would refuse, or
// returns nil: the provider checks its setting with it before it has a key.
func CheckBaseURL(raw string) error {
	_, err := parseBaseURL(raw)
	return err
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("base URL %q is not a valid URL: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base URL %q must be an absolute URL such as https://api.example.com", raw)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		// The API key travels in every request: over plain http only where
		// nothing leaves the machine, as with the local emulator.
		return nil, fmt.Errorf("base URL %q uses plain http: the API key would cross the network unencrypted. Use https, or a loopback address (127.0.0.1, ::1, localhost) for the local emulator", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("base URL %q must not have a query or fragment", raw)
	}
	if u.User != nil {
		// Credentials in the URL would be sent and logged; the key is the only credential.
		return nil, errors.New("base URL must not contain user information")
	}
	return u, nil
}

// checkAPIKey trims surrounding whitespace (a trailing newline from a file or
// environment variable is common) and rejects keys that cannot be sent in a
// header, without ever echoing the key.
func checkAPIKey(raw string) (string, error) {
	key := strings.TrimSpace(raw)
	if key == "" {
		return "", errors.New("API key is empty")
	}
	if strings.IndexFunc(key, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return "", errors.New("API key contains spaces or control characters; give the key alone, without a \"Bearer\" prefix")
	}
	return key, nil
}

func cmpOr[T comparable](v, fallback T) T {
	var zero T
	if v == zero {
		return fallback
	}
	return v
}

// httpClient returns a copy of base (or a new client) that does not follow
// redirects of writes: Go would turn a redirected POST into a GET and drop
// its body, so a create could "succeed" without creating anything. Its
// transport is throttled to the service's rate limits, one throttle per
// Client.
func httpClient(base *http.Client, readAttemptTimeout time.Duration, stop *Stop, maxRateShare float64) *http.Client {
	var hc http.Client
	if base != nil {
		hc = *base
	} else {
		hc = http.Client{}
		if t, ok := http.DefaultTransport.(*http.Transport); ok {
			hc.Transport = t.Clone()
		}
	}
	if hc.CheckRedirect == nil {
		hc.CheckRedirect = checkRedirect
	}
	hc.Timeout = 0 // it would cut slow writes short; see readDeadline
	// The stop guard and the read deadline sit inside the throttle: waiting
	// for a rate-limit window is not part of an attempt, and a request that
	// waited through a stop is not sent.
	deadline := &readDeadline{next: hc.Transport, timeout: readAttemptTimeout}
	hc.Transport = newThrottle(&stopGuard{next: deadline, stop: stop}, time.Now, maxRateShare)
	return &hc
}

// readDeadline bounds each attempt of a read. A read that hangs is safe to
// send again; a write is not, so writes are bounded only by the caller's
// context, the operation's deadline.
type readDeadline struct {
	next    http.RoundTripper
	timeout time.Duration
}

func (d *readDeadline) RoundTrip(req *http.Request) (*http.Response, error) {
	next := d.next
	if next == nil {
		next = http.DefaultTransport
	}
	if rateClass(req.Method) != ClassRead || d.timeout <= 0 {
		return next.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), d.timeout)
	resp, err := next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose ends an attempt's context once its body has been read.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// checkRedirect follows a GET's redirects on the same scheme and host only:
// a redirect elsewhere is reported to the user (their base URL is wrong)
// rather than followed silently.
func checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	if first.Method != http.MethodGet || len(via) >= 10 {
		return http.ErrUseLastResponse
	}
	if req.URL.Scheme != first.URL.Scheme || req.URL.Host != first.URL.Host {
		return http.ErrUseLastResponse
	}
	return nil
}

// call describes one logical request (all its attempts).
type call struct {
	method string
	path   string // API path for messages and logs, e.g. /api/links/abc
	url    string // full URL of the request
	body   []byte // nil: no body and no Content-Type
	accept string
	limit  int64 // largest successful body accepted
	// stream, if set, consumes a successful body as it arrives instead of
	// it being read into memory. It runs once per attempt, so a connection
	// lost part-way is retried from the start of the body; an error that
	// wraps ErrUnexpectedResponse is not retried.
	stream func(resp *http.Response) error
}

// response is a complete answer whose body has been read.
type response struct {
	status      int
	header      http.Header
	body        []byte
	attempts    int
	requestURL  *url.URL
	contentType string
}

// endpoint joins the base URL and an API path whose variable parts the
// caller has already escaped.
func (c *Client) endpoint(apiPath string, query url.Values) string {
	u := c.base + apiPath
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	return u
}

// do sends cl with retries and returns its 2xx response. Every other outcome
// is an error: *APIError for an HTTP error status, ErrAmbiguous when a POST
// may have been carried out without our learning the outcome, or the
// context's error.
func (c *Client) do(ctx context.Context, cl call) (*response, error) {
	ctx, unbind := c.stop.Bind(ctx)
	defer unbind()
	if err := ctx.Err(); err != nil {
		// Nothing was sent, so even a POST is not ambiguous.
		return nil, fmt.Errorf("%s %s: %w: %w", cl.method, cl.path, ErrNotSent, err)
	}
	if err := c.reach.err(); err != nil {
		return nil, fmt.Errorf("%s %s: %w: %w", cl.method, cl.path, ErrNotSent, err)
	}
	ctx = tflog.MaskAllFieldValuesStrings(ctx, c.apiKey)
	ctx = tflog.MaskMessageStrings(ctx, c.apiKey)
	req, err := c.newRequest(ctx, cl)
	if err != nil {
		return nil, err
	}
	x := &exchange{client: c, call: cl, ctx: ctx}
	req.SetResponseHandler(x.readBody)
	resp, err := c.retryClient(ctx, x).Do(req)
	if err != nil {
		closeBody(resp)
		return nil, x.failure(ctx, err)
	}
	body := x.bodyOf(resp)
	out := &response{
		status:      resp.StatusCode,
		header:      resp.Header,
		body:        body,
		attempts:    x.attempt,
		requestURL:  resp.Request.URL,
		contentType: resp.Header.Get("Content-Type"),
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, x.statusError(out)
	}
	return out, nil
}

func (c *Client) newRequest(ctx context.Context, cl call) (*retryablehttp.Request, error) {
	var raw any // a nil []byte would still be sent as an empty body
	if cl.body != nil {
		raw = cl.body
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, cl.method, cl.url, raw)
	if err != nil {
		return nil, fmt.Errorf("%s %s: building request: %w", cl.method, cl.path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Accept", cl.accept)
	if cl.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// retryClient builds a retryablehttp client for one call. It is cheap (the
// connection pool lives in c.http) and lets the hooks and the logger carry
// this call's context, which tflog needs.
func (c *Client) retryClient(ctx context.Context, x *exchange) *retryablehttp.Client {
	return &retryablehttp.Client{
		HTTPClient:      c.http,
		Logger:          &leveledLogger{ctx: ctx, redact: c.redact},
		RetryWaitMin:    c.waitMin,
		RetryWaitMax:    c.waitMax,
		RetryMax:        c.maxRetries,
		RequestLogHook:  x.beforeAttempt,
		ResponseLogHook: x.afterResponse,
		CheckRetry:      x.checkRetry,
		Backoff:         x.backoff,
		ErrorHandler:    keepLastResponse,
	}
}

// keepLastResponse replaces retryablehttp's default error handler, which
// discards the last response once retries are exhausted: we need its status
// and body to build the APIError.
func keepLastResponse(resp *http.Response, err error, _ int) (*http.Response, error) {
	return resp, err
}

func closeBody(resp *http.Response) {
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
}

// exchange is the state of one call across its attempts.
type exchange struct {
	client *Client
	call   call
	ctx    context.Context
	// attempt is the number of the attempt in flight, from 1.
	attempt int
	// lastStatus is the status of the last response, 0 after a transport error.
	lastStatus int
	// uncertain is true when the last attempt may have been carried out by
	// the service without our learning the outcome.
	uncertain bool
	// read and body hold the body of the response read by readBody.
	read *http.Response
	body []byte
}

// readBody runs inside retryablehttp's loop, so that a connection dropped
// while the body streams in is retried like any other transport error.
func (x *exchange) readBody(resp *http.Response) error {
	success := resp.StatusCode >= 200 && resp.StatusCode <= 299
	if success && x.call.stream != nil {
		return x.streamBody(resp)
	}
	limit := maxErrorBodyBytes
	if success {
		limit = x.call.limit
	}
	body, truncated, err := readBounded(resp.Body, limit)
	_ = resp.Body.Close()
	// retryablehttp drains the body before a retry; give it something to drain.
	resp.Body = http.NoBody
	if err != nil {
		return err
	}
	if truncated && success {
		return &bodyTooLargeError{limit: limit}
	}
	x.read, x.body = resp, body
	return nil
}

// streamBody hands a successful body to the call's stream, bounded by the
// call's limit like a body read into memory.
func (x *exchange) streamBody(resp *http.Response) error {
	body := resp.Body
	resp.Body = &boundedBody{ReadCloser: body, remaining: x.call.limit, limit: x.call.limit}
	err := x.call.stream(resp)
	_ = body.Close()
	resp.Body = http.NoBody // see readBody
	if err != nil {
		return err
	}
	x.read, x.body = resp, nil
	return nil
}

// boundedBody fails a read that would go past limit bytes.
type boundedBody struct {
	io.ReadCloser
	remaining, limit int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.remaining <= 0 {
		// One byte more tells a body of exactly the limit from a longer one.
		var probe [1]byte
		n, err := b.ReadCloser.Read(probe[:])
		if n > 0 {
			return 0, &bodyTooLargeError{limit: b.limit}
		}
		return 0, err
	}
	if int64(len(p)) > b.remaining {
		p = p[:b.remaining]
	}
	n, err := b.ReadCloser.Read(p)
	b.remaining -= int64(n)
	return n, err
}

// bodyOf returns resp's body, reading it now when readBody did not run
// (retryablehttp skips the handler when retries of a 429 or 5xx run out).
func (x *exchange) bodyOf(resp *http.Response) []byte {
	if x.read == resp {
		return x.body
	}
	body, _, err := readBounded(resp.Body, maxErrorBodyBytes)
	closeBody(resp)
	if err != nil {
		return nil // the status alone decides; the body was only diagnostics
	}
	return body
}

// readBounded reads at most limit bytes of r and reports whether more followed.
func readBounded(r io.Reader, limit int64) ([]byte, bool, error) {
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(body)) > limit {
		return body[:limit], true, nil
	}
	return body, false, nil
}

// failure turns an error of retryablehttp into ours.
func (x *exchange) failure(ctx context.Context, err error) error {
	cl := x.call
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		err = fmt.Errorf("%w (%w)", ctxErr, err)
	}
	if x.lastStatus != 0 && ctx.Err() != nil {
		err = fmt.Errorf("stopped waiting to retry after status %d: %w", x.lastStatus, err)
	}
	if x.attempt > 1 {
		err = fmt.Errorf("%w (after %d attempts)", err, x.attempt)
	}
	if verdict := x.client.reach.err(); verdict != nil && cannotConnect(err) {
		err = verdict // the run-wide conclusion, which names this error
	}
	err = fmt.Errorf("%s %s: %w", cl.method, cl.path, err)
	if cl.method == http.MethodPost && x.uncertain {
		return fmt.Errorf("%w; %w", err, ErrAmbiguous)
	}
	return err
}

// statusError builds the APIError of a non-2xx response.
func (x *exchange) statusError(r *response) error {
	e := newAPIError(x.call.method, x.call.path, r, x.client.redact)
	if x.call.method == http.MethodPost && r.status >= 500 {
		// The service may have created the link before failing.
		return fmt.Errorf("%w; %w", e, ErrAmbiguous)
	}
	return e
}
