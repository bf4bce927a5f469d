package emulator

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"
)

// Scopes a key can hold.
const (
	ScopeRead  = "links:read"
	ScopeWrite = "links:write"
)

// UTM holds the UTM parameters of a link.
type UTM struct {
	Source   string `json:"source,omitempty"`
	Medium   string `json:"medium,omitempty"`
	Campaign string `json:"campaign,omitempty"`
	Term     string `json:"term,omitempty"`
	Content  string `json:"content,omitempty"`
}

func (u *UTM) empty() bool { return u == nil || *u == UTM{} }

// Account owns keys, domains and links.
type Account struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// APIEnabled is false when the account's plan no longer includes the
	// API: every key of the account then answers 401.
	APIEnabled bool `json:"apiEnabled"`
	// MonthlyQuota is how many links the account may create per calendar
	// month (UTC); 0 means unlimited.
	MonthlyQuota   int            `json:"monthlyQuota"`
	CreatedByMonth map[string]int `json:"createdByMonth"`
}

// APIKey is a Bearer token with scopes.
type APIKey struct {
	Key       string   `json:"key"`
	AccountID string   `json:"accountId"`
	Scopes    []string `json:"scopes"`
	Revoked   bool     `json:"revoked"`
}

func (k *APIKey) has(scope string) bool {
	for _, s := range k.Scopes {
		if s == scope {
			return true
		}
	}
	return false
}

// Domain is a short-link domain of an account.
type Domain struct {
	ID        string `json:"id"`
	AccountID string `json:"accountId"`
	Host      string `json:"host"`
}

// Link is a stored short link.
type Link struct {
	ID          string     `json:"id"`
	AccountID   string     `json:"accountId"`
	DomainID    string     `json:"domainId"`
	Slug        string     `json:"slug"`
	Destination string     `json:"destination"`
	ExpiresAt   *time.Time `json:"expiresAt,omitempty"`
	UTM         *UTM       `json:"utm,omitempty"`
	CreatedAt   time.Time  `json:"createdAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	Seq         int64      `json:"seq"` // creation order, for stable listing and cursors
}

// Click is one recorded visit of a short link.
type Click struct {
	At          time.Time `json:"at"`
	AccountID   string    `json:"accountId"`
	LinkID      string    `json:"linkId"`
	Slug        string    `json:"slug"`
	ShortURL    string    `json:"shortUrl"`
	Destination string    `json:"destination"`
	Referrer    string    `json:"referrer"`
	UserAgent   string    `json:"userAgent"`
}

// store is everything the service keeps. It is guarded by Server.mu.
type store struct {
	Accounts map[string]*Account `json:"accounts"`
	Keys     map[string]*APIKey  `json:"keys"`
	Domains  map[string]*Domain  `json:"domains"`
	Links    map[string]*Link    `json:"links"`
	Clicks   []Click             `json:"clicks"`
	NextSeq  int64               `json:"nextSeq"`

	bySlug map[string]string // domain ID + "/" + slug → link ID; rebuilt on load
}

func newStore() *store {
	return &store{
		Accounts: map[string]*Account{},
		Keys:     map[string]*APIKey{},
		Domains:  map[string]*Domain{},
		Links:    map[string]*Link{},
		bySlug:   map[string]string{},
	}
}

func (st *store) addLink(l *Link) {
	st.Links[l.ID] = l
	st.bySlug[l.DomainID+"/"+l.Slug] = l.ID
}

func (st *store) removeLink(id string) {
	if l, ok := st.Links[id]; ok {
		delete(st.bySlug, l.DomainID+"/"+l.Slug)
		delete(st.Links, id)
	}
}

func (st *store) domainByHost(host string) *Domain {
	for _, d := range st.Domains {
		if d.Host == host {
			return d
		}
	}
	return nil
}

func (st *store) linkBySlug(domainID, slug string) *Link {
	return st.Links[st.bySlug[domainID+"/"+slug]]
}

// loadStore reads a store written by saveStore. A missing file is an empty
// store: the first start with -data creates it.
func loadStore(path string) (*store, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return newStore(), nil
	}
	if err != nil {
		return nil, err
	}
	st := newStore()
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	for _, l := range st.Links {
		st.bySlug[l.DomainID+"/"+l.Slug] = l.ID
	}
	return st, nil
}

// saveStore writes the store atomically: a temporary file in the same
// directory, synced, then renamed over the old one, so a crash leaves either
// the old or the new store and never half of one.
func saveStore(path string, st *store) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func newID() string { return uuid.NewString() }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}

const slugAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

func randomSlug() string {
	b := make([]byte, 7)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	for i := range b {
		b[i] = slugAlphabet[int(b[i])%len(slugAlphabet)]
	}
	return string(b)
}
