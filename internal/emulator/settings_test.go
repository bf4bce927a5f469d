package emulator

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestSettingsValidate(t *testing.T) {
	if err := DefaultSettings().Validate(); err != nil {
		t.Fatalf("default settings: %v", err)
	}
	bad := map[string]func(*Settings){
		"limits.write":  func(s *Settings) { s.Limits.Write = 0 },
		"limits.read":   func(s *Settings) { s.Limits.Read = -1 },
		"limits.window": func(s *Settings) { s.Limits.Window = 0 },
		"limits.window, 60 as a JSON number (60ns)": func(s *Settings) { s.Limits.Window = 60 },
		"filter.delay":            func(s *Settings) { s.Filter.Delay = -1 },
		"variants.objectEnvelope": func(s *Settings) { s.Variants.ObjectEnvelope = "result" },
		"variants.listEnvelope":   func(s *Settings) { s.Variants.ListEnvelope = "results" },
		"variants.fieldStyle":     func(s *Settings) { s.Variants.FieldStyle = "" },
		"variants.createStatus":   func(s *Settings) { s.Variants.CreateStatus = 202 },
		"variants.changeStatus":   func(s *Settings) { s.Variants.ChangeStatus = 201 },
		"variants.deleteStatus":   func(s *Settings) { s.Variants.DeleteStatus = 202 },
		"variants.paging":         func(s *Settings) { s.Variants.Paging = "pages" },
		"churn.delete":            func(s *Settings) { s.Churn.Delete = -1 },
		"variants.pageSize":       func(s *Settings) { s.Variants.PageSize = 0 },
		"variants.utmStyle":       func(s *Settings) { s.Variants.UTMStyle = "query" },
		"variants.timeFormat":     func(s *Settings) { s.Variants.TimeFormat = "unix" },
	}
	for name, change := range bad {
		t.Run(name, func(t *testing.T) {
			s := testSettings(change)
			err := s.Validate()
			if setting, _, _ := strings.Cut(name, ","); err == nil || !strings.Contains(err.Error(), setting) {
				t.Errorf("Validate = %v, want an error naming %s", err, name)
			}
			if _, err := New(Options{Settings: s}); err == nil {
				t.Errorf("New accepted the settings")
			}
			srv, err := New(Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := srv.SetSettings(s); err == nil {
				t.Errorf("SetSettings accepted the settings")
			}
			if err := srv.UpdateSettings(change); err == nil {
				t.Errorf("UpdateSettings accepted the settings")
			}
			if srv.Settings().Variants != DefaultSettings().Variants || srv.Settings().Limits != DefaultSettings().Limits {
				t.Errorf("a refused change was installed: %+v", srv.Settings())
			}
		})
	}
	t.Run("zero settings are the defaults", func(t *testing.T) {
		srv, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fmt.Sprintf("%+v", srv.Settings()), fmt.Sprintf("%+v", DefaultSettings()); got != want {
			t.Errorf("settings = %s, want %s", got, want)
		}
	})
	t.Run("partial settings are refused, not replaced", func(t *testing.T) {
		// Replaced by the defaults, a filter given alone would be dropped unseen.
		partial := Settings{Filter: Filter{Blocked: []string{"example.com"}}}
		if _, err := New(Options{Settings: partial}); err == nil || !strings.Contains(err.Error(), "limits.write") {
			t.Errorf("New with only a filter: %v; want the missing write limit named", err)
		}
	})
	t.Run("Duration JSON", func(t *testing.T) {
		var s Settings
		if err := json.Unmarshal([]byte(`{"limits":{"window":"1.5s"},"filter":{"delay":2000000}}`), &s); err != nil {
			t.Fatal(err)
		}
		if time.Duration(s.Limits.Window) != 1500*time.Millisecond || time.Duration(s.Filter.Delay) != 2*time.Millisecond {
			t.Errorf("durations = %v %v", s.Limits.Window, s.Filter.Delay)
		}
		for _, window := range []string{`1e9`, `1E9`, `1000000000.0`} {
			if err := json.Unmarshal([]byte(`{"limits":{"window":`+window+`}}`), &s); err != nil || time.Duration(s.Limits.Window) != time.Second {
				t.Errorf("window %s = %v, %v; want 1s", window, s.Limits.Window, err)
			}
		}
		for _, bad := range []string{`"soon"`, `1.5`, `1e30`, `true`} {
			if err := json.Unmarshal([]byte(`{"limits":{"window":`+bad+`}}`), &s); err == nil {
				t.Errorf("window %s accepted as %v", bad, s.Limits.Window)
			}
		}
		b, err := json.Marshal(Duration(90 * time.Second))
		if err != nil || string(b) != `"1m30s"` {
			t.Errorf("Marshal = %s %v", b, err)
		}
	})
}
