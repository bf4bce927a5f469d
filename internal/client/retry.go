package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/pacing"
)

// shouldRetry decides, from one attempt's outcome alone, whether to send
// the request again; reason says why, for the log.
//
//   - 429 is retried for every method: the service refused the request
//     without carrying it out.
//   - 5xx (except 501) and transport errors are retried for GET, PATCH and
//     DELETE, which are idempotent. A POST is never re-sent after them: the
//     service may have created the link before the failure, and a second
//     POST would create a second link. The one exception is a failure to
//     connect at all (cannotConnect): nothing left the machine, so a POST
//     waits out a restarting service as every other request does.
//   - Nothing else is retried: another 4xx will not change by itself.
//
// Whether the caller's context has ended is checked by retryDecision.
func shouldRetry(method string, resp *http.Response, err error) (retry bool, reason string) {
	if err != nil {
		switch {
		case permanent(err):
			return false, "an error that a retry will not cure"
		case cannotConnect(err):
			return true, "the service could not be reached"
		case method == http.MethodPost:
			return false, "a POST is not re-sent after a transport error: the service may have carried it out"
		}
		return true, "transport error"
	}
	s := resp.StatusCode
	switch {
	case s == http.StatusTooManyRequests:
		return true, "rate limited"
	case s < 500 || s == http.StatusNotImplemented:
		return false, ""
	case method == http.MethodPost:
		return false, "a POST is not re-sent after a server error: the service may have carried it out"
	}
	return true, "server error"
}

// permanent reports transport errors that retrying cannot cure: a body
// over the limit or one that cannot be read (both ErrUnexpectedResponse:
// the service would send the same again), a refused TLS handshake, a
// request given up unsent (ErrNotSent: its wait for the rate limit ended
// with the operation, or would have outlasted it). The last keeps its own
// error, which says it was never sent, rather than the context's.
func permanent(err error) bool {
	return errors.Is(err, ErrUnexpectedResponse) || tlsRefused(err) || errors.Is(err, ErrNotSent)
}

// tlsRefused reports a TLS handshake that waiting cannot mend: the
// service's certificate is refused, or the address answered the handshake
// in plain http (https:// to a plain-http port: net/http names only that
// case ErrSchemeMismatch). Nothing was sent. Other TLS record errors are
// not among them: a connection already in use meets them after a request
// went.
func tlsRefused(err error) bool {
	var (
		unknownCA  x509.UnknownAuthorityError
		hostname   x509.HostnameError
		invalid    x509.CertificateInvalidError
		verifyFail *tls.CertificateVerificationError
	)
	return errors.As(err, &unknownCA) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &verifyFail) ||
		errors.Is(err, http.ErrSchemeMismatch)
}

// neverSent reports transport errors that happen before the request leaves
// the machine (name resolution, connecting, the TLS handshake, a wait for
// the rate limit or a stop), after which even a POST is known not to have
// been carried out.
func neverSent(err error) bool {
	return cannotConnect(err) || errors.Is(err, ErrNotSent)
}

// cannotConnect reports errors of reaching the service at all: the name
// does not resolve, nothing listens, no route, the TLS handshake is refused.
func cannotConnect(err error) bool {
	var (
		dns *net.DNSError
		op  *net.OpError
	)
	return errors.As(err, &dns) || (errors.As(err, &op) && op.Op == "dial") || tlsRefused(err)
}

// retryWait says how long to wait before retry number attempt+1 (attempt
// counts from 0). The service's own word comes first: Retry-After on a 429
// or 503 (seconds or an HTTP date), then X-RateLimit-Reset on a 429. Without
// it the wait is a capped exponential back-off with jitter. A Retry-After
// longer than waitMax is honoured: retrying earlier would only be refused.
func retryWait(waitMin, waitMax time.Duration, attempt int, resp *http.Response) time.Duration {
	if d, ok := serviceWait(resp, time.Now()); ok {
		return d
	}
	return backoff(waitMin, waitMax, attempt)
}

// serviceWait is the wait the service asked for before a retry, if it
// asked: Retry-After on a 429 or 503, else X-RateLimit-Reset on a 429.
func serviceWait(resp *http.Response, now time.Time) (time.Duration, bool) {
	if resp == nil || resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return 0, false
	}
	if d, ok := retryAfter(resp.Header, now); ok {
		return d, true
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return resetAfter(resp.Header, now)
	}
	return 0, false
}

