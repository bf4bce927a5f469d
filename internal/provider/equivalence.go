package provider

import (
	"net/url"
	"strings"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

func stringsEqualFold(a, b string) bool { return strings.EqualFold(a, b) }

// sameDestination reports whether the service's spelling of a destination
// means what the user wrote: services lower-case the scheme and host, add a
// trailing slash to an empty path, or merge the link's UTM parameters into
// the query. Anything else is a real difference (drift) and shows in a plan.
func sameDestination(configured, answered string, utm *client.UTM) bool {
	if configured == answered {
		return true
	}
	c, errC := url.Parse(configured)
	a, errA := url.Parse(answered)
	if errC != nil || errA != nil {
		return false
	}
	return canonicalURL(c, nil) == canonicalURL(a, utm)
}

// canonicalURL spells a URL so that equivalent spellings compare equal.
// utm, when given, names UTM parameters to drop from the query because the
// service merged them there.
func canonicalURL(u *url.URL, utm *client.UTM) string {
	cp := *u
	cp.Scheme = strings.ToLower(cp.Scheme)
	cp.Host = strings.ToLower(cp.Host)
	if cp.Path == "" {
		cp.Path = "/"
	}
	q := cp.Query()
	for key, value := range utmPairs(utm) {
		if q.Get(key) == value {
			q.Del(key)
		}
	}
	cp.RawQuery = q.Encode()
	return cp.String()
}

func utmPairs(u *client.UTM) map[string]string {
	if u == nil {
		return nil
	}
	return map[string]string{
		"utm_source": u.Source, "utm_medium": u.Medium, "utm_campaign": u.Campaign,
		"utm_term": u.Term, "utm_content": u.Content,
	}
}
