// Command shortlink-emulator serves the short-link service emulator on
// loopback, so users can try the provider without an account.
//
//	shortlink-emulator -addr 127.0.0.1:8080
//	shortlink-emulator click -url https://go.example.test/spring -n 3
//	shortlink-emulator export -link-id <link-id>
//
// On start it prints the base URL, an API key holding both scopes, the ID of a
// seeded domain and the admin token, ready to copy into a provider block. It
// runs until interrupted. The subcommands click and export act as a visitor
// and as an analyst against a running emulator.
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM) // also where a shell started us with SIGINT ignored
	go func() {
		<-signals
		cancel()
		<-signals // a second one stops at once: the journal loses no answered change
		runAtExit()
		os.Exit(130)
	}()
	err := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	os.Exit(exitStatus(err, os.Stderr))
}

// atExit holds what a stop must undo however it comes (the info file, the
// data file's lock): run's defers, and the second signal's exit.
var atExit struct {
	sync.Mutex
	undo []func()
}

// onExit registers undo to run once at exit, and returns a function that
// runs it now (for run's defer) unless it has run.
func onExit(undo func()) func() {
	var once sync.Once
	do := func() { once.Do(undo) }
	atExit.Lock()
	atExit.undo = append(atExit.undo, do)
	atExit.Unlock()
	return do
}

func runAtExit() {
	atExit.Lock()
	defer atExit.Unlock()
	for _, do := range atExit.undo {
		do()
	}
}

// exitStatus prints err, if any, and says the process's exit status. -h
// has printed the usage, and asking for it is no failure.
func exitStatus(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "shortlink-emulator:", err)
	return 1
}

// dispatch runs the subcommand named by the first argument, or the emulator.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "click":
			return runClick(args[1:], stdout, stderr)
		case "export":
			return runExport(args[1:], stdout, stderr)
		}
	}
	return run(ctx, args, stdout, stderr)
}

const usage = `Usage:
  shortlink-emulator [flags]          serve the emulated short-link service
  shortlink-emulator click [flags]    visit a short link, as a browser would (click -h)
  shortlink-emulator export [flags]   print the analytics export as CSV (export -h)

The subcommands find the emulator at $SHORTLINK_BASE_URL (or -base); export
takes the API key from $SHORTLINK_API_KEY.

Flags:
`

type options struct {
	addr, data, adminToken, host, infoFile, rateModel, rounding, remaining, reset string
	filterDelay, window                                                           time.Duration
	writeLimit, readLimit, links                                                  int
	quiet, hostSet                                                                bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("shortlink-emulator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	defaults := emulator.DefaultSettings()
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "listen address (use port 0 for a free port)")
	fs.StringVar(&o.data, "data", "", "keep the store in this JSON file and a journal of changes beside it (FILE.journal), synced before each change is answered and folded into FILE at exit; reloaded on start")
	fs.StringVar(&o.adminToken, "admin-token", "", "token for the admin API under /_emulator/ (default: random, printed at start)")
	fs.StringVar(&o.host, "domain", "go.example.test", "host of the seeded short-link domain")
	fs.StringVar(&o.infoFile, "info-file", "", "also write the start-up information as JSON to this file (for scripts)")
	fs.DurationVar(&o.filterDelay, "filter-delay", time.Duration(defaults.Filter.Delay), "time the fraud filter takes on every create and change of destination")
	fs.DurationVar(&o.window, "window", time.Duration(defaults.Limits.Window), "length of a rate-limit window")
	fs.IntVar(&o.writeLimit, "write-limit", defaults.Limits.Write, "write requests per key per window")
	fs.IntVar(&o.readLimit, "read-limit", defaults.Limits.Read, "read requests per key per window")
	fs.StringVar(&o.rateModel, "rate-model", emulator.ModelFirstRequest, "how requests are counted: first-request (fixed windows from a key's first request), clock (fixed windows on the clock), sliding (the last window's length) or bucket (a token bucket refilled continuously); see EMULATOR.md")
	fs.StringVar(&o.rounding, "rate-rounding", emulator.RoundUp, "how X-RateLimit-Reset and Retry-After are made whole seconds: up (never early), down (truncated, as many services do) or nearest; see EMULATOR.md")
	fs.StringVar(&o.remaining, "rate-remaining", emulator.RemainingAfter, "what X-RateLimit-Remaining counts on an allowed request: after (the request counted) or before (not yet counted, as some services say); see EMULATOR.md")
	fs.StringVar(&o.reset, "rate-reset", emulator.ResetWhole, "what X-RateLimit-Reset counts down to: whole (the allowance whole again) or next (its next unit, which differs on the sliding and bucket models); see EMULATOR.md")
	fs.IntVar(&o.links, "links", 0, "fill the seeded account up to this many links (seeded-<i> on the domain; a million take a few seconds) to try a large account")
	fs.BoolVar(&o.quiet, "quiet", false, "do not log every request")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	err := parseOnlyFlags(fs, args)
	fs.Visit(func(f *flag.Flag) { o.hostSet = o.hostSet || f.Name == "domain" })
	return o, err
}

