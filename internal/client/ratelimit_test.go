package client

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRateLimit(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tests := []struct {
		name   string
		header http.Header
		want   RateLimit
		ok     bool
	}{
		{"none", header(), RateLimit{-1, -1, -1}, false},
		{"all", header("X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1.5"), RateLimit{60, 0, 1500 * time.Millisecond}, true},
		{"reset as a Unix time", header("X-RateLimit-Reset", "1800000030"), RateLimit{-1, -1, 30 * time.Second}, true},
		{"unreadable values", header("X-RateLimit-Limit", "lots", "X-RateLimit-Remaining", " 5 "), RateLimit{-1, 5, -1}, true},
	}
	for _, tt := range tests {
		got, ok := parseRateLimit(tt.header, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: parseRateLimit = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
	if rateClass("GET") != ClassRead || rateClass("POST") != ClassWrite || rateClass("PATCH") != ClassWrite || rateClass("DELETE") != ClassWrite {
		t.Error("rateClass")
	}
}
