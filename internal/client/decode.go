package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shortlink/terraform-provider-shortlink/internal/wire"
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

// object is a JSON object whose fields are decoded on demand: its fields
// in the order of the text, each value as the text holds it (see
// splitObject). A key written twice has its last value, as encoding/json
// would give.
type object []field

type field struct {
	key string
	raw json.RawMessage
}

// get returns the value of key.
func (o object) get(key string) (json.RawMessage, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].key == key {
			return o[i].raw, true
		}
	}
	return nil, false
}

// lookup returns the first of keys that is present and not null.
func (o object) lookup(keys ...string) (string, json.RawMessage, bool) {
	for _, k := range keys {
		if raw, ok := o.get(k); ok && !isNull(raw) {
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
	s, ok := stringValue(raw)
	if !ok {
		return "", typeError(k, raw, "a string")
	}
	return s, nil
}

// stringValue reads a JSON string. Most strings have no escapes and are
// valid UTF-8: they are taken as they are, without encoding/json, which is
// most of the time a list of a million links takes to read.
func stringValue(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if inner := raw[1 : len(raw)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// loose is str for diagnostics: values of another type are skipped.
func (o object) loose(keys ...string) string {
	for _, k := range keys {
		if raw, ok := o.get(k); ok {
			if s, ok := stringValue(raw); ok && s != "" {
				return s
			}
		}
	}
	return ""
}

// objectField returns the value of key when it is a JSON object.
func (o object) objectField(key string) (object, bool) {
	raw, ok := o.get(key)
	if !ok || kind(raw) != "an object" {
		return nil, false
	}
	return splitObject(raw), true
}

// token returns a string or an integer as a string: identifiers and
// cursors are opaque, and some services send them as numbers.
func (o object) token(keys ...string) (string, error) {
	k, raw, ok := o.lookup(keys...)
	if !ok {
		return "", nil
	}
	if s, ok := stringValue(raw); ok {
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
	s, ok := stringValue(raw)
	if !ok {
		return nil, typeError(k, raw, "an RFC 3339 timestamp string")
	}
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	t, err := wire.ParseTime(s)
	if err != nil {
		return nil, fmt.Errorf("field %q: %w", k, err)
	}
	return &t, nil
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

// decodeLink reads a link, bare or wrapped in {"data":…} or {"link":…},
// and names the fields of a whole link (linkFields) the body did not
// carry, so that the caller can complete the link from the list rather
// than guess them.
func decodeLink(body []byte) (*Link, []string, error) {
	o, err := parseObject(body)
	if err != nil {
		return nil, nil, err
	}
	return linkOf(o)
}

// decodeValidLink is decodeLink, without the missing fields, for a value
// a json.Decoder has read, and so checked: a list's item.
func decodeValidLink(value []byte) (*Link, error) {
	if k := kind(value); k != "an object" {
		return nil, fmt.Errorf("expected a JSON object, got %s", k)
	}
	l, _, err := linkOf(splitObject(value))
	return l, err
}

// linkOf reads the link in a parsed object, and names the fields it lacks.
func linkOf(o object) (*Link, []string, error) {
	o, err := unwrapLink(o, 0)
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
	{"destination", keysDestination, false, func(l, full *Link) { l.Destination = full.Destination }},
	{"domainId", keysDomainID, false, func(l, full *Link) { l.DomainID = full.DomainID }},
	{"slug", keysSlug, false, func(l, full *Link) { l.Slug = full.Slug }},
	{"shortUrl", keysShortURL, false, func(l, full *Link) { l.ShortURL = full.ShortURL }},
	{"expiresAt", keysExpiresAt, true, func(l, full *Link) { l.ExpiresAt = full.ExpiresAt }},
	{"createdAt", keysCreatedAt, false, func(l, full *Link) { l.CreatedAt = full.CreatedAt }},
}

type linkField struct {
	name     string
	keys     []string
	nullable bool // null is an answer, not an absence
	// fill copies the field from full, the same link as listed, when an
	// answer lacked it (fillMissing).
	fill func(l, full *Link)
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
	for _, f := range linkFields {
		if slices.Contains(missing, f.name) {
			f.fill(l, full)
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
	if !json.Valid(body) {
		return nil, fmt.Errorf("the body is not valid JSON: %w", json.Unmarshal(body, new(json.RawMessage)))
	}
	if k := kind(body); k != "an object" {
		return nil, fmt.Errorf("expected a JSON object, got %s", k)
	}
	return splitObject(body), nil
}

// splitObject splits the text of a valid JSON object into its fields, with
// their values as they are written: a link's fields are read on demand,
// and most of them are plain strings (see stringValue). The caller has
// checked that the text is valid JSON (json.Valid, or a json.Decoder that
// read it).
func splitObject(text []byte) object {
	o := make(object, 0, 16)
	i := skipSpace(text, 0) + 1 // past '{'
	for {
		i = skipSpace(text, i)
		switch text[i] {
		case '}':
			return o
		case ',':
			i = skipSpace(text, i+1)
		}
		end := stringEnd(text, i)
		key := text[i:end]
		i = skipSpace(text, skipSpace(text, end)+1) // past ':'
		valueEnd := valueEnd(text, i)
		o = append(o, field{key: keyString(key), raw: text[i:valueEnd]})
		i = valueEnd
	}
}

// keyString reads a key as encoding/json would. The keys this file reads
// are taken from knownKeys without making a string of their own.
func keyString(raw []byte) string {
	if len(raw) >= 2 {
		if k, ok := knownKeys[string(raw[1:len(raw)-1])]; ok {
			return k
		}
	}
	k, _ := stringValue(raw)
	return k
}

// knownKeys are the keys this file looks for.
var knownKeys = func() map[string]string {
	known := map[string]string{"utm": "utm"}
	for _, keys := range [][]string{keysID, keysDestination, keysDomainID, keysSlug, keysShortURL, keysQRCode,
		keysExpiresAt, keysCreatedAt, keysUpdatedAt, linkEnvelopes, listEnvelopes} {
		for _, k := range keys {
			known[k] = k
		}
	}
	for _, p := range UTMParameters {
		for _, k := range []string{p, "utm_" + p, "utm" + strings.ToUpper(p[:1]) + p[1:]} {
			known[k] = k
		}
	}
	return known
}()

func skipSpace(text []byte, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string that starts at text[i].
func stringEnd(text []byte, i int) int {
	for i++; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(text)
}

// nestedEnd returns the index after the object or array that starts at
// text[i], skipping brackets in strings; closed is false when text ends
// before it does (the end is then len(text)).
func nestedEnd(text []byte, i int) (end int, closed bool) {
	depth := 0
	for ; i < len(text); i++ {
		switch text[i] {
		case '"':
			i = stringEnd(text, i) - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1, true
			}
		}
	}
	return len(text), false
}

// valueEnd returns the index after the value that starts at text[i].
func valueEnd(text []byte, i int) int {
	switch text[i] {
	case '"':
		return stringEnd(text, i)
	case '{', '[':
		end, _ := nestedEnd(text, i)
		return end
	}
	for i < len(text) {
		switch text[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}

// unwrapLink removes envelopes: an object with an "id" is the link itself.
func unwrapLink(o object, depth int) (object, error) {
	if _, ok := o.get("id"); ok {
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
	if raw, ok := o.get("utm"); ok {
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
		if raw, ok := o.get(k); ok {
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
		s, _ := stringValue(raw)
		return utmFromQuery(s)
	case "an object":
		return utmFromObject(splitObject(raw))
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

// page is where the page after one of the link list is.
type page struct {
	nextURL string
	cursor  string
	// hasMore is false when the body said explicitly that this is the last page.
	hasMore *bool
}

// The paging fields of a list answer, at its top level or in one of
// pagingContainers.
var (
	keysNextURL      = []string{"next", "next_url", "nextUrl", "nextPage", "next_page_url"}
	keysCursor       = []string{"nextCursor", "next_cursor", "cursor"}
	keysHasMore      = []string{"hasMore", "has_more"}
	pagingContainers = []string{"meta", "pagination", "paging"}
)

// readPaging reads the paging fields of a list object, at its top level or
// in a meta/pagination/paging sub-object. Paging fields of an unexpected
// type are ignored: the worst outcome is one page instead of all, which the
// caller can notice, rather than failing every list.
func readPaging(o object, p *page) {
	for _, src := range pagingSources(o) {
		if p.nextURL == "" {
			p.nextURL = src.loose(keysNextURL...)
		}
		if p.cursor == "" {
			p.cursor, _ = src.token(keysCursor...)
		}
		if p.hasMore == nil {
			p.hasMore = boolField(src, keysHasMore...)
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
		if raw, ok := o.get(k); ok && json.Unmarshal(raw, &b) == nil {
			return &b
		}
	}
	return nil
}

// looksLikeURL tells an absolute or relative URL from an opaque token.
func looksLikeURL(s string) bool {
	return strings.ContainsAny(s, "/?") || strings.Contains(s, "://")
}
