// Package client is the typed HTTP client of the short-link service.
//
// It sends exactly what the service's specification shows and reads
// tolerantly whatever a reasonable implementation of the unspecified parts
// could answer (see DESIGN.md). The package is split by
// concern, in the manner of hashicorp/go-tfe:
//
//   - client.go: configuration and construction;
//   - request.go: the single request path every operation goes through,
//     top to bottom: the transport chain, the retryablehttp hooks in the
//     order they run, and the mapping of the outcome to our errors;
//   - body.go: reading response bodies, within bounds;
//   - links.go, export.go: one file per resource (the export's CSV is read
//     by internal/analytics, which the stream of its body is handed to);
//   - retry.go: the retry policy: when to retry and how long to wait;
//   - pace.go, ratelimit.go: keeping within the service's rate limits,
//     read from the X-RateLimit-* headers, by the rule of internal/pacing;
//   - stop.go: the provider's stop signal; verdict.go: giving up on a
//     service that cannot be reached, or a key it refuses;
//   - waits.go: how long an operation waited for the rate limit;
//   - paging.go, list_stream.go, linkset.go: following the pages of the
//     link list, read as a stream and held compactly;
//   - decode.go: the tolerant reader of response bodies;
//   - errors.go: APIError and the sentinel errors callers match with errors.Is;
//   - logging.go: tflog output, with the API key redacted.
package client

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Defaults applied by New to zero fields of Config.
const (
	DefaultMaxRetries   = 8
	DefaultRetryWaitMin = 1 * time.Second
	DefaultRetryWaitMax = 30 * time.Second
	DefaultUserAgent    = "terraform-provider-shortlink"

	// DefaultReadAttemptTimeout bounds how long one attempt of a read
	// waits for its answer to begin, and then for each next part of it, so
	// that a hung connection is retried instead of waited on for the whole
	// operation; an answer that keeps coming is read however long it takes. Writes have no per-attempt bound: they run through the
	// service's slow fraud filter, and a write cut short is ambiguous (it
	// may have been carried out), so only the operation's deadline (the
	// resource's timeouts) ends them.
	DefaultReadAttemptTimeout = time.Minute
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
	// MaxRetries is the number of retries after a failure (a 5xx answer,
	// a network error) following the first attempt; DefaultMaxRetries if
	// nil (0 means none). A 429 is not a failure (retryDecision).
	MaxRetries *int
	// ReadAttemptTimeout bounds the waits of one attempt of a GET (see
	// DefaultReadAttemptTimeout); DefaultReadAttemptTimeout if zero.
	ReadAttemptTimeout time.Duration
	// HTTPClient is the base client; a fresh one if nil (its Timeout, if
	// any, is removed: see DefaultReadAttemptTimeout).
	// if nil. Tests pass httptest clients.
	HTTPClient *http.Client
	// RetryWaitMin and RetryWaitMax bound the exponential back-off
	// (defaults DefaultRetryWaitMin and DefaultRetryWaitMax). A Retry-After
	// header sent by the service is honoured even when it is longer.
	RetryWaitMin, RetryWaitMax time.Duration
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
}

