package emulator

import (
	"bufio"
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
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
		if links, ok := result.(linkStream); ok {
			links.write(w)
			return
		}
		writeJSON(w, http.StatusOK, result)
	}
}

type adminHandler func(*http.Request) (any, error)

func (s *Server) adminRoutes() map[string]adminHandler {
	return map[string]adminHandler{
		"GET /_emulator/settings":        s.adminGetSettings,
		"PUT /_emulator/settings":        s.adminPutSettings,
		"GET /_emulator/faults":          s.adminGetFaults,
		"PUT /_emulator/faults":          adminBody(s.adminPutFaults),
		"GET /_emulator/counters":        s.adminGetCounters,
		"DELETE /_emulator/counters":     s.adminResetCounters,
		"POST /_emulator/fixtures":       adminBody(s.adminSeedFixture),
		"POST /_emulator/accounts/quota": adminBody(s.adminSetQuota),
		"POST /_emulator/accounts/api":   adminBody(s.adminSetAPIEnabled),
		"POST /_emulator/keys/revoke":    adminBody(s.adminRevokeKey),
		"POST /_emulator/links/seed":     adminBody(s.adminSeedLinks),
		"GET /_emulator/links":           s.adminAllLinks,
	}
}

// adminBody is the handler that reads the request's JSON body (unknown
// fields refused) into an In and hands it to handle.
func adminBody[In any](handle func(In) (any, error)) adminHandler {
	return func(r *http.Request) (any, error) {
		var in In
		if err := readAdmin(r, &in); err != nil {
			return nil, err
		}
		return handle(in)
	}
}

func (s *Server) adminGetSettings(*http.Request) (any, error) { return s.Settings(), nil }

// adminPutSettings replaces the settings whole: a body that leaves one out
// is refused, naming it, rather than setting it to its zero value (no fraud
// filter delay, no blocked hosts) unnoticed.
func (s *Server) adminPutSettings(r *http.Request) (any, error) {
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	var in Settings
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, err
	}
	var want, got map[string]any
	shape, _ := json.Marshal(DefaultSettings())
	if err := json.Unmarshal(shape, &want); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		return nil, err
	}
	if name := firstMissing(want, got, ""); name != "" {
		return nil, fmt.Errorf("setting %s is missing: a PUT replaces the settings whole (GET them, change what you want, PUT them back)", name)
	}
	return in, s.SetSettings(in)
}

// firstMissing names the first key of want (a setting the defaults spell
// out, nested ones too) that got lacks, in key order; "" when none.
func firstMissing(want, got map[string]any, prefix string) string {
	for _, key := range slices.Sorted(maps.Keys(want)) {
		value, ok := got[key]
		if !ok {
			return prefix + key
		}
		if inner, isObject := want[key].(map[string]any); isObject {
			gotInner, _ := value.(map[string]any)
			if name := firstMissing(inner, gotInner, prefix+key+"."); name != "" {
				return name
			}
		}
	}
	return ""
}

func (s *Server) adminGetFaults(*http.Request) (any, error) { return s.Faults(), nil }

func (s *Server) adminPutFaults(in FaultPlan) (any, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	s.SetFaults(in)
	return s.Faults(), nil
}

func (s *Server) adminGetCounters(*http.Request) (any, error) { return s.counterRows(), nil }

func (s *Server) adminResetCounters(*http.Request) (any, error) {
	s.ResetCounts()
	return map[string]bool{"reset": true}, nil
}

func (s *Server) adminSeedFixture(in struct{ Name, Host string }) (any, error) {
	return s.SeedFixture(in.Name, in.Host)
}

type adminQuota struct {
	AccountID string `json:"accountId"`
	Quota     int    `json:"quota"`
}

func (s *Server) adminSetQuota(in adminQuota) (any, error) {
	return in, s.SetMonthlyQuota(in.AccountID, in.Quota)
}

type adminAPIEnabled struct {
	AccountID string `json:"accountId"`
	Enabled   bool   `json:"enabled"`
}

func (s *Server) adminSetAPIEnabled(in adminAPIEnabled) (any, error) {
	return in, s.SetAPIEnabled(in.AccountID, in.Enabled)
}

func (s *Server) adminRevokeKey(in struct{ Key string }) (any, error) {
	return map[string]bool{"revoked": true}, s.RevokeKey(in.Key)
}

type adminSeed struct {
	DomainID string `json:"domainId"`
	Prefix   string `json:"prefix"`
	Count    int    `json:"count"`
}

func (s *Server) adminSeedLinks(in adminSeed) (any, error) {
	links, err := s.SeedLinks(in.DomainID, in.Prefix, in.Count)
	return map[string]int{"seeded": len(links)}, err
}

func (s *Server) adminAllLinks(*http.Request) (any, error) { return linkStream(s.storedLinks()), nil }

// linkStream is an answer of links written one at a time, outside the
// lock: a million links built whole in memory first raised the peak
// memory by 1.2 GB.
type linkStream []*Link

func (links linkStream) write(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	out := bufio.NewWriter(w)
	var one bytes.Buffer
	enc := json.NewEncoder(&one)
	opening := byte('[')
	for _, l := range links {
		one.Reset()
		one.WriteByte(opening)
		opening = ','
		if err := enc.Encode(l); err != nil {
			// A link the API would not take (a data file written by hand):
			// break the answer off rather than send one that is not JSON.
			panic(http.ErrAbortHandler)
		}
		if _, err := out.Write(bytes.TrimSuffix(one.Bytes(), []byte("\n"))); err != nil {
			return // the client has gone
		}
	}
	if opening == '[' {
		_ = out.WriteByte('[') // no links
	}
	_, _ = out.WriteString("]\n")
	_ = out.Flush()
}

func readAdmin(r *http.Request, dst any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	return dec.Decode(dst)
}
