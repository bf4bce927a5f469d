package client

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/shortlink/terraform-provider-shortlink/internal/wire"
)

// The API key must never reach a log. It travels only in the Authorization
// header, which is never logged; as a second line of defence every string
// logged here passes through redact, and do() also asks tflog to mask it.

// redact removes the API key, in any form, from s.
func (c *Client) redact(s string) string { return c.secret.Redact(s) }

// redactedSnippet is s without the API key, cut to n bytes. The key is
// taken out before the cut: cut first, a key that straddles the cut would
// show in part, where no search for the whole key finds it. An ending
// that begins the key is cut too: s may stop where an answer still
// arriving was read to.
func redactedSnippet(secret *Secret, s string, n int) string {
	return wire.Snippet(secret.cutBeginning(s), n)
}

// redactError is err with a message without the API key; errors.Is and
// errors.As still see what it wraps.
func (c *Client) redactError(err error) error {
	if err == nil || !c.secret.Holds(err.Error()) {
		return err
	}
	return &redactedError{msg: c.redact(err.Error()), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// leveledLogger is the retryablehttp.LeveledLogger of one call, forwarding
// to tflog with that call's context (tflog needs one; retryablehttp's
// logger interface has none, hence one logger per call).
type leveledLogger struct {
	ctx    context.Context
	redact func(string) string
}

func (l *leveledLogger) Error(msg string, kv ...any) { tflog.Error(l.ctx, l.redact(msg), l.fields(kv)) }
func (l *leveledLogger) Warn(msg string, kv ...any)  { tflog.Warn(l.ctx, l.redact(msg), l.fields(kv)) }
func (l *leveledLogger) Info(msg string, kv ...any)  { tflog.Info(l.ctx, l.redact(msg), l.fields(kv)) }
func (l *leveledLogger) Debug(msg string, kv ...any) { tflog.Debug(l.ctx, l.redact(msg), l.fields(kv)) }

// fields turns retryablehttp's key/value pairs into tflog fields, every
// value rendered as a redacted string.
func (l *leveledLogger) fields(kv []any) map[string]any {
	m := make(map[string]any, len(kv)/2+1)
	for i := 0; i < len(kv); i += 2 {
		if i+1 == len(kv) {
			m["extra"] = l.redact(fmt.Sprint(kv[i]))
			break
		}
		m[l.redact(fmt.Sprint(kv[i]))] = l.redact(fmt.Sprint(kv[i+1]))
	}
	return m
}

// fields returns the fields that identify this call's attempt, plus extra,
// with string values redacted.
func (x *exchange) fields(extra map[string]any) map[string]any {
	m := map[string]any{
		"method":  x.call.method,
		"path":    x.call.path,
		"attempt": x.attempt,
	}
	for k, v := range extra {
		m[k] = v
	}
	for k, v := range m {
		if s, ok := v.(string); ok {
			m[k] = x.client.redact(s)
		}
	}
	return m
}

// logSending logs an attempt about to be sent (see startAttempt).
// Headers are not logged: Authorization carries the key.
func (x *exchange) logSending(req *http.Request) {
	tflog.Debug(req.Context(), "sending request", x.fields(map[string]any{"url": req.URL.Redacted()}))
}

// logDecision logs why checkRetry does not retry a request, when it says.
func (x *exchange) logDecision(ctx context.Context, retry bool, reason string) {
	if !retry && reason != "" {
		tflog.Debug(ctx, "not retrying request", x.fields(map[string]any{"reason": reason}))
	}
}

// logResponse is the retryablehttp.ResponseLogHook: it logs the status and
// the rate-limit headers of an answer.
func (x *exchange) logResponse(_ retryablehttp.Logger, resp *http.Response) {
	f := map[string]any{"status": resp.StatusCode}
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"} {
		if v := resp.Header.Get(h); v != "" {
			f[strings.ToLower(strings.ReplaceAll(h, "-", "_"))] = v
		}
	}
	tflog.Debug(resp.Request.Context(), "received response", x.fields(f))
}

// logWait logs the wait before the next attempt (see backoff).
func (x *exchange) logWait(d time.Duration) {
	tflog.Debug(x.ctx, "waiting before retry", x.fields(map[string]any{
		"wait":         d.String(),
		"next_attempt": x.attempt + 1,
	}))
}
