package emulator

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultMonthlyQuota is the quota of accounts created by AddAccount.
const DefaultMonthlyQuota = 10000

// Fixture is a ready-to-use account: what a test or a user needs to point a
// provider at the emulator.
type Fixture struct {
	AccountID  string `json:"accountId"`
	DomainID   string `json:"domainId"`
	DomainHost string `json:"domainHost"`
	APIKey     string `json:"apiKey"`   // links:read and links:write
	ReadKey    string `json:"readKey"`  // links:read only
	WriteKey   string `json:"writeKey"` // links:write only
}

// AddAccount creates an account whose plan includes the API.
func (s *Server) AddAccount(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.addAccountLocked(name)
	s.mustPersistLocked()
	return id
}

func (s *Server) addAccountLocked(name string) string {
	id := newID()
	s.st.Accounts[id] = &Account{ID: id, Name: name, APIEnabled: true, MonthlyQuota: DefaultMonthlyQuota, CreatedByMonth: map[string]int{}}
	return id
}

// AddKey creates an API key with the given scopes for an account.
func (s *Server) AddKey(accountID string, scopes ...string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.st.Accounts[accountID]; !ok {
		return "", fmt.Errorf("no account %q", accountID)
	}
	key := s.addKeyLocked(accountID, scopes...)
	s.mustPersistLocked()
	return key, nil
}

func (s *Server) addKeyLocked(accountID string, scopes ...string) string {
	key := "sl_test_" + randomHex(16)
	s.st.Keys[key] = &APIKey{Key: key, AccountID: accountID, Scopes: append([]string(nil), scopes...)}
	return key
}

// AddDomain gives an account a short-link domain.
func (s *Server) AddDomain(accountID, host string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.st.Accounts[accountID]; !ok {
		return "", fmt.Errorf("no account %q", accountID)
	}
	id, err := s.addDomainLocked(accountID, host)
	if err == nil {
		s.mustPersistLocked()
	}
	return id, err
}

func (s *Server) addDomainLocked(accountID, host string) (string, error) {
	host = strings.ToLower(host)
	if err := s.hostFreeLocked(host); err != nil {
		return "", err
	}
	id := newID()
	s.st.Domains[id] = &Domain{ID: id, AccountID: accountID, Host: host}
	return id, nil
}

// hostFreeLocked fails when the (lower-case) host is no host name, or a
// domain has it already.
func (s *Server) hostFreeLocked(host string) error {
	if !isHostName(host) {
		return fmt.Errorf("domain host %q is not a host name, such as go.example.test (letters, digits and hyphens, in labels between dots)", host)
	}
	if s.st.domainByHost(host) != nil {
		return fmt.Errorf("domain %q exists already", host)
	}
	return nil
}

// RevokeKey makes a key answer 401 from now on.
func (s *Server) RevokeKey(key string) error {
	return s.withKey(key, func(k *APIKey) { k.Revoked = true })
}

// SetKeyScopes replaces a key's scopes.
func (s *Server) SetKeyScopes(key string, scopes ...string) error {
	return s.withKey(key, func(k *APIKey) { k.Scopes = append([]string(nil), scopes...) })
}

func (s *Server) withKey(key string, change func(*APIKey)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.st.Keys[key]
	if !ok {
		return fmt.Errorf("no such key")
	}
	change(k)
	s.mustPersistLocked()
	return nil
}

// SetAPIEnabled says whether the account's plan includes the API.
func (s *Server) SetAPIEnabled(accountID string, enabled bool) error {
	return s.withAccount(accountID, func(a *Account) { a.APIEnabled = enabled })
}

// SetMonthlyQuota sets how many links the account may create a month (0 or
// less: no limit).
func (s *Server) SetMonthlyQuota(accountID string, quota int) error {
	return s.withAccount(accountID, func(a *Account) { a.MonthlyQuota = quota })
}

func (s *Server) withAccount(id string, change func(*Account)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.st.Accounts[id]
	if !ok {
		return fmt.Errorf("no account %q", id)
	}
	change(a)
	s.mustPersistLocked()
	return nil
}

