package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/shortlink/terraform-provider-shortlink/internal/defaults"
)

// One request's path, top to bottom. Every operation (links.go, export.go,
// paging.go) describes its request as a call and hands it to do; this file
// is everything that happens to it from there, in this order:
//
//  1. do refuses at once, with nothing sent, when the operation has ended,
//     the provider is stopping (stop.go) or the Client holds a verdict
//     (verdict.go); it asks tflog to mask the API key and builds the
//     request (newRequest).
//  2. retryablehttp runs the attempts with the hooks wired in retryClient.
//     For each attempt:
//     a. startAttempt (RequestLogHook) numbers it, forgets the previous
//     attempt's body and logs the request;
//     b. the round trip goes down the transport chain built by httpClient:
//     paced (pace.go) → stopGuard (stop.go) → readDeadline → the
//     base transport;
//     c. checkRetry (CheckRetry) notes the outcome and applies the retry
//     policy (retry.go);
//     d. if the attempt is not to be retried, readBody (the request's
//     response handler, body.go) reads the body inside the loop, and
//     checkRetry runs again on its error: a body cut short is retried
//     like any transport error;
//     e. logResponse (ResponseLogHook, logging.go) logs an attempt that
//     ended without error;
//     f. before a retry, backoff (Backoff) says how long to wait;
//     g. when the attempts end without success, keepLastResponse
//     (ErrorHandler) keeps the last response.
//  3. do maps the outcome to ours: failure for an error (ErrNotSent,
//     ErrAmbiguous, a verdict), statusError for a status other than 2xx
//     (*APIError, errors.go), the response itself for a 2xx.

// httpClient returns a copy of base (or a new client) that does not follow
// redirects of writes: Go would turn a redirected POST into a GET and drop
// its body, so a create could "succeed" without creating anything. Its
// transport is paced to the service's rate limits, one pacing per Client.
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
	// The stop guard and the read deadline sit inside the pacing: waiting
	// for a rate-limit window is not part of an attempt, and a request that
	// waited through a stop is not sent.
	deadline := &readDeadline{next: hc.Transport, timeout: readAttemptTimeout}
	hc.Transport = newPaced(&stopGuard{next: deadline, stop: stop}, systemClock{}, maxRateShare)
	return &hc
}

// readDeadline bounds each attempt of a read: its answer must begin
// within timeout, and no more than timeout may pass between two reads of
// its body. A read that hangs is safe to send again; a write is not, so
// writes are bounded only by the caller's context, the operation's
// deadline. A long answer that keeps coming (a million links in one list
// answer, a large export on a slow link) is not cut: only the read's
// operation deadline bounds it, as it bounds one that never ends.
type readDeadline struct {
	next    http.RoundTripper
	timeout time.Duration
}

// errStalled is an attempt of a read ended by its bound.
var errStalled = fmt.Errorf("the service sent nothing for the read bound of an attempt: %w", context.DeadlineExceeded)

func (d *readDeadline) RoundTrip(req *http.Request) (*http.Response, error) {
	next := d.next
	if next == nil {
		next = http.DefaultTransport
	}
	if rateClass(req.Method) != ClassRead || d.timeout <= 0 {
		return next.RoundTrip(req)
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	w := &watchdog{timer: time.AfterFunc(d.timeout, func() { cancel(errStalled) }), timeout: d.timeout}
	resp, err := next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		w.timer.Stop()
		cancel(nil)
		return nil, stalledOr(ctx, err)
	}
	resp.Body = &watchedBody{ReadCloser: resp.Body, ctx: ctx, watchdog: w, cancel: cancel}
	return resp, nil
}

// watchdog ends an attempt once it has waited timeout for the service.
type watchdog struct {
	timer   *time.Timer
	timeout time.Duration
}

// watchedBody is an answer's body whose every read that brings data
// restarts the watchdog, and whose Close ends the attempt's context.
type watchedBody struct {
	io.ReadCloser
	*watchdog
	ctx    context.Context
	cancel context.CancelCauseFunc
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.timer.Reset(b.timeout)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		err = stalledOr(b.ctx, err)
	}
	return n, err
}

func (b *watchedBody) Close() error {
	b.timer.Stop()
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}

