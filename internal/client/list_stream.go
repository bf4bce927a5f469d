package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// MaxLinkRecordBytes bounds one link of a list answer, and any other value
// of the list's envelope: a link is a few hundred bytes, so a larger one is
// not a link. The answer as a whole has no bound (an account can hold a
// million links); it is read one link at a time. The read bound of each
// attempt (Config.ReadAttemptTimeout) ends an answer that stalls, and the
// read's operation deadline one that never ends.
const MaxLinkRecordBytes = 64 << 10

// headBytes is how much of an answer's start is kept for messages.
const headBytes = 200

// errAnswerNotJSON is an answer that is not JSON from its start. Its start
// is quoted by the caller (listAnswerError), as it is for every answer that
// cannot be read; the value's own quote, or the parser's complaint about
// its first characters, would say it again.
var errAnswerNotJSON = errors.New("the answer is not JSON")

// errValueTooLarge is a value over MaxLinkRecordBytes.
var errValueTooLarge = errors.New("value over the bound")

// listStream reads a list answer as it streams in: it cuts the answer into
// its values (framing), a link at a time, in a buffer of a value's bound,
// and keeps the answer's first bytes for messages. Each value is checked
// with json.Valid before it is read; the separators between them are
// checked here.
type listStream struct {
	body io.Reader
	buf  []byte // buf[pos:] is read and not yet used
	pos  int
	read int64
	head []byte
	// failed is the connection's error, if reading the body failed: the
	// answer was not wrong, the attempt was cut short.
	failed error
	// secret is the API key, taken out of what the messages quote; headKept
	// is how much of the start is kept, headBytes and a key's length, so
	// that a key across the quote's end is found whole.
	secret   *Secret
	headKept int
}

func newListStream(body io.Reader) *listStream {
	return &listStream{body: body, buf: make([]byte, 0, 64<<10), secret: NewSecret(""), headKept: headBytes}
}

// fill reads more of the body after buf[pos:]; io.EOF at its end.
func (s *listStream) fill() error {
	if s.pos > 0 {
		s.buf = s.buf[:copy(s.buf, s.buf[s.pos:])]
		s.pos = 0
	}
	if len(s.buf) == cap(s.buf) {
		s.buf = append(s.buf, make([]byte, cap(s.buf))...)[:len(s.buf)]
	}
	for {
		n, err := s.body.Read(s.buf[len(s.buf):cap(s.buf)])
		if len(s.head) < s.headKept {
			s.head = append(s.head, s.buf[len(s.buf):len(s.buf)+min(n, s.headKept-len(s.head))]...)
		}
		s.buf = s.buf[:len(s.buf)+n]
		s.read += int64(n)
		switch {
		case n > 0:
			return nil
		case err == io.EOF:
			return io.EOF
		case err != nil:
			s.failed = err
			return err
		}
	}
}

// next returns the next byte that is not white space, without using it.
func (s *listStream) next() (byte, error) {
	for {
		for ; s.pos < len(s.buf); s.pos++ {
			if c := s.buf[s.pos]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				return c, nil
			}
		}
		if err := s.fill(); err != nil {
			return 0, err
		}
	}
}

// value frames the next value and checks that it is valid JSON; what
// names it in messages (a function, so that a million links cost no
// message they do not need). The value is only good until the next call.
func (s *listStream) value(what func() string) ([]byte, error) {
	if _, err := s.next(); err != nil {
		return nil, s.explain(what(), err)
	}
	n, err := s.frame()
	if err != nil {
		return nil, s.explain(what(), err)
	}
	raw := s.buf[s.pos : s.pos+n]
	if !json.Valid(raw) {
		return nil, fmt.Errorf("%s is not valid JSON: %w; it begins %q", what(), json.Unmarshal(raw, new(json.RawMessage)), redactedSnippet(s.secret, string(raw), headBytes))
	}
	s.pos += n
	return raw, nil
}

// frame reads until the value at buf[pos:] is whole, and returns its
// length.
func (s *listStream) frame() (int, error) {
	for {
		rest := s.buf[s.pos:]
		n, complete := scanValue(rest)
		switch {
		case n > MaxLinkRecordBytes:
			return 0, errValueTooLarge
		case complete:
			return n, nil
		}
		err := s.fill()
		if errors.Is(err, io.EOF) && n == len(rest) && strings.IndexByte(`"{[`, rest[0]) < 0 {
			return n, nil // a number or literal that ends the answer is whole
		}
		if err != nil {
			return 0, err
		}
	}
}

// scanValue returns the length of the value at the start of b, and false
// when b ends before it does. It only finds where the value ends;
// json.Valid says whether it is JSON.
func scanValue(b []byte) (int, bool) {
	switch b[0] {
	case '"':
		end := stringEnd(b, 0)
		return end, end <= len(b) && b[end-1] == '"' && end > 1
	case '{', '[':
		return nestedEnd(b, 0)
	}
	n := valueEnd(b, 0)
	return n, n < len(b)
}

// expect uses the next byte, which must be one of want.
func (s *listStream) expect(want string, after func() string) (byte, error) {
	c, err := s.next()
	if errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("the answer ends after %s, at %d bytes: it was cut short", after(), s.read)
	}
	if err != nil {
		return 0, err
	}
	if strings.IndexByte(want, c) < 0 {
		return 0, fmt.Errorf("expected %s after %s, got %q; what follows begins %q", strings.Join(strings.Split(want, ""), " or "), after(), c, s.rest())
	}
	s.pos++
	return c, nil
}

