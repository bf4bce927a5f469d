package links

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

// SameDestination reports whether the service's spelling of a destination
// means what the user wrote: services lower-case the scheme and host, write
// a Unicode host in ASCII (IDNA) and the path percent-encoded (an escaped
// reserved character such as a slash, though, makes another path), drop the
// default port, write an empty path as "/", reorder the query, or merge
// the link's UTM parameters into the query. Anything else is a real
// difference (drift) and shows in a plan: "/sale" and "/sale/" are two
// paths, which a server may serve differently (RFC 3986, 6.2.3 equates
// only an empty path with "/").
func SameDestination(configured, answered string, utm *client.UTM) bool {
	if configured == answered {
		return true
	}
	c, errC := url.Parse(configured)
	a, errA := url.Parse(answered)
	if errC != nil || errA != nil {
		return false
	}
	return canonicalURL(configured, c, utm) == canonicalURL(answered, a, utm)
}

// canonicalURL spells a URL so that equivalent spellings compare equal.
// utm, when given, names UTM parameters to drop from the query because the
// service may have merged them there (from either side, so that a user who
// also wrote them into the destination is not shown a difference).
// raw is the text u was parsed from: its path is read as written (url.URL
// keeps it only when it needs no escaping, and decodes %2F otherwise).
func canonicalURL(raw string, u *url.URL, utm *client.UTM) string {
	cp := *u
	cp.Scheme = strings.ToLower(cp.Scheme)
	host, port := ComparableHost(cp.Hostname()), cp.Port()
	if port == client.DefaultPort(cp.Scheme) {
		port = ""
	}
	cp.Host = host
	if port != "" {
		cp.Host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		cp.Host = "[" + host + "]" // an IPv6 literal keeps its brackets
	}
	// "https://e.com" is "https://e.com/" (RFC 3986, 6.2.3); "/a/" is not "/a".
	path := comparablePath(pathAsWritten(raw, u))
	if path == "" {
		path = "/"
	}
	var b strings.Builder
	b.WriteString(cp.Scheme + "://")
	if cp.User != nil {
		b.WriteString(cp.User.String() + "@")
	}
	b.WriteString(cp.Host + path)
	if query := comparableQuery(cp.RawQuery, utm); query != "" {
		b.WriteString("?" + query)
	}
	if cp.Fragment != "" {
		b.WriteString("#" + cp.EscapedFragment())
	}
	return b.String()
}

// pathAsWritten is the path of raw as written, escapes and all.
func pathAsWritten(raw string, u *url.URL) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return u.EscapedPath()
	}
	start := strings.IndexAny(rest, "/?#")
	if start < 0 || rest[start] != '/' {
		return ""
	}
	rest = rest[start:]
	if end := strings.IndexAny(rest, "?#"); end >= 0 {
		rest = rest[:end]
	}
	return rest
}

// comparablePath spells a path one way: the escape of an unreserved
// character, or of one of !'()* (which some URL writers escape, Go's
// among them), decoded; every other escape in capitals; and every byte a
// path cannot hold as it is (a space, a non-ASCII byte) escaped, so that
// "Frühling", "Fr%c3%bchling" and "Fr%C3%BChling", or "it's" and
// "it%27s", compare equal. The escape of any other reserved character
// stays: "a%2Fb" is one segment and "a/b" two, "app%3Bid=1" is not
// "app;id=1", and a service may serve them differently (RFC 3986, 2.2).
func comparablePath(path string) string {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c == '%' && i+2 < len(path) {
			if n, err := strconv.ParseUint(path[i+1:i+3], 16, 8); err == nil {
				if d := byte(n); isUnreserved(d) || strings.IndexByte("!'()*", d) >= 0 {
					writePathByte(&b, d)
				} else {
					b.WriteString(strings.ToUpper(path[i : i+3]))
				}
				i += 2
				continue
			}
		}
		writePathByte(&b, c)
	}
	return b.String()
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0
}

// writePathByte writes c as a path holds it: as it is if RFC 3986 allows
// it there, else escaped.
func writePathByte(b *strings.Builder, c byte) {
	if isUnreserved(c) || strings.IndexByte("!$&'()*+,;=:@/", c) >= 0 {
		b.WriteByte(c)
		return
	}
	fmt.Fprintf(b, "%%%02X", c)
}