// stalledOr is err, said to be the read bound's doing when it was.
func stalledOr(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), errStalled) && !errors.Is(err, errStalled) {
		return fmt.Errorf("%w (%w)", errStalled, err)
	}
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

// acceptJSON is the Accept header of every call but the export's.
const acceptJSON = "application/json"

// wantsJSON is whether the call asks for JSON, not the export's CSV.
func (cl call) wantsJSON() bool { return cl.accept == acceptJSON }

// response is a complete answer whose body has been read.
type response struct {
	status      int
	header      http.Header
	body        []byte
	attempts    int
	requestURL  *url.URL
	contentType string
}

// do sends cl with retries and returns its 2xx response. Every other outcome
// is an error: *APIError for an HTTP error status, ErrAmbiguous when a POST
// may have been carried out without our learning the outcome, or the
// context's error.
func (c *Client) do(ctx context.Context, cl call) (*response, error) {
	ctx, unbind := c.stop.Bind(ctx)
	defer unbind()
	if _, bounded := ctx.Deadline(); !bounded {
		// A read, whose operation Terraform gives no timeout: its refusals
		// are waited out (retryDecision) for so long, and no longer.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaults.ReadTimeout)
		defer cancel()
	}
	if err := ctx.Err(); err != nil {
		// Nothing was sent, so even a POST is not ambiguous.
		return nil, fmt.Errorf("%s %s: %w: %w", cl.method, cl.path, ErrNotSent, err)
	}
	if err := c.reach.errFor(cl.method); err != nil {
		// The verdict quotes the failure of the request that reached it,
		// another path than this one's.
		return nil, fmt.Errorf("%s %s: %w, for an earlier request of this run found: %w", cl.method, cl.path, ErrNotSent, err)
	}
	ctx = c.secret.Masking(ctx)
	req, err := c.newRequest(ctx, cl)
	if err != nil {
		return nil, err
	}
	x := &exchange{client: c, call: cl, ctx: ctx}
	req.SetResponseHandler(x.readBody) // reads the body inside the retry loop (body.go)
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
	req, err := retryablehttp.NewRequestWithContext(withQueuePlace(ctx), cl.method, cl.url, raw)
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
// this call's context, which tflog needs. The hooks are listed in the order
// retryablehttp calls them in each attempt.
func (c *Client) retryClient(ctx context.Context, x *exchange) *retryablehttp.Client {
	return &retryablehttp.Client{
		HTTPClient:   c.http,                                     // the transport chain of httpClient
		Logger:       &leveledLogger{ctx: ctx, redact: c.redact}, // retryablehttp's own messages, to tflog, redacted
		RetryWaitMin: c.waitMin,
		RetryWaitMax: c.waitMax,
		RetryMax:     math.MaxInt, // retryDecision counts what max_retries bounds

		RequestLogHook:  x.startAttempt,   // before each attempt: reset the attempt's state, log the request
		CheckRetry:      x.checkRetry,     // after the round trip, and again once readBody has read the body: note the outcome, decide whether to retry
		ResponseLogHook: x.logResponse,    // after an attempt without error: log its status and rate-limit headers
		Backoff:         x.backoff,        // before a retry: how long to wait
		ErrorHandler:    keepLastResponse, // once retrying ends without success: keep the last response
	}
}

// exchange is the state of one call across its attempts.
type exchange struct {
	client *Client
	call   call
	ctx    context.Context
	// attempt is the number of the attempt in flight, from 1.
	attempt int
	// failures counts the retries max_retries bounds (retryDecision);
	// waitPastDeadline, the wait a 429 or 503 asked for past the
	// operation's deadline.
	failures         int
	waitPastDeadline time.Duration
	// lastStatus is the status of the last response, 0 after a transport error.
	lastStatus int
	// uncertain is true when the last attempt may have been carried out by
	// the service without our learning the outcome.
	uncertain bool
	// read and body hold the body of the response read by readBody.
	read *http.Response
	body []byte
}

// startAttempt is the RequestLogHook, the one hook retryablehttp calls
// before every attempt; retry counts from 0.
func (x *exchange) startAttempt(_ retryablehttp.Logger, req *http.Request, retry int) {
	x.resetAttempt(retry + 1)
	x.logSending(req)
}

// resetAttempt makes n the attempt in flight, with no body read yet.
// lastStatus and uncertain are kept: checkRetry sets them from every
// outcome, and failure reads them after the last one.
func (x *exchange) resetAttempt(n int) {
	x.attempt = n
	x.read, x.body = nil, nil
}

// checkRetry is the CheckRetry hook. retryablehttp calls it after the round
// trip, and again after readBody with readBody's error.
func (x *exchange) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	x.noteOutcome(resp, err)
	retry, reason, ctxErr := x.retryDecision(ctx, resp, err)
	x.logDecision(ctx, retry, reason)
	return retry, ctxErr
}