// parseOnlyFlags parses args and refuses any word left after the flags: a
// misspelt subcommand (clik) or a value without its flag would otherwise
// be dropped silently, with every flag after it, and an emulator started
// on the default port instead.
func parseOnlyFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return nil
	}
	if fs.Name() == "shortlink-emulator" {
		return fmt.Errorf("unexpected argument %q: the emulator takes flags only (-h lists them), and its subcommands, click and export, come first", fs.Arg(0))
	}
	return fmt.Errorf("unexpected argument %q: %s takes flags only (%s -h lists them)", fs.Arg(0), fs.Name(), fs.Name())
}

// startInfo is what a user needs to point the provider at the emulator.
type startInfo struct {
	BaseURL    string `json:"baseUrl"`
	APIKey     string `json:"apiKey"`
	ReadKey    string `json:"readKey"`
	WriteKey   string `json:"writeKey"`
	DomainID   string `json:"domainId"`
	DomainHost string `json:"domainHost"`
	AccountID  string `json:"accountId"`
	AdminToken string `json:"adminToken"`
}

// run serves the emulator until ctx is done, then shuts it down gracefully.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.adminToken == "" {
		o.adminToken = randomToken()
	}
	settings := emulator.DefaultSettings()
	settings.Filter.Delay = emulator.Duration(o.filterDelay)
	settings.Limits = emulator.Limits{Write: o.writeLimit, Read: o.readLimit, Window: emulator.Duration(o.window), Model: o.rateModel, Rounding: o.rounding, Remaining: o.remaining, Reset: o.reset}
	if o.links < 0 || o.links > emulator.MaxSeededLinks {
		return fmt.Errorf("-links %d: must be from 0 to %d", o.links, emulator.MaxSeededLinks)
	}
	if o.data != "" {
		resolved, err := resolveDataFile(o.data)
		if err != nil {
			return fmt.Errorf("-data %s: %w", o.data, err)
		}
		o.data = resolved
		unlock, err := lockDataFile(o.data)
		if err != nil {
			return fmt.Errorf("-data %s: %w", o.data, err)
		}
		release := onExit(unlock)
		defer release()
		removeUnfinishedWrites(o.data)
	}
	if o.infoFile != "" {
		// One left by an emulator killed before it could remove it would
		// name a stopped emulator while this one loads and seeds.
		_ = os.Remove(o.infoFile)
	}
	srv, err := emulator.New(emulator.Options{Settings: settings, DataFile: o.data, AdminToken: o.adminToken})
	if err != nil {
		return byFlag(err)
	}
	fixture, err := firstFixture(srv, o.host, o.hostSet)
	if err != nil {
		return err
	}
	if _, err := srv.FillLinks(fixture.DomainID, "seeded", o.links); err != nil {
		return err
	}
	if err := srv.PersistError(); err != nil {
		return fmt.Errorf("writing %s: %w", o.data, err)
	}
	ln, err := net.Listen("tcp", o.addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("-addr %s: %w; another program listens there (an emulator left running?): stop it, or give another -addr (port 0 picks a free one)", o.addr, err)
	}
	if err != nil {
		return err
	}
	defer ln.Close() // when announce fails; Shutdown closes it otherwise
	info := startInfo{
		BaseURL: baseURL(ln.Addr()), APIKey: fixture.APIKey, ReadKey: fixture.ReadKey, WriteKey: fixture.WriteKey,
		DomainID: fixture.DomainID, DomainHost: fixture.DomainHost, AccountID: fixture.AccountID, AdminToken: o.adminToken,
	}
	if err := announce(stdout, o.infoFile, info); err != nil {
		return err
	}
	if o.infoFile != "" {
		// A script that waits for it must not find a stopped emulator's.
		remove := onExit(func() { _ = os.Remove(o.infoFile) }) //nolint:gosec // the path the user gave -info-file
		defer remove()
	}
	var handler http.Handler = srv
	if !o.quiet {
		handler = logRequests(log.New(stderr, "", log.LstdFlags), srv)
	}
	if err := serve(ctx, ln, handler, stdout); err != nil {
		return err
	}
	if err := srv.Close(); err != nil { // waits for the writes under way, then the journal into the data file
		return fmt.Errorf("writing %s: %w", o.data, err)
	}
	return nil
}

