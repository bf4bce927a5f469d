package client

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// LongWait is how long a wait for the rate limit may last before the user
// is told of it. Terraform prints "Still creating..." every ten seconds
// with no reason given; a wait longer than a few seconds must come with
// one, or a CI log looks hung.
const LongWait = 5 * time.Second

// Waits adds up the time one operation spent waiting for the service's
// rate limit: held back before sending so as not to be refused, and told
// to wait by a 429. It is safe for concurrent use.
type Waits struct {
	mu  sync.Mutex
	sum WaitSum
}

// WaitSum is what Waits has counted.
type WaitSum struct {
	// Total is the time waited; ForAnswers, the part of it spent waiting
	// for the answers to requests already sent, which say how much of the
	// allowance remains: with slow answers (a slow fraud filter) it is most
	// of the wait, however much the window allows.
	Total, ForAnswers time.Duration
	// Refused is how many answers were 429.
	Refused int
}

type waitsKey struct{}

// TrackWaits returns a context whose requests add their waits for the
// rate limit to the Waits returned.
func TrackWaits(ctx context.Context) (context.Context, *Waits) {
	w := &Waits{}
	return context.WithValue(ctx, waitsKey{}, w), w
}

// Sum is what was counted so far.
func (w *Waits) Sum() WaitSum {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sum
}

// noteRateWait records a wait of d for the rate limit of class, forAnswers
// of it for answers to requests already sent; refused says whether a 429
// asked for it. A long one is logged at INFO, so that TF_LOG=INFO says why
// a request has not gone. A 429 that asked for no wait (Retry-After: 0) is
// counted all the same.
func noteRateWait(ctx context.Context, class string, d, forAnswers time.Duration, refused bool) {
	d, forAnswers = max(d, 0), min(max(forAnswers, 0), max(d, 0))
	if w, ok := ctx.Value(waitsKey{}).(*Waits); ok {
		w.mu.Lock()
		w.sum.Total += d
		w.sum.ForAnswers += forAnswers
		if refused {
			w.sum.Refused++
		}
		w.mu.Unlock()
	}
	if d < LongWait {
		return
	}
	fields := map[string]any{"class": class, "wait": d.Round(time.Millisecond).String()}
	if forAnswers > 0 {
		fields["for_answers"] = forAnswers.Round(time.Millisecond).String()
	}
	if refused {
		tflog.Info(ctx, "waiting for the rate limit, as a 429 asked", fields)
	} else {
		tflog.Info(ctx, "waited for the rate limit before sending", fields)
	}
}

type sentKey struct{}

// sentAt is when the latest request of an operation left the provider.
type sentAt struct {
	mu sync.Mutex
	at time.Time
}

// TrackSent returns a context whose requests record when they leave, after
// any wait for the rate limit, and a function that says when the latest
// one did (zero: none yet). A create whose outcome is unknown looks for
// its link among those made since then, not since it began to wait.
func TrackSent(ctx context.Context) (context.Context, func() time.Time) {
	s := &sentAt{}
	return context.WithValue(ctx, sentKey{}, s), func() time.Time {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.at
	}
}

// noteSent records, for TrackSent, a request of ctx leaving at t.
func noteSent(ctx context.Context, t time.Time) {
	if s, ok := ctx.Value(sentKey{}).(*sentAt); ok {
		s.mu.Lock()
		s.at = t
		s.mu.Unlock()
	}
}