// explain says what went wrong reading a value, and what came back. An
// error of the connection is returned as it is: the attempt is retried.
func (s *listStream) explain(what string, err error) error {
	switch {
	case errors.Is(err, errValueTooLarge):
		return fmt.Errorf("%s is larger than %d KiB, the client's bound for one link; it begins %q", what, MaxLinkRecordBytes>>10, s.rest())
	case errors.Is(err, io.EOF):
		return fmt.Errorf("the answer ends in the middle of %s, after %d bytes: it was cut short", what, s.read)
	}
	return err
}

// rest is the start of what is read and not yet used.
func (s *listStream) rest() string {
	return redactedSnippet(s.secret, string(s.buf[s.pos:min(len(s.buf), s.pos+s.headKept+1)]), headBytes)
}

// decodeList reads a list answer as it streams in, one link at a time: a
// bare array, or one wrapped in {"data":[…]}, {"links":[…]} or
// {"items":[…]} with paging fields beside it (before or after it). Only
// the links (in a LinkSet) and the paging fields are kept.
func (s *listStream) decodeList() (*LinkSet, *page, error) {
	c, err := s.next()
	switch {
	case errors.Is(err, io.EOF):
		return nil, nil, errors.New("the body is empty")
	case err != nil:
		return nil, nil, err
	case c == '[':
		s.pos++
		links, err := s.items()
		if err != nil {
			return nil, nil, err
		}
		return links, &page{}, s.end()
	case c == '{':
		s.pos++
		return s.envelope()
	}
	if !strings.ContainsRune(`"-0123456789tfn`, rune(c)) {
		// No JSON value starts so (a page, a text): not framed.
		return nil, nil, errAnswerNotJSON
	}
	raw, err := s.value(func() string { return "the answer" })
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return nil, nil, errAnswerNotJSON
	case err != nil:
		return nil, nil, err
	}
	return nil, nil, fmt.Errorf("expected a list of links, got %s", kind(raw))
}

// envelope reads the fields of a list object after its '{': the list
// under the most preferred of listEnvelopes that holds an array or null,
// and the paging fields.
func (s *listStream) envelope() (*LinkSet, *page, error) {
	var links *LinkSet
	rank := len(listEnvelopes)
	var paging object
	for {
		if c, err := s.next(); err == nil && c == '}' && paging == nil && links == nil {
			s.pos++
			break
		}
		raw, err := s.value(func() string { return "a field name of the list object" })
		if err != nil {
			return nil, nil, err
		}
		key, ok := stringValue(raw)
		if !ok {
			return nil, nil, fmt.Errorf("expected a field name in the list object, got %s", kind(raw))
		}
		what := func() string { return fmt.Sprintf("the list's field %q", key) }
		if _, err := s.expect(":", what); err != nil {
			return nil, nil, err
		}
		if r := slices.Index(listEnvelopes, key); r >= 0 {
			found, err := s.listUnder(what)
			if err != nil {
				return nil, nil, err
			}
			if found != nil && r <= rank {
				links, rank = found, r
			}
		} else if raw, err := s.value(what); err != nil {
			return nil, nil, err
		} else if isPagingKey(key) {
			paging = append(paging, field{key: key, raw: bytes.Clone(raw)})
		}
		if c, err := s.expect(",}", what); err != nil {
			return nil, nil, err
		} else if c == '}' {
			break
		}
	}
	if links == nil {
		return nil, nil, errors.New(`no list of links in the body: expected an array, or an object with a "data", "links" or "items" array`)
	}
	p := &page{}
	readPaging(paging, p)
	return links, p, s.end()
}

// listUnder reads the value of a list envelope's key: the links of an
// array, an empty set for null, nil for anything else (a HAL-style
// "links" object of paging links is skipped).
func (s *listStream) listUnder(what func() string) (*LinkSet, error) {
	c, err := s.next()
	if err != nil {
		return nil, s.explain(what(), err)
	}
	if c == '[' {
		s.pos++
		return s.items()
	}
	raw, err := s.value(what)
	if err != nil || kind(raw) != "null" {
		return nil, err
	}
	return NewLinkSet(), nil
}

// items reads the links of an array after its '['.
func (s *listStream) items() (*LinkSet, error) {
	links := NewLinkSet()
	if c, err := s.next(); err == nil && c == ']' {
		s.pos++
		return links, nil
	}
	for i := 0; ; i++ {
		what := func() string { return fmt.Sprintf("item %d of the list", i) }
		raw, err := s.value(what)
		if err != nil {
			return nil, err
		}
		l, err := decodeValidLink(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what(), err)
		}
		s.secret.redactLink(l)
		links.Add(l)
		if c, err := s.expect(",]", what); err != nil {
			return nil, err
		} else if c == ']' {
			return links, nil
		}
	}
}

// end checks that nothing follows the list, as a JSON document would.
func (s *listStream) end() error {
	if _, err := s.next(); errors.Is(err, io.EOF) {
		return nil
	} else if err != nil {
		return err
	}
	return fmt.Errorf("the body goes on after the list; what follows begins %q", s.rest())
}

func isPagingKey(key string) bool {
	for _, keys := range [][]string{keysNextURL, keysCursor, keysHasMore, pagingContainers} {
		if slices.Contains(keys, key) {
			return true
		}
	}
	return false
}
