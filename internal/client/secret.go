package client

import (
	"context"
	"encoding/json"
	"html"
	"net/url"
	"regexp"
	"strings"

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
	key   string
	forms *regexp.Regexp // every form, in any letter case
}

// minFoldedKey is the shortest key matched in any letter case: a key of a
// few letters (as in tests) would match them in ordinary words, which a
// real key, of dozens of random characters, never does.
const minFoldedKey = 8

// NewSecret returns the Secret of key ("" for none).
func NewSecret(key string) *Secret {
	if key == "" {
		return &Secret{}
	}
	quoted, _ := json.Marshal(key) // escapes <, > and & as \u003c…
	asJSON := strings.Trim(string(quoted), `"`)
	forms := []string{key, url.QueryEscape(key), url.PathEscape(key), asJSON,
		strings.ReplaceAll(asJSON, "/", `\/`), html.EscapeString(key)}
	alternatives := make([]string, 0, len(forms))
	for _, f := range forms {
		alternatives = append(alternatives, regexp.QuoteMeta(f))
	}
	pattern := strings.Join(alternatives, "|")
	if len(key) >= minFoldedKey {
		pattern = "(?i)" + pattern
	}
	return &Secret{key: key, forms: regexp.MustCompile(pattern)}
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

// cutBeginning is text, redacted, without an ending that begins the key:
// a quote of an answer still arriving stops where reading stopped, which
// may be the first bytes of a key that the rest would have completed. The
// cut is marked as a snippet's is.
func (s *Secret) cutBeginning(text string) string {
	text = s.Redact(text)
	if s == nil {
		return text
	}
	for n := min(len(s.key)-1, len(text)); n > 0; n-- {
		if strings.EqualFold(text[len(text)-n:], s.key[:n]) {
			return text[:len(text)-n] + "…"
		}
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
