package emulator

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
)

// AdminTokenHeader carries the admin token on requests to /_emulator/.
const AdminTokenHeader = "X-Emulator-Admin-Token"

// admin serves one endpoint of the control surface of the command (nil: no
// such endpoint), behind the admin token: the same switches, faults,
// seeding and counters that tests use in-process.
//
//	GET  /_emulator/settings         the switches in force
//	PUT  /_emulator/settings         replace them (a full Settings object)
//	GET  /_emulator/faults           the fault plan, with what is left of its script
//	PUT  /_emulator/faults           replace it (a FaultPlan; {} turns faults off)
//	GET  /_emulator/counters         request counters
//	DELETE /_emulator/counters       reset them
//	POST /_emulator/fixtures         {"name","host"} → a Fixture (account, domain, keys)
//	POST /_emulator/accounts/quota   {"accountId","quota"}
//	POST /_emulator/accounts/api     {"accountId","enabled"}
//	POST /_emulator/keys/revoke      {"key"}
//	POST /_emulator/links/seed       {"domainId","prefix","count"}
//	GET  /_emulator/links            every stored link
func (s *Server) admin(handle adminHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		given := r.Header.Get(AdminTokenHeader)
		if s.adminToken == "" || subtle.ConstantTimeCompare([]byte(given), []byte(s.adminToken)) != 1 {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_admin_token", "message": "the admin API needs the " + AdminTokenHeader + " header printed at start"})
			return
		}
		if handle == nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "not_found", "message": "no admin endpoint " + r.Method + " " + r.URL.Path})
			return
		}
		result, err := handle(r)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "message": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, result)
	}
}

type adminHandler func(*http.Request) (any, error)

func (s *Server) adminRoutes() map[string]adminHandler {
	return map[string]adminHandler{
		"GET /_emulator/settings": func(*http.Request) (any, error) { return s.Settings(), nil },
		"PUT /_emulator/settings": func(r *http.Request) (any, error) {
			var in Settings
			if err := readAdmin(r, &in); err != nil {
				return nil, err
			}
			return in, s.SetSettings(in)
		},
		"GET /_emulator/faults": func(*http.Request) (any, error) { return s.Faults(), nil },
		"PUT /_emulator/faults": func(r *http.Request) (any, error) {
			var in FaultPlan
			if err := readAdmin(r, &in); err != nil {
				return nil, err
			}
			s.SetFaults(in)
			return s.Faults(), nil
		},
		"GET /_emulator/counters":    func(*http.Request) (any, error) { return s.counterRows(), nil },
		"DELETE /_emulator/counters": func(*http.Request) (any, error) { s.ResetCounts(); return map[string]bool{"reset": true}, nil },
		"POST /_emulator/fixtures": func(r *http.Request) (any, error) {
			var in struct{ Name, Host string }
			if err := readAdmin(r, &in); err != nil {
				return nil, err
			}
			return s.SeedFixture(in.Name, in.Host)
		},
		"POST /_emulator/accounts/quota": func(r *http.Request) (any, error) {
			var in struct {
				AccountID string `json:"accountId"`
				Quota     int    `json:"quota"`
			}
			if err := readAdmin(r, &in); err != nil {
				return nil, err
			}
			return in, s.SetMonthlyQuota(in.AccountID, in.Quota)
		},
		"POST /_emulator/accounts/api": func(r *http.Request) (any, error) {
			var in struct {
				AccountID string `json:"accountId"`
				Enabled   bool   `json:"enabled"`
			}
			if err := readAdmin(r, &in); err != nil {
				return nil, err
			}
			return in, s.SetAPIEnabled(in.AccountID, in.Enabled)
		},
		"POST /_emulator/keys/revoke": func(r *http.Request) (any, error) {
			var in struct{ Key string }
			if err := readAdmin(r, &in); err != nil {
				return nil, err
			}
			return map[string]bool{"revoked": true}, s.RevokeKey(in.Key)
		},
		"POST /_emulator/links/seed": func(r *http.Request) (any, error) {
			var in struct {
				DomainID string `json:"domainId"`
				Prefix   string `json:"prefix"`
				Count    int    `json:"count"`
			}
			if err := readAdmin(r, &in); err != nil {
				return nil, err
			}
			links, err := s.SeedLinks(in.DomainID, in.Prefix, in.Count)
			return map[string]int{"seeded": len(links)}, err
		},
		"GET /_emulator/links": func(*http.Request) (any, error) { return s.AllLinks(), nil },
	}
}

func readAdmin(r *http.Request, dst any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	return dec.Decode(dst)
}
