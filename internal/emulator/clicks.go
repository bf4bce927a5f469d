package emulator

import (
	"encoding/csv"
	"net"
	"net/http"
	"strings"

	"github.com/google/uuid"
)

// ExportColumns is the header row of the analytics export.
var ExportColumns = []string{"clicked_at", "link_id", "slug", "short_url", "destination", "referrer", "user_agent"}

// serveShortLink answers a visit of a short link, addressed either by the
// Host header (GET /<slug> on the domain's host) or by the path form
// GET /r/<domain host>/<slug>.
func (s *Server) serveShortLink(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	host, slug, ok := shortLinkAddress(r)
	if !ok && r.URL.Path == "/" {
		http.Error(w, rootNotFound, http.StatusNotFound)
		return
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	dest, status := s.recordClick(host, slug, r)
	switch status {
	case http.StatusFound:
		http.Redirect(w, r, dest, http.StatusFound)
	case http.StatusGone:
		http.Error(w, "this short link has expired", http.StatusGone)
	case http.StatusInternalServerError:
		http.Error(w, "the click could not be recorded", http.StatusInternalServerError)
	default:
		http.NotFound(w, r)
	}
}

// rootNotFound answers a browser opened at the emulator's address: no short
// link is there, and it says where what is.
const rootNotFound = `404: no short link here. This is the short-link service emulator:
  the API        ` + pathLinks + `, ` + pathExport + ` (with the API key printed at start, as a Bearer token)
  short links    /r/<domain host>/<slug>
  the admin API  /_emulator/ (with the admin token printed at start)
EMULATOR.md in the provider's repository says the rest.`

func shortLinkAddress(r *http.Request) (host, slug string, ok bool) {
	p := strings.TrimPrefix(r.URL.Path, "/")
	if rest, found := strings.CutPrefix(p, "r/"); found {
		host, slug, ok = strings.Cut(rest, "/")
		return strings.ToLower(host), slug, ok && slug != "" && !strings.Contains(slug, "/")
	}
	host = r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(host), p, p != "" && !strings.Contains(p, "/")
}

func (s *Server) recordClick(host, slug string, r *http.Request) (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A HEAD (a link checker, a preview) is answered as a GET and not counted:
	// no visitor followed the link.
	record := r.Method == http.MethodGet
	d := s.st.domainByHost(host)
	if d == nil {
		return "", http.StatusNotFound
	}
	l := s.st.linkBySlug(d.ID, slug)
	if l == nil {
		return "", http.StatusNotFound
	}
	now := s.now().UTC()
	if l.ExpiresAt != nil && !now.Before(*l.ExpiresAt) {
		return "", http.StatusGone
	}
	dest := mergeUTM(l.Destination, l.UTM) // the visitor lands with the UTM tags
	click := Click{
		At: now, AccountID: l.AccountID, LinkID: l.ID, Slug: l.Slug,
		ShortURL: shortURL(d.Host, l.Slug), Destination: dest,
		Referrer: r.Referer(), UserAgent: r.UserAgent(),
	}
	if !record {
		return dest, http.StatusFound
	}
	if err := s.commitLocked(change{Click: &click}); err != nil {
		return "", http.StatusInternalServerError
	}
	return dest, http.StatusFound
}

// exportClicks answers the CSV export, for the whole account or one link.
func (s *Server) exportClicks(w http.ResponseWriter, r *http.Request, acct string) {
	linkID := r.URL.Query().Get("linkId")
	if _, ok := r.URL.Query()["linkId"]; ok {
		if _, err := uuid.Parse(linkID); err != nil {
			s.writeError(w, http.StatusBadRequest, "invalid_request", "linkId: must be a UUID")
			return
		}
		if !s.ownsLink(acct, linkID) {
			s.writeError(w, http.StatusNotFound, "not_found", "no such link on this account")
			return
		}
	}
	clicks := s.clicksSoFar()
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="clicks.csv"`)
	w.WriteHeader(http.StatusOK)
	cw := csv.NewWriter(w) // quotes fields holding commas, quotes or newlines, as RFC 4180 requires
	cw.UseCRLF = true
	_ = cw.Write(ExportColumns)
	for _, c := range clicks {
		if c.AccountID != acct || (linkID != "" && c.LinkID != linkID) {
			continue
		}
		_ = cw.Write([]string{c.At.Format(specTime), c.LinkID, c.Slug, c.ShortURL, c.Destination, c.Referrer, c.UserAgent})
	}
	cw.Flush()
}

// clicksSoFar is every click recorded until now. Clicks are only ever
// appended, so the export reads them, and streams its rows, without the
// lock, while visits and other requests go on; clicks after this moment
// are not in it.
func (s *Server) clicksSoFar() []Click {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Clicks[:len(s.st.Clicks):len(s.st.Clicks)]
}
