package client

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// Bounds on how much of a response body is read. A misbehaving server or a
// proxy must not be able to exhaust the provider's memory.
const (
	// MaxJSONBodyBytes bounds a successful JSON response other than the
	// list, which is streamed with a bound per link (MaxLinkRecordBytes).
	// A larger body is an error.
	MaxJSONBodyBytes int64 = 32 << 20
	// MaxCSVBodyBytes bounds the analytics export. A larger body is an error.
	MaxCSVBodyBytes int64 = 512 << 20
	// maxErrorBodyBytes bounds an error response; it is only needed for its
	// code and message, so a longer one is silently truncated.
	maxErrorBodyBytes int64 = 1 << 20
)

// bodyTooLargeError is a success body over the limit; retrying would
// fetch the same body again.
type bodyTooLargeError struct{ limit int64 }

func (e *bodyTooLargeError) Error() string {
	return fmt.Sprintf("the response body exceeds the client's limit of %d MiB", e.limit>>20)
}

// Unwrap makes an oversized body match ErrUnexpectedResponse.
func (e *bodyTooLargeError) Unwrap() error { return ErrUnexpectedResponse }

// readBody is the response handler of every request (see request.go). It
// runs inside retryablehttp's loop, so that a connection dropped while the
// body streams in is retried like any other transport error.
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
	if !success || x.call.wantsJSON() {
		body = bytes.TrimPrefix(body, utf8BOM)
	}
	x.read, x.body = resp, body
	return nil
}

// utf8BOM is the byte order mark some services put before a body. RFC 8259
// lets a JSON reader ignore it, and the provider does: read as part of the
// answer, it would make a list look like a page that is not the API. An
// export's CSV keeps it, as sent.
var utf8BOM = []byte("\ufeff")

// skipBOM is body without a leading utf8BOM.
func skipBOM(body io.ReadCloser) io.ReadCloser {
	br := bufio.NewReader(body)
	if start, _ := br.Peek(len(utf8BOM)); bytes.Equal(start, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
	}
	return struct {
		io.Reader
		io.Closer
	}{br, body}
}

// streamBody hands a successful body to the call's stream, bounded by the
// call's limit like a body read into memory.
func (x *exchange) streamBody(resp *http.Response) error {
	body := resp.Body
	if x.call.wantsJSON() {
		body = skipBOM(body)
	}
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

func closeBody(resp *http.Response) {
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
}
