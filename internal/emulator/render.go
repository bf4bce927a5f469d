package emulator

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// fieldNames spells the link fields in each FieldStyle.
var fieldNames = map[string]map[string]string{
	"camel": {"domainId": "domainId", "shortUrl": "shortUrl", "qrCodeUrl": "qrCodeUrl", "expiresAt": "expiresAt", "createdAt": "createdAt", "updatedAt": "updatedAt", "nextCursor": "nextCursor"},
	"snake": {"domainId": "domain_id", "shortUrl": "short_url", "qrCodeUrl": "qr_code_url", "expiresAt": "expires_at", "createdAt": "created_at", "updatedAt": "updated_at", "nextCursor": "next_cursor"},
	"alias": {"domainId": "domainId", "shortUrl": "shortLink", "qrCodeUrl": "qrCode", "expiresAt": "expiresAt", "createdAt": "createdAt", "updatedAt": "updatedAt", "nextCursor": "cursor"},
}

// linkWriter renders links as JSON under one set of variants, by
// appending bytes rather than building a map per link, so that a list of a
// million links is written in about a second and not held whole: a single
// answer and each item of a list are the same bytes.
type linkWriter struct {
	v     Variants
	names map[string]string
	hosts map[string]string // domain ID → host
}

// linkWriterLocked captures what rendering needs, so that it can go on
// after the lock is released.
func (s *Server) linkWriterLocked() linkWriter {
	hosts := make(map[string]string, len(s.st.Domains))
	for id, d := range s.st.Domains {
		hosts[id] = d.Host
	}
	v := s.settings.Variants
	return linkWriter{v: v, names: fieldNames[v.FieldStyle], hosts: hosts}
}

// specTime is the spec's timestamp: ISO 8601 in UTC, with milliseconds and
// a Z suffix. The emulator writes it (unless Variants.TimeFormat says
// otherwise) and reads only it, so that a client sending another spelling
// is caught here rather than by a strict service.
const specTime = "2006-01-02T15:04:05.000Z"

func (lw linkWriter) appendTime(dst []byte, t time.Time) []byte {
	layout := specTime
	switch lw.v.TimeFormat {
	case "seconds":
		layout = "2006-01-02T15:04:05Z"
	case "offset":
		layout = "2006-01-02T15:04:05.000-07:00"
	}
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, layout)
	return append(dst, '"')
}

// appendLink appends a link's JSON object.
func (lw linkWriter) appendLink(dst []byte, l *Link) []byte {
	host, ok := lw.hosts[l.DomainID]
	if !ok {
		host = "unknown.invalid"
	}
	dest := l.Destination
	if lw.v.UTMStyle == "merged" {
		dest = mergeUTM(dest, l.UTM)
	}
	field := func(name string) {
		if dst[len(dst)-1] != '{' {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, name)
		dst = append(dst, ':')
	}
	dst = append(dst, '{')
	field("id")
	dst = appendJSONString(dst, l.ID)
	field("destination")
	dst = appendJSONString(dst, dest)
	field("slug")
	dst = appendJSONString(dst, l.Slug)
	field(lw.names["domainId"])
	dst = appendJSONString(dst, l.DomainID)
	field(lw.names["shortUrl"])
	dst = appendJSONString(dst, shortURL(host, l.Slug))
	field(lw.names["qrCodeUrl"])
	dst = appendJSONString(dst, "https://"+host+"/qr/"+l.Slug+".png")
	field(lw.names["createdAt"])
	dst = lw.appendTime(dst, l.CreatedAt)
	field(lw.names["updatedAt"])
	dst = lw.appendTime(dst, l.UpdatedAt)
	field(lw.names["expiresAt"])
	if l.ExpiresAt != nil {
		dst = lw.appendTime(dst, *l.ExpiresAt)
	} else {
		dst = append(dst, "null"...)
	}
	switch lw.v.UTMStyle {
	case "object":
		field("utm")
		if l.UTM.empty() {
			dst = append(dst, "null"...)
		} else {
			b, _ := json.Marshal(l.UTM) // five strings: cannot fail
			dst = append(dst, b...)
		}
	case "prefixed":
		for _, kv := range utmPairs(l.UTM) {
			field("utm_" + kv[0])
			dst = appendJSONString(dst, kv[1])
		}
	}
	return append(dst, '}')
}

// appendJSONString appends s as a JSON string.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			b, _ := json.Marshal(s) // rare: let the encoder escape it
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// utmPairs lists the UTM parameters that are set, in a fixed order.
func utmPairs(u *UTM) [][2]string {
	if u == nil {
		return nil
	}
	var pairs [][2]string
	for _, kv := range [][2]string{{"campaign", u.Campaign}, {"content", u.Content}, {"medium", u.Medium}, {"source", u.Source}, {"term", u.Term}} {
		if kv[1] != "" {
			pairs = append(pairs, kv)
		}
	}
	return pairs
}

