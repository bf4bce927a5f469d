package emulator

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"golang.org/x/net/idna"
)

// maxBody bounds a request body; the largest valid one is a few KiB.
const maxBody = 64 << 10

var slugPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// requestError is a 400 invalid_request whose message names the field.
type requestError struct{ field, problem string }

func (e requestError) Error() string { return e.field + ": " + e.problem }

type createBody struct {
	Destination *string `json:"destination"`
	DomainID    *string `json:"domainId"`
	Slug        *string `json:"slug"`
	ExpiresAt   *string `json:"expiresAt"`
}

type changeBody struct {
	Destination *string         `json:"destination"`
	UTM         json.RawMessage `json:"utm"`
}

func (s *Server) createLink(w http.ResponseWriter, r *http.Request, acct string) {
	var body createBody
	if err := decodeBody(r, &body, map[string]string{"utm": "not accepted on create; set it with PATCH /api/links/{id}"}); err != nil {
		s.writeRequestError(w, err)
		return
	}
	in, err := s.validateCreate(acct, body)
	if err != nil {
		s.writeRequestError(w, err)
		return
	}
	if !s.passFilter(w, r, in.Destination) {
		return
	}
	link, status, code, msg := s.insertLink(acct, in)
	if status != 0 {
		s.writeError(w, status, code, msg)
		return
	}
	s.writeLink(w, s.Settings().Variants.CreateStatus, link)
}

func (s *Server) validateCreate(acct string, b createBody) (Link, error) {
	var in Link
	dest, err := requireDestination(b.Destination)
	if err != nil {
		return in, err
	}
	in.Destination = dest
	if b.DomainID == nil || *b.DomainID == "" {
		return in, requestError{"domainId", "required"}
	}
	if _, err := uuid.Parse(*b.DomainID); err != nil {
		return in, requestError{"domainId", "must be a UUID"}
	}
	s.mu.Lock()
	d, ok := s.st.Domains[*b.DomainID]
	s.mu.Unlock()
	if !ok || d.AccountID != acct {
		return in, requestError{"domainId", "no such domain on this account"}
	}
	in.DomainID = d.ID
	if b.Slug != nil {
		if !slugPattern.MatchString(*b.Slug) {
			return in, requestError{"slug", "must be 1 to 64 characters of A-Z, a-z, 0-9, '_' and '-'"}
		}
		in.Slug = *b.Slug
	}
	if b.ExpiresAt != nil {
		t, err := time.Parse(specTime, *b.ExpiresAt)
		if err != nil {
			return in, requestError{"expiresAt", "must be an ISO 8601 timestamp in UTC with milliseconds and a Z suffix, such as 2027-01-31T23:59:59.000Z"}
		}
		in.ExpiresAt = &t
	}
	return in, nil
}

func requireDestination(v *string) (string, error) {
	if v == nil || *v == "" {
		return "", requestError{"destination", "required"}
	}
	u, err := url.Parse(*v)
	// url.Parse lets a space through; no URL holds one (RFC 3986), nor a control character.
	spaced := strings.ContainsFunc(*v, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
	if err != nil || spaced || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "HTTP" && u.Scheme != "HTTPS") || u.Hostname() == "" {
		return "", requestError{"destination", "must be an absolute http or https URL"}
	}
	if utf8.RuneCountInString(*v) > 2048 { // as the message says, and the provider counts
		return "", requestError{"destination", "must be at most 2048 characters"}
	}
	return *v, nil
}

