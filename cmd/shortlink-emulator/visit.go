package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/wire"
)

// The subcommands click and export let `make demo` (and users without curl)
// act as a visitor and as an analyst against a running emulator.

// runClick visits a short link n times, as browsers following it would.
//
//	shortlink-emulator click -url https://go.example.test/spring -base http://127.0.0.1:8080 -n 3 -referrer https://news.example/
func runClick(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("click", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := baseFlag(fs)
	short := fs.String("url", "", "the short URL to visit, such as https://go.example.test/spring")
	n := fs.Int("n", 1, "how many visits")
	referrer := fs.String("referrer", "", "Referer header of the visits")
	if err := parseOnlyFlags(fs, args); err != nil {
		return err
	}
	if *n < 1 {
		return fmt.Errorf("-n %d: must be 1 or more", *n)
	}
	u, err := url.Parse(*short)
	if err != nil || u.Host == "" {
		return fmt.Errorf("-url %q is not a short URL; give a whole one, scheme and host included, such as https://go.example.test/spring (a link's short_url)", *short)
	}
	// The emulator serves short links of every domain under /r/<host>/.
	visit := base() + "/r/" + u.Host + u.Path
	c := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	for range *n {
		req, err := http.NewRequest(http.MethodGet, visit, nil)
		if err != nil {
			return err
		}
		if *referrer != "" {
			req.Header.Set("Referer", *referrer)
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		fmt.Fprintf(stdout, "%s → %d %s\n", *short, resp.StatusCode, resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusFound {
			return fmt.Errorf("%s answered %s, not a redirect: %s", *short, resp.Status, visitProblem(resp.StatusCode))
		}
	}
	return nil
}

// visitProblem explains a short link that did not redirect.
func visitProblem(status int) string {
	switch status {
	case http.StatusNotFound:
		return "no link with that slug on that domain (list them with GET /api/links)"
	case http.StatusGone:
		return "the link has expired"
	}
	return "is -base the emulator's address?"
}

// baseFlag is the subcommands' -base: where they find the emulator, else
// SHORTLINK_BASE_URL as the provider reads it, else where the emulator
// listens by default. The flag package does not see that default, or it
// would print it a second time beside the description.
func baseFlag(fs *flag.FlagSet) func() string {
	base := fs.String("base", "", "base URL of the emulator (default $SHORTLINK_BASE_URL, else http://127.0.0.1:8080)")
	return func() string { return cmp.Or(*base, os.Getenv("SHORTLINK_BASE_URL"), "http://127.0.0.1:8080") }
}

// maxQuote bounds the quote of an answer that refused the export.
const maxQuote = 512

// runExport prints the analytics export, with the API key taken from
// SHORTLINK_API_KEY so it stays out of the process list.
func runExport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := baseFlag(fs)
	linkID := fs.String("link-id", "", "export only this link")
	if err := parseOnlyFlags(fs, args); err != nil {
		return err
	}
	key := os.Getenv("SHORTLINK_API_KEY")
	if key == "" {
		return errors.New("set SHORTLINK_API_KEY to a key with links:read")
	}
	target := base() + "/api/analytics/export"
	if *linkID != "" {
		target += "?linkId=" + url.QueryEscape(*linkID)
	}
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/csv")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// Quoted without the key: what answered may be other than the
		// emulator, and echo it. The key is taken out before the quote is
		// cut, so a key the cut would halve is read whole (6 bytes a byte
		// in its longest form, &#x2F;) and leaves no part of itself.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxQuote+6*int64(len(key))))
		return fmt.Errorf("export answered %s: %s", resp.Status, wire.Snippet(client.NewSecret(key).Redact(string(body)), maxQuote))
	}
	_, err = io.Copy(stdout, resp.Body)
	return err
}
