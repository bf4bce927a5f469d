package client

import (
	"context"
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
