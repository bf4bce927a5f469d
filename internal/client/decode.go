package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// The service's specification does not show its response bodies, so this
// file reads every reasonable spelling (DESIGN.md, "read tolerantly"):
// envelopes, camelCase or snake_case names, several forms of utm. Unknown
// fields are ignored; a known field of the wrong type is an error, because
// guessing would put wrong values into Terraform's state.

// Aliases of each field, in order of preference.
var (
	keysID          = []string{"id"}
	keysDestination = []string{"destination", "destinationUrl", "destination_url"}
	keysDomainID    = []string{"domainId", "domain_id", "domainID"}
	keysSlug        = []string{"slug"}
	keysShortURL    = []string{"shortUrl", "short_url", "shortLink", "short_link", "shortURL"}
	keysQRCode      = []string{"qrCodeUrl", "qr_code_url", "qrCode", "qr_code", "qrCodeURL"}
	keysExpiresAt   = []string{"expiresAt", "expires_at"}
	keysCreatedAt   = []string{"createdAt", "created_at"}
	keysUpdatedAt   = []string{"updatedAt", "updated_at"}

	// envelopes that may wrap a link or a list.
	linkEnvelopes = []string{"data", "link"}
	listEnvelopes = []string{"data", "links", "items"}
)

// maxEnvelopeDepth bounds how deep envelopes are unwrapped ({"data":{"link":…}}).
const maxEnvelopeDepth = 2

// object is a JSON object whose fields are decoded on demand.
type object map[string]json.RawMessage

// lookup returns the first of keys that is present and not null.
func (o object) lookup(keys ...string) (string, json.RawMessage, bool) {
	for _, k := range keys {
		if raw, ok := o[k]; ok && !isNull(raw) {
			return k, raw, true
		}
	}
	return "", nil, false
}

// str returns the first of keys present as a string; "" when none is.
func (o object) str(keys ...string) (string, error) {
	k, raw, ok := o.lookup(keys...)
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", typeError(k, raw, "a string")
	}
	return s, nil
}

