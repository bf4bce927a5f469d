package client

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"
)

// A key with the characters that URLs, JSON and HTML escape, as base64
// keys have.
const specialKey = "sk_live_S3CRET+k3y/456=<&>"

// Every form a message can carry the key in is redacted, in any letter
// case; text without the key is left as it is.
func TestSecret_redactsEveryForm(t *testing.T) {
	secret := NewSecret(specialKey)
	for name, form := range map[string]string{
		"as sent":            specialKey,
		"in capitals":        strings.ToUpper(specialKey), // a parser that folds case
		"in a query":         "sk_live_S3CRET%2Bk3y%2F456%3D%3C%26%3E",
		"in a query, lower":  "sk_live_S3CRET%2bk3y%2f456%3d%3c%26%3e",
		"in a path":          "sk_live_S3CRET+k3y%2F456=%3C&%3E",
		"in JSON":            `sk_live_S3CRET+k3y/456=\u003c\u0026\u003e`,
		"in JSON, slash too": `sk_live_S3CRET+k3y\/456=\u003c\u0026\u003e`,
		"in HTML":            "sk_live_S3CRET+k3y/456=&lt;&amp;&gt;",
		"in HTML, by number": "sk_live_S3CRET&#43;k3y&#x2F;456&#61;&lt;&amp;&gt;",
		"in .NET's JSON":     `sk_live_S3CRET\u002Bk3y/456=\u003C\u0026\u003E`,
		"partly encoded":     "sk_live_S3CRET%2Bk3y/456=<&>",
	} {
		if got := secret.Redact("key " + form + " revoked"); got != "key "+Redacted+" revoked" {
			t.Errorf("%s: Redact(%q) = %q", name, form, got)
		}
		if !secret.Holds("x" + form) {
			t.Errorf("%s: Holds(%q) = false", name, form)
		}
	}
	if got := secret.Redact("sk_live_S3CRET and k3y apart"); got != "sk_live_S3CRET and k3y apart" {
		t.Errorf("text without the key changed: %q", got)
	}
	if got := NewSecret("k3y").Redact("Bearer k3y, again k3y"); got != "Bearer [REDACTED], again [REDACTED]" {
		t.Errorf("not every occurrence redacted: %q", got)
	}
	// A key of a few letters (a placeholder) is matched as written and
	// alone only: in any case, or inside words, it would match them in
	// every message.
	for key, texts := range map[string]map[string]string{
		"k": {
			"Set base_url in SHORTLINK_BASE_URL": "Set base_url in SHORTLINK_BASE_URL",
			"The service rejected the API key":   "The service rejected the API key",
			"Bearer k, again k; api_key=k":       "Bearer [REDACTED], again [REDACTED]; api_key=[REDACTED]",
			"key_k k_key":                        "key_k k_key",
		},
		"test": {"the latest tests": "the latest tests", `{"key":"test"}`: `{"key":"[REDACTED]"}`, "TEST": "TEST"},
		"+x/":  {"a+x/b": "a[REDACTED]b", "x/": "x/", "e%2Bx%2F": "e[REDACTED]", "e%2bx%2f": "e[REDACTED]", `e\u002Bx/`: "e[REDACTED]"},
		// An underscore is a word character: a key that begins with one
		// does not stand alone after a letter.
		"_k": {"a_k": "a_k", "_k": "[REDACTED]", "key _k": "key [REDACTED]"},
		// From minFoldedKey characters on, a key is matched in any case.
		"abcd1234": {"key ABCD1234": "key [REDACTED]"},
	} {
		secret := NewSecret(key)
		for text, want := range texts {
			if got := secret.Redact(text); got != want {
				t.Errorf("key %q: Redact(%q) = %q, want %q", key, text, got, want)
			}
			if got := secret.Holds(text); got != (want != text) {
				t.Errorf("key %q: Holds(%q) = %v", key, text, got)
			}
		}
	}
	for _, none := range []*Secret{NewSecret(""), nil} {
		if got := none.Redact("anything"); got != "anything" {
			t.Errorf("no key redacted something: %q", got)
		}
	}
}