// ComparableHost spells a host so that the spellings of one host compare
// equal: lower case, a Unicode name in its ASCII (IDNA) form (bücher.example
// and xn--bcher-kva.example), without the trailing dot of a fully qualified
// name; an IP address in one spelling, without the brackets of an IPv6
// literal (2001:DB8:0::1 and [2001:db8::1]).
func ComparableHost(host string) string {
	// netip, not net: net spells an IPv4-mapped IPv6 address as the IPv4
	// one, another host to compare.
	if ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")); err == nil {
		return ip.String()
	}
	host = strings.TrimSuffix(host, ".")
	if isASCII(host) {
		return strings.ToLower(host) // all IDNA would do, at a tenth of the cost
	}
	if ascii, err := idna.Lookup.ToASCII(host); err == nil {
		return ascii
	}
	return strings.ToLower(host)
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// WithoutMergedUTM removes from the query of a destination the service
// answered the UTM parameters of utm that it merged there, so that drift
// shows the destination someone else set, not our parameters. The rest of
// the URL is kept as the service spelled it.
func WithoutMergedUTM(dest string, utm *client.UTM) string {
	merged := map[string]string{}
	for k, v := range utmPairs(utm) {
		if v != "" {
			merged[k] = v
		}
	}
	q := strings.IndexByte(dest, '?')
	if len(merged) == 0 || q < 0 {
		return dest
	}
	base, query, fragment := dest[:q], dest[q+1:], ""
	if h := strings.IndexByte(query, '#'); h >= 0 {
		query, fragment = query[:h], query[h:]
	}
	var kept []string
	for _, p := range splitQuery(query) {
		if !p.merged(merged) {
			kept = append(kept, p.raw)
		}
	}
	if len(kept) == 0 {
		return base + fragment
	}
	return base + "?" + strings.Join(kept, "&") + fragment
}

// queryPair is one pair of a query: as written, and what it says.
type queryPair struct{ raw, key, value string }

// splitQuery splits a query into its pairs at "&" only, dropping none: Go's
// url.ParseQuery drops a pair it cannot read (one with a ";", or a "%"
// that escapes nothing), and with it the difference between
// "?discount=20%" and "?discount=90%".
func splitQuery(query string) []queryPair {
	var out []queryPair
	for _, raw := range strings.Split(query, "&") {
		if raw == "" {
			continue
		}
		k, v, _ := strings.Cut(raw, "=")
		out = append(out, queryPair{raw: raw, key: unescapeLeniently(k), value: unescapeLeniently(v)})
	}
	return out
}

// strayPercent is a "%" that does not begin an escape.
var strayPercent = regexp.MustCompile(`%([^0-9A-Fa-f]|[0-9A-Fa-f][^0-9A-Fa-f]|[0-9A-Fa-f]?$)`)

// unescapeLeniently decodes a query's key or value, reading a "%" that
// escapes nothing as itself, as lenient servers and browsers do: "20%" is
// "20%25".
func unescapeLeniently(s string) string {
	fixed := strayPercent.ReplaceAllStringFunc(s, func(m string) string { return "%25" + m[1:] })
	if decoded, err := url.QueryUnescape(fixed); err == nil {
		return decoded
	}
	return s
}

// merged reports whether p is one of the UTM parameters utm names, with
// its value: one the service may have merged into the query.
func (p queryPair) merged(utm map[string]string) bool {
	return utm[p.key] != "" && utm[p.key] == p.value
}

// comparableQuery spells a query one way: its pairs ordered by key (a
// key's values keep their order, which a server may read), each escaped
// one way, less the UTM parameters utm names.
func comparableQuery(query string, utm *client.UTM) string {
	merged := utmPairs(utm)
	var pairs []queryPair
	for _, p := range splitQuery(query) {
		if !p.merged(merged) {
			pairs = append(pairs, p)
		}
	}
	slices.SortStableFunc(pairs, func(a, b queryPair) int { return strings.Compare(a.key, b.key) })
	spelled := make([]string, len(pairs))
	for i, p := range pairs {
		spelled[i] = url.QueryEscape(p.key) + "=" + url.QueryEscape(p.value)
	}
	return strings.Join(spelled, "&")
}

// utmParams are the UTM parameters as a query spells them, in utm's order.
var utmParams = []string{"utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"}

// utmPairs names u's parameters as a query spells them (utm_source, …).
func utmPairs(u *client.UTM) map[string]string {
	if u == nil {
		return nil
	}
	return map[string]string{
		"utm_source": u.Source, "utm_medium": u.Medium, "utm_campaign": u.Campaign,
		"utm_term": u.Term, "utm_content": u.Content,
	}
}

// UTMConflict is a UTM parameter that a destination's query sets to one
// value and the link's utm to another.
type UTMConflict struct {
	// Attribute is the utm attribute (source, medium, …); InQuery the
	// value the query gives the parameter utm_<Attribute>.
	Attribute, InQuery, InUTM string
}

// UTMConflicts lists, in utm's order, the parameters that destination's
// query sets to another value than utm does. How the service combines the
// two is not shown: a visitor could get either, or both. The same value
// in both places is no conflict (SameDestination reads it as one).
func UTMConflicts(destination string, utm *client.UTM) []UTMConflict {
	u, err := url.Parse(destination)
	if err != nil || utm == nil {
		return nil
	}
	query, pairs := splitQuery(u.RawQuery), utmPairs(utm)
	var out []UTMConflict
	for _, param := range utmParams {
		for _, p := range query {
			if value := pairs[param]; p.key == param && value != "" && p.value != value {
				out = append(out, UTMConflict{Attribute: strings.TrimPrefix(param, "utm_"), InQuery: p.value, InUTM: value})
				break
			}
		}
	}
	return out
}