// loose is str for diagnostics: values of another type are skipped.
func (o object) loose(keys ...string) string {
	for _, k := range keys {
		var s string
		if json.Unmarshal(o[k], &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// objectField returns the value of key when it is a JSON object.
func (o object) objectField(key string) (object, bool) {
	raw, ok := o[key]
	if !ok || kind(raw) != "an object" {
		return nil, false
	}
	var inner object
	if json.Unmarshal(raw, &inner) != nil {
		return nil, false
	}
	return inner, true
}

// token returns a string or an integer as a string: identifiers and
// cursors are opaque, and some services send them as numbers.
func (o object) token(keys ...string) (string, error) {
	k, raw, ok := o.lookup(keys...)
	if !ok {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		if _, err := n.Int64(); err == nil {
			return n.String(), nil
		}
	}
	return "", typeError(k, raw, "a string")
}

// time returns the first of keys as a timestamp; nil when none is present.
func (o object) time(keys ...string) (*time.Time, error) {
	k, raw, ok := o.lookup(keys...)
	if !ok {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, typeError(k, raw, "an RFC 3339 timestamp string")
	}
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	t, err := parseTime(s)
	if err != nil {
		return nil, fmt.Errorf("field %q: %w", k, err)
	}
	return &t, nil
}

// timeLayouts are the RFC 3339 spellings accepted. Parsing with a layout
// that has fractional seconds also accepts none, and Z07:00 accepts both
// "Z" and "+00:00".
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",  // offset without a colon
	"2006-01-02 15:04:05.999999999Z07:00", // space instead of T (RFC 3339 allows it)
}

// parseTime parses an RFC 3339 timestamp and returns it in UTC: timestamps
// are compared by instant, never by spelling.
func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	var firstErr error
	for _, layout := range timeLayouts {
		t, err := time.Parse(layout, s)
		if err == nil {
			t = t.UTC()
			if t.Year() < 0 || t.Year() > 9999 {
				// "0000-01-01T00:30:00+01:00" is in the year -1 in UTC,
				// which RFC 3339 cannot write: we could not send it back.
				return time.Time{}, fmt.Errorf("%q is not an RFC 3339 timestamp: in UTC it falls outside the years 0000 to 9999", s)
			}
			return t, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an RFC 3339 timestamp: %w", s, firstErr)
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// kind names the JSON type of raw, for error messages.
func kind(raw json.RawMessage) string {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func typeError(field string, raw json.RawMessage, want string) error {
	return fmt.Errorf("field %q: expected %s, got %s", field, want, kind(raw))
}

// decodeLinkBody reads a link, bare or wrapped in {"data":…} or {"link":…}.
func decodeLinkBody(body []byte) (*Link, error) {
	l, _, err := decodeLink(body)
	return l, err
}

// decodeLink is decodeLinkBody that also names the fields of a whole link
// (linkFields) the body did not carry, so that the caller can complete the
// link from the list rather than guess them.
func decodeLink(body []byte) (*Link, []string, error) {
	o, err := parseObject(body)
	if err != nil {
		return nil, nil, err
	}
	o, err = unwrapLink(o, 0)
	if err != nil {
		return nil, nil, err
	}
	l, err := linkFromObject(o)
	if err != nil {
		return nil, nil, err
	}
	return l, missingFields(o), nil
}

// errNoLink reports a JSON object that holds no link: an acknowledgement
// such as {"updated": true}.
var errNoLink = errors.New(`no link in the body: no "id" field and no "data" or "link" object`)

// linkFields are the fields every full description of a link carries, each
// with its aliases. The list (and the answer to a create or change) should
// carry all of them; expiresAt may be null, which says "no expiry", but
// absent it says nothing. The QR code and utm are left out: a service may
// have no QR codes, and the contract keeps the configured utm when the
// service says nothing about it.
var linkFields = []linkField{
	{"destination", keysDestination, false},
	{"domainId", keysDomainID, false},
	{"slug", keysSlug, false},
	{"shortUrl", keysShortURL, false},
	{"expiresAt", keysExpiresAt, true},
	{"createdAt", keysCreatedAt, false},
}

type linkField struct {
	name     string
	keys     []string
	nullable bool // null is an answer, not an absence
}

// missingFields names the linkFields that o does not carry.
func missingFields(o object) []string {
	var missing []string
	for _, f := range linkFields {
		if f.nullable {
			if _, _, ok := presentKey(o, f.keys...); ok {
				continue
			}
		} else if _, _, ok := o.lookup(f.keys...); ok {
			continue
		}
		missing = append(missing, f.name)
	}
	return missing
}

// fillMissing copies into l, from full (the same link as listed), the fields
// that l's answer did not carry.
func fillMissing(l *Link, full *Link, missing []string) {
	for _, name := range missing {
		switch name {
		case "destination":
			l.Destination = full.Destination
		case "domainId":
			l.DomainID = full.DomainID
		case "slug":
			l.Slug = full.Slug
		case "shortUrl":
			l.ShortURL = full.ShortURL
		case "expiresAt":
			l.ExpiresAt = full.ExpiresAt
		case "createdAt":
			l.CreatedAt = full.CreatedAt
		}
	}
	if l.QRCodeURL == "" {
		l.QRCodeURL = full.QRCodeURL
	}
	if l.UpdatedAt.IsZero() {
		l.UpdatedAt = full.UpdatedAt
	}
	if !l.UTMKnown && full.UTMKnown {
		l.UTM, l.UTMKnown = full.UTM, true
	}
}

// parseObject parses body as a JSON object, saying what it was otherwise.
func parseObject(body []byte) (object, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errors.New("the body is empty")
	}
	var o object
	if err := json.Unmarshal(body, &o); err != nil {
		if json.Valid(body) {
			return nil, fmt.Errorf("expected a JSON object, got %s", kind(body))
		}
		return nil, fmt.Errorf("the body is not valid JSON: %w", err)
	}
	if o == nil {
		return nil, errors.New("expected a JSON object, got null")
	}
	return o, nil
}

// unwrapLink removes envelopes: an object with an "id" is the link itself.
func unwrapLink(o object, depth int) (object, error) {
	if _, ok := o["id"]; ok {
		return o, nil
	}
	if depth < maxEnvelopeDepth {
		for _, env := range linkEnvelopes {
			if inner, ok := o.objectField(env); ok {
				return unwrapLink(inner, depth+1)
			}
		}
	}
	return nil, errNoLink
}

// linkFromObject reads the fields of a link object.
func linkFromObject(o object) (*Link, error) {
	var l Link
	var err error
	strs := []struct {
		dst  *string
		keys []string
	}{
		{&l.Destination, keysDestination},
		{&l.DomainID, keysDomainID},
		{&l.Slug, keysSlug},
		{&l.ShortURL, keysShortURL},
		{&l.QRCodeURL, keysQRCode},
	}
	if l.ID, err = o.token(keysID...); err != nil {
		return nil, err
	}
	if l.ID == "" {
		return nil, errors.New(`the link has no "id"`)
	}
	for _, f := range strs {
		if *f.dst, err = o.str(f.keys...); err != nil {
			return nil, err
		}
	}
	if err := readTimes(o, &l); err != nil {
		return nil, err
	}
	l.UTM, l.UTMKnown, err = readUTM(o)
	return &l, err
}

func readTimes(o object, l *Link) error {
	var err error
	if l.ExpiresAt, err = o.time(keysExpiresAt...); err != nil {
		return err
	}
	for _, f := range []struct {
		dst  *time.Time
		keys []string
	}{{&l.CreatedAt, keysCreatedAt}, {&l.UpdatedAt, keysUpdatedAt}} {
		t, err := o.time(f.keys...)
		if err != nil {
			return err
		}
		if t != nil {
			*f.dst = *t
		}
	}
	return nil
}

// readUTM reads utm as an object, a query string, or top-level utm_* keys.
// known is false when the body says nothing about utm, so that the caller
// keeps its configured value; an explicit null is known and empty.
func readUTM(o object) (u *UTM, known bool, err error) {
	if raw, ok := o["utm"]; ok {
		u, err := utmValue(raw)
		return u, true, err
	}
	var v UTM
	for i, f := range UTMParameters {
		k, raw, present := presentKey(o, "utm_"+f, "utm"+strings.ToUpper(f[:1])+f[1:])
		if !present {
			continue
		}
		known = true
		if isNull(raw) {
			continue
		}
		if err := json.Unmarshal(raw, utmSlot(&v, i)); err != nil {
			return nil, false, typeError(k, raw, "a string")
		}
	}
	return nonEmpty(v), known, nil
}

// presentKey is lookup that also reports keys present with a null value.
func presentKey(o object, keys ...string) (string, json.RawMessage, bool) {
	for _, k := range keys {
		if raw, ok := o[k]; ok {
			return k, raw, true
		}
	}
	return "", nil, false
}

// utmValue reads the value of a "utm" field.
func utmValue(raw json.RawMessage) (*UTM, error) {
	switch kind(raw) {
	case "null":
		return nil, nil
	case "a string":
		var s string
		_ = json.Unmarshal(raw, &s)
		return utmFromQuery(s)
	case "an object":
		var o object
		if err := json.Unmarshal(raw, &o); err != nil {
			return nil, fmt.Errorf("field \"utm\": %w", err)
		}
		return utmFromObject(o)
	}
	return nil, typeError("utm", raw, "an object")
}

func utmFromObject(o object) (*UTM, error) {
	var v UTM
	for i, f := range UTMParameters {
		s, err := o.str(f, "utm_"+f)
		if err != nil {
			return nil, fmt.Errorf("utm: %w", err)
		}
		*utmSlot(&v, i) = s
	}
	return nonEmpty(v), nil
}

// utmFromQuery reads "utm_source=a&utm_medium=b" (with or without the prefix).
func utmFromQuery(s string) (*UTM, error) {
	q, err := url.ParseQuery(strings.TrimPrefix(strings.TrimSpace(s), "?"))
	if err != nil {
		return nil, fmt.Errorf("field \"utm\": %q is neither an object nor a query string: %w", s, err)
	}
	var v UTM
	for i, f := range UTMParameters {
		value := cmpOr(q.Get("utm_"+f), q.Get(f))
		if !utf8.ValidString(value) {
			// Percent-decoding can make bytes no string may hold.
			return nil, fmt.Errorf("field \"utm\": the %s parameter of %q is not UTF-8 text once decoded", f, s)
		}
		*utmSlot(&v, i) = value
	}
	return nonEmpty(v), nil
}

// utmSlot returns the field of v named by UTMParameters[i].
func utmSlot(v *UTM, i int) *string {
	return [...]*string{&v.Source, &v.Medium, &v.Campaign, &v.Term, &v.Content}[i]
}

// nonEmpty returns nil for a UTM without any parameter: none and an empty
// set mean the same to the link.
func nonEmpty(v UTM) *UTM {
	if v == (UTM{}) {
		return nil
	}
	return &v
}

// page is one page of the link list and where the next one is.
type page struct {
	links   []Link
	nextURL string
	cursor  string
	// hasMore is false when the body said explicitly that this is the last page.
	hasMore *bool
}

// pagingContainers are the sub-objects where some services put paging fields.
var pagingContainers = []string{"meta", "pagination", "paging"}

// decodeListBody reads a list: a bare array or one wrapped in
// {"data":[…]}, {"links":[…]} or {"items":[…]}, with paging fields beside it.
func decodeListBody(body []byte) (*page, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		links, err := decodeLinkArray(trimmed)
		return &page{links: links}, err
	}
	o, err := parseObject(body)
	if err != nil {
		return nil, err
	}
	items, err := listItems(o)
	if err != nil {
		return nil, err
	}
	links, err := decodeLinkArray(items)
	if err != nil {
		return nil, err
	}
	p := &page{links: links}
	readPaging(o, p)
	return p, nil
}

// listItems finds the array of links in a list envelope.
func listItems(o object) (json.RawMessage, error) {
	for _, env := range listEnvelopes {
		raw, ok := o[env]
		if !ok {
			continue
		}
		switch kind(raw) {
		case "an array":
			return raw, nil
		case "null":
			return nil, nil
		}
		// "links" may also be a HAL-style object of paging links: skip it.
	}
	return nil, errors.New(`no list of links in the body: expected an array, or an object with a "data", "links" or "items" array`)
}

func decodeLinkArray(raw json.RawMessage) ([]Link, error) {
	if raw == nil {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("the list is not valid JSON: %w", err)
	}
	links := make([]Link, 0, len(items))
	for i, item := range items {
		l, err := decodeLinkBody(item)
		if err != nil {
			return nil, fmt.Errorf("item %d of the list: %w", i, err)
		}
		links = append(links, *l)
	}
	return links, nil
}

// readPaging reads the paging fields of a list object, at its top level or
// in a meta/pagination/paging sub-object. Paging fields of an unexpected
// type are ignored: the worst outcome is one page instead of all, which the
// caller can notice, rather than failing every list.
func readPaging(o object, p *page) {
	for _, src := range pagingSources(o) {
		if p.nextURL == "" {
			p.nextURL = src.loose("next", "next_url", "nextUrl", "nextPage", "next_page_url")
		}
		if p.cursor == "" {
			p.cursor, _ = src.token("nextCursor", "next_cursor", "cursor")
		}
		if p.hasMore == nil {
			p.hasMore = boolField(src, "hasMore", "has_more")
		}
	}
	// A "next" that is not a URL is a cursor under another name.
	if p.nextURL != "" && !looksLikeURL(p.nextURL) && p.cursor == "" {
		p.cursor, p.nextURL = p.nextURL, ""
	}
}

func pagingSources(o object) []object {
	srcs := []object{o}
	for _, name := range pagingContainers {
		if inner, ok := o.objectField(name); ok {
			srcs = append(srcs, inner)
		}
	}
	return srcs
}

func boolField(o object, keys ...string) *bool {
	for _, k := range keys {
		var b bool
		if json.Unmarshal(o[k], &b) == nil {
			return &b
		}
	}
	return nil
}

// looksLikeURL tells an absolute or relative URL from an opaque token.
func looksLikeURL(s string) bool {
	return strings.ContainsAny(s, "/?") || strings.Contains(s, "://")
}