// mergeUTM adds the UTM parameters to the destination's query, as services
// that store them there answer: each replaces a pair of its name, and every
// other pair stays as written (one Go's query parser cannot read, such as
// "x=1;2" or "d=20%", too).
func mergeUTM(dest string, u *UTM) string {
	pairs := utmPairs(u)
	if len(pairs) == 0 {
		return dest
	}
	parsed, err := url.Parse(dest)
	if err != nil {
		return dest
	}
	set := url.Values{}
	for _, kv := range pairs {
		set.Set("utm_"+kv[0], kv[1])
	}
	var kept []string
	for _, pair := range strings.Split(parsed.RawQuery, "&") {
		name, _, _ := strings.Cut(pair, "=")
		if key, err := url.QueryUnescape(name); pair != "" && (err != nil || !set.Has(key)) {
			kept = append(kept, pair)
		}
	}
	parsed.RawQuery = strings.Join(append(kept, set.Encode()), "&")
	return parsed.String()
}

func shortURL(host, slug string) string { return "https://" + host + "/" + slug }

func (s *Server) writeLink(w http.ResponseWriter, status int, l Link) {
	s.mu.Lock()
	lw := s.linkWriterLocked()
	s.mu.Unlock()
	var body []byte
	if env := lw.v.ObjectEnvelope; env != "" {
		body = append(appendJSONString([]byte{'{'}, env), ':')
	}
	body = lw.appendLink(body, &l)
	if lw.v.ObjectEnvelope != "" {
		body = append(body, '}')
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// writeList answers a list request with one page (all links when paging is
// off), written item by item through a buffer: the answer of a million
// links is never held whole. The cursor is the creation sequence of the
// last link sent, so pages stay consistent while links are added or
// deleted between requests.
func writeList(w http.ResponseWriter, r *http.Request, lw linkWriter, page []*Link, next string) {
	nextURL := ""
	if next != "" {
		nextURL = absoluteURL(r, "/api/links?cursor="+url.QueryEscape(next))
	}
	var paging []byte // the paging fields of the envelope, if any
	switch lw.v.Paging {
	case "cursor", "offset":
		paging = appendJSONString(nil, fieldNames[lw.v.FieldStyle]["nextCursor"])
		paging = appendNullable(append(paging, ':'), next)
	case "next":
		paging = appendNullable([]byte(`"next":`), nextURL)
	case "link":
		if nextURL != "" {
			w.Header().Set("Link", "<"+nextURL+`>; rel="next"`)
		}
	}
	key := lw.v.ListEnvelope
	if key == "" && paging != nil {
		key = "data" // a cursor or next URL needs an object to live in
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf []byte
	if key != "" {
		buf = append(appendJSONString(append(buf, '{'), key), ':')
	}
	buf = append(buf, '[')
	for i, l := range page {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = lw.appendLink(buf, l)
		if len(buf) >= 32<<10 {
			if _, err := bw.Write(buf); err != nil {
				return // the client has gone
			}
			buf = buf[:0]
		}
	}
	buf = append(buf, ']')
	if key != "" {
		if paging != nil {
			buf = append(append(buf, ','), paging...)
		}
		buf = append(buf, '}')
	}
	_, _ = bw.Write(append(buf, '\n'))
	_ = bw.Flush()
}

func appendNullable(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return appendJSONString(dst, s)
}

// pageOf cuts the page a cursor asks for. Offset paging counts positions
// in the list as it is at each request, as many real services do: a link
// deleted before the cursor between two requests makes the next page skip
// one. The other modes carry the creation sequence of the last link sent,
// so pages stay consistent while links come and go.
func pageOf(links []*Link, mode, cursor string, size int) ([]*Link, string, error) {
	if mode != "offset" {
		after, err := parseCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		page, next := pageAfter(links, after, size)
		return page, next, nil
	}
	offset := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 0 {
			return nil, "", fmt.Errorf("malformed")
		}
		offset = n
	}
	start := min(offset, len(links))
	end := start + min(size, len(links)-start) // start+size may overflow
	if end == len(links) {
		return links[start:end], "", nil
	}
	return links[start:end], strconv.Itoa(end), nil
}

func pageAfter(links []*Link, after int64, size int) ([]*Link, string) {
	start := sort.Search(len(links), func(i int) bool { return links[i].Seq > after })
	end := start + min(size, len(links)-start) // start+size may overflow
	page := links[start:end]
	if end == len(links) || len(page) == 0 {
		return page, ""
	}
	return page, base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(page[len(page)-1].Seq, 10)))
}

func parseCursor(c string) (int64, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, fmt.Errorf("malformed")
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("malformed")
	}
	return n, nil
}

func absoluteURL(r *http.Request, pathAndQuery string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + pathAndQuery
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers {"error": code, "message": …}, or an HTML page when the
// HTMLErrors variant is on.
func (s *Server) writeError(w http.ResponseWriter, status int, code, message string) {
	if s.Settings().Variants.HTMLErrors {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, "<!DOCTYPE html><html><head><title>%d %s</title></head><body><h1>%s</h1><p>%s</p></body></html>\n",
			status, http.StatusText(status), http.StatusText(status), html.EscapeString(message))
		return
	}
	writeJSON(w, status, map[string]string{"error": code, "message": message})
}
