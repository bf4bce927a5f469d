package emulator

import (
	"net/http"
	"slices"
	"testing"
)

// counting is a server whose counters hold the given requests, added as
// serveAPI adds them, without serving any.
func counting(t *testing.T, requests ...CounterKey) *Server {
	t.Helper()
	srv, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range requests {
		srv.counters.add(k.Method, k.Path, k.Status)
	}
	return srv
}

var (
	listOK        = CounterKey{http.MethodGet, "/api/links", http.StatusOK}
	listLimited   = CounterKey{http.MethodGet, "/api/links", http.StatusTooManyRequests}
	createOK      = CounterKey{http.MethodPost, "/api/links", http.StatusCreated}
	changeOK      = CounterKey{http.MethodPatch, "/api/links/{id}", http.StatusOK}
	deleteOK      = CounterKey{http.MethodDelete, "/api/links/{id}", http.StatusNoContent}
	deleteDropped = CounterKey{http.MethodDelete, "/api/links/{id}", 0}
	exportOK      = CounterKey{http.MethodGet, "/api/analytics/export", http.StatusOK}
)

// Count selects by method, path pattern and status, all three.
func TestCountSelects(t *testing.T) {
	srv := counting(t, listOK, listOK, listLimited, createOK, changeOK, deleteOK, deleteDropped)
	cases := []struct {
		name         string
		method, path string
		statuses     []int
		want         int
	}{
		{"every status of an endpoint", http.MethodGet, "/api/links", nil, 3},
		{"a status never answered", http.MethodGet, "/api/links", []int{http.StatusInternalServerError}, 0},
		{"another method on the same path", http.MethodPatch, "/api/links/{id}", nil, 1},
		{"connections closed on purpose", http.MethodDelete, "/api/links/{id}", []int{0}, 1},
		{"a path, not its pattern", http.MethodDelete, "/api/links/123", nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := srv.Count(c.method, c.path, c.statuses...); got != c.want {
				t.Errorf("Count(%s, %s, %v) = %d, want %d", c.method, c.path, c.statuses, got, c.want)
			}
		})
	}
}

// Counts hands out a copy: a test that keeps or edits one changes nothing
// the server counts.
func TestCountsIsACopy(t *testing.T) {
	srv := counting(t, listOK)
	held := srv.Counts()
	held[listOK] = 99
	held[createOK] = 1
	if got := srv.Counts(); len(got) != 1 || got[listOK] != 1 {
		t.Errorf("Counts after editing a copy = %v, want only %v once", got, listOK)
	}
}

// The admin API's rows are sorted by path, then method, then status, so
// that two reads of the same counters answer the same.
func TestCounterRowsSorted(t *testing.T) {
	srv := counting(t, createOK, deleteOK, listLimited, exportOK, changeOK, listOK, listOK)
	want := []CounterRow{
		{exportOK, 1},
		{listOK, 2},
		{listLimited, 1},
		{createOK, 1},
		{deleteOK, 1},
		{changeOK, 1},
	}
	if got := srv.counterRows(); !slices.Equal(got, want) {
		t.Errorf("counterRows =\n %v\nwant\n %v", got, want)
	}
	// None counted is an empty list, which a client of the admin API reads
	// as JSON [] rather than null.
	if got := counting(t).counterRows(); got == nil || len(got) != 0 {
		t.Errorf("counterRows of no counters = %#v, want an empty list", got)
	}
}