// insertLink stores a validated link. It checks the quota and the slug under
// the lock, so parallel creates can neither exceed the quota nor share a slug.
func (s *Server) insertLink(acct string, in Link) (Link, int, string, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.st.Accounts[acct]
	now := s.now().UTC()
	month := now.Format("2006-01")
	if a.MonthlyQuota > 0 && a.CreatedByMonth[month] >= a.MonthlyQuota {
		return Link{}, http.StatusPaymentRequired, "link_quota", fmt.Sprintf("the plan's monthly quota of %d links is exhausted", a.MonthlyQuota)
	}
	if in.Slug == "" {
		in.Slug = s.freeSlugLocked(in.DomainID)
	} else if s.st.linkBySlug(in.DomainID, in.Slug) != nil {
		return Link{}, http.StatusConflict, "slug_taken", fmt.Sprintf("slug: %q is already taken on this domain", in.Slug)
	}
	in.Destination = s.normalize(in.Destination)
	in.ID = newID()
	in.AccountID = acct
	in.CreatedAt, in.UpdatedAt = now, now
	in.Seq = s.st.NextSeq + 1
	link := in
	if err := s.commitLocked(change{Put: &link, Month: month}); err != nil {
		return Link{}, http.StatusInternalServerError, "internal_error", err.Error()
	}
	return link, 0, "", ""
}

func (s *Server) freeSlugLocked(domainID string) string {
	for {
		slug := randomSlug()
		if s.st.linkBySlug(domainID, slug) == nil {
			return slug
		}
	}
}

// listLinks answers the list, streamed: the page's links are taken from the
// account's index under the lock (pointers only, a few milliseconds for a
// million), then rendered and written one at a time without it, so that
// other requests, which may change the account meanwhile, go on.
// listedPage takes the page the cursor asks for, and what renders it,
// under the lock.
func (s *Server) listedPage(acct, cursor string) (lw linkWriter, page []*Link, next string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lw = s.linkWriterLocked()
	page = s.st.linksOf(acct)
	if lw.v.Paging != "none" {
		page, next, err = pageOf(page, lw.v.Paging, cursor, lw.v.PageSize)
	}
	return lw, slices.Clone(page), next, err // the index changes in place once we unlock
}

func (s *Server) listLinks(w http.ResponseWriter, r *http.Request, acct string) {
	query := r.URL.Query()
	cursor := query.Get("cursor")
	if query.Has("cursor") {
		s.churn(acct, cursor)
	}
	lw, page, next, err := s.listedPage(acct, cursor)
	if err != nil {
		s.writeError(w, http.StatusBadRequest, "invalid_request", "cursor: "+err.Error())
		return
	}
	writeList(w, r, lw, page, next)
}

func (s *Server) changeDestination(w http.ResponseWriter, r *http.Request, acct, id string) {
	var body changeBody
	immutable := map[string]string{
		"slug":      "cannot be changed; create a new link",
		"domainId":  "cannot be changed; create a new link",
		"expiresAt": "cannot be changed; create a new link",
	}
	if err := decodeBody(r, &body, immutable); err != nil {
		s.writeRequestError(w, err)
		return
	}
	if !s.ownsLink(acct, id) {
		s.writeError(w, http.StatusNotFound, "not_found", "no such link on this account")
		return
	}
	dest, err := requireDestination(body.Destination)
	if err != nil {
		s.writeRequestError(w, err)
		return
	}
	utm, clearUTM, err := parseUTM(body.UTM)
	if err != nil {
		s.writeRequestError(w, err)
		return
	}
	if !s.passFilter(w, r, dest) {
		return
	}
	link, found, err := s.applyChange(acct, id, dest, utm, clearUTM)
	switch {
	case !found: // deleted while the filter was checking the destination
		s.writeError(w, http.StatusNotFound, "not_found", "no such link on this account")
		return
	case err != nil:
		s.writeError(w, http.StatusInternalServerError, "internal_error", err.Error())
		return
	}
	status := s.Settings().Variants.ChangeStatus
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	s.writeLink(w, status, link)
}

// applyChange changes the link, unless it is not on the account (found
// false) or the change cannot be made durable (err).
func (s *Server) applyChange(acct, id, dest string, utm *UTM, clearUTM bool) (l Link, found bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	stored, ok := s.st.Links[id]
	if !ok || stored.AccountID != acct {
		return Link{}, false, nil
	}
	l = *stored // a listing may be rendering the stored one
	l.Destination = s.normalize(dest)
	switch {
	case clearUTM:
		l.UTM = nil
	case utm != nil:
		l.UTM = utm
	}
	l.UpdatedAt = s.now().UTC()
	err = s.commitLocked(change{Put: &l})
	return l, true, err
}

