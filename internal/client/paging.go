package client

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// The specification does not say whether or how the link list is paged, so
// every common convention is followed (DESIGN.md): a "next" URL in the
// body, a cursor in the body sent back as ?cursor=, and a Link header with
// rel="next". A page without any of them is the last.

// nextPage returns the URL of the page after the one fetched from cur, or
// "" when cur was the last.
func (c *Client) nextPage(cur *url.URL, p *page, h http.Header) (string, error) {
	if p.hasMore != nil && !*p.hasMore {
		return "", nil
	}
	switch {
	case p.nextURL != "":
		return c.followable(cur, p.nextURL)
	case p.cursor != "":
		return c.endpoint(pathLinks, url.Values{"cursor": {p.cursor}}), nil
	}
	if next := linkHeaderNext(h.Values("Link")); next != "" {
		return c.followable(cur, next)
	}
	if p.hasMore != nil && *p.hasMore {
		// Stopping here would return part of the list as if it were all,
		// and a link on a later page would look deleted.
		return "", fmt.Errorf("%w: the page says more links follow (hasMore) but names no next page: no cursor, next URL or Link header",
			ErrUnexpectedResponse)
	}
	return "", nil
}

// followable resolves ref against the URL of the page that named it (as
// RFC 3986 and RFC 8288 say) and refuses another origin: the request would
// carry the API key to a host the user did not configure.
func (c *Client) followable(cur *url.URL, ref string) (string, error) {
	u, err := cur.Parse(strings.TrimSpace(ref))
	if err != nil {
		return "", fmt.Errorf("%w: next-page URL %q is not a URL: %w", ErrUnexpectedResponse, ref, err)
	}
	if origin(u) != origin(c.baseURL) {
		return "", fmt.Errorf("%w: refusing to follow next-page URL %q: it leaves %s, and the request would carry the API key there",
			ErrUnexpectedResponse, u.Redacted(), origin(c.baseURL))
	}
	u.Fragment = ""
	return u.String(), nil
}

// origin is scheme://host:port with the default port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = DefaultPort(u.Scheme)
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// DefaultPort is the port a URL of scheme (http or https, in lower case)
// means when it names none; "" for another scheme.
func DefaultPort(scheme string) string {
	return map[string]string{"http": "80", "https": "443"}[scheme]
}

// linkHeaderNext returns the target of the rel="next" link of RFC 8288
// Link header values, e.g. `<https://h/api/links?page=2>; rel="next"`.
func linkHeaderNext(values []string) string {
	for _, v := range values {
		for {
			start := strings.IndexByte(v, '<')
			if start < 0 {
				break
			}
			end := strings.IndexByte(v[start:], '>')
			if end < 0 {
				break
			}
			end += start
			target, rest := v[start+1:end], v[end+1:]
			params := rest
			if i := strings.IndexByte(rest, '<'); i >= 0 {
				params = rest[:i]
			}
			if relIsNext(params) {
				return target
			}
			v = rest
		}
	}
	return ""
}

// relIsNext reports whether link parameters (`; rel="next last"; title=x,`)
// include the relation type "next".
func relIsNext(params string) bool {
	for _, p := range strings.Split(params, ";") {
		name, value, ok := strings.Cut(strings.Trim(p, " \t,"), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "rel") {
			continue
		}
		for _, rel := range strings.Fields(strings.Trim(strings.TrimSpace(value), `"`)) {
			if strings.EqualFold(rel, "next") {
				return true
			}
		}
	}
	return false
}
