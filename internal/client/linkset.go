package client

import (
	"encoding/binary"
	"hash/maphash"
	"iter"
	"strings"
	"time"
)

// Listing is a read-only view of the account's links in the service's
// order: what a listing answered (LinkSet), or that with this provider's
// own writes on top (the snapshot's view).
type Listing interface {
	// Len is the number of links.
	Len() int
	// All yields every link in the service's order.
	All() iter.Seq[Link]
	// Get returns the link with this ID (a UUID in any case, see ids.go).
	Get(id string) (Link, bool)
	// BySlug returns the first link, in the service's order, that holds
	// slug on the domain domainID (domain IDs compared in any case).
	BySlug(domainID, slug string) (Link, bool)
}

// LinkSet holds a listing of the account's links compactly: an account can
// hold a million links, and every refresh, import and lookup of a run is
// served from one listing (DESIGN.md, "Refresh at scale"). Each link is
// one record in a few large byte chunks (no pointers for the garbage
// collector to follow), the domain ID and the parts of the short and QR
// code URLs around the slug are stored once for all links that share them,
// and two maps of hashes find a link by ID and by slug. A link listed twice
// (offset paging while links are created) keeps its first place and its
// last version. A LinkSet is built by one goroutine (Add) and read by many
// once built; it is never changed after that.
type LinkSet struct {
	seed   maphash.Seed
	chunks [][]byte
	// slots are the records' places in chunks, in the service's order.
	slots []recordRef
	// byID maps the hash of an ID to its slot; IDs whose hash another ID
	// has already are in collided.
	byID     map[uint64]int32
	collided map[string]int32
	// bySlug maps the hash of a domain and slug to the first slot holding
	// it; a lookup checks the record and scans when it is not the one.
	bySlug map[uint64]int32
	shared sharedStrings
	// oneAnswer: ListLinks had every link in one answer (see OneAnswer).
	oneAnswer bool
}

// recordRef is a record's chunk (high 32 bits) and offset in it.
type recordRef uint64

const (
	// A set's chunks start at firstChunkBytes and double up to
	// linkSetChunkBytes: a listing of many pages builds a set per page,
	// and a page of a hundred links fills a few KiB.
	firstChunkBytes   = 16 << 10
	linkSetChunkBytes = 1 << 20
	// maxSharedStrings bounds the table of shared strings; past it strings
	// are stored in each record, so that an account whose links share
	// nothing does not grow a useless table.
	maxSharedStrings = 1 << 16
)

// NewLinkSet returns an empty set; Add fills it.
func NewLinkSet() *LinkSet {
	return &LinkSet{
		seed:     maphash.MakeSeed(),
		byID:     map[uint64]int32{},
		collided: map[string]int32{},
		bySlug:   map[uint64]int32{},
		shared:   sharedStrings{index: map[string]uint32{}},
	}
}

// LinkSetOf returns a set of links, in their order: a listing made by
// hand. Only tests call it, of this package and of snapshot and links; it
// is exported so that they share this one definition (a _test.go file's
// are seen by its own package only).
func LinkSetOf(links ...Link) *LinkSet {
	s := NewLinkSet()
	for i := range links {
		s.Add(&links[i])
	}
	return s
}

// OneAnswer reports whether the service gave every link in one answer (a
// list of one page): no link can have fallen between two pages, as one
// can when another client deletes links while the pages are followed.
func (s *LinkSet) OneAnswer() bool { return s.oneAnswer }

// Len is the number of links; a nil set has none.
func (s *LinkSet) Len() int {
	if s == nil {
		return 0
	}
	return len(s.slots)
}

// Add appends l, or replaces the version of a link with the same ID in
// its place.
func (s *LinkSet) Add(l *Link) {
	ref := s.store(l)
	key := ComparableID(l.ID)
	if slot, ok := s.slotOfKey(key); ok {
		s.slots[slot] = ref
		s.indexSlug(l, slot)
		return
	}
	slot := int32(len(s.slots))
	s.slots = append(s.slots, ref)
	h := maphash.String(s.seed, key)
	if _, taken := s.byID[h]; taken {
		s.collided[key] = slot
	} else {
		s.byID[h] = slot
	}
	s.indexSlug(l, slot)
}

func (s *LinkSet) indexSlug(l *Link, slot int32) {
	if l.Slug == "" {
		return
	}
	h := s.slugHash(l.DomainID, l.Slug)
	if _, taken := s.bySlug[h]; !taken {
		s.bySlug[h] = slot
	}
}