// endsPastDeadline is whether a wait for the rate limit that ends at end
// would outlast ctx's deadline: waiting would be for nothing, and the
// operation fails at once instead (WaitPastDeadlineError). The retry path
// asks it of a 429's own wait, the pacer's queue of the latest one's.
func endsPastDeadline(ctx context.Context, end time.Time) bool {
	deadline, bounded := ctx.Deadline()
	return bounded && end.After(deadline)
}

// backoff doubles waitMin per attempt up to waitMax. Half of the wait is
// random ("equal jitter") so that parallel Terraform operations that failed
// together do not all retry at the same instant; it never drops below waitMin.
func backoff(waitMin, waitMax time.Duration, attempt int) time.Duration {
	waitMin = max(waitMin, 0)
	waitMax = max(waitMax, waitMin)
	d := waitMin
	for i := 0; i < attempt && d < waitMax; i++ {
		d = min(2*d, waitMax) // min also keeps 2*d from overflowing for long
	}
	if d <= 0 {
		return 0
	}
	half := d / 2
	return max(half+rand.N(d-half+1), waitMin)
}

// retryAfter reads Retry-After: delay-seconds or an HTTP date (RFC 9110).
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		return believable(seconds(secs))
	}
	if t, err := http.ParseTime(v); err == nil {
		return believable(max(t.Sub(now), 0))
	}
	return 0, false
}

// resetAfter reads X-RateLimit-Reset. The specification says it counts
// seconds; some services send a Unix time instead, which is recognised by
// its size (any value past 2001-09-09).
func resetAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("X-RateLimit-Reset"))
	secs, err := strconv.ParseFloat(v, 64)
	if v == "" || err != nil {
		return 0, false
	}
	if secs >= 1e9 {
		return believable(max(time.Unix(int64(secs), 0).Sub(now), 0))
	}
	return believable(seconds(secs))
}

// believable drops a wait longer than pacing.MaxBelievableReset, as if the
// header were absent: no service means it (a Unix time in Retry-After, a
// reset in milliseconds), and believed it would hold every later request
// of its class for the rest of the run.
func believable(d time.Duration) (time.Duration, bool) {
	return d, d <= pacing.MaxBelievableReset
}

// seconds converts a count of seconds to a Duration, clamping nonsense.
func seconds(s float64) time.Duration {
	switch {
	case math.IsNaN(s) || s <= 0:
		return 0
	case s > float64(math.MaxInt64/int64(time.Second)):
		return math.MaxInt64
	}
	return time.Duration(s * float64(time.Second))
}

// retryDecision is the retry policy applied to one outcome of x: whether
// to send the request again and, for the log, why. ctxErr is the context's
// error when the operation ended before a retry it would otherwise get.
// Failures to connect count towards the Client's verdict (verdict.go): once
// the service has been unreachable for the Client's whole patience, or a
// request has used every retry max_retries allows on them, nothing is
// retried.
//
// max_retries bounds the retries after failures. A 429 is not one: the
// service did not carry the request out and said when to come back, so it
// is sent again for as long as the operation's deadline allows (a write's
// timeout; a read's, defaults.ReadTimeout: do gives every request one),
// and stopped at once when the service's wait would end after it. Runs
// that share a key can see one request refused many times in a row while
// the key's allowance is spent in full every window.
func (x *exchange) retryDecision(ctx context.Context, resp *http.Response, err error) (retry bool, reason string, ctxErr error) {
	if err == nil {
		x.client.reach.answered()
	} else if cannotConnect(err) && x.client.reach.unreachable(time.Now(), err) {
		return false, "the service has not been reachable for the whole patience of the client", nil
	}
	retry, reason = shouldRetry(x.call.method, resp, err)
	if !retry {
		return false, reason, nil
	}
	if ctx.Err() != nil {
		return false, "", ctx.Err()
	}
	if now := time.Now(); resp != nil {
		// A 429's or a 503's own wait: one that ends after the deadline
		// fails the operation now rather than at the deadline.
		if wait, ok := serviceWait(resp, now); ok && endsPastDeadline(ctx, now.Add(wait)) {
			x.waitPastDeadline = wait
			return false, fmt.Sprintf("the service asked to wait %v, past the operation's deadline", wait), nil
		}
	}
	if resp != nil && resp.StatusCode == http.StatusTooManyRequests {
		return true, reason, nil
	}
	if x.failures == x.client.maxRetries {
		if cannotConnect(err) {
			x.client.reach.retriesRanOut(time.Now(), err, x.client.maxRetries)
		}
		return false, fmt.Sprintf("%s; retries exhausted (max_retries %d)", reason, x.client.maxRetries), nil
	}
	x.failures++
	return true, reason, nil
}