// parseUTM reads the utm member of a PATCH body: absent keeps the link's
// parameters, null or {} clears them.
func parseUTM(raw json.RawMessage) (utm *UTM, clearUTM bool, err error) {
	if len(raw) == 0 {
		return nil, false, nil
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, true, nil
	}
	const want = "must be an object with the string keys source, medium, campaign, term and content"
	// encoding/json matches a key in any letter case; the top-level
	// fields are held to the spec's spelling, and so are these.
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, false, requestError{"utm", want}
	}
	known := jsonNames(&UTM{})
	for key := range keys {
		if !known[key] {
			return nil, false, requestError{"utm", fmt.Sprintf("has the unknown key %q: it %s", key, want)}
		}
	}
	var u UTM
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&u); err != nil {
		return nil, false, requestError{"utm", want}
	}
	if u.empty() {
		return nil, true, nil
	}
	return &u, false, nil
}

func (s *Server) ownsLink(acct, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.st.Links[id]
	return ok && l.AccountID == acct
}

func (s *Server) deleteLink(w http.ResponseWriter, acct, id string) {
	s.mu.Lock()
	l, ok := s.st.Links[id]
	found := ok && l.AccountID == acct
	var err error
	if found {
		err = s.commitLocked(change{Deleted: id})
	}
	s.mu.Unlock()
	switch {
	case !found:
		s.writeError(w, http.StatusNotFound, "not_found", "no such link on this account")
	case err != nil:
		s.writeError(w, http.StatusInternalServerError, "internal_error", err.Error())
	case s.Settings().Variants.DeleteStatus == http.StatusOK:
		writeJSON(w, http.StatusOK, map[string]any{"deleted": true, "id": id})
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// passFilter runs the fraud filter: first its delay, then the blocked list.
// It answers the request itself when the destination is rejected.
func (s *Server) passFilter(w http.ResponseWriter, r *http.Request, dest string) bool {
	f := s.Settings().Filter
	if !s.delay(r, time.Duration(f.Delay)) {
		return false // the client gave up and the switch says to abandon
	}
	if rule, blocked := blockedBy(f.Blocked, dest); blocked {
		s.writeError(w, http.StatusUnprocessableEntity, "blocked_by_filter", fmt.Sprintf("destination: rejected by the fraud filter (rule %q)", rule))
		return false
	}
	return true
}

func blockedBy(rules []string, dest string) (string, bool) {
	u, err := url.Parse(dest)
	if err != nil {
		return "", false
	}
	// A fully qualified host ("blocked.example.") is the same host.
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	for _, rule := range rules {
		if strings.Contains(rule, "*") {
			if globMatch(strings.ToLower(rule), strings.ToLower(dest)) {
				return rule, true
			}
			continue
		}
		rule = strings.ToLower(rule)
		if host == rule || strings.HasSuffix(host, "."+rule) {
			return rule, true
		}
	}
	return "", false
}

// globMatch reports whether s matches pattern, in which '*' stands for any run
// of characters, '/' included (path.Match would stop at '/', so no rule could
// match a URL), and every other character for itself.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	first, last := parts[0], parts[len(parts)-1]
	if !strings.HasPrefix(s, first) {
		return false
	}
	s = s[len(first):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, last)
}

// normalize applies the NormalizeDestination variant: the scheme and host
// in lower case, a Unicode host in ASCII (IDNA), an empty path given its
// slash, and the path's non-ASCII bytes percent-encoded, as browsers write
// a URL; the rest of the path (its escapes too: an escaped slash is another
// path), the query and the fragment as sent.
func (s *Server) normalize(dest string) string {
	if !s.settings.Variants.NormalizeDestination {
		return dest
	}
	u, err := url.Parse(dest)
	_, afterScheme, ok := strings.Cut(dest, "://")
	if err != nil || !ok {
		return dest
	}
	host := strings.ToLower(u.Host)
	if ascii, err := idna.Lookup.ToASCII(u.Hostname()); err == nil {
		host = ascii
		if port := u.Port(); port != "" {
			host = net.JoinHostPort(ascii, port)
		} else if strings.Contains(ascii, ":") {
			host = "[" + ascii + "]"
		}
	}
	rest := "" // the path, the query and the fragment
	if i := strings.IndexAny(afterScheme, "/?#"); i >= 0 {
		rest = afterScheme[i:]
	}
	path, tail := rest, ""
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		path, tail = rest[:i], rest[i:]
	}
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		if path[i] >= utf8.RuneSelf {
			fmt.Fprintf(&b, "%%%02X", path[i])
		} else {
			b.WriteByte(path[i])
		}
	}
	if b.Len() == 0 {
		b.WriteByte('/')
	}
	if u.User != nil {
		host = u.User.String() + "@" + host
	}
	return strings.ToLower(u.Scheme) + "://" + host + b.String() + tail
}

