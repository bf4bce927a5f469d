package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/clitest"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// instance is one emulator started by run in the background.
type instance struct {
	info           startInfo
	infoFile       string
	stdout, stderr *clitest.SyncBuffer
	stop           func() error // ends run and returns its error
}

// start runs the command with a free port, an info file, no filter delay and
// extra, and waits for the info file.
func start(t *testing.T, extra ...string) *instance {
	t.Helper()
	infoFile := filepath.Join(t.TempDir(), "info.json")
	args := append([]string{"-addr", "127.0.0.1:0", "-info-file", infoFile, "-filter-delay", "0"}, extra...)
	in := &instance{infoFile: infoFile, stdout: &clitest.SyncBuffer{}, stderr: &clitest.SyncBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, in.stdout, in.stderr) }()
	var once sync.Once
	var runErr error
	in.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(10 * time.Second):
				runErr = errors.New("run did not return after cancel")
			}
		})
		return runErr
	}
	t.Cleanup(func() { _ = in.stop() })

	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(infoFile)
		if err == nil {
			// The file is written whole: the first successful read parses.
			if err := json.Unmarshal(b, &in.info); err != nil {
				t.Fatalf("info file %q: %v", b, err)
			}
			return in
		}
		select {
		case err := <-done:
			t.Fatalf("run ended before writing the info file: %v\nstderr: %s", err, in.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no info file after 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// call sends an API request to the instance.
func (in *instance) call(t *testing.T, method, path, key string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, in.info.BaseURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// remainingWrites sends a DELETE of a link that does not exist: its status,
// and what X-RateLimit-Remaining says of the key's writes.
func (in *instance) remainingWrites(t *testing.T) (status, remaining int) {
	t.Helper()
	req, err := http.NewRequest(http.MethodDelete, in.info.BaseURL+"/api/links/00000000-0000-0000-0000-000000000000", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+in.info.APIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	remaining, err = strconv.Atoi(resp.Header.Get("X-RateLimit-Remaining"))
	if err != nil {
		t.Fatalf("X-RateLimit-Remaining: %v", err)
	}
	return resp.StatusCode, remaining
}

func (in *instance) createLink(t *testing.T, slug string) map[string]any {
	t.Helper()
	status, body := in.call(t, http.MethodPost, "/api/links", in.info.APIKey,
		map[string]any{"destination": "https://example.com/" + slug, "domainId": in.info.DomainID, "slug": slug})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	var link map[string]any
	if err := json.Unmarshal(body, &link); err != nil {
		t.Fatal(err)
	}
	return link
}

func (in *instance) listSlugs(t *testing.T) []string {
	t.Helper()
	status, body := in.call(t, http.MethodGet, "/api/links", in.info.APIKey, nil)
	if status != http.StatusOK {
		t.Fatalf("list: %d %s", status, body)
	}
	var links []struct{ Slug string }
	if err := json.Unmarshal(body, &links); err != nil {
		t.Fatal(err)
	}
	var slugs []string
	for _, l := range links {
		slugs = append(slugs, l.Slug)
	}
	return slugs
}

func TestRunServesTheAPI(t *testing.T) {
	in := start(t, "-quiet", "-write-limit", "7", "-domain", "Links.Example.Test")
	info := in.info
	if !strings.HasPrefix(info.BaseURL, "http://127.0.0.1:") || strings.HasSuffix(info.BaseURL, ":0") {
		t.Errorf("baseUrl = %q", info.BaseURL)
	}
	for name, v := range map[string]string{"apiKey": info.APIKey, "readKey": info.ReadKey, "writeKey": info.WriteKey, "domainId": info.DomainID, "accountId": info.AccountID, "adminToken": info.AdminToken} {
		if v == "" {
			t.Errorf("%s is empty in the info file", name)
		}
	}
	if info.DomainHost != "links.example.test" {
		t.Errorf("domainHost = %q", info.DomainHost)
	}
	out := in.stdout.String()
	for _, want := range []string{`base_url = "` + info.BaseURL + `"`, `api_key  = "` + info.APIKey + `"`, info.DomainID, info.AdminToken,
		"export SHORTLINK_BASE_URL=" + info.BaseURL + " SHORTLINK_API_KEY=" + info.APIKey, "account_id:     " + info.AccountID} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}

	link := in.createLink(t, "spring")
	if link["shortUrl"] != "https://links.example.test/spring" {
		t.Errorf("shortUrl = %v", link["shortUrl"])
	}
	if got := in.listSlugs(t); len(got) != 1 || got[0] != "spring" {
		t.Errorf("list = %v", got)
	}
	// The flags are in force, and the admin API answers to the printed token.
	req, err := http.NewRequest(http.MethodGet, info.BaseURL+"/_emulator/settings", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(emulator.AdminTokenHeader, info.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var settings emulator.Settings
	err = json.NewDecoder(resp.Body).Decode(&settings)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("admin settings: %d %v", resp.StatusCode, err)
	}
	if settings.Limits.Write != 7 || settings.Limits.Read != 600 || settings.Filter.Delay != 0 {
		t.Errorf("settings = %+v", settings)
	}

	if err := in.stop(); err != nil {
		t.Errorf("run returned %v after cancel", err)
	}
	if resp, err := http.Get(info.BaseURL + "/api/links"); err == nil {
		resp.Body.Close()
		t.Error("the emulator still answers after stop")
	}
	// A script that waits for the info file must not find a stopped emulator's.
	if _, err := os.Stat(in.infoFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the info file outlived the emulator: %v", err)
	}
	if in.stderr.String() != "" {
		t.Errorf("-quiet logged: %s", in.stderr)
	}
}

func TestRunRestartReusesFixture(t *testing.T) {
	data := filepath.Join(t.TempDir(), "store.json")
	first := start(t, "-quiet", "-data", data)
	first.createLink(t, "kept")
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}

	second := start(t, "-quiet", "-data", data)
	a, b := first.info, second.info
	if a.APIKey != b.APIKey || a.ReadKey != b.ReadKey || a.WriteKey != b.WriteKey || a.DomainID != b.DomainID || a.AccountID != b.AccountID || a.DomainHost != b.DomainHost {
		t.Errorf("fixture changed across the restart:\n %+v\n %+v", a, b)
	}
	if got := second.listSlugs(t); len(got) != 1 || got[0] != "kept" {
		t.Errorf("links after restart = %v", got)
	}
	// The slug index was rebuilt.
	status, body := second.call(t, http.MethodPost, "/api/links", b.APIKey, map[string]any{"destination": "https://example.com/", "domainId": b.DomainID, "slug": "kept"})
	if status != http.StatusConflict {
		t.Errorf("duplicate slug after restart: %d %s", status, body)
	}
	second.createLink(t, "new")
	if err := second.stop(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Dir(data))
	if err != nil || len(entries) != 1 {
		t.Errorf("data directory holds %v (%v)", entries, err)
	}
}

// A key revoked through the admin API is replaced at the next start, and
// the account, its domain and its links are the same: the data file stays
// usable (it failed to start, seeding the taken domain again).
func TestRunRestartReplacesARevokedKey(t *testing.T) {
	data := filepath.Join(t.TempDir(), "store.json")
	first := start(t, "-quiet", "-data", data)
	first.createLink(t, "kept")
	b, err := json.Marshal(map[string]string{"key": first.info.APIKey})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, first.info.BaseURL+"/_emulator/keys/revoke", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(emulator.AdminTokenHeader, first.info.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %v %v", resp, err)
	}
	resp.Body.Close()
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}

	second := start(t, "-quiet", "-data", data)
	a, c := first.info, second.info
	if c.APIKey == a.APIKey || c.ReadKey != a.ReadKey || c.WriteKey != a.WriteKey || c.DomainID != a.DomainID || c.AccountID != a.AccountID {
		t.Errorf("want a new API key and the rest as it was:\n %+v\n %+v", a, c)
	}
	if got := second.listSlugs(t); len(got) != 1 || got[0] != "kept" {
		t.Errorf("links after restart = %v", got)
	}
}

// -links fills the account up to the number asked, and a restart on the
// same data file adds nothing: the count is a total, not an increment.
func TestRunLinksFillsTheAccount(t *testing.T) {
	data := filepath.Join(t.TempDir(), "store.json")
	first := start(t, "-quiet", "-data", data, "-links", "250")
	first.createLink(t, "mine")
	if got := first.listSlugs(t); len(got) != 251 || got[0] != "seeded-0" || got[249] != "seeded-249" {
		t.Fatalf("list holds %d links, first %q", len(got), got[0])
	}
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	second := start(t, "-quiet", "-data", data, "-links", "250")
	if got := second.listSlugs(t); len(got) != 251 {
		t.Errorf("after a restart with -links 250 the list holds %d links, want 251", len(got))
	}
	if err := second.stop(); err != nil {
		t.Fatal(err)
	}
}

func TestUsageNamesTheSubcommands(t *testing.T) {
	var stdout, stderr clitest.SyncBuffer
	err := dispatch(context.Background(), []string{"-h"}, &stdout, &stderr)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h = %v", err)
	}
	var printed strings.Builder
	if status := exitStatus(err, &printed); status != 0 || printed.Len() > 0 {
		t.Errorf("-h exits %d and prints %q; want 0 and nothing but the usage", status, printed.String())
	}
	for _, want := range []string{"shortlink-emulator click", "shortlink-emulator export", "SHORTLINK_BASE_URL", "-filter-delay"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("usage does not mention %q:\n%s", want, stderr.String())
		}
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	if err := os.WriteFile(corrupt, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string][]string{
		"unknown flag":        {"-nope"},
		"bad duration":        {"-window", "soon"},
		"zero write limit":    {"-write-limit", "0"},
		"negative delay":      {"-filter-delay", "-1s"},
		"unknown rate model":  {"-rate-model", "leaky"},
		"unknown rounding":    {"-rate-rounding", "sideways"},
		"unknown remaining":   {"-rate-remaining", "during"},
		"unknown reset":       {"-rate-reset", "soon"},
		"bad address":         {"-addr", "256.0.0.1:http"},
		"corrupt data file":   {"-data", corrupt},
		"unwritable data dir": {"-data", filepath.Join(dir, "missing", "store.json")},
		"too many links":      {"-links", "4611686018427387904"},
		"empty domain":        {"-domain", ""},
		"misspelt subcommand": {"clik", "-url", "https://go.example.test/a"},
		"stray word":          {"-quiet", "extra"},
		"negative links":      {"-links", "-5"},
		"info file nowhere":   {"-info-file", filepath.Join(dir, "missing", "info.json")},
		"window of 1ns":       {"-window", "1ns"},
		"domain not a host":   {"-domain", "bad_host!"},
	}
	// What some of the errors must say, beside failing.
	says := map[string]string{
		"negative delay": "-filter-delay -1s: must be 0 or more", "too many links": "-links 4611686018427387904: must be from 0 to 10000000", "empty domain": "is not a host name",
		"negative links": "-links -5: must be from 0", "unknown rate model": `-rate-model "leaky": must be one of "first-request", "clock", "sliding", "bucket"`,
		"zero write limit": "-write-limit 0: must be above 0",
		"window of 1ns":    "-window 1ns: must be 1ms or more, such as \"60s\"", "domain not a host": `"bad_host!" is not a host name`,
		"misspelt subcommand": `unexpected argument "clik"`, "stray word": `unexpected argument "extra"`,
	}
	// A port already taken (an emulator left running, say) says what to do.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cases["address in use"] = []string{"-addr", taken.Addr().String()}
	says["address in use"] = "-addr " + taken.Addr().String() + ": listen tcp " + taken.Addr().String() + ": bind: address already in use; another program listens there (an emulator left running?): stop it, or give another -addr (port 0 picks a free one)"
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var stdout, stderr clitest.SyncBuffer
			err := run(ctx, append([]string{"-addr", "127.0.0.1:0", "-quiet"}, args...), &stdout, &stderr)
			if err == nil || errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("run = %v, want an error at start", err)
			}
			if want := says[name]; !strings.Contains(err.Error(), want) {
				t.Errorf("run = %v, want it to say %q", err, want)
			}
			// A flag takes a duration, never a JSON number.
			if strings.HasPrefix(args[0], "-") && args[0] != "-data" && strings.Contains(err.Error(), "JSON") {
				t.Errorf("run = %v: a flag's error speaks of JSON", err)
			}
			if strings.Contains(stdout.String(), "listening") {
				t.Errorf("a start that failed said it was listening:\n%s", stdout.String())
			}
		})
	}
}

