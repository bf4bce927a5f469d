package client

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

func TestRequiredInputsAreCheckedBeforeSending(t *testing.T) {
	s, srv := serve(t, step{body: linkJSON})
	c := newTestClient(t, srv)
	ctx := context.Background()
	calls := map[string]func() error{
		"create without destination": func() error { _, err := c.CreateLink(ctx, CreateLinkInput{DomainID: "d"}); return err },
		"create without domain":      func() error { _, err := c.CreateLink(ctx, CreateLinkInput{Destination: "https://e/"}); return err },
		"change without id": func() error {
			_, err := c.ChangeDestination(ctx, "", ChangeDestinationInput{Destination: "https://e/"})
			return err
		},
		"change without destination": func() error { _, err := c.ChangeDestination(ctx, "l", ChangeDestinationInput{}); return err },
		"delete without id":          func() error { return c.DeleteLink(ctx, "") },
	}
	for name, call := range calls {
		if err := call(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if n := s.count(); n != 0 {
		t.Fatalf("%d requests sent, want 0", n)
	}
}

// A service, or a proxy in front of it, that echoes the key into the
// addresses it makes for a link would have them, and the state, hold it.
func TestLinkAddressesHoldNoKey(t *testing.T) {
	echoed := strings.NewReplacer(`"shortUrl":"https://sho.rt/abc"`, `"shortUrl":"https://sho.rt/abc?k=`+testKey+`"`,
		`"qrCodeUrl":"https://sho.rt/abc.png"`, `"qrCodeUrl":"https://sho.rt/`+strings.ToUpper(testKey)+`/abc.png"`).Replace(linkJSON)
	if echoed == linkJSON {
		t.Fatal("the answer holds no key: the test proves nothing")
	}
	for name, call := range map[string]func(*Client) (*Link, error){
		"create": func(c *Client) (*Link, error) {
			return c.CreateLink(context.Background(), CreateLinkInput{Destination: "https://example.com/a", DomainID: "d-1"})
		},
		"change": func(c *Client) (*Link, error) {
			return c.ChangeDestination(context.Background(), "l-1", ChangeDestinationInput{Destination: "https://example.com/a"})
		},
		"list": func(c *Client) (*Link, error) {
			set, err := c.ListLinks(context.Background())
			if err != nil {
				return nil, err
			}
			l, _ := set.Get("l-1")
			return &l, nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			body := echoed
			if name == "list" {
				body = "[" + echoed + "]"
			}
			_, srv := serve(t, step{status: 200, body: body})
			l, err := call(newTestClient(t, srv))
			if err != nil || l == nil {
				t.Fatalf("link %+v, error %v", l, err)
			}
			if got := fmt.Sprint(*l); strings.Contains(strings.ToLower(got), strings.ToLower(testKey)) || l.ShortURL != "https://sho.rt/abc?k="+Redacted {
				t.Errorf("the link holds the key: %s", got)
			}
		})
	}
}
