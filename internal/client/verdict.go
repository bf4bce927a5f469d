package client

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// DefaultUnreachableAfter is how long a Client keeps retrying failures to
// reach the service at all (connection refused, unknown host, no route)
// before it concludes, for every operation of the run at once, that the
// service cannot be reached. A restarting service or a flapping network
// comes back within it; a typo in base_url never does.
const DefaultUnreachableAfter = 20 * time.Second

// Errors a Client concludes once for the rest of its life: every later
// request fails at once with the same error, unsent, instead of each
// operation of the run finding out for itself.
var (
	// ErrUnreachable: the service could not be reached for
	// Config.UnreachableAfter, or its host name does not exist, or its
	// TLS handshake was refused.
	ErrUnreachable = errors.New("the service cannot be reached")
	// ErrWrongBaseURL: the list endpoint answered 404 or a page that is
	// not the API, which only a base URL that does not lead to the API
	// explains.
	ErrWrongBaseURL = errors.New("the base URL does not lead to the service's API")
)

// IsVerdict reports whether err is a conclusion the Client holds for the
// rest of the run: ErrUnreachable, ErrWrongBaseURL, or a key the service
// refused (ErrUnauthorized for every request, ErrForbidden for every
// request that needs the scope it lacks).
func IsVerdict(err error) bool {
	return errors.Is(err, ErrUnreachable) || errors.Is(err, ErrWrongBaseURL) ||
		errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrForbidden)
}

// verdict is what a Client has learnt about reaching the service.
type verdict struct {
	patience time.Duration

	mu sync.Mutex
	// failingSince is when the first of the current run of failures to
	// connect happened; zero once the service answered.
	failingSince time.Time
	// final, once set, fails every later request.
	final error
	// lacking holds, per rate class (which is also the scope: reads need
	// links:read, writes links:write), the 403 that fails every later
	// request of that class.
	lacking map[string]error
}

// answered notes that the service answered (any status).
func (v *verdict) answered() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.failingSince = time.Time{}
}

// unreachable notes a failure to connect at now and reports whether the
// Client has tried long enough: then the verdict is final.
func (v *verdict) unreachable(now time.Time, err error) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.failingSince.IsZero() {
		v.failingSince = now
	}
	switch {
	case v.final != nil:
	case waitingCannotMend(err):
		v.final = fmt.Errorf("%w: %w", ErrUnreachable, err)
	case now.Sub(v.failingSince) >= v.patience:
		v.final = fmt.Errorf("%w (tried for %s): %w", ErrUnreachable, now.Sub(v.failingSince).Round(time.Second), err)
	}
	return v.final != nil
}

// retriesRanOut notes that a request's last retry (max_retries) failed to
// connect too, before the patience ended: every other request would meet
// the same failures with the same retries, so the verdict is the same as
// at the patience's end, said with what ended the trying.
func (v *verdict) retriesRanOut(now time.Time, err error, maxRetries int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.final == nil && maxRetries == 0 {
		v.final = fmt.Errorf("%w (one attempt: max_retries is 0): %w", ErrUnreachable, err)
	} else if v.final == nil {
		tried := now.Sub(cmp.Or(v.failingSince, now)).Round(100 * time.Millisecond)
		v.final = fmt.Errorf("%w (%d attempts in %s: max_retries is %d): %w", ErrUnreachable, maxRetries+1, tried, maxRetries, err)
	}
}

// waitingCannotMend reports failures to reach the service that no wait
// within a run changes, so the verdict comes at once: a refused TLS
// handshake, and a host name that does not exist (the name servers'
// answer, NXDOMAIN: a typo in base_url; a name server that did not answer
// is waited for like a refused connection).
func waitingCannotMend(err error) bool {
	var dns *net.DNSError
	return tlsRefused(err) || errors.As(err, &dns) && dns.IsNotFound
}

// capWait shortens a retry's wait d so that, while the service cannot be
// reached, the retry goes when the patience ends, not after it: a doubling
// back-off would otherwise conclude up to three times the patience late
// (20 s of patience told a user after 44 s).
func (v *verdict) capWait(now time.Time, d time.Duration) time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.failingSince.IsZero() {
		return d
	}
	return max(min(d, v.failingSince.Add(v.patience).Sub(now)), 0)
}

// conclude makes err the final verdict, unless one is set already.
func (v *verdict) conclude(err error) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.final == nil {
		v.final = err
	}
	return v.final
}

// keyRefused notes a 401 or 403: a key is refused the same way for the
// rest of the run, so the same requests are not sent again only to be
// refused again, and the user reads the refusal once.
func (v *verdict) keyRefused(e *APIError) {
	switch {
	case errors.Is(e, ErrUnauthorized):
		_ = v.conclude(e) // the first verdict stands
	case errors.Is(e, ErrForbidden):
		v.mu.Lock()
		defer v.mu.Unlock()
		if v.lacking == nil {
			v.lacking = map[string]error{}
		}
		if _, ok := v.lacking[rateClass(e.Method)]; !ok {
			v.lacking[rateClass(e.Method)] = e
		}
	}
}

// errFor returns the verdict that fails a request with method, if any.
func (v *verdict) errFor(method string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.final != nil {
		return v.final
	}
	return v.lacking[rateClass(method)]
}

func (v *verdict) err() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.final
}
