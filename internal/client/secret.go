package client

import (
	"context"
	"fmt"
	"html"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// Redacted stands where the API key was, in every text the provider
// writes.
const Redacted = "[REDACTED]"

// Secret is the API key as every text the provider writes must not hold
// it: not only as sent, but in each form a message can carry it in. A
// parser that folds case quotes it in capitals, a URL percent-encodes it,
// a JSON or HTML body that repeats it escapes its special characters.
// The Secret of no key, and a nil one, redact nothing. Safe for
// concurrent use.
type Secret struct {
	forms *regexp.Regexp // every form, in any letter case
	// anchor is the key's longest run of characters no encoder escapes:
	// every form holds it, in some letter case, so a text without it holds
	// no form, and needs no regexp (a listing redacts every link's
	// addresses). Empty: no such character.
	anchor string
	// head matches the key's first minFoldedKey characters in any form (nil
	// for a shorter key); later holds the literal forms of each character
	// after them but the last. A text that ends in head and some of later,
	// in order, ends in the key's beginning (cutBeginning). Not one
	// pattern: one optional group nested in the next for each character
	// passes the nesting Go's regexp allows at about 500 characters.
	head  *regexp.Regexp
	later [][]string
}

// minFoldedKey is the shortest key matched in any letter case and inside
// words: a key of a few letters (a placeholder such as "x" or "test", a
// key in tests) would match them in ordinary words, and every message
// would read "the API [REDACTED]ey". A real key, of dozens of random
// characters, never matches so. A shorter key is matched as written, and
// only where it stands alone: not between letters, digits or underscores.
const minFoldedKey = 8

// NewSecret returns the Secret of key ("" for none).
func NewSecret(key string) *Secret {
	if key == "" {
		return &Secret{}
	}
	var chars []string
	var literals [][]string
	for _, r := range key {
		literals = append(literals, charLiterals(r))
		chars = append(chars, pattern(literals[len(literals)-1]))
	}
	flags, alone := "", len(chars) < minFoldedKey
	if !alone {
		flags = "(?i)"
	}
	first, last := wordEdge(alone, key[0]), wordEdge(alone, key[len(key)-1])
	s := &Secret{forms: regexp.MustCompile(flags + first + strings.Join(chars, "") + last), anchor: longestUnescaped(key)}
	if len(chars) > minFoldedKey {
		s.head = regexp.MustCompile(flags + strings.Join(chars[:minFoldedKey], ""))
		s.later = literals[minFoldedKey : len(literals)-1] // the whole key is redacted
	}
	return s
}

// endsInLater says whether text, from at, is the start of later to its
// end: some of the key's characters after its head, in order, in any of
// their forms and letter cases.
func (s *Secret) endsInLater(text string, at int) bool {
	ats := []int{at} // where the next character may start: forms differ in length
	for _, forms := range s.later {
		if slices.Contains(ats, len(text)) {
			return true
		}
		var next []int
		for _, at := range ats {
			for _, f := range forms {
				if end := at + len(f); end <= len(text) && strings.EqualFold(text[at:end], f) && !slices.Contains(next, end) {
					next = append(next, end)
				}
			}
		}
		if ats = next; len(ats) == 0 {
			return false
		}
	}
	return slices.Contains(ats, len(text))
}

// wordEdge is the pattern at an edge of a short key (alone) that keeps it
// from matching inside a word: \b where the key's character there is a
// word character, none where it is not (\b would then ask for a word
// character beside it).
func wordEdge(alone bool, c byte) string {
	if alone && (c == '_' || c < utf8.RuneSelf && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)))) {
		return `\b`
	}
	return ""
}