func (s *LinkSet) slugHash(domainID, slug string) uint64 {
	var h maphash.Hash
	h.SetSeed(s.seed)
	_, _ = h.WriteString(ComparableID(domainID))
	_ = h.WriteByte(0)
	_, _ = h.WriteString(slug)
	return h.Sum64()
}

// slotOf finds the slot of an ID (a UUID in any case).
func (s *LinkSet) slotOf(id string) (int32, bool) { return s.slotOfKey(ComparableID(id)) }

// slotOfKey finds the slot of an ID in the form ComparableID gives.
func (s *LinkSet) slotOfKey(key string) (int32, bool) {
	if slot, ok := s.byID[maphash.String(s.seed, key)]; ok && ComparableID(s.idAt(slot)) == key {
		return slot, true
	}
	slot, ok := s.collided[key]
	return slot, ok
}

// Get returns the link with this ID (a UUID in any case).
func (s *LinkSet) Get(id string) (Link, bool) {
	slot, ok := s.slotOf(id)
	if !ok {
		return Link{}, false
	}
	return s.at(slot), true
}

// BySlug returns the first link that holds slug on the domain domainID.
func (s *LinkSet) BySlug(domainID, slug string) (Link, bool) {
	slot, ok := s.bySlug[s.slugHash(domainID, slug)]
	if !ok {
		// Every link is indexed under its slug's hash: none holds it. This
		// is the answer for every new link a plan checks, so it must not
		// read the set (a million links: half a second a new link).
		return Link{}, false
	}
	if l := s.at(slot); HoldsSlug(&l, domainID, slug) {
		return l, true
	}
	// The hash's first holder holds another slug of the same hash, or a
	// later version of it changed its slug: look at every link.
	for l := range s.All() {
		if HoldsSlug(&l, domainID, slug) {
			return l, true
		}
	}
	return Link{}, false
}

// HoldsSlug reports whether l holds slug on the domain domainID. Domain
// IDs are UUIDs, the same in any case; slugs are case-sensitive.
func HoldsSlug(l *Link, domainID, slug string) bool {
	return SameID(l.DomainID, domainID) && l.Slug == slug
}

// All yields every link in the service's order.
func (s *LinkSet) All() iter.Seq[Link] {
	return func(yield func(Link) bool) {
		for slot := range s.slots {
			if !yield(s.at(int32(slot))) {
				return
			}
		}
	}
}

func (s *LinkSet) record(slot int32) []byte {
	ref := s.slots[slot]
	return s.chunks[ref>>32][uint32(ref):]
}

func (s *LinkSet) at(slot int32) Link {
	return s.decode(s.record(slot))
}

// idAt reads only the ID, the record's first field.
func (s *LinkSet) idAt(slot int32) string {
	id, _ := readBytes(s.record(slot))
	return string(id)
}

// A record is, in order: the ID, destination and slug as length-prefixed
// bytes; the domain ID, short URL, QR code URL (see putAround) and the five
// UTM parameters as shared or inline strings; a byte of flags; then the
// times that the flags say are present, as Unix seconds and nanoseconds.
const (
	flagUTM byte = 1 << iota
	flagUTMKnown
	flagExpires
	flagCreated
	flagUpdated
)

func (s *LinkSet) store(l *Link) recordRef {
	b := make([]byte, 0, 64+len(l.ID)+len(l.Destination)+len(l.Slug))
	b = appendBytes(b, l.ID)
	b = appendBytes(b, l.Destination)
	b = appendBytes(b, l.Slug)
	b = s.shared.put(b, l.DomainID)
	b = s.shared.putAround(b, l.ShortURL, l.Slug)
	b = s.shared.putAround(b, l.QRCodeURL, l.Slug)
	var flags byte
	utm := UTM{}
	if l.UTM != nil {
		flags, utm = flags|flagUTM, *l.UTM
	}
	for i := range UTMParameters {
		b = s.shared.put(b, *utmSlot(&utm, i))
	}
	times := []struct {
		flag byte
		at   *time.Time
	}{{flagExpires, l.ExpiresAt}, {flagCreated, nonZero(l.CreatedAt)}, {flagUpdated, nonZero(l.UpdatedAt)}}
	if l.UTMKnown {
		flags |= flagUTMKnown
	}
	for _, t := range times {
		if t.at != nil {
			flags |= t.flag
		}
	}
	b = append(b, flags)
	for _, t := range times {
		if t.at != nil {
			b = binary.AppendVarint(b, t.at.Unix())
			b = binary.AppendUvarint(b, uint64(t.at.Nanosecond()))
		}
	}
	return s.appendRecord(b)
}

