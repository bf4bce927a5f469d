package client

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/wire"
)

// Sentinel errors. An *APIError matches the sentinel of its status code
// with errors.Is, so callers need not know the service's error codes.
var (
	ErrNotFound       = errors.New("not found")             // 404, 410
	ErrUnauthorized   = errors.New("invalid API key")       // 401
	ErrForbidden      = errors.New("insufficient scope")    // 403
	ErrQuota          = errors.New("link quota exhausted")  // 402
	ErrBlocked        = errors.New("blocked by the filter") // 422
	ErrRateLimited    = errors.New("rate limited")          // 429
	ErrConflict       = errors.New("conflict")              // 409
	ErrInvalidRequest = errors.New("invalid request")       // 400
	// ErrAmbiguous marks a POST that may have been carried out although no
	// answer said so (transport error, time-out, 5xx, unreadable success
	// body): look for the link before creating it again. A failure before
	// the request left (name resolution, connecting, TLS) is not ambiguous.
	ErrAmbiguous = errors.New("outcome unknown: the service may have carried out the request")
	// ErrUnanswered marks a change or delete (PATCH, DELETE) that was sent
	// and never answered, or answered 5xx: the service may have carried it
	// out (it carries out a write it received even when the client has
	// gone). Unlike a create, nothing is to be searched for: the next
	// refresh shows what the service did.
	ErrUnanswered = errors.New("outcome unknown: the service may have carried out the change")
	// ErrNotSent marks a request given up before it left the provider
	// (the operation ended or the provider was stopping while it waited for
	// the rate limit or a back-off): nothing was changed.
	ErrNotSent = errors.New("the request was not sent")
	// ErrUnexpectedResponse marks a response that is not of the expected
	// shape: a success body that cannot be read, a paging loop, too many pages.
	ErrUnexpectedResponse = errors.New("unexpected response from the service")
)

// WaitPastDeadlineError is a request the service's rate limit would hold
// until after the operation's deadline: a 429 asked to wait that long
// before it was sent again, or before any request of its class may go, or
// the answers said the window is spent until then. The provider stops at
// once rather than wait for nothing; the request was not carried out.
type WaitPastDeadlineError struct {
	Method string
	// Wait is what the service asked for, from when the request stopped.
	Wait time.Duration
	// Status is the answer that asked for it: 429 (the rate limit) or 503
	// (the service unavailable).
	Status int
	// Spent: no answer asked to wait; the latest said nothing remains of
	// the rate limit's window, and Wait is until the pacer expects it back.
	Spent bool
}

func (e *WaitPastDeadlineError) Error() string {
	if e.Spent {
		return fmt.Sprintf("the service's latest answer said nothing remains of the rate limit's window, which comes back in about %v, past the operation's deadline", e.Wait.Round(time.Second))
	}
	return fmt.Sprintf("the service asked to wait %v before the next request, past the operation's deadline", e.Wait.Round(time.Second))
}

// statusSentinels maps a status to the sentinel an APIError matches.
var statusSentinels = map[int]error{
	http.StatusBadRequest:          ErrInvalidRequest,
	http.StatusUnauthorized:        ErrUnauthorized,
	http.StatusPaymentRequired:     ErrQuota,
	http.StatusForbidden:           ErrForbidden,
	http.StatusNotFound:            ErrNotFound,
	http.StatusGone:                ErrNotFound,
	http.StatusConflict:            ErrConflict,
	http.StatusUnprocessableEntity: ErrBlocked,
	http.StatusTooManyRequests:     ErrRateLimited,
}

// statusCodes gives the service's error code for a status whose body did not
// say (a proxy's HTML page, an empty body).
var statusCodes = map[int]string{
	http.StatusBadRequest:          "invalid_request",
	http.StatusUnauthorized:        "invalid_api_key",
	http.StatusPaymentRequired:     "link_quota",
	http.StatusForbidden:           "insufficient_scope",
	http.StatusNotFound:            "not_found",
	http.StatusGone:                "not_found",
	http.StatusConflict:            "slug_taken",
	http.StatusUnprocessableEntity: "blocked_by_filter",
	http.StatusTooManyRequests:     "rate_limited",
}

// maxErrorSnippet is how much of a non-JSON error body APIError.Body keeps.
const maxErrorSnippet = 512

