package emulator

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// OtherClientHost is the destination host of the links that belong to
// "another client" of an account (a dashboard user, another pipeline): the
// churn switch deletes and creates only such links.
const OtherClientHost = "other-client.example"

// churn acts for another client of acct while acct is being listed, before
// the page the cursor asks for is answered (see Settings.Churn).
func (s *Server) churn(acct, cursor string) {
	settings := s.Settings()
	c := settings.Churn
	if c.Delete == 0 && c.Create == 0 || settings.Variants.Paging == "none" {
		return // no listing in pages: no page after the first
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	links := s.st.linksOf(acct)
	before, ok := linksBefore(links, settings.Variants.Paging, cursor)
	if !ok {
		return // a cursor the listing refuses: no page is answered
	}
	var doomed []string // removing shifts the index we read: collect first
	for _, l := range s.st.othersOf(acct) {
		if len(doomed) == c.Delete || before == 0 || compareLinks(l, links[before-1]) > 0 {
			break
		}
		doomed = append(doomed, l.ID)
	}
	// Another client's changes are journaled as a client's are: a page of
	// a large account's listing does not rewrite the whole data file.
	for _, id := range doomed {
		s.mustCommitLocked(change{Deleted: id})
	}
	for range c.Create {
		if l, month := s.otherClientLinkLocked(acct); l != nil {
			s.mustCommitLocked(change{Put: l, Month: month})
		}
	}
}

// linksBefore is how many of links (oldest first) come before the page a
// cursor asks for; ok is false for a cursor the listing refuses.
func linksBefore(links []*Link, paging, cursor string) (n int, ok bool) {
	if paging == "offset" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 0 {
			return 0, false
		}
		return min(n, len(links)), true
	}
	after, err := parseCursor(cursor)
	if err != nil {
		return 0, false
	}
	return sort.Search(len(links), func(i int) bool { return links[i].Seq > after }), true
}

// isOtherClients reports whether the other client made l. The substring
// test first: every link stored is tested, and parsing a million URLs
// would make loading a large account slow.
func isOtherClients(l Link) bool {
	if !strings.Contains(l.Destination, OtherClientHost) {
		return false
	}
	u, err := url.Parse(l.Destination)
	return err == nil && u.Hostname() == OtherClientHost
}

// AddOtherClientLinks creates n links of the other client on one of the
// account's domains, as if another client had made them: tests seed them
// before their own links, so that churn deletes sit before the cursor.
func (s *Server) AddOtherClientLinks(accountID string, n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.firstDomainLocked(accountID) == "" {
		return fmt.Errorf("account %q has no domain", accountID)
	}
	for range n { // seeded: the snapshot below holds them, no journal line
		l, month := s.otherClientLinkLocked(accountID)
		s.st.apply(change{N: s.st.Changes, Put: l, Month: month})
	}
	s.mustPersistLocked()
	return nil
}

// otherClientLinkLocked makes one link of the other client, to be
// stored by a change, which counts it against the account's quota as any
// create.
func (s *Server) otherClientLinkLocked(acct string) (made *Link, month string) {
	domainID := s.firstDomainLocked(acct)
	if domainID == "" {
		return nil, ""
	}
	now := s.now().UTC()
	seq := s.st.NextSeq + 1
	return &Link{
		ID: newID(), AccountID: acct, DomainID: domainID, Slug: s.freeSlugLocked(domainID),
		Destination: fmt.Sprintf("https://%s/%d", OtherClientHost, seq),
		CreatedAt:   now, UpdatedAt: now, Seq: seq,
	}, now.Format("2006-01")
}

// firstDomainLocked returns the ID of one of the account's domains, the
// same one every time, or "".
func (s *Server) firstDomainLocked(acct string) string {
	first := ""
	for id, d := range s.st.Domains {
		if d.AccountID == acct && (first == "" || id < first) {
			first = id
		}
	}
	return first
}