// A quote that stops in the key's first bytes (the rest of the answer not
// yet arrived) ends before them.
func TestSecret_cutBeginning(t *testing.T) {
	secret := NewSecret(testKey)
	for text, want := range map[string]string{
		"Bearer " + testKey[:12]:          "Bearer …",
		"Bearer " + testKey[:8]:           "Bearer …",
		"Bearer " + testKey + " and more": "Bearer " + Redacted + " and more",
		"nothing of it":                   "nothing of it",
		// Ordinary text ends in a key's first letters often (sk_…).
		"Too many requests":     "Too many requests",
		"Bearer " + testKey[:7]: "Bearer " + testKey[:7],
	} {
		if got := secret.cutBeginning(text); got != want {
			t.Errorf("cutBeginning(%q) = %q, want %q", text, got, want)
		}
	}
	// However long the key: a key of hundreds of characters once passed
	// the nesting Go's regexp allows, and the panic quoted the key.
	long := strings.Repeat(specialKey, MaxAPIKeyLength/len(specialKey))
	longSecret := NewSecret(long)
	for _, begun := range []string{long[:5000], strings.ToUpper(long[:len(long)-1]), strings.ReplaceAll(long[:3000], "+", "%2B")} {
		if got := longSecret.cutBeginning("ends in " + begun); got != "ends in …" {
			t.Errorf("cutBeginning of a text ending in %d characters of a long key = %.40q…", len(begun), got)
		}
	}
	// Only an ending is a quote cut short; the same characters followed by
	// others are not the key.
	if text := "ends in " + long[:5000] + "!"; longSecret.cutBeginning(text) != text {
		t.Errorf("a text that goes on after %d characters of the key was cut", 5000)
	}
	// The first characters in any form the whole key is redacted in.
	special := NewSecret(specialKey)
	for _, begun := range []string{strings.ToUpper(specialKey[:20]), `sk_live_S3CRET\u002Bk3y\/4`, "sk_live_S3CRET%2Bk3y%2F456%3D"} {
		if got := special.cutBeginning("ends in " + begun); got != "ends in …" {
			t.Errorf("cutBeginning of a text ending in %q = %q", begun, got)
		}
	}
}

// tflog masks every form of the key, in messages and fields.
func TestSecret_masking(t *testing.T) {
	var logs bytes.Buffer
	ctx := NewSecret(specialKey).Masking(tflogtest.RootLogger(context.Background(), &logs))
	tflog.Info(ctx, "echoed "+strings.ToUpper(specialKey), map[string]any{"url": "https://h/?k=sk_live_S3CRET%2Bk3y%2F456%3D%3C%26%3E"})
	if strings.Contains(strings.ToLower(logs.String()), "s3cret") {
		t.Fatalf("the log holds the key: %s", logs.String())
	}
	logs.Reset()
	ctx = NewSecret("k").Masking(tflogtest.RootLogger(context.Background(), &logs))
	tflog.Info(ctx, "GET /api/links with key k", map[string]any{"key": "k"})
	if got := logs.String(); !strings.Contains(got, "GET /api/links with key ***") || strings.Contains(got, `"k"`) {
		t.Fatalf("a short key is masked where it stands alone only: %s", got)
	}
}

// A list answer that stops in the middle of an echoed key, while its rest
// is on the way, is quoted without the key's first bytes.
func TestListAnswerStoppingInTheKeyQuotesNoPartOfIt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"id":"a"} Bearer ` + testKey[:12]))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the rest never comes while the client reads
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv, func(cfg *Config) { cfg.MaxRetries = new(0) })
	_, err := c.ListLinks(context.Background())
	if err == nil {
		t.Fatal("the list succeeded; want an error quoting the answer")
	}
	if !strings.Contains(err.Error(), "Bearer") {
		t.Fatalf("the error does not quote the answer, so it proves nothing: %v", err)
	}
	if strings.Contains(err.Error(), testKey[:8]) {
		t.Fatalf("the error quotes the key's first bytes: %v", err)
	}
}

// Every form of the key holds its longest run of characters no encoder
// escapes, so a text without that run is passed over without a regexp.
func TestSecret_anchor(t *testing.T) {
	for key, want := range map[string]string{specialKey: "sk_live_S3CRET", "ab+cdef/gh": "cdef", "+/=": ""} {
		if got := longestUnescaped(key); got != want {
			t.Errorf("longestUnescaped(%q) = %q, want %q", key, got, want)
		}
	}
	if secret := NewSecret("+/=+/=+/="); secret.Redact("key %2B%2F%3D%2b%2f%3d+/=") != "key "+Redacted {
		t.Error("a key with no character left as it is was not redacted")
	}
}