// answerQuoteBytes is how much of a body that is not the API's JSON (a
// page's text, other text) a message quotes: enough to say what it is.
const answerQuoteBytes = 120

// APIError is an HTTP error status answered by the service.
type APIError struct {
	StatusCode int
	// Code is the service's error code; derived from the status when the
	// body does not give one (CodeDerived). Empty for statuses without a
	// known code (5xx).
	Code        string
	CodeDerived bool
	// Message is the service's message or detail, if any.
	Message string
	Method  string
	Path    string
	// JSON is whether the body was a JSON object, as the service's errors
	// are; Body is the beginning of one that was not, for diagnostics.
	JSON bool
	Body string
	// PageText is the readable text of an HTML error page (a proxy's or the
	// service's), tags removed; "" when the body is not HTML.
	PageText string
	// RetryAfter is what the Retry-After header asked for, if anything.
	RetryAfter time.Duration
	// Attempts is how many times the request was sent; RetriesOff, that
	// max_retries 0 kept a failure that is retried (a 5xx) to one attempt.
	Attempts   int
	RetriesOff bool
}

func (e *APIError) Error() string {
	return e.Method + " " + e.Path + ": " + e.Answer()
}

// Answer is what came back: the status, the service's code and message or
// what the body was, and how many attempts met it.
func (e *APIError) Answer() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", e.StatusCode)
	if said := e.Said(); said != "" {
		b.WriteString(" " + said)
	}
	switch {
	case e.Message != "":
		b.WriteString(": " + e.Message)
	case e.PageText != "":
		b.WriteString(": " + pageQuote(e.PageText))
	case e.Body != "":
		fmt.Fprintf(&b, ": non-JSON body %q", wire.Snippet(e.Body, answerQuoteBytes))
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	return b.String()
}

// Said names the error as the answer did: the service's code, or the
// status's text when the body gave none (a page from a proxy, or from
// something else at that address, or no body), since a code derived from
// the status would read as the service's own.
func (e *APIError) Said() string {
	if e.Code != "" && !e.CodeDerived {
		return e.Code
	}
	return http.StatusText(e.StatusCode)
}

// Is matches the sentinel of e's status code.
func (e *APIError) Is(target error) bool {
	s, ok := statusSentinels[e.StatusCode]
	return ok && s == target
}

// IsNotFound reports whether err says the link does not exist.
func IsNotFound(err error) bool {
	return errors.Is(err, ErrNotFound)
}

// newAPIError reads an error response. redact removes the API key from what
// the service echoed, since messages end up in Terraform's output.
func newAPIError(method, path string, r *response, secret *Secret) *APIError {
	e := &APIError{
		StatusCode: r.status,
		Method:     method,
		Path:       path,
		Attempts:   r.attempts,
	}
	if d, ok := retryAfter(r.header, time.Now()); ok {
		e.RetryAfter = d
	}
	code, msg, isJSON := parseErrorBody(r.body)
	e.Code, e.Message, e.JSON = secret.Redact(code), secret.Redact(msg), isJSON
	if !isJSON {
		e.Body = redactedSnippet(secret, string(r.body), maxErrorSnippet)
		if looksLikeHTML(r.body, r.contentType) {
			e.PageText = redactedSnippet(secret, htmlText(r.body), maxErrorSnippet)
		}
	}
	if e.Code == "" {
		e.Code = statusCodes[r.status]
		e.CodeDerived = e.Code != ""
	}
	if e.Message == "" && r.status >= 300 && r.status < 400 {
		e.Message = secret.Redact(redirectMessage(r.header.Get("Location")))
	}
	return e
}

func redirectMessage(location string) string {
	if location == "" {
		return "unexpected redirect"
	}
	return fmt.Sprintf("redirected to %s; point the base URL at the final address", location)
}

// parseErrorBody reads {"error":"code","message"|"detail":…} and the common
// variants: a nested {"error":{"code","message"}}, a top-level "code", and an
// "error" that is a sentence rather than a code. isJSON is false when the
// body is not a JSON object (an HTML page from a proxy, an empty body).
func parseErrorBody(body []byte) (code, message string, isJSON bool) {
	o, err := parseObject(body)
	if err != nil {
		return "", "", false
	}
	if inner, ok := o.objectField("error"); ok {
		o = inner
		code = o.loose("code", "type", "error")
	} else {
		code = o.loose("error", "code", "error_code", "errorCode")
	}
	message = o.loose("message", "detail", "error_description", "title", "msg")
	if !looksLikeCode(code) && message == "" {
		code, message = "", code
	}
	return code, message, true
}