// decodeBody reads a JSON object strictly: malformed JSON or UTF-8, a wrong
// type, an unknown field or one given twice is a requestError naming the
// field. rejected gives the message for known fields the endpoint does not
// take.
func decodeBody(r *http.Request, dst any, rejected map[string]string) error {
	// The spec: "Requests with a body send Content-Type: application/json".
	if media, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || media != "application/json" {
		return requestError{"Content-Type", fmt.Sprintf("must be application/json, not %q", r.Header.Get("Content-Type"))}
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return requestError{"body", "could not be read"}
	}
	if len(raw) > maxBody {
		return requestError{"body", fmt.Sprintf("larger than %d bytes", maxBody)}
	}
	if !utf8.Valid(raw) { // encoding/json would take each bad byte for U+FFFD
		return requestError{"body", "must be UTF-8 (RFC 8259)"}
	}
	var fields map[string]json.RawMessage
	var notObject *json.UnmarshalTypeError
	switch err := json.Unmarshal(raw, &fields); {
	case errors.As(err, &notObject):
		return requestError{"body", "must be a JSON object, not " + notObject.Value}
	case err != nil:
		return requestError{"body", "must be a JSON object: " + err.Error()}
	case fields == nil:
		return requestError{"body", "must be a JSON object, not null"}
	}
	if name := givenTwice(raw); name != "" {
		return requestError{name, "given twice"}
	}
	known := jsonNames(dst)
	for name := range fields {
		if msg, ok := rejected[name]; ok {
			return requestError{name, msg}
		}
		if !known[name] {
			// encoding/json matches names in any case: the service's are
			// exact ("domainId", not "DomainID" or "domainid").
			return requestError{name, "unknown field"}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return requestError{typeErr.Field, "must be a " + typeErr.Type.String()}
		}
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return requestError{strings.Trim(name, `"`), "unknown field"}
		}
		return requestError{"body", err.Error()}
	}
	return nil
}

// givenTwice is the first name the object raw holds twice, or whose
// object value (utm) holds a name twice, or "" (raw is a JSON object):
// encoding/json would keep the last value without a word.
func givenTwice(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if token, err := dec.Token(); err != nil || token != json.Delim('{') {
		return ""
	}
	seen := map[string]bool{}
	for dec.More() {
		token, err := dec.Token()
		name, isName := token.(string)
		var value json.RawMessage
		if err != nil || !isName || dec.Decode(&value) != nil {
			return ""
		}
		if seen[name] || givenTwice(value) != "" {
			return name
		}
		seen[name] = true
	}
	return ""
}

// jsonNames are the JSON names of the fields of the struct dst points to.
func jsonNames(dst any) map[string]bool {
	t := reflect.TypeOf(dst).Elem()
	names := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names[cmp.Or(name, t.Field(i).Name)] = true
	}
	return names
}

func (s *Server) writeRequestError(w http.ResponseWriter, err error) {
	s.writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
}
