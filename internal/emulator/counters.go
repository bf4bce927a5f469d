package emulator

import (
	"sort"
	"sync"
)

// CounterKey names one kind of API request: its method, its path pattern
// (such as /api/links/{id}) and the status it was answered with (0 for a
// connection closed by fault injection).
type CounterKey struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Status int    `json:"status"`
}

// CounterRow is one CounterKey with its count, for the admin API.
type CounterRow struct {
	CounterKey
	Count int `json:"count"`
}

type counters struct {
	mu sync.Mutex
	n  map[CounterKey]int
}

func newCounters() *counters { return &counters{n: map[CounterKey]int{}} }

func (c *counters) add(method, path string, status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[CounterKey{method, path, status}]++
}

// Counts returns a copy of the request counters.
func (s *Server) Counts() map[CounterKey]int {
	s.counters.mu.Lock()
	defer s.counters.mu.Unlock()
	out := make(map[CounterKey]int, len(s.counters.n))
	for k, v := range s.counters.n {
		out[k] = v
	}
	return out
}

// Count sums the requests of a method and path pattern over the given
// statuses, or over every status when none is given.
func (s *Server) Count(method, path string, statuses ...int) int {
	total := 0
	for k, v := range s.Counts() {
		if k.Method != method || k.Path != path {
			continue
		}
		if len(statuses) == 0 || containsInt(statuses, k.Status) {
			total += v
		}
	}
	return total
}

// CountStatus sums the requests answered with status, over every endpoint.
func (s *Server) CountStatus(status int) int {
	total := 0
	for k, v := range s.Counts() {
		if k.Status == status {
			total += v
		}
	}
	return total
}

// TotalRequests is the number of API requests served.
func (s *Server) TotalRequests() int {
	total := 0
	for _, v := range s.Counts() {
		total += v
	}
	return total
}

// ResetCounts sets every counter back to zero.
func (s *Server) ResetCounts() {
	s.counters.mu.Lock()
	defer s.counters.mu.Unlock()
	s.counters.n = map[CounterKey]int{}
}

// counterRows lists the counters in a fixed order; none is an empty list
// (JSON [], not null).
func (s *Server) counterRows() []CounterRow {
	counts := s.Counts()
	rows := make([]CounterRow, 0, len(counts))
	for k, v := range counts {
		rows = append(rows, CounterRow{k, v})
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Method != b.Method {
			return a.Method < b.Method
		}
		return a.Status < b.Status
	})
	return rows
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