func TestRunLogsRequests(t *testing.T) {
	in := start(t)
	in.createLink(t, "logged")
	in.call(t, http.MethodGet, "/api/links", "", nil)
	// A connection closed by fault injection is logged as such.
	req, err := http.NewRequest(http.MethodPut, in.info.BaseURL+"/_emulator/faults", strings.NewReader(`{"script":[{"kind":"close"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(emulator.AdminTokenHeader, in.info.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT faults: %d", resp.StatusCode)
	}
	req, err = http.NewRequest(http.MethodDelete, in.info.BaseURL+"/api/links/abc", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+in.info.APIKey)
	if resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the close fault answered %d", resp.StatusCode)
	}
	if err := in.stop(); err != nil {
		t.Fatal(err)
	}
	log := in.stderr.String()
	for _, want := range []string{"POST /api/links 201 ", "GET /api/links 401 ", "DELETE /api/links/abc closed "} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, in.info.APIKey) || strings.Contains(log, in.info.AdminToken) {
		t.Errorf("log holds a secret:\n%s", log)
	}
}

func TestClickAndExportSubcommands(t *testing.T) {
	in := start(t, "-quiet")
	link := in.createLink(t, "spring")
	base := in.info.BaseURL
	ctx := context.Background()

	var out, errOut clitest.SyncBuffer
	err := dispatch(ctx, []string{"click", "-base", base, "-url", "https://go.example.test/spring", "-n", "3", "-referrer", "https://news.example/a,b"}, &out, &errOut)
	if err != nil {
		t.Fatalf("click: %v (%s)", err, errOut.String())
	}
	if got := strings.Count(out.String(), "→ 302 https://example.com/spring\n"); got != 3 {
		t.Errorf("click output:\n%s", out.String())
	}
	if err := dispatch(ctx, []string{"click", "-base", base, "-url", "not a url"}, &out, &errOut); err == nil {
		t.Error("click accepted a malformed -url")
	}
	if err := dispatch(ctx, []string{"click", "-base", base, "-url", "https://go.example.test/nope"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "no link with that slug") {
		t.Errorf("click on an unknown slug = %v, want a 404 error", err)
	}
	// Without -base, the subcommands use SHORTLINK_BASE_URL, as the provider does.
	t.Setenv("SHORTLINK_BASE_URL", base)
	out = clitest.SyncBuffer{}
	if err := dispatch(ctx, []string{"click", "-url", "https://go.example.test/spring"}, &out, &errOut); err != nil || !strings.Contains(out.String(), "302") {
		t.Errorf("click with SHORTLINK_BASE_URL = %v, %q", err, out.String())
	}

	t.Setenv("SHORTLINK_API_KEY", in.info.ReadKey)
	out = clitest.SyncBuffer{}
	if err := dispatch(ctx, []string{"export", "-base", base, "-link-id", link["id"].(string)}, &out, &errOut); err != nil {
		t.Fatalf("export: %v", err)
	}
	rows, err := csv.NewReader(strings.NewReader(out.String())).ReadAll()
	if err != nil {
		t.Fatalf("export output is not CSV: %v\n%s", err, out.String())
	}
	if len(rows) != 5 || strings.Join(rows[0], ",") != strings.Join(emulator.ExportColumns, ",") || rows[3][5] != "https://news.example/a,b" {
		t.Errorf("export rows = %v", rows)
	}
	if err := dispatch(ctx, []string{"export", "-base", base, "-link-id", "00000000-0000-0000-0000-000000000000"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("export of an unknown link = %v, want a 404 error", err)
	}
	t.Setenv("SHORTLINK_API_KEY", "")
	if err := dispatch(ctx, []string{"export", "-base", base}, &out, &errOut); err == nil {
		t.Error("export without SHORTLINK_API_KEY succeeded")
	}
}

// A write the emulator abandoned when its client went (abortOnDisconnect)
// is logged so, not as the 200 that nothing answered.
func TestLogRequestsAbandonedWrite(t *testing.T) {
	var out clitest.SyncBuffer
	h := logRequests(log.New(&out, "", 0), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the client has gone
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/api/links", nil).WithContext(ctx))
	if !strings.HasPrefix(out.String(), "POST /api/links abandoned ") {
		t.Errorf("logged %q, want the write abandoned", out.String())
	}
}

// A client whose base URL holds its key sends the key in the path too: the
// log names the request without it, in any case or encoding.
func TestLogRequestsLeavesTheKeyOut(t *testing.T) {
	const key = "sl_test_Ab/c+d=e~f.g-h_9876543210XYZ"
	for _, target := range []string{
		"/" + key + "/api/links",
		"/api/links?token=" + url.QueryEscape(key),
		"/api/links?t=" + strings.ToUpper(url.PathEscape(key)),
	} {
		var out clitest.SyncBuffer
		h := logRequests(log.New(&out, "", 0), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.Header.Set("Authorization", "Bearer "+key)
		h.ServeHTTP(httptest.NewRecorder(), r)
		if !strings.HasPrefix(out.String(), "GET /") || strings.Contains(out.String(), "9876543210") {
			t.Errorf("GET %s logged %q, want it without the key", target, out.String())
		}
	}
}

// A key or token a client puts in the query, under any name and whether or
// not its header carries one, stays out of the log; the parameters the API
// reads are shown as sent.
func TestLogRequestsShowsOnlyTheAPIsQuery(t *testing.T) {
	for target, want := range map[string]string{
		"/api/links?k=sl_test_0123456789abcdef&cursor=c2":          "GET /api/links?…&cursor=c2 ",
		"/api/links?sl_test_0123456789abcdef":                      "GET /api/links?… ",
		"/_emulator/settings?t=0123456789abcdef":                   "GET /_emulator/settings?… ",
		"/api/analytics/export?linkId=7f3e&token=0123456789abcdef": "GET /api/analytics/export?linkId=7f3e&… ",
		"/api/links": "GET /api/links ",
	} {
		var out clitest.SyncBuffer
		h := logRequests(log.New(&out, "", 0), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, target, nil))
		if !strings.HasPrefix(out.String(), want) || strings.Contains(out.String(), "0123456789abcdef") {
			t.Errorf("GET %s logged %q, want it to begin %q", target, out.String(), want)
		}
	}
}

// The log passes the connection on: a fault that answers before the write
// is done flushes its answer through it.
func TestLogRequestsLetsAnswersBeFlushed(t *testing.T) {
	var flushErr error
	h := logRequests(log.New(io.Discard, "", 0), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusGatewayTimeout)
		flushErr = http.NewResponseController(w).Flush()
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/api/links", nil))
	if flushErr != nil {
		t.Errorf("Flush through the log: %v", flushErr)
	}
}

// A write received before a stop is carried out, answered and kept, though
// its filter takes longer than the stop waits for answers: the emulator
// stops only once it is done, and says what it is waiting for.
func TestRunStopCarriesOutTheWritesUnderWay(t *testing.T) {
	defer func(g time.Duration) { shutdownGrace = g }(shutdownGrace)
	shutdownGrace = 300 * time.Millisecond
	data := filepath.Join(t.TempDir(), "store.json")
	const limit = 100000
	in := start(t, "-quiet", "-data", data, "-filter-delay", "2s", "-write-limit", fmt.Sprint(limit))
	body := `{"destination":"https://example.com/late","domainId":"` + in.info.DomainID + `","slug":"late"}`
	req, err := http.NewRequest(http.MethodPost, in.info.BaseURL+"/api/links", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+in.info.APIKey)
	req.Header.Set("Content-Type", "application/json")
	sent := make(chan struct{})
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { close(sent) }}))
	req.Close = true // a connection of its own
	answered := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	<-sent
	sentAt := time.Now()
	// Received once counted: a DELETE of no link, answered at once, says
	// what remains of the key's writes (each look counts one).
	for looks := 1; ; looks++ {
		status, remaining := in.remainingWrites(t)
		if status != http.StatusNotFound {
			t.Fatalf("a DELETE of no link: %d", status)
		}
		if remaining <= limit-looks-1 {
			break
		}
	}
	if err := in.stop(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(sentAt); took < 1500*time.Millisecond {
		t.Fatalf("the emulator stopped %s after the write was sent, before its 2 s filter was done", took)
	}
	select {
	case status := <-answered:
		if status != http.StatusCreated {
			t.Fatalf("the write under way at the stop was answered %d, want 201", status)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the write under way at the stop was never answered")
	}
	if !strings.Contains(in.stdout.String(), "stopping: the writes under way are carried out first") {
		t.Errorf("the stop did not say what it waits for:\n%s", in.stdout)
	}
	if got := start(t, "-quiet", "-data", data).listSlugs(t); len(got) != 1 || got[0] != "late" {
		t.Errorf("links after restart = %v, want the write carried out at the stop", got)
	}
}

// A second emulator on a data file in use is refused, however the path
// names it (through a symbolic link to the file or to its directory): two
// journals interleaved would lose answered changes. The first goes on
// serving.
func TestRunRefusesADataFileInUse(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "store.json")
	first := start(t, "-quiet", "-data", data)
	for _, link := range []struct{ name, target string }{{"link.json", data}, {"linked-dir", dir}} {
		if err := os.Symlink(link.target, filepath.Join(dir, link.name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{data, filepath.Join(dir, "link.json"), filepath.Join(dir, "linked-dir", "store.json")} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var stdout, stderr clitest.SyncBuffer
		err := run(ctx, []string{"-addr", "127.0.0.1:0", "-quiet", "-data", path}, &stdout, &stderr)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "another emulator is using it") {
			t.Fatalf("a second emulator on %s: run = %v, want it refused", path, err)
		}
	}
	first.createLink(t, "still-served")
}

// An info file left by an emulator killed with it in place is gone before
// the data file is read: while a large one loads, a script waiting for the
// file must not find the dead emulator's address. (The start below fails
// after the read, on its -domain, so the file is never written anew.)
func TestRunRemovesAStaleInfoFileBeforeItLoads(t *testing.T) {
	dir := t.TempDir()
	data, info := filepath.Join(dir, "store.json"), filepath.Join(dir, "info.json")
	if err := start(t, "-quiet", "-data", data).stop(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(info, []byte(`{"baseUrl": "http://127.0.0.1:1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var stdout, stderr clitest.SyncBuffer
	if err := run(ctx, []string{"-addr", "127.0.0.1:0", "-quiet", "-data", data, "-info-file", info, "-domain", "other.example.test"}, &stdout, &stderr); err == nil {
		t.Fatal("the start with another -domain succeeded")
	}
	if _, err := os.Stat(info); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale info file is still there (%v)", err)
	}
}

// A fold killed before its rename leaves a partial copy of the store
// beside the data file; the next start removes it, and nothing else there.
func TestRunRemovesTheCopiesOfAKilledFold(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "store.json")
	if err := start(t, "-quiet", "-data", data).stop(); err != nil {
		t.Fatal(err)
	}
	left, other := filepath.Join(dir, "store.json.tmp-1172504051"), filepath.Join(dir, "notes.tmp-1")
	for _, name := range []string{left, other} {
		if err := os.WriteFile(name, []byte(`{"links":`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := start(t, "-quiet", "-data", data).stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed fold's copy is still there (%v)", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another file was removed: %v", err)
	}
}

// An emulator given a symbolic link to its data file keeps it a link: the
// store is written to the file it names.
func TestRunKeepsADataFileLinkALink(t *testing.T) {
	dir := t.TempDir()
	data, link := filepath.Join(dir, "store.json"), filepath.Join(dir, "link.json")
	if err := start(t, "-quiet", "-data", data).stop(); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	in := start(t, "-quiet", "-data", link)
	in.createLink(t, "through-the-link")
	if err := in.stop(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("after a stop, %s is no longer a symbolic link (%v)", link, err)
	}
	if got := start(t, "-quiet", "-data", data).listSlugs(t); !slices.Contains(got, "through-the-link") {
		t.Errorf("links in %s = %v, want the one made through the link", data, got)
	}
}

// A restart keeps the data file's domain: a -domain that differs is
// refused rather than ignored.
func TestRunRestartRefusesAnotherDomain(t *testing.T) {
	data := filepath.Join(t.TempDir(), "store.json")
	if err := start(t, "-quiet", "-data", data).stop(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var stdout, stderr clitest.SyncBuffer
	err := run(ctx, []string{"-addr", "127.0.0.1:0", "-quiet", "-data", data, "-domain", "links.mycorp.test"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "-domain links.mycorp.test: the data file's account has the domain go.example.test") {
		t.Fatalf("run = %v, want -domain refused", err)
	}
	start(t, "-quiet", "-data", data, "-domain", "Go.Example.Test") // the same host, however spelt
}

// The command, built and run: a stop waits for the writes under way, and
// a second interrupt ends that wait at once (here a write whose filter
// would take a minute).
func TestMainSecondInterruptStopsAtOnce(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "shortlink-emulator")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	infoFile := filepath.Join(t.TempDir(), "info.json")
	const limit = 100000
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-quiet", "-info-file", infoFile, "-filter-delay", "1m", "-write-limit", fmt.Sprint(limit))
	stdout := &clitest.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	in := &instance{}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(infoFile); err == nil && json.Unmarshal(b, &in.info) == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no info file after 10 s:\n%s", stdout)
		}
	}
	go func() {
		body := `{"destination":"https://example.com/slow","domainId":"` + in.info.DomainID + `"}`
		req, _ := http.NewRequest(http.MethodPost, in.info.BaseURL+"/api/links", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+in.info.APIKey)
		req.Header.Set("Content-Type", "application/json")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	for looks := 1; ; looks++ { // the slow write is counted: it is under way
		if _, remaining := in.remainingWrites(t); remaining <= limit-looks-1 {
			break
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stdout.String(), "stopping:"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no word of the stop after 10 s:\n%s", stdout)
		}
	}
	select {
	case err := <-exited:
		t.Fatalf("the emulator stopped (%v) with a write under way:\n%s", err, stdout)
	case <-time.After(6 * time.Second): // past the 5 s the stop waits for answers
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		t.Logf("stopped by the second interrupt: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatalf("a second interrupt did not stop the emulator:\n%s", stdout)
	}
	if _, err := os.Stat(infoFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the info file outlived the emulator stopped at once: %v", err)
	}
}

// A write whose body never comes is not received: the stop does not wait
// for it.
func TestRunStopDoesNotWaitForABodyThatNeverComes(t *testing.T) {
	in := start(t, "-quiet")
	conn, err := net.Dial("tcp", strings.TrimPrefix(in.info.BaseURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "POST /api/links HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"des", in.info.APIKey); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the server reads the headers and the start of the body
	if err := in.stop(); err != nil {  // start's stop gives up after 10 s
		t.Fatal(err)
	}
}

// An emulator listening on every interface prints an address a client can
// send to, not http://[::]:PORT.
func TestRunOnEveryInterfaceNamesLocalhost(t *testing.T) {
	in := start(t, "-addr", ":0")
	if !strings.HasPrefix(in.info.BaseURL, "http://localhost:") {
		t.Fatalf("base URL %q, want http://localhost:PORT", in.info.BaseURL)
	}
	if !strings.Contains(in.stdout.String(), in.info.BaseURL) {
		t.Errorf("start-up text does not name %s:\n%s", in.info.BaseURL, in.stdout)
	}
	if status, body := in.call(t, http.MethodGet, "/api/links", in.info.APIKey, nil); status != http.StatusOK {
		t.Errorf("GET /api/links at %s: %d %s", in.info.BaseURL, status, body)
	}
}

// Every flag -h lists is named in EMULATOR.md's section on the command and
// in the README's on the emulator, where users look for them.
func TestEveryFlagIsDocumented(t *testing.T) {
	var usage bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v, want flag.ErrHelp", err)
	}
	flags := regexp.MustCompile(`(?m)^  (-[a-z-]+)`).FindAllStringSubmatch(usage.String(), -1)
	if len(flags) < 10 {
		t.Fatalf("read %d flags from -h; it lists more:\n%s", len(flags), usage.String())
	}
	for doc, section := range map[string]string{"../../EMULATOR.md": "## The command", "../../README.md": "## The emulator"} {
		raw, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		_, text, found := strings.Cut(string(raw), section+"\n")
		text, _, _ = strings.Cut(text, "\n## ")
		if !found {
			t.Fatalf("%s has no section %q", doc, section)
		}
		for _, f := range flags {
			if !strings.Contains(text, "`"+f[1]) {
				t.Errorf("%s (%s) does not name %s", doc, section, f[1])
			}
		}
	}
}