// Client talks to the short-link service. It is safe for concurrent use.
type Client struct {
	base       string // BaseURL without trailing slashes
	baseURL    *url.URL
	apiKey     string
	secret     *Secret // the key, as no text may hold it
	userAgent  string
	http       *http.Client
	maxRetries int
	waitMin    time.Duration
	waitMax    time.Duration
	stop       *Stop
	reach      *verdict
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
	secret := NewSecret(key) // built once: a long key's takes a fraction of a second
	if err := keyOutOfBaseURL(base, secret); err != nil {
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
		stop:       stop,
		reach:      &verdict{patience: cmpOr(cfg.UnreachableAfter, DefaultUnreachableAfter)},
		base:       strings.TrimRight(base.String(), "/"),
		baseURL:    base,
		apiKey:     key,
		secret:     secret,
		userAgent:  cmpOr(cfg.UserAgent, DefaultUserAgent),
		http:       httpClient(cfg.HTTPClient, cmpOr(cfg.ReadAttemptTimeout, DefaultReadAttemptTimeout), stop, cfg.MaxRateShare),
		maxRetries: maxRetries,
		waitMin:    cmpOr(cfg.RetryWaitMin, DefaultRetryWaitMin),
		waitMax:    cmpOr(cfg.RetryWaitMax, DefaultRetryWaitMax),
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

// CheckAPIKey says what is wrong with a key New would refuse, without
// quoting it, or returns nil.
func CheckAPIKey(raw string) error {
	_, err := checkAPIKey(raw)
	return err
}

// CheckKeyOutOfBaseURL says, without quoting either, that a base URL New
// would refuse holds the API key in its path, or returns nil. Both must
// have passed their own checks.
func CheckKeyOutOfBaseURL(rawBaseURL, rawKey string) error {
	base, err := parseBaseURL(rawBaseURL)
	if err != nil {
		return err
	}
	key, err := checkAPIKey(rawKey)
	if err != nil {
		return err
	}
	return keyOutOfBaseURL(base, NewSecret(key))
}

// keyOutOfBaseURL refuses a base URL whose path holds the key (user
// information, query and fragment are refused anyway): the key would
// travel in every request's address, which servers and proxies log, and
// not in the Authorization header alone.
func keyOutOfBaseURL(base *url.URL, secret *Secret) error {
	if secret.Holds(base.Path) || secret.Holds(base.EscapedPath()) {
		return errors.New("base URL holds the API key in its path, where every request would carry it in its address, which servers and proxies log; set the service's address as base_url and the key as api_key alone")
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// errNoSchemeAndHost refuses a base URL without "scheme://host". It
// quotes nothing, since a value that is no URL may be the key itself.
var errNoSchemeAndHost = errors.New("base URL must be an absolute URL such as https://api.example.com: the value set has no scheme and host (write https:// before the host name, or http:// before a loopback address such as the local emulator's). It is not quoted, since a value that is no URL may be a secret, such as the API key set in its place")

// parseBaseURL checks a base URL. Its messages quote the URL without the
// parts that can hold a secret (user information, query, fragment), since
// they end up in Terraform's output.
func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil && strings.Contains(raw, "@") {
		// url.Parse quotes the part it could not read, which here may be
		// a password: "user:pass/word@host" reads as an invalid port.
		return nil, errors.New("base URL is not a valid URL, and must not contain user information (user:password@) anyway")
	}
	if err != nil && !strings.Contains(raw, "://") {
		// "127.0.0.1:8080" fails as a path whose first segment holds a
		// colon, which says nothing of the scheme that is missing.
		return nil, errNoSchemeAndHost
	}
	if err != nil {
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			err = urlErr.Err // without url.Parse's quote of the whole URL
		}
		return nil, fmt.Errorf("base URL is not a valid URL: %w", err)
	}
	if u.User != nil {
		// Credentials in the URL would be sent and logged; the key is the only credential.
		return nil, errors.New("base URL must not contain user information (user:password@)")
	}
	shown := *u
	shown.RawQuery, shown.Fragment, shown.ForceQuery = "", "", false
	if u.Host == "" {
		// Without "//host" nothing marks user information off, so a key
		// written before an @ ("https:/key@host", "key@host"), or the key
		// itself set as the base URL, would be quoted whole.
		return nil, errNoSchemeAndHost
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("base URL %q must be an https URL (or http on loopback), such as https://api.example.com; its scheme is %q", shown.String(), u.Scheme)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		// The API key travels in every request: over plain http only where
		// nothing leaves the machine, as with the local emulator.
		return nil, fmt.Errorf("base URL %q uses plain http: the API key would cross the network unencrypted. Use https, or a loopback address (127.0.0.1, ::1, localhost) for the local emulator", shown.String())
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, fmt.Errorf("base URL %q must not have a query (?…) or fragment (#…), which this message leaves out since they may hold a secret", shown.String())
	}
	return u, nil
}

// MaxAPIKeyLength bounds the API key. The spec does not say how long a
// key may be; a request header line of 8 KiB is the most many web servers
// and proxies take, and a value longer than that is not a key but
// something set in its place (a file's contents).
const MaxAPIKeyLength = 8000

// checkAPIKey trims surrounding whitespace (a trailing newline from a file or
// environment variable is common) and rejects keys that cannot be sent in a
// header, without ever echoing the key.
func checkAPIKey(raw string) (string, error) {
	key := strings.TrimSpace(raw)
	if key == "" {
		return "", errors.New("API key is empty")
	}
	if n := utf8.RuneCountInString(key); n > MaxAPIKeyLength {
		return "", fmt.Errorf("API key is %d characters long, more than the %d the provider sends: a request header line of 8 KiB is the most many web servers take; give the key alone, not a file's contents", n, MaxAPIKeyLength)
	}
	if strings.IndexFunc(key, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return "", errors.New("API key contains spaces or control characters; give the key alone, without a \"Bearer\" prefix")
	}
	if at := strings.IndexFunc(key, notInBearerToken); at >= 0 {
		// An invisible character copied with the key (U+200B, U+FEFF) would
		// be sent, and a service that echoes the header back misreads it,
		// so that no redaction of the key matches the echo.
		r, _ := utf8.DecodeRuneInString(key[at:])
		if unicode.IsGraphic(r) {
			// A visible character, such as the colon of a URL: not a key
			// copied with something invisible, but another value.
			return "", fmt.Errorf("API key contains %U at character %d (%q), which a Bearer token cannot hold (RFC 6750: letters, digits, -._~+/ and a trailing =): the value set is not the key alone; check that no other value, such as the base URL, was set in its place, and copy the key again from the dashboard's API-key section", r, utf8.RuneCountInString(key[:at])+1, r)
		}
		return "", fmt.Errorf("API key contains %U at character %d, which a Bearer token cannot hold (RFC 6750: letters, digits, -._~+/ and a trailing =): often an invisible character copied with the key; copy the key again", r, utf8.RuneCountInString(key[:at])+1)
	}
	return key, nil
}

// notInBearerToken reports a character outside RFC 6750's b64token.
func notInBearerToken(r rune) bool {
	inToken := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~+/=", r)
	return !inToken
}

func cmpOr[T comparable](v, fallback T) T {
	var zero T
	if v == zero {
		return fallback
	}
	return v
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
