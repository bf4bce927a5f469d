package emulator

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	// month (UTC); 0 or less means unlimited.
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

// clone is the link with its own ExpiresAt and UTM, for a caller outside
// the store: editing what the server hands out changes nothing stored.
func (l *Link) clone() Link {
	c := *l
	if l.ExpiresAt != nil {
		at := *l.ExpiresAt
		c.ExpiresAt = &at
	}
	if l.UTM != nil {
		utm := *l.UTM
		c.UTM = &utm
	}
	return c
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
//
// A stored *Link is never changed: a change stores a new Link in its place
// (replaceLink), so a listing may copy the pointers of a page under the lock
// and render them after releasing it while other requests go on.
type store struct {
	Accounts map[string]*Account `json:"accounts"`
	Keys     map[string]*APIKey  `json:"keys"`
	Domains  map[string]*Domain  `json:"domains"`
	Links    map[string]*Link    `json:"links"`
	Clicks   []Click             `json:"clicks"`
	NextSeq  int64               `json:"nextSeq"`
	// Changes numbers the last change of the journal the store holds
	// (journal.go).
	Changes int64 `json:"changes,omitempty"`

	// Indexes, rebuilt on load.
	bySlug    map[slugKey]string       // domain ID and slug → link ID
	byAccount map[string]*accountLinks // account ID → its links, oldest first
}

type slugKey struct{ domainID, slug string }

// accountLinks is one account's links in creation order (ascending Seq).
// Links get the next Seq when stored, so an insert is an append; a delete
// shifts the rest down by one, so that positions are those of the list as
// it is now (offset paging counts them).
type accountLinks struct {
	links []*Link
	// others are the links of the other client (isOtherClients), oldest
	// first: churn deletes among those before a cursor, which a scan of
	// links would look for page after page of a large account.
	others []*Link
}

// find returns the position of the link with this Seq and ID, or -1.
func (a *accountLinks) find(seq int64, id string) int {
	i, _ := slices.BinarySearchFunc(a.links, seq, func(l *Link, seq int64) int { return cmp.Compare(l.Seq, seq) })
	for ; i < len(a.links) && a.links[i].Seq == seq; i++ {
		if a.links[i].ID == id {
			return i
		}
	}
	return -1
}

func (a *accountLinks) add(l *Link) {
	a.links = insertLink(a.links, l)
	if isOtherClients(*l) {
		a.others = insertLink(a.others, l)
	}
}

// remove takes l, stored at position i of links, out of the index.
func (a *accountLinks) remove(i int, l *Link) {
	a.links = slices.Delete(a.links, i, i+1)
	if j, found := slices.BinarySearchFunc(a.others, l, compareLinks); found {
		a.others = slices.Delete(a.others, j, j+1)
	}
}

// reindexOther puts l, a changed copy of a link in the index, in others
// or out of them: a new destination may make it the other client's, or not.
func (a *accountLinks) reindexOther(l *Link) {
	j, was := slices.BinarySearchFunc(a.others, l, compareLinks)
	switch is := isOtherClients(*l); {
	case was && is:
		a.others[j] = l
	case was:
		a.others = slices.Delete(a.others, j, j+1)
	case is:
		a.others = slices.Insert(a.others, j, l)
	}
}

// insertLink puts l in links, oldest first.
func insertLink(links []*Link, l *Link) []*Link {
	n := len(links)
	if n == 0 || links[n-1].Seq < l.Seq {
		return append(links, l)
	}
	// Out of order: a data file written by hand. Ties keep ID order.
	i, _ := slices.BinarySearchFunc(links, l, compareLinks)
	return slices.Insert(links, i, l)
}

func compareLinks(a, b *Link) int {
	if c := cmp.Compare(a.Seq, b.Seq); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

func newStore() *store {
	return &store{
		Accounts:  map[string]*Account{},
		Keys:      map[string]*APIKey{},
		Domains:   map[string]*Domain{},
		Links:     map[string]*Link{},
		bySlug:    map[slugKey]string{},
		byAccount: map[string]*accountLinks{},
	}
}

// reserve makes room for n more links in the maps at once, so that seeding
// a large account does not grow them step by step.
func (st *store) reserve(n int) {
	if n <= len(st.Links) {
		return // growing as usual costs at most as much as copying now
	}
	links := make(map[string]*Link, len(st.Links)+n)
	maps.Copy(links, st.Links)
	st.Links = links
	bySlug := make(map[slugKey]string, len(st.bySlug)+n)
	maps.Copy(bySlug, st.bySlug)
	st.bySlug = bySlug
}

func (st *store) addLink(l *Link) {
	st.Links[l.ID] = l
	st.bySlug[slugKey{l.DomainID, l.Slug}] = l.ID
	a := st.byAccount[l.AccountID]
	if a == nil {
		a = &accountLinks{}
		st.byAccount[l.AccountID] = a
	}
	a.add(l)
}

func (st *store) removeLink(id string) {
	l, ok := st.Links[id]
	if !ok {
		return
	}
	delete(st.bySlug, slugKey{l.DomainID, l.Slug})
	delete(st.Links, id)
	a := st.byAccount[l.AccountID]
	if a == nil {
		return
	}
	if i := a.find(l.Seq, l.ID); i >= 0 {
		a.remove(i, l)
	}
	if len(a.links) == 0 {
		delete(st.byAccount, l.AccountID)
	}
}

// replaceLink stores l, a changed copy of the stored link with the same ID
// (its account, domain, slug and Seq never change), in the old one's place.
func (st *store) replaceLink(l *Link) {
	old, ok := st.Links[l.ID]
	if !ok {
		return
	}
	st.Links[l.ID] = l
	if a := st.byAccount[old.AccountID]; a != nil {
		if i := a.find(old.Seq, old.ID); i >= 0 {
			a.links[i] = l // in place: a change on a large account moves no other link
			a.reindexOther(l)
		}
	}
}

// othersOf returns the account's links of the other client, oldest
// first: the index itself, as linksOf.
func (st *store) othersOf(acct string) []*Link {
	if a := st.byAccount[acct]; a != nil {
		return a.others
	}
	return nil
}

// linksOf returns the account's stored links, oldest first. The slice
// is the index itself: copy what must outlive the lock.
func (st *store) linksOf(acct string) []*Link {
	if a := st.byAccount[acct]; a != nil {
		return a.links
	}
	return nil
}

func (st *store) accountByName(name string) *Account {
	for _, a := range st.Accounts {
		if a.Name == name {
			return a
		}
	}
	return nil
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
	id, ok := st.bySlug[slugKey{domainID, slug}]
	if !ok {
		return nil
	}
	return st.Links[id]
}

// loadStore reads a store written by saveStore. A missing file is an empty
// store: the first start with -data creates it.
func loadStore(path string) (*store, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) || err == nil && len(bytes.TrimSpace(b)) == 0 {
		return newStore(), nil // none yet, or made empty (touch, mktemp)
	}
	if err != nil {
		return nil, err
	}
	st := newStore()
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if st.Links == nil {
		st.Links = map[string]*Link{}
	}
	links := slices.SortedFunc(maps.Values(st.Links), compareLinks)
	for _, l := range links {
		st.addLink(l)
	}
	return st, nil
}

// saveStore writes the store atomically: a temporary file in the same
// directory, synced, then renamed over the old one, so a crash leaves either
// the old or the new store and never half of one.
func saveStore(path string, st *store) error {
	tmp, err := writeStoreBeside(path, st)
	if err != nil {
		return err
	}
	return replaceWith(tmp, path)
}

// writeStoreBeside writes the store to a new file, synced, in path's
// directory, for replaceWith to put in path's place.
func writeStoreBeside(path string, st *store) (tmpPath string, err error) {
	b, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	return writeBeside(path, b)
}

// writeBeside writes b to a new file in path's directory and syncs it.
func writeBeside(path string, b []byte) (tmpPath string, err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", err
	}
	if _, err = tmp.Write(b); err == nil {
		err = tmp.Sync()
	}
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}

// replaceWith renames tmpPath over path, or removes it when it cannot.
func replaceWith(tmpPath, path string) error {
	if err := os.Rename(tmpPath, path); err != nil {
		_ = os.Remove(tmpPath)
		return err
	}
	return nil
}

// copyToSave is what saveStore writes of st, apart from st: the links are
// never changed in place (store) and clicks are only appended, so only the
// maps and the records changed in place are copied. A million links take
// a fraction of a second to copy, and seconds to write.
func (st *store) copyToSave() *store {
	c := *st
	c.Links = maps.Clone(st.Links)
	c.Clicks = st.Clicks[:len(st.Clicks):len(st.Clicks)]
	c.Accounts = make(map[string]*Account, len(st.Accounts))
	for id, a := range st.Accounts {
		copied := *a
		copied.CreatedByMonth = maps.Clone(a.CreatedByMonth)
		c.Accounts[id] = &copied
	}
	c.Keys = make(map[string]*APIKey, len(st.Keys))
	for k, key := range st.Keys {
		copied := *key
		c.Keys[k] = &copied
	}
	c.Domains = maps.Clone(st.Domains) // never changed once made
	c.bySlug, c.byAccount = nil, nil
	return &c
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