// SeedFixture creates an account with one domain and three keys (both
// scopes, read only, write only), all at once: a host already taken fails
// it with nothing created.
func (s *Server) SeedFixture(name, host string) (Fixture, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := Fixture{DomainHost: strings.ToLower(host)}
	if err := s.hostFreeLocked(f.DomainHost); err != nil {
		return Fixture{}, err
	}
	if s.st.accountByName(name) != nil {
		// A restart finds its account by name (ReuseFixture): two of one
		// name would make it pick either.
		return Fixture{}, fmt.Errorf("an account named %q exists already", name)
	}
	f.AccountID = s.addAccountLocked(name)
	f.DomainID, _ = s.addDomainLocked(f.AccountID, host) // free: checked above, under the same lock
	f.APIKey = s.addKeyLocked(f.AccountID, ScopeRead, ScopeWrite)
	f.ReadKey = s.addKeyLocked(f.AccountID, ScopeRead)
	f.WriteKey = s.addKeyLocked(f.AccountID, ScopeWrite)
	s.mustPersistLocked()
	return f, nil
}

// SeedLinks creates n links on a domain directly in the store (no API
// request, no rate limit, no quota), with slugs prefix-0 … prefix-(n-1) and
// destinations https://example.com/<prefix>/<i>, and returns them in that
// order. Benchmarks use it to start from a large account: a million links
// take about a second. A taken slug fails the call before anything is
// stored.
func (s *Server) SeedLinks(domainID, prefix string, n int) ([]Link, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seeded, err := s.seedLocked(domainID, prefix, n, false)
	if err != nil {
		return nil, err
	}
	s.mustPersistLocked()
	out := make([]Link, len(seeded))
	for i, l := range seeded {
		out[i] = l.clone()
	}
	return out, nil
}

// FillLinks seeds links on a domain, as SeedLinks does, until the domain's
// account holds total links: slugs prefix-<i> for the lowest i whose slug is
// free. It returns how many it added (none when the account holds total
// already), so that a command seeding on every start with a data file adds
// nothing the second time.
func (s *Server) FillLinks(domainID, prefix string, total int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.st.Domains[domainID]
	if !ok {
		return 0, fmt.Errorf("no domain %q", domainID)
	}
	missing := total - len(s.st.linksOf(d.AccountID))
	if missing <= 0 {
		return 0, nil
	}
	seeded, err := s.seedLocked(domainID, prefix, missing, true)
	if err != nil {
		return 0, err
	}
	s.mustPersistLocked()
	return len(seeded), nil
}

// LinkCount is how many links an account holds.
func (s *Server) LinkCount(accountID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.st.linksOf(accountID))
}

// MaxSeededLinks is the most links one seeding makes: ten times the
// largest account the provider is built for, several gigabytes of memory.
// A larger count is a typo, which would otherwise exhaust the machine.
const MaxSeededLinks = 10_000_000

// seedBatch is how many links seedLocked makes with one allocation of
// links, one of text and one read of random bytes.
const seedBatch = 4096

