package links

import (
	"reflect"
	"testing"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

func TestSameDestination(t *testing.T) {
	utm := &client.UTM{Source: "newsletter", Medium: "email", Campaign: "spring"}
	tests := []struct {
		configured, answered string
		utm                  *client.UTM
		same                 bool
	}{
		{"https://example.com/a", "https://example.com/a", nil, true},
		{"HTTPS://Example.COM", "https://example.com/", nil, true},
		{"https://example.com/", "https://example.com", nil, true},
		{"https://example.com?a=1", "https://example.com/?a=1", nil, true},
		{"https://example.com:443/a", "https://example.com/a", nil, true},
		{"http://example.com:80/a", "http://example.com/a", nil, true},
		{"http://[::1]:80/a", "http://[::1]/a", nil, true},
		{"https://example.com/a?", "https://example.com/a", nil, true},
		{"https://example.com/a?b=2&a=1", "https://example.com/a?a=1&b=2", nil, true},
		{"https://example.com/%7Euser", "https://example.com/~user", nil, true},
		{"https://example.com/%7euser", "https://example.com/%7Euser", nil, true},
		{"https://example.com/a%2fb", "https://example.com/a%2Fb", nil, true},
		{"https://example.com/Fr%c3%bchling", "https://example.com/Frühling", nil, true},
		// Escaped as a service may, the same path.
		{"https://example.com/it's/Frühling", "https://example.com/it's/Fr%C3%BChling", nil, true},
		{"https://example.com/it's/Frühling", "https://example.com/it%27s/Fr%C3%BChling", nil, true},
		{"https://example.com/(x)/Frühling", "https://example.com/(x)/Fr%C3%BChling", nil, true},
		{"https://example.com/a b/c(1)", "https://example.com/a%20b/c(1)", nil, true},
		{"https://example.com/a%2Fb/Frühling", "https://example.com/a%2Fb/Fr%C3%BChling", nil, true},
		{"https://example.com/a!", "https://example.com/a%21", nil, true},
		// An escaped slash is another path (RFC 3986, 2.2), whatever else
		// the path holds.
		{"https://example.com/docs/v2", "https://example.com/docs%2Fv2", nil, false},
		{"https://example.com/a%2Fb/Frühling", "https://example.com/a/b/Fr%C3%BChling", nil, false},
		{"https://example.com/a%3Fb", "https://example.com/a?b", nil, false},
		{"https://example.com/app;jsessionid=1", "https://example.com/app%3Bjsessionid=1", nil, false},
		// A Unicode host in ASCII (IDNA), the path percent-encoded, either way.
		{"https://Bücher.Example/Frühling", "https://xn--bcher-kva.example/Fr%C3%BChling", nil, true},
		{"https://xn--bcher-kva.example:8443/a", "https://bücher.example:8443/a", nil, true},
		{"https://bücher.example/a", "https://bucher.example/a", nil, false},
		{"https://example.com./a", "https://example.com/a", nil, true},
		{"https://example.com/sale", "https://example.com/sale?utm_campaign=spring&utm_medium=email&utm_source=newsletter", utm, true},
		{"https://example.com/sale?ref=1", "https://example.com/sale?ref=1&utm_source=newsletter&utm_medium=email&utm_campaign=spring", utm, true},
		// The user also wrote the parameters into the destination.
		{"HTTPS://example.com/sale?utm_source=newsletter", "https://example.com/sale?utm_campaign=spring&utm_medium=email&utm_source=newsletter", utm, true},
		// Real differences.
		{"https://example.com/sale", "https://example.com/theirs", nil, false},
		// A trailing slash makes another path, which a server may serve
		// otherwise (a relative link on the page resolves elsewhere).
		{"https://example.com/sale/", "https://example.com/sale", nil, false},
		{"https://example.com/sale", "https://example.com/sale/", nil, false},
		{"https://example.com//", "https://example.com/", nil, false},
		{"https://example.com/Sale", "https://example.com/sale", nil, false},
		{"https://example.com/a", "http://example.com/a", nil, false},
		{"https://example.com:8443/a", "https://example.com/a", nil, false},
		{"https://example.com/a?x=1", "https://example.com/a?x=2", nil, false},
		{"https://example.com/a#top", "https://example.com/a", nil, false},
		{"https://example.com/sale", "https://example.com/sale?utm_source=newsletter", nil, false},
		{"https://example.com/sale", "https://example.com/sale?utm_source=other", utm, false},
		{"https://example.com/a", "://bad", nil, false},
		// A pair Go's query parser cannot read (a ";", a "%" that escapes
		// nothing) is compared as written, not dropped from both sides.
		{"https://shop.example.com/sale?discount=20%", "https://shop.example.com/sale?discount=90%", nil, false},
		{"https://shop.example.com/cgi?item=1;lang=en", "https://shop.example.com/cgi?item=666;lang=ru", nil, false},
		{"https://shop.example.com/cgi?item=1;lang=en", "https://shop.example.com/cgi?id=1;v=2", nil, false},
		{"https://shop.example.com/sale?discount=20%", "https://shop.example.com/sale?discount=20%", nil, true},
		{"https://shop.example.com/sale?discount=20%", "https://shop.example.com/sale?discount=20%25", nil, true},
		{"https://shop.example.com/sale?d=%zz&e=%4", "https://shop.example.com/sale?d=%25zz&e=%254", nil, true},
		{"https://shop.example.com/sale?d=%41", "https://shop.example.com/sale?d=A", nil, true},
		{"https://shop.example.com/cgi?item=1;lang=en&b=2", "https://shop.example.com/cgi?b=2&item=1%3Blang%3Den", nil, true},
		{"https://example.com/sale?discount=20%", "https://example.com/sale?discount=20%&utm_source=newsletter&utm_medium=email&utm_campaign=spring", utm, true},
		// Spellings of one value; a key's values in another order are another query.
		{"https://example.com/a?q=a b", "https://example.com/a?q=a+b", nil, true},
		{"https://example.com/a?q=a%20b&flag", "https://example.com/a?flag=&q=a+b", nil, true},
		{"https://example.com/a?x=1&x=2", "https://example.com/a?x=2&x=1", nil, false},
	}
	for _, tt := range tests {
		if got := SameDestination(tt.configured, tt.answered, tt.utm); got != tt.same {
			t.Errorf("SameDestination(%q, %q, %v) = %v, want %v", tt.configured, tt.answered, tt.utm, got, tt.same)
		}
	}
}

func TestWithoutMergedUTM(t *testing.T) {
	utm := &client.UTM{Source: "newsletter", Campaign: "spring sale"}
	tests := []struct {
		dest string
		utm  *client.UTM
		want string
	}{
		{"https://example.com/theirs?utm_campaign=spring+sale&utm_source=newsletter", utm, "https://example.com/theirs"},
		{"HTTPS://Example.COM/x?b=2&utm_source=newsletter&a=%2F#frag", utm, "HTTPS://Example.COM/x?b=2&a=%2F#frag"},
		{"https://example.com/x?utm_source=other", utm, "https://example.com/x?utm_source=other"},
		{"https://example.com/x?utm_source=newsletter", nil, "https://example.com/x?utm_source=newsletter"},
		{"https://example.com/x", utm, "https://example.com/x"},
		{"https://example.com/x?utm_campaign=spring%20sale#f", utm, "https://example.com/x#f"},
	}
	for _, tt := range tests {
		if got := WithoutMergedUTM(tt.dest, tt.utm); got != tt.want {
			t.Errorf("WithoutMergedUTM(%q) = %q, want %q", tt.dest, got, tt.want)
		}
	}
}

func TestUTMConflicts(t *testing.T) {
	utm := &client.UTM{Source: "newsletter", Medium: "email"}
	tests := []struct {
		destination string
		utm         *client.UTM
		want        []UTMConflict
	}{
		{"https://example.com/sale", utm, nil},
		{"https://example.com/sale?utm_source=newsletter", utm, nil},
		{"https://example.com/sale?utm_campaign=spring", utm, nil},
		{"https://example.com/sale?utm_source=print", nil, nil},
		{"https://example.com/sale?utm_medium=print&utm_source=print", utm, []UTMConflict{
			{Attribute: "source", InQuery: "print", InUTM: "newsletter"},
			{Attribute: "medium", InQuery: "print", InUTM: "email"},
		}},
		// A pair Go's query parser cannot read beside it hides none.
		{"https://example.com/sale?d=20%&utm_source=print", utm, []UTMConflict{{Attribute: "source", InQuery: "print", InUTM: "newsletter"}}},
		{"https://example.com/sale?utm_source=newsletter&utm_source=print", utm, []UTMConflict{
			{Attribute: "source", InQuery: "print", InUTM: "newsletter"},
		}},
		{"https://example.com/sale?utm_source=news%20letter", utm, []UTMConflict{
			{Attribute: "source", InQuery: "news letter", InUTM: "newsletter"},
		}},
	}
	for _, tt := range tests {
		if got := UTMConflicts(tt.destination, tt.utm); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("UTMConflicts(%q) = %+v, want %+v", tt.destination, got, tt.want)
		}
	}
}

func TestComparableHost(t *testing.T) {
	for host, want := range map[string]string{
		"Shop.Example.COM":      "shop.example.com",
		"shop.example.com.":     "shop.example.com",
		"Bücher.Example":        "xn--bcher-kva.example",
		"xn--bcher-kva.example": "xn--bcher-kva.example",
		"192.0.2.1":             "192.0.2.1",
		"2001:DB8::1":           "2001:db8::1",
		"[2001:db8:0::1]":       "2001:db8::1",
		"::ffff:192.0.2.1":      "::ffff:192.0.2.1",
	} {
		if got := ComparableHost(host); got != want {
			t.Errorf("ComparableHost(%q) = %q, want %q", host, got, want)
		}
	}
}