// charLiterals are the forms one character of the key takes in a text: as
// it is; percent-encoded; escaped as JSON (\u002B, \/) or HTML (&#43;,
// &#x2B;, &amp;). Each character is matched on its own, since encoders
// escape different characters (.NET's JSON escapes +, Go's does not).
func charLiterals(r rune) []string {
	if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_.~", r)) {
		return []string{string(r)} // no encoder escapes these
	}
	forms := []string{string(r), fmt.Sprintf(`\u%04x`, r), fmt.Sprintf(`\u%04X`, r),
		fmt.Sprintf("&#%d;", r), fmt.Sprintf("&#x%x;", r), fmt.Sprintf("&#x%X;", r), html.EscapeString(string(r))}
	if r == '/' {
		forms = append(forms, `\/`)
	}
	if r == '\'' {
		forms = append(forms, "&apos;")
	}
	var encoded strings.Builder
	for _, b := range []byte(string(r)) {
		fmt.Fprintf(&encoded, "%%%02X", b)
	}
	return append(forms, encoded.String(), strings.ToLower(encoded.String()))
}

// pattern matches any of literals.
func pattern(literals []string) string {
	quoted := make([]string, 0, len(literals))
	for _, f := range literals {
		quoted = append(quoted, regexp.QuoteMeta(f))
	}
	return "(?:" + strings.Join(quoted, "|") + ")"
}

// Redact is s with every form of the key replaced by Redacted.
func (s *Secret) Redact(text string) string {
	if !s.mayHold(text) {
		return text
	}
	return s.forms.ReplaceAllLiteralString(text, Redacted)
}

// mayHold is false where text surely holds no form of the key.
func (s *Secret) mayHold(text string) bool {
	if s == nil || s.forms == nil {
		return false
	}
	for i := 0; i+len(s.anchor) <= len(text); i++ {
		if strings.EqualFold(text[i:i+len(s.anchor)], s.anchor) {
			return true
		}
	}
	return false
}

// longestUnescaped is the longest run of key's characters that every
// form of it writes as they are (charLiterals).
func longestUnescaped(key string) string {
	longest, start := "", 0
	for i, r := range key + " " {
		if len(charLiterals(r)) == 1 && r != ' ' {
			continue
		}
		if i-start > len(longest) {
			longest = key[start:i]
		}
		start = i + utf8.RuneLen(r)
	}
	return longest
}

// Holds says whether text holds the key in any form.
func (s *Secret) Holds(text string) bool {
	return s.mayHold(text) && s.forms.MatchString(text)
}

// cutBeginning is text, redacted, without an ending that is the first
// minFoldedKey characters of the key or more: a quote of an answer still
// arriving stops where reading stopped, which may be in a key that the
// rest would have completed. Fewer are left, since ordinary text ends in
// a key's first letters often, and those of a key (sk_live_) are no
// secret. The cut is marked as a snippet's is.
func (s *Secret) cutBeginning(text string) string {
	text = s.Redact(text)
	if s == nil || s.head == nil {
		return text
	}
	for from := 0; from < len(text); {
		at := s.head.FindStringIndex(text[from:])
		if at == nil {
			break
		}
		if start := from + at[0]; s.endsInLater(text, from+at[1]) {
			return text[:start] + "…"
		}
		_, size := utf8.DecodeRuneInString(text[from+at[0]:])
		from += at[0] + size // heads may overlap
	}
	return text
}

// redactLink takes the key out of the addresses the service made for a
// link, which go into the state as they are: a service, or a proxy in
// front of it, that echoes the key into them would have the state hold
// it. The fields the configuration sets are compared with it, not stored
// blindly, and are left as answered.
func (s *Secret) redactLink(l *Link) {
	if l != nil && s != nil && s.forms != nil {
		l.ShortURL, l.QRCodeURL = s.Redact(l.ShortURL), s.Redact(l.QRCodeURL)
	}
}

// Masking returns ctx with tflog masking every form of the key, in
// messages and in field values.
func (s *Secret) Masking(ctx context.Context) context.Context {
	if s == nil || s.forms == nil {
		return ctx
	}
	ctx = tflog.MaskAllFieldValuesRegexes(ctx, s.forms)
	return tflog.MaskMessageRegexes(ctx, s.forms)
}