// seedLocked makes n links prefix-<i> on a domain, i from 0, and stores
// them. A taken slug is skipped (skipTaken) or fails the call before any
// link is stored. It makes links in batches that share their allocations,
// because a million links one at a time (fmt, a UUID read from the system
// each, a map grown step by step) took six seconds.
func (s *Server) seedLocked(domainID, prefix string, n int, skipTaken bool) ([]*Link, error) {
	d, ok := s.st.Domains[domainID]
	if !ok {
		return nil, fmt.Errorf("no domain %q", domainID)
	}
	if n < 0 || n > MaxSeededLinks {
		return nil, fmt.Errorf("count %d is not 0 to %d", n, MaxSeededLinks)
	}
	// The longest slug the seeding makes must be one the API would take.
	if last := fmt.Sprintf("%s-%d", prefix, MaxSeededLinks); !slugPattern.MatchString(last) {
		return nil, fmt.Errorf("prefix %q: the slugs %s-<i> must be slugs the API takes: letters, digits, _ and -, with room for -%d in 64 characters", prefix, prefix, MaxSeededLinks)
	}
	now := s.now().UTC()
	out := make([]*Link, 0, n)
	var (
		batch []Link
		text  []byte
		ends  []int // end of each link's ID, slug and destination in text
		raw   [16 * seedBatch]byte
	)
	for i := 0; len(out) < n; {
		m := min(n-len(out), seedBatch)
		// Text first, then one string for the whole batch to slice from.
		text, ends = text[:0], ends[:0]
		if _, err := rand.Read(raw[:16*m]); err != nil {
			return nil, err
		}
		for j := range m {
			text = appendUUID(text, raw[16*j:16*j+16])
			ends = append(ends, len(text))
			text = append(text, prefix...)
			text = append(text, '-')
			text = strconv.AppendInt(text, int64(i+j), 10)
			ends = append(ends, len(text))
			text = append(text, "https://example.com/"...)
			text = append(text, prefix...)
			text = append(text, '/')
			text = strconv.AppendInt(text, int64(i+j), 10)
			ends = append(ends, len(text))
		}
		all := string(text)
		batch = make([]Link, 0, m)
		start := 0
		for j := range m {
			id, slug, dest := all[start:ends[3*j]], all[ends[3*j]:ends[3*j+1]], all[ends[3*j+1]:ends[3*j+2]]
			start = ends[3*j+2]
			if s.st.linkBySlug(domainID, slug) != nil {
				if skipTaken {
					continue
				}
				return nil, fmt.Errorf("slug %q is taken", slug)
			}
			batch = append(batch, Link{
				ID: id, AccountID: d.AccountID, DomainID: domainID, Slug: slug, Destination: dest,
				CreatedAt: now, UpdatedAt: now,
			})
		}
		for j := range batch {
			out = append(out, &batch[j])
		}
		i += m
	}
	// Every slug is free: store them all, in order.
	s.st.reserve(len(out))
	if a := s.st.byAccount[d.AccountID]; a != nil {
		a.links = slices.Grow(a.links, len(out))
	}
	for _, l := range out {
		s.st.NextSeq++
		l.Seq = s.st.NextSeq
		s.st.addLink(l)
	}
	return out, nil
}

// appendUUID appends a version 4 UUID made of 16 random bytes, spelled as
// uuid.NewString spells it.
func appendUUID(dst, b []byte) []byte {
	var u [16]byte
	copy(u[:], b)
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // variant 10
	dst = hex.AppendEncode(dst, u[0:4])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, u[4:6])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, u[6:8])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, u[8:10])
	dst = append(dst, '-')
	return hex.AppendEncode(dst, u[10:16])
}

// Links returns every stored link of an account, oldest first.
func (s *Server) Links(accountID string) []Link {
	s.mu.Lock()
	defer s.mu.Unlock()
	stored := s.st.linksOf(accountID)
	if len(stored) == 0 {
		return nil
	}
	links := make([]Link, len(stored))
	for i, l := range stored {
		links[i] = l.clone()
	}
	return links
}

// AllLinks returns every stored link of every account, oldest first.
func (s *Server) AllLinks() []Link {
	stored := s.storedLinks()
	links := make([]Link, len(stored))
	for i, l := range stored {
		links[i] = l.clone()
	}
	return links
}

// storedLinks is every stored link, oldest first. The links are the
// stored ones, which no change alters (store), so they may be read after
// the lock is released.
func (s *Server) storedLinks() []*Link {
	s.mu.Lock()
	links := slices.Collect(maps.Values(s.st.Links))
	s.mu.Unlock()
	slices.SortFunc(links, compareLinks)
	return links
}

// ChangeLinkOutOfBand changes a link's destination as a user in the
// dashboard would: no API request, no filter, no rate limit.
func (s *Server) ChangeLinkOutOfBand(id, destination string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.st.Links[id]
	if !ok {
		return fmt.Errorf("no link %q", id)
	}
	changed := *l // a listing may be rendering the stored one
	changed.Destination = destination
	changed.UpdatedAt = s.now().UTC()
	s.st.replaceLink(&changed)
	s.mustPersistLocked()
	return nil
}

// DeleteLinkOutOfBand deletes a link as a user in the dashboard would.
func (s *Server) DeleteLinkOutOfBand(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.st.Links[id]; !ok {
		return fmt.Errorf("no link %q", id)
	}
	s.st.removeLink(id)
	s.mustPersistLocked()
	return nil
}

// Clicks returns the recorded clicks of an account, oldest first.
func (s *Server) Clicks(accountID string) []Click {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Click
	for _, c := range s.st.Clicks {
		if c.AccountID == accountID {
			out = append(out, c)
		}
	}
	return out
}

