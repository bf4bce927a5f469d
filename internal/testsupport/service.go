// Package testsupport serves the emulator to the tests of every package
// (client, links, provider, end-to-end) and to the benchmarks, and holds
// their test doubles: one set-up of the service under test, so that a
// change to it is made once.
package testsupport

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// Service is an emulator served on loopback for one test, with one seeded
// account.
type Service struct {
	Server  *emulator.Server
	URL     string
	Fixture emulator.Fixture
}

// Options adjust a Service.
type Options struct {
	// Settings changes the test defaults: the emulator's, without the
	// fraud filter's delay and with limits no test meets by accident.
	Settings func(*emulator.Settings)
	// Now is the emulator's clock; nil is the real one.
	Now func() time.Time
	// Wrap, if set, wraps the emulator's handler (a WriteTracker, a log).
	Wrap func(http.Handler) http.Handler
}

// TestSettings are the emulator's defaults without the filter's delay and
// with limits of 10,000 requests a window.
func TestSettings() emulator.Settings {
	s := emulator.DefaultSettings()
	s.Filter.Delay = 0
	s.Limits.Write, s.Limits.Read = 10000, 10000
	return s
}

// Start serves an emulator until the test ends.
func Start(t testing.TB, o Options) *Service {
	t.Helper()
	settings := TestSettings()
	if o.Settings != nil {
		o.Settings(&settings)
	}
	srv, err := emulator.New(emulator.Options{Settings: settings, Now: o.Now})
	if err != nil {
		t.Fatal(err)
	}
	fx, err := srv.SeedFixture("test", "go.example.test")
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = srv
	if o.Wrap != nil {
		h = o.Wrap(srv)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &Service{Server: srv, URL: ts.URL, Fixture: fx}
}