// resolveDataFile is the file a -data path names once symbolic links are
// followed (the file itself, or, before it exists, its directory): the
// lock is taken, and the store written, there, so that an emulator given a
// link to another's data file is refused, and a link given stays a link.
func resolveDataFile(path string) (string, error) {
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		return resolved, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.Base(path)), nil
}

// settingFlags are the flags that set the emulator's settings, by name.
var settingFlags = map[string]string{
	"limits.write": "-write-limit", "limits.read": "-read-limit", "limits.window": "-window",
	"limits.model": "-rate-model", "limits.rounding": "-rate-rounding", "limits.remaining": "-rate-remaining",
	"limits.reset": "-rate-reset", "filter.delay": "-filter-delay",
}

// byFlag names a setting the emulator refused by the flag that set it, and
// says what the flag must be.
func byFlag(err error) error {
	var bad *emulator.SettingError
	if errors.As(err, &bad) && settingFlags[bad.Name] != "" {
		return fmt.Errorf("%s %v: %s", settingFlags[bad.Name], bad.Value, strings.TrimSuffix(bad.Want, emulator.JSONDurationNote))
	}
	return err
}

// removeUnfinishedWrites removes what a fold or snapshot killed before
// its rename left beside dataFile (FILE.tmp-*): each is a partial copy of
// the store, as large as it, and nothing reads it. Only the emulator that
// holds the data file's lock writes them, so none is under way.
func removeUnfinishedWrites(dataFile string) {
	dir, prefix := filepath.Dir(dataFile), filepath.Base(dataFile)+".tmp-"
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// firstFixture reuses the account of a reloaded data file, so keys and the
// domain ID stay the same across restarts, or seeds a new one. A -domain
// that the reused account does not have is refused rather than ignored.
func firstFixture(srv *emulator.Server, host string, hostSet bool) (emulator.Fixture, error) {
	if f, ok := srv.ReuseFixture("demo"); ok {
		if hostSet && !strings.EqualFold(host, f.DomainHost) {
			return f, fmt.Errorf("-domain %s: the data file's account has the domain %s, which a restart keeps; start without -domain, or with another -data file", host, f.DomainHost)
		}
		return f, nil
	}
	return srv.SeedFixture("demo", host)
}

// announce prints what a user needs, and writes it as JSON to infoFile if
// asked. The file is written under a temporary name first, so that a path
// that cannot be written fails the start before the banner says the
// emulator is listening, and renamed into place after it: scripts wait
// for the file to appear and read it at once.
func announce(stdout io.Writer, infoFile string, info startInfo) error {
	tmp := ""
	if infoFile != "" {
		b, err := json.MarshalIndent(info, "", "  ")
		if err != nil {
			return err
		}
		tmp = infoFile + ".tmp"
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, `shortlink emulator listening on %s

provider "shortlink" {
  base_url = %q
  api_key  = %q
}

or, for the examples and the click and export subcommands:
  export SHORTLINK_BASE_URL=%s SHORTLINK_API_KEY=%s

domain_id:      %s   (host %s)
account_id:     %s   (admin API: accounts/quota, accounts/api)
read-only key:  %s
write-only key: %s
admin token:    %s   (header %s, API under /_emulator/)
short links:    curl -i %s/r/%s/<slug>
`, info.BaseURL, info.BaseURL, info.APIKey, info.BaseURL, info.APIKey, info.DomainID, info.DomainHost, info.AccountID,
		info.ReadKey, info.WriteKey, info.AdminToken, emulator.AdminTokenHeader, info.BaseURL, info.DomainHost)
	if tmp == "" {
		return nil
	}
	return os.Rename(tmp, infoFile)
}

// shutdownGrace is how long a stop waits for the requests under way to be
// answered before it closes their connections. A write is carried out all
// the same (Server.Close waits for it): only its answer may be lost.
var shutdownGrace = 5 * time.Second

func serve(ctx context.Context, ln net.Listener, handler http.Handler, stdout io.Writer) error {
	server := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- server.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(stdout, "stopping: the writes under way are carried out first (interrupt again to stop at once)")
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := server.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// logRequests logs method, path, status and duration of every request ("closed"
// for a connection closed by fault injection). It never logs headers, takes
// the request's API key out of the path it logs (withoutKey) and shows no
// query parameter the API does not read (apiQueryOnly), so API keys and the
// admin token stay out of the log wherever a client puts them.
func logRequests(l *log.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			status := fmt.Sprint(rec.status)
			if !rec.wrote && r.Context().Err() != nil {
				status = "abandoned" // the client went, and the write with it (abortOnDisconnect)
			}
			v := recover()
			if v != nil {
				status = "closed"
			}
			l.Printf("%s %s %s %s", r.Method, apiQueryOnly(withoutKey(r)), status, time.Since(start).Round(time.Millisecond))
			if v != nil {
				panic(v) // let the HTTP server close the connection
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

// withoutKey is the request's path and query without the API key its
// Authorization header carries: a client whose base URL holds its key (or
// that follows a next page naming it) sends the key in the path as well.
// The Secret is built only when the path holds the key in some case or
// percent-encoding: a key of thousands of characters takes long to build.
func withoutKey(r *http.Request) string {
	uri := r.URL.RequestURI()
	auth := r.Header.Get("Authorization")
	if len(auth) <= len("Bearer ") || !strings.EqualFold(auth[:len("Bearer ")], "Bearer ") {
		return uri
	}
	key := strings.TrimSpace(auth[len("Bearer "):])
	plain, err := url.PathUnescape(uri)
	if err != nil {
		plain = uri
	}
	if key == "" || !strings.Contains(strings.ToLower(plain), strings.ToLower(key)) {
		return uri
	}
	return client.NewSecret(key).Redact(uri)
}

// apiQueries are the query parameters the API reads: the list's cursor
// and the export's linkId.
var apiQueries = map[string]bool{"cursor": true, "linkId": true}

// apiQueryOnly is uri with every query parameter but apiQueries' shown as
// "…": a client may put anything there, a key (of another account than its
// header's, or with no header at all) or the admin token among them.
func apiQueryOnly(uri string) string {
	path, query, ok := strings.Cut(uri, "?")
	if !ok {
		return uri
	}
	params := strings.Split(query, "&")
	for i, param := range params {
		if name, _, _ := strings.Cut(param, "="); !apiQueries[name] {
			params[i] = "…"
		}
	}
	return path + "?" + strings.Join(params, "&")
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool // an answer was begun
}

func (w *statusWriter) WriteHeader(code int) {
	w.status, w.wrote = code, true
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection: the
// answer-before-commit fault flushes its answer before the write is done.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func randomToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return fmt.Sprintf("%x", b)
}

// baseURL is where a client on this machine reaches the listener: an
// address that listens on every interface (-addr :8080) is no address to
// send requests to, so it is named localhost.
func baseURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); err == nil && ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
