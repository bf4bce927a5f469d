package emulator

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"
)

// fieldNames spells the link fields in each FieldStyle.
var fieldNames = map[string]map[string]string{
	"camel": {"domainId": "domainId", "shortUrl": "shortUrl", "qrCodeUrl": "qrCodeUrl", "expiresAt": "expiresAt", "createdAt": "createdAt", "updatedAt": "updatedAt", "nextCursor": "nextCursor"},
	"snake": {"domainId": "domain_id", "shortUrl": "short_url", "qrCodeUrl": "qr_code_url", "expiresAt": "expires_at", "createdAt": "created_at", "updatedAt": "updated_at", "nextCursor": "next_cursor"},
	"alias": {"domainId": "domainId", "shortUrl": "shortLink", "qrCodeUrl": "qrCode", "expiresAt": "expiresAt", "createdAt": "createdAt", "updatedAt": "updatedAt", "nextCursor": "cursor"},
}

func (s *Server) formatTime(t time.Time) string {
	t = t.UTC()
	switch s.Settings().Variants.TimeFormat {
	case "seconds":
		return t.Format("2006-01-02T15:04:05Z")
	case "offset":
		return t.Format("2006-01-02T15:04:05.000-07:00")
	default:
		return t.Format("2006-01-02T15:04:05.000Z")
	}
}

// render turns a link into its JSON object under the variants in force.
func (s *Server) render(l Link) map[string]any {
	v := s.Settings().Variants
	names := fieldNames[v.FieldStyle]
	host := s.domainHost(l.DomainID)
	out := map[string]any{
		"id":               l.ID,
		"destination":      l.Destination,
		"slug":             l.Slug,
		names["domainId"]:  l.DomainID,
		names["shortUrl"]:  shortURL(host, l.Slug),
		names["qrCodeUrl"]: "https://" + host + "/qr/" + l.Slug + ".png",
		names["createdAt"]: s.formatTime(l.CreatedAt),
		names["updatedAt"]: s.formatTime(l.UpdatedAt),
		names["expiresAt"]: nil,
	}
	if l.ExpiresAt != nil {
		out[names["expiresAt"]] = s.formatTime(*l.ExpiresAt)
	}
	switch v.UTMStyle {
	case "object":
		if l.UTM.empty() {
			out["utm"] = nil
		} else {
			out["utm"] = l.UTM
		}
	case "prefixed":
		for k, val := range utmPairs(l.UTM) {
			out["utm_"+k] = val
		}
	case "merged":
		out["destination"] = mergeUTM(l.Destination, l.UTM)
	}
	return out
}

func utmPairs(u *UTM) map[string]string {
	pairs := map[string]string{}
	if u == nil {
		return pairs
	}
	for k, v := range map[string]string{"source": u.Source, "medium": u.Medium, "campaign": u.Campaign, "term": u.Term, "content": u.Content} {
		if v != "" {
			pairs[k] = v
		}
	}
	return pairs
}

// mergeUTM adds the UTM parameters to the destination's query, as services
// that store them there answer.
func mergeUTM(dest string, u *UTM) string {
	pairs := utmPairs(u)
	if len(pairs) == 0 {
		return dest
	}
	parsed, err := url.Parse(dest)
	if err != nil {
		return dest
	}
	q := parsed.Query()
	for k, v := range pairs {
		q.Set("utm_"+k, v)
	}
	parsed.RawQuery = q.Encode()
	return parsed.String()
}

func shortURL(host, slug string) string { return "https://" + host + "/" + slug }

func (s *Server) domainHost(domainID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.st.Domains[domainID]; ok {
		return d.Host
	}
	return "unknown.invalid"
}

func (s *Server) writeLink(w http.ResponseWriter, status int, l Link) {
	obj := s.render(l)
	switch env := s.Settings().Variants.ObjectEnvelope; env {
	case "":
		writeJSON(w, status, obj)
	default:
		writeJSON(w, status, map[string]any{env: obj})
	}
}

// writeList answers a list request, one page at a time when paging is on.
// The cursor is the creation sequence of the last link sent, so pages stay
// consistent while links are added or deleted between requests.
func (s *Server) writeList(w http.ResponseWriter, r *http.Request, links []Link) {
	v := s.Settings().Variants
	page, next := links, ""
	if v.Paging != "none" {
		var err error
		if page, next, err = pageOf(links, v.Paging, r.URL.Query().Get("cursor"), v.PageSize); err != nil {
			s.writeError(w, http.StatusBadRequest, "invalid_request", "cursor: "+err.Error())
			return
		}
	}
	items := make([]map[string]any, 0, len(page))
	for _, l := range page {
		items = append(items, s.render(l))
	}
	nextURL := ""
	if next != "" {
		nextURL = absoluteURL(r, "/api/links?cursor="+url.QueryEscape(next))
	}
	key := v.ListEnvelope
	body := map[string]any{}
	switch v.Paging {
	case "cursor", "offset":
		body[fieldNames[v.FieldStyle]["nextCursor"]] = nullable(next)
	case "next":
		body["next"] = nullable(nextURL)
	case "link":
		if nextURL != "" {
			w.Header().Set("Link", "<"+nextURL+`>; rel="next"`)
		}
	}
	if key == "" && len(body) == 0 {
		writeJSON(w, http.StatusOK, items)
		return
	}
	if key == "" {
		key = "data" // a cursor or next URL needs an object to live in
	}
	body[key] = items
	writeJSON(w, http.StatusOK, body)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// pageOf cuts the page a cursor asks for. Offset paging counts positions
// in the list as it is at each request, as many real services do: a link
// deleted before the cursor between two requests makes the next page skip
// one. The other modes carry the creation sequence of the last link sent,
// so pages stay consistent while links come and go.
func pageOf(links []Link, mode, cursor string, size int) ([]Link, string, error) {
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
	end := min(start+size, len(links))
	if end == len(links) {
		return links[start:end], "", nil
	}
	return links[start:end], strconv.Itoa(end), nil
}

func pageAfter(links []Link, after int64, size int) ([]Link, string) {
	start := sort.Search(len(links), func(i int) bool { return links[i].Seq > after })
	end := min(start+size, len(links))
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

func sortLinks(links []Link) {
	sort.Slice(links, func(i, j int) bool { return links[i].Seq < links[j].Seq })
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
