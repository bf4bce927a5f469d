package client

import (
	"context"
	"fmt"
	"html"
	"regexp"
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
	// begun matches, at the end of a text, the key's first minFoldedKey
	// characters or more, in any form (nil for a shorter key).
	begun *regexp.Regexp
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
	for _, r := range key {
		chars = append(chars, charForms(r))
	}
	flags, alone := "", len(chars) < minFoldedKey
	if !alone {
		flags = "(?i)"
	}
	first, last := wordEdge(alone, key[0]), wordEdge(alone, key[len(key)-1])
	s := &Secret{forms: regexp.MustCompile(flags + first + strings.Join(chars, "") + last)}
	if len(chars) > minFoldedKey {
		// The first minFoldedKey characters, then each next one optional
		// only if all before it are there, at the text's end.
		tail := ""
		for i := len(chars) - 2; i >= minFoldedKey; i-- {
			tail = "(?:" + chars[i] + tail + ")?"
		}
		s.begun = regexp.MustCompile(flags + strings.Join(chars[:minFoldedKey], "") + tail + "$")
	}
	return s
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

// charForms is a pattern of the forms one character of the key takes in
// a text: as it is; percent-encoded; escaped as JSON (\u002B, \/) or
// HTML (&#43;, &#x2B;, &amp;). Each character is matched on its own, since
// encoders escape different characters (.NET's JSON escapes +, Go's does
// not).
func charForms(r rune) string {
	if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_.~", r)) {
		return regexp.QuoteMeta(string(r)) // no encoder escapes these
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
	forms = append(forms, encoded.String(), strings.ToLower(encoded.String()))
	quoted := make([]string, 0, len(forms))
	for _, f := range forms {
		quoted = append(quoted, regexp.QuoteMeta(f))
	}
	return "(?:" + strings.Join(quoted, "|") + ")"
}

// Redact is s with every form of the key replaced by Redacted.
func (s *Secret) Redact(text string) string {
	if s == nil || s.forms == nil {
		return text
	}
	return s.forms.ReplaceAllLiteralString(text, Redacted)
}

// Holds says whether text holds the key in any form.
func (s *Secret) Holds(text string) bool {
	return s != nil && s.forms != nil && s.forms.MatchString(text)
}

// cutBeginning is text, redacted, without an ending that is the first
// minFoldedKey characters of the key or more: a quote of an answer still
// arriving stops where reading stopped, which may be in a key that the
// rest would have completed. Fewer are left, since ordinary text ends in
// a key's first letters often, and those of a key (sk_live_) are no
// secret. The cut is marked as a snippet's is.
func (s *Secret) cutBeginning(text string) string {
	text = s.Redact(text)
	if s == nil || s.begun == nil {
		return text
	}
	if at := s.begun.FindStringIndex(text); at != nil {
		return text[:at[0]] + "…"
	}
	return text
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