func nonZero(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func (s *LinkSet) appendRecord(b []byte) recordRef {
	last := len(s.chunks) - 1
	if last < 0 || len(s.chunks[last])+len(b) > cap(s.chunks[last]) {
		size := firstChunkBytes
		if last >= 0 {
			size = min(2*cap(s.chunks[last]), linkSetChunkBytes)
		}
		s.chunks = append(s.chunks, make([]byte, 0, max(size, len(b))))
		last++
	}
	ref := recordRef(uint64(last)<<32 | uint64(len(s.chunks[last])))
	s.chunks[last] = append(s.chunks[last], b...)
	return ref
}

func (s *LinkSet) decode(b []byte) Link {
	var l Link
	var raw []byte
	raw, b = readBytes(b)
	l.ID = string(raw)
	raw, b = readBytes(b)
	l.Destination = string(raw)
	raw, b = readBytes(b)
	l.Slug = string(raw)
	l.DomainID, b = s.shared.get(b)
	l.ShortURL, b = s.shared.getAround(b, l.Slug)
	l.QRCodeURL, b = s.shared.getAround(b, l.Slug)
	var utm UTM
	for i := range UTMParameters {
		*utmSlot(&utm, i), b = s.shared.get(b)
	}
	flags := b[0]
	b = b[1:]
	if flags&flagUTM != 0 {
		l.UTM = &utm
	}
	l.UTMKnown = flags&flagUTMKnown != 0
	for _, t := range []struct {
		flag byte
		dst  **time.Time
		zero *time.Time
	}{{flagExpires, &l.ExpiresAt, nil}, {flagCreated, nil, &l.CreatedAt}, {flagUpdated, nil, &l.UpdatedAt}} {
		if flags&t.flag == 0 {
			continue
		}
		sec, n := binary.Varint(b)
		nsec, m := binary.Uvarint(b[n:])
		b = b[n+m:]
		at := time.Unix(sec, int64(nsec)).UTC()
		if t.dst != nil {
			*t.dst = &at
		} else {
			*t.zero = at
		}
	}
	return l
}

func appendBytes(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func readBytes(b []byte) (value, rest []byte) {
	n, k := binary.Uvarint(b)
	return b[k : k+int(n)], b[k+int(n):]
}

// sharedStrings stores strings that many links share (a domain ID, the
// host part of a short URL) once; each record holds their number.
type sharedStrings struct {
	index  map[string]uint32
	values []string
}

// put appends a shared string's number plus one, or 0 and the string
// itself when the table is full.
func (t *sharedStrings) put(b []byte, s string) []byte {
	n, ok := t.index[s]
	if !ok && len(t.values) < maxSharedStrings {
		n, ok = uint32(len(t.values)), true
		t.index[s] = n
		t.values = append(t.values, s)
	}
	if !ok {
		return appendBytes(binary.AppendUvarint(b, 0), s)
	}
	return binary.AppendUvarint(b, uint64(n)+1)
}

func (t *sharedStrings) get(b []byte) (string, []byte) {
	n, k := binary.Uvarint(b)
	if n == 0 {
		raw, rest := readBytes(b[k:])
		return string(raw), rest
	}
	return t.values[n-1], b[k:]
}

// putAround stores s as what comes before and after slug in it
// ("https://sho.rt/" and "" for "https://sho.rt/abc"), each shared: a
// short URL or a QR code URL then costs a few bytes. A first byte of 1
// says so; 0 says s is stored as a whole.
func (t *sharedStrings) putAround(b []byte, s, slug string) []byte {
	i := strings.LastIndex(s, slug)
	if slug == "" || i < 0 {
		return t.put(append(b, 0), s)
	}
	return t.put(t.put(append(b, 1), s[:i]), s[i+len(slug):])
}

func (t *sharedStrings) getAround(b []byte, slug string) (string, []byte) {
	if b[0] == 0 {
		return t.get(b[1:])
	}
	before, b := t.get(b[1:])
	after, b := t.get(b)
	return before + slug + after, b
}