// noteOutcome keeps what failure needs of the latest outcome: its status
// (0 after a transport error), and whether the service may have carried
// the request out without our learning the result, in this attempt or an
// earlier one: a change answered 502 and then given up unsent while its
// retry waited may have been made all the same.
func (x *exchange) noteOutcome(resp *http.Response, err error) {
	if err != nil {
		x.lastStatus, x.uncertain = 0, x.uncertain || !neverSent(err)
		return
	}
	x.lastStatus, x.uncertain = resp.StatusCode, x.uncertain || resp.StatusCode >= 500
}

// backoff is the Backoff hook: the wait of the retry policy, logged. A
// 429's Retry-After is slept here, outside the pacer's queue, so a call
// whose wait ends as the refused one's may open the next window before
// its retry. Waiting inside the queue instead, at the call's first place,
// was measured: five runs of 30 on 10 writes per 2 s clock windows were
// refused on 7.2-9.9 % of their requests against 3.7 % (BENCHMARKS.md,
// "One key, several runs at once").
func (x *exchange) backoff(waitMin, waitMax time.Duration, attempt int, resp *http.Response) time.Duration {
	d := retryWait(waitMin, waitMax, attempt, resp)
	if resp == nil { // not answered: a failure to connect ends the patience on time
		d = x.client.reach.capWait(time.Now(), d)
	}
	x.logWait(d)
	if resp != nil && resp.StatusCode == http.StatusTooManyRequests {
		noteRateWait(x.ctx, rateClass(x.call.method), d, 0, true)
	}
	return d
}

// keepLastResponse replaces retryablehttp's default error handler, which
// discards the last response once retries are exhausted: we need its status
// and body to build the APIError.
func keepLastResponse(resp *http.Response, err error, _ int) (*http.Response, error) {
	return resp, err
}

// failure turns an error of retryablehttp into ours.
func (x *exchange) failure(ctx context.Context, err error) error {
	cl := x.call
	if urlErr := (*url.Error)(nil); errors.Is(err, ErrNotSent) && errors.As(err, &urlErr) {
		err = urlErr.Err // given up before it went: its method and URL only repeat what follows
	}
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
	switch {
	case !x.uncertain || cl.method == http.MethodGet:
		return err
	case cl.method == http.MethodPost:
		return fmt.Errorf("%w; %w", err, ErrAmbiguous)
	default:
		return fmt.Errorf("%w; %w", err, ErrUnanswered)
	}
}

// statusError builds the APIError of a non-2xx response.
func (x *exchange) statusError(r *response) error {
	e := newAPIError(x.call.method, x.call.path, r, x.client.secret)
	// A 5xx max_retries would have retried (a POST's, the create's search
	// and resend; never a 501's).
	e.RetriesOff = x.client.maxRetries == 0 && r.status >= 500 && r.status != http.StatusNotImplemented
	if x.waitPastDeadline > 0 {
		return fmt.Errorf("%w: %w", &WaitPastDeadlineError{Method: x.call.method, Wait: x.waitPastDeadline, Status: r.status}, e)
	}
	x.client.reach.keyRefused(e)
	switch {
	case x.call.method == http.MethodPost && r.status >= 500:
		// The service may have created the link before failing.
		return fmt.Errorf("%w; %w", e, ErrAmbiguous)
	case x.uncertain && (x.call.method == http.MethodPatch || x.call.method == http.MethodDelete):
		// Answered 5xx, in this attempt or an earlier one: the service may
		// have carried the change or delete out before failing.
		return fmt.Errorf("%w; %w", e, ErrUnanswered)
	}
	return e
}