// AddClicks records n clicks of a link directly in the store, for exports
// of a large size.
func (s *Server) AddClicks(linkID string, n int, referrer string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.st.Links[linkID]
	if !ok {
		return fmt.Errorf("no link %q", linkID)
	}
	host := s.st.Domains[l.DomainID].Host
	at := s.now().UTC()
	for i := range n {
		s.st.Clicks = append(s.st.Clicks, Click{
			At: at.Add(time.Duration(i) * time.Millisecond), AccountID: l.AccountID, LinkID: l.ID, Slug: l.Slug,
			ShortURL: shortURL(host, l.Slug), Destination: l.Destination, Referrer: referrer,
		})
	}
	s.mustPersistLocked()
	return nil
}

// AddClickAt records one click of a link at the given time with the given
// referrer directly in the store, as a visit then would have (without a
// user agent). The export lists clicks in the order they were added.
func (s *Server) AddClickAt(linkID string, at time.Time, referrer string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.st.Links[linkID]
	if !ok {
		return fmt.Errorf("no link %q", linkID)
	}
	s.st.Clicks = append(s.st.Clicks, Click{
		At: at.UTC(), AccountID: l.AccountID, LinkID: l.ID, Slug: l.Slug,
		ShortURL: shortURL(s.st.Domains[l.DomainID].Host, l.Slug), Destination: l.Destination, Referrer: referrer,
	})
	s.mustPersistLocked()
	return nil
}

// mustPersistLocked writes the store for the seeding helpers, which return
// no error of their own; PersistError reports a failure.
func (s *Server) mustPersistLocked() {
	if err := s.snapshotLocked(); err != nil {
		s.persistErr = err
	}
}

// mustCommitLocked makes a change that no client waits on (another
// client's, made by the churn switch), keeping a failure for PersistError.
func (s *Server) mustCommitLocked(c change) {
	if err := s.commitLocked(c); err != nil {
		s.persistErr = err
	}
}

// PersistError reports the last failure to write the data file by a
// seeding helper.
func (s *Server) PersistError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.persistErr
}

// ReuseFixture finds the fixture SeedFixture made for the account called
// name, as reloaded from a data file. A key of it revoked since (through
// the admin API) is replaced with a new one of the same scopes, so that the
// fixture's keys always work and the account is never seeded twice.
func (s *Server) ReuseFixture(name string) (Fixture, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.st.Accounts {
		if a.Name != name {
			continue
		}
		f := Fixture{AccountID: a.ID}
		for _, d := range s.st.Domains {
			if d.AccountID == a.ID {
				f.DomainID, f.DomainHost = d.ID, d.Host
			}
		}
		if f.DomainID == "" {
			continue
		}
		for _, k := range s.st.Keys {
			if k.AccountID != a.ID || k.Revoked {
				continue
			}
			switch {
			case k.has(ScopeRead) && k.has(ScopeWrite):
				f.APIKey = k.Key
			case k.has(ScopeRead):
				f.ReadKey = k.Key
			case k.has(ScopeWrite):
				f.WriteKey = k.Key
			}
		}
		s.replaceRevokedLocked(&f)
		return f, true
	}
	return Fixture{}, false
}

// replaceRevokedLocked gives f a new key for each kind it has none of.
func (s *Server) replaceRevokedLocked(f *Fixture) {
	added := false
	for _, k := range []struct {
		key    *string
		scopes []string
	}{{&f.APIKey, []string{ScopeRead, ScopeWrite}}, {&f.ReadKey, []string{ScopeRead}}, {&f.WriteKey, []string{ScopeWrite}}} {
		if *k.key == "" {
			*k.key, added = s.addKeyLocked(f.AccountID, k.scopes...), true
		}
	}
	if added {
		s.mustPersistLocked()
	}
}

// isHostName is whether host (lower case) is a host name a short link can
// be served on: labels of letters, digits and hyphens, none at a label's
// ends, between dots. An internationalized host is written in its ASCII
// form (xn--…).
func isHostName(host string) bool {
	if host == "" || len(host) > 253 {
		return false
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
				return false
			}
		}
	}
	return true
}
