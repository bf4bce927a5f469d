package provider

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// creatorEnv is an emulator, a client and a creator, without Terraform.
type creatorEnv struct {
	srv     *emulator.Server
	fx      emulator.Fixture
	creator *linkCreator
	clock   *time.Time
}

func newCreatorEnv(t *testing.T) *creatorEnv {
	t.Helper()
	settings := emulator.DefaultSettings()
	settings.Filter.Delay = 0
	now := time.Now()
	env := &creatorEnv{clock: &now}
	var mu sync.Mutex
	srv, err := emulator.New(emulator.Options{Settings: settings, Now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return *env.clock
	}})
	if err != nil {
		t.Fatal(err)
	}
	env.srv = srv
	if env.fx, err = srv.SeedFixture("creator", "go.example.test"); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	c, err := client.New(client.Config{BaseURL: ts.URL, APIKey: env.fx.APIKey, RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	env.creator = newLinkCreator(c, 3, time.Millisecond)
	return env
}

func (e *creatorEnv) input(dest, slug string) client.CreateLinkInput {
	return client.CreateLinkInput{Destination: dest, DomainID: e.fx.DomainID, Slug: slug}
}

func (e *creatorEnv) closeNextCreateAfterCommit() {
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultCloseAfterCommit, Method: http.MethodPost})
}

func TestCreate_adoptsLinkCommittedBeforeConnectionClosed(t *testing.T) {
	for _, slug := range []string{"", "spring"} {
		t.Run("slug="+slug, func(t *testing.T) {
			e := newCreatorEnv(t)
			e.closeNextCreateAfterCommit()
			link, adopted, err := e.creator.create(context.Background(), e.input("https://example.com/a", slug))
			if err != nil {
				t.Fatal(err)
			}
			stored := e.srv.Links(e.fx.AccountID)
			if len(stored) != 1 || stored[0].ID != link.ID || !adopted {
				t.Fatalf("adopted=%v, link %s, service holds %d links", adopted, link.ID, len(stored))
			}
			if n := e.srv.Count(http.MethodPost, "/api/links"); n != 1 {
				t.Errorf("%d POSTs, want 1: the create must not be re-sent once its link is found", n)
			}
		})
	}
}

func TestCreate_createsAgainWhenTheFailedAttemptMadeNothing(t *testing.T) {
	for _, status := range []int{500, 502, 503} {
		e := newCreatorEnv(t)
		e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: status, Method: http.MethodPost})
		link, adopted, err := e.creator.create(context.Background(), e.input("https://example.com/a", ""))
		if err != nil {
			t.Fatal(err)
		}
		if adopted || len(e.srv.Links(e.fx.AccountID)) != 1 || e.srv.Count(http.MethodPost, "/api/links") != 2 {
			t.Fatalf("status %d: adopted=%v, %d links, %d POSTs; want a second POST and one link %s",
				status, adopted, len(e.srv.Links(e.fx.AccountID)), e.srv.Count(http.MethodPost, "/api/links"), link.ID)
		}
	}
}

func TestCreate_neverAdoptsALinkAnotherResourceHolds(t *testing.T) {
	e := newCreatorEnv(t)
	existing, _, err := e.creator.create(context.Background(), e.input("https://example.com/same", ""))
	if err != nil {
		t.Fatal(err)
	}
	// The next attempt fails before commit; the link with the same
	// destination belongs to another resource and must not be taken.
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: 500, Method: http.MethodPost})
	link, adopted, err := e.creator.create(context.Background(), e.input("https://example.com/same", ""))
	if err != nil {
		t.Fatal(err)
	}
	if adopted || link.ID == existing.ID || len(e.srv.Links(e.fx.AccountID)) != 2 {
		t.Fatalf("adopted=%v, same ID=%v, %d links", adopted, link.ID == existing.ID, len(e.srv.Links(e.fx.AccountID)))
	}
}

func TestCreate_neverAdoptsALinkOlderThanTheAttempt(t *testing.T) {
	e := newCreatorEnv(t)
	*e.clock = time.Now().Add(-time.Hour) // made an hour ago, outside Terraform
	if _, err := e.srv.SeedLinks(e.fx.DomainID, "old", 1); err != nil {
		t.Fatal(err)
	}
	*e.clock = time.Now()
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: 503, Method: http.MethodPost})
	_, adopted, err := e.creator.create(context.Background(), e.input("https://example.com/old/0", ""))
	if err != nil {
		t.Fatal(err)
	}
	if adopted || len(e.srv.Links(e.fx.AccountID)) != 2 {
		t.Fatalf("adopted=%v, %d links; the old link must be left alone", adopted, len(e.srv.Links(e.fx.AccountID)))
	}
}

func TestCreate_twinsWithTheSameDestinationStayTwo(t *testing.T) {
	for round := range 20 {
		e := newCreatorEnv(t)
		e.closeNextCreateAfterCommit()
		var wg sync.WaitGroup
		ids := make([]string, 2)
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() {
				link, _, err := e.creator.create(context.Background(), e.input("https://example.com/twins", ""))
				errs[i] = err
				if err == nil {
					ids[i] = link.ID
				}
			})
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatal(errs)
		}
		if ids[0] == ids[1] || len(e.srv.Links(e.fx.AccountID)) != 2 {
			t.Fatalf("round %d: IDs %v, %d links stored; want two distinct links", round, ids, len(e.srv.Links(e.fx.AccountID)))
		}
	}
}

func TestCreate_givesUpWithAClearErrorWhenEveryAttemptFails(t *testing.T) {
	e := newCreatorEnv(t)
	for range 10 {
		e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: 500, Method: http.MethodPost})
	}
	_, _, err := e.creator.create(context.Background(), e.input("https://example.com/a", ""))
	if err == nil || !strings.Contains(err.Error(), "no link was created; gave up after 4 attempts") {
		t.Fatalf("err = %v", err)
	}
	if n := len(e.srv.Links(e.fx.AccountID)); n != 0 {
		t.Fatalf("%d links stored", n)
	}
}