// looksLikeCode tells a machine code (slug_taken) from a sentence.
func looksLikeCode(s string) bool {
	return s != "" && len(s) <= 64 && !strings.ContainsAny(s, " \t\n")
}

// looksLikeHTML reports whether an error body is an HTML page: so labelled,
// or beginning with a tag.
func looksLikeHTML(body []byte, contentType string) bool {
	if mt, _, _ := mime.ParseMediaType(contentType); mt == "text/html" || mt == "application/xhtml+xml" {
		return true
	}
	b := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\ufeff")))
	return len(b) > 0 && b[0] == '<'
}

// pageQuote quotes an HTML page by the start of the text it shows, which
// says what the page is (a sign-in, a maintenance notice); its markup says
// nothing.
func pageQuote(text string) string {
	return fmt.Sprintf("HTML page %q", wire.Snippet(text, answerQuoteBytes))
}

// htmlText returns the readable text of an HTML page, so that an error page
// can be quoted to the user: the text of its body with tags, comments,
// scripts and styles removed, entities decoded and white space collapsed;
// the title when nothing else has text. It never fails: malformed HTML just
// yields less tidy text. A word a browser shows whole stays whole: an
// inline element, a comment or an invisible character inside it (a <wbr>
// or &shy; that lets a long token wrap) parts nothing, or the API key
// echoed in such a page would be quoted in two halves no redaction finds.
func htmlText(page []byte) string {
	var title, text strings.Builder
	out := &text
	s := string(page)
	for s != "" {
		lt := strings.IndexByte(s, '<')
		if lt < 0 {
			out.WriteString(s)
			break
		}
		out.WriteString(s[:lt])
		s = s[lt:]
		if strings.HasPrefix(s, "<!--") {
			end := strings.Index(s, "-->")
			if end < 0 {
				break
			}
			s = s[end+len("-->"):]
			continue
		}
		gt := strings.IndexByte(s, '>')
		if gt < 0 {
			break
		}
		closing, name := tagName(s[1:gt])
		s = s[gt+1:]
		if !inlineElements[name] {
			out.WriteByte(' ')
		}
		switch {
		case (name == "script" || name == "style") && !closing:
			// Skip the element's content up to its end tag.
			end := indexFold(s, "</"+name)
			if end < 0 {
				s = ""
				continue
			}
			s = s[end:]
		case name == "title" && closing:
			out = &text
		case name == "title":
			out = &title
		}
	}
	if t := collapseSpace(visible(html.UnescapeString(text.String()))); t != "" {
		return t
	}
	return collapseSpace(visible(html.UnescapeString(title.String())))
}

// inlineElements are the elements a browser lays out inside a line, so
// that they part no word: text on either side of their tags runs on.
var inlineElements = map[string]bool{
	"a": true, "abbr": true, "b": true, "bdi": true, "bdo": true, "cite": true, "code": true,
	"data": true, "dfn": true, "em": true, "font": true, "i": true, "kbd": true, "mark": true,
	"q": true, "s": true, "samp": true, "small": true, "span": true, "strong": true,
	"sub": true, "sup": true, "time": true, "tt": true, "u": true, "var": true, "wbr": true,
}

// visible is s without the characters a browser shows as nothing: a soft
// hyphen, zero-width spaces and joiners, a word joiner, a byte order mark.
func visible(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\u00ad', '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff':
			return -1
		}
		return r
	}, s)
}

// tagName reads the inside of a tag ("/p", "a href=x", "br/").
func tagName(inner string) (closing bool, name string) {
	inner = strings.TrimSpace(inner)
	closing = strings.HasPrefix(inner, "/")
	inner = strings.TrimLeft(inner, "/")
	if end := strings.IndexAny(inner, " \t\r\n/"); end >= 0 {
		inner = inner[:end]
	}
	return closing, strings.ToLower(inner)
}

// indexFold is strings.Index ignoring ASCII case, without changing byte
// offsets (strings.ToLower may, on invalid or some non-ASCII text).
func indexFold(s, substr string) int {
	for i := 0; i+len(substr) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(substr)], substr) {
			return i
		}
	}
	return -1
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
