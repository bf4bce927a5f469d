package provider

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
	"github.com/shortlink/terraform-provider-shortlink/internal/testsupport"
)

// protoV6Providers serves the provider in-process to the Terraform CLI.
var protoV6Providers = map[string]func() (tfprotov6.ProviderServer, error){
	"shortlink": func() (tfprotov6.ProviderServer, error) { return NewServer("test")(), nil },
}

// TestMain points terraform-plugin-testing at the Terraform CLI on PATH, so
// acceptance tests never download one, and keeps the user's CLI
// configuration out of the tests.
func TestMain(m *testing.M) {
	if os.Getenv("TF_ACC") != "" && os.Getenv("TF_ACC_TERRAFORM_PATH") == "" {
		if p, err := exec.LookPath("terraform"); err == nil {
			os.Setenv("TF_ACC_TERRAFORM_PATH", p)
		}
	}
	os.Setenv("CHECKPOINT_DISABLE", "1")
	os.Setenv("TF_CLI_CONFIG_FILE", os.DevNull)
	os.Exit(m.Run())
}

// testEnv is one emulator, served on loopback for one test.
type testEnv struct {
	srv *emulator.Server
	url string
	fx  emulator.Fixture
}

// newTestEnv starts an emulator with canonical answers, no filter delay and
// generous rate limits; change adjusts the settings.
func newTestEnv(t *testing.T, change ...func(*emulator.Settings)) *testEnv {
	t.Helper()
	svc := testsupport.Start(t, testsupport.Options{Settings: func(s *emulator.Settings) {
		for _, c := range change {
			c(s)
		}
	}})
	return &testEnv{srv: svc.Server, url: svc.URL, fx: svc.Fixture}
}

// providerBlock configures the provider with the given key.
func (e *testEnv) providerBlock(key string) string {
	return fmt.Sprintf(`
provider "shortlink" {
  base_url    = %q
  api_key     = %q
  max_retries = 2
}
`, e.url, key)
}

// config is a provider block with the full key followed by body.
func (e *testEnv) config(body string) string { return e.providerBlock(e.fx.APIKey) + body }

// testConfig returns the configuration in testdata/name: a .tf file as it
// stands, a .tf.tmpl file filled in by fmt.Sprintf with args. A
// configuration of more than a few lines lives there, where it reads as
// Terraform, rather than in a Go string. Most files hold no provider
// block: the test puts one in front (e.config), as for the short ones.
func testConfig(t testing.TB, name string, args ...any) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(name, ".tmpl") {
		if len(args) > 0 {
			t.Fatalf("testdata/%s is no template, yet it was given %d arguments", name, len(args))
		}
		return string(raw)
	}
	config := fmt.Sprintf(string(raw), args...)
	if strings.Contains(config, "%!") {
		t.Fatalf("testdata/%s does not fit its arguments %q:\n%s", name, args, config)
	}
	return config
}

// linkBody declares shortlink_link.test with only its required attributes.
func linkBody(domainID, destination string) string {
	return fmt.Sprintf(`
resource "shortlink_link" "test" {
  domain_id   = %q
  destination = %q
}
`, domainID, destination)
}

// planFailure plans config, in parallel with the other tests, and returns
// the whole of the CLI's error, or "" if the plan did not fail: for a test
// that reads more of the output than ExpectError can, such as what it
// must not show.
func planFailure(t *testing.T, config string) string {
	t.Helper()
	return planFailureOf(t, config, true)
}

// planFailureOf is planFailure, run beside the other tests or not.
func planFailureOf(t *testing.T, config string, parallel bool) string {
	t.Helper()
	run := resource.Test
	if parallel {
		run = resource.ParallelTest
	}
	var failed string
	run(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		ErrorCheck: func(err error) error {
			failed = err.Error()
			return nil
		},
		Steps: []resource.TestStep{{Config: config, PlanOnly: true}},
	})
	return failed
}

// expectFailure runs config and expects it to fail with an error holding
// each phrase in order (expectErr).
func expectFailure(t *testing.T, config string, phrases ...string) {
	t.Helper()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps:                    []resource.TestStep{{Config: config, ExpectError: expectErr(phrases...)}},
	})
}

// expectErr matches an error holding each phrase in order. Terraform wraps
// diagnostics at about 80 columns, so a space in a phrase matches any run of
// white space, line breaks included.
func expectErr(phrases ...string) *regexp.Regexp {
	quoted := make([]string, len(phrases))
	for i, p := range phrases {
		quoted[i] = strings.Join(strings.Fields(regexp.QuoteMeta(p)), `\s+`)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(quoted, ".*"))
}

// testLink runs steps that manage links, in parallel with the other
// tests, and checks that destroy leaves the account without links.
func (e *testEnv) testLink(t *testing.T, steps []resource.TestStep) {
	t.Helper()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps:                    steps,
	})
}

// expectRequests checks that the service answered want requests to
// method and pattern; why says what another number would mean.
func (e *testEnv) expectRequests(t *testing.T, method, pattern string, want int, why string) {
	t.Helper()
	if n := e.srv.Count(method, pattern); n != want {
		t.Errorf("%s %s requests: %d, want %d: %s", method, pattern, n, want, why)
	}
}

// checkNoLinks is a CheckDestroy: the account holds no link any more.
func (e *testEnv) checkNoLinks(*terraform.State) error {
	if links := e.srv.Links(e.fx.AccountID); len(links) != 0 {
		return fmt.Errorf("the service still holds %d links after destroy, first %s", len(links), links[0].ID)
	}
	return nil
}

// seedLinks puts n links on the service behind the provider's back, with
// the slugs prefix-0, prefix-1, …
func (e *testEnv) seedLinks(t *testing.T, domainID, prefix string, n int) []emulator.Link {
	t.Helper()
	links, err := e.srv.SeedLinks(domainID, prefix, n)
	if err != nil {
		t.Fatal(err)
	}
	return links
}

// addClicks records n clicks on linkID from referrer, now.
func (e *testEnv) addClicks(t *testing.T, linkID string, n int, referrer string) {
	t.Helper()
	if err := e.srv.AddClicks(linkID, n, referrer); err != nil {
		t.Fatal(err)
	}
}

// addClickAt records one click on linkID from referrer, at the given time.
func (e *testEnv) addClickAt(t *testing.T, linkID string, at time.Time, referrer string) {
	t.Helper()
	if err := e.srv.AddClickAt(linkID, at, referrer); err != nil {
		t.Fatal(err)
	}
}

// expectState applies config, in parallel with the other tests, and checks
// the state it leaves.
func expectState(t *testing.T, config string, checks ...statecheck.StateCheck) {
	t.Helper()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps:                    []resource.TestStep{{Config: config, ConfigStateChecks: checks}},
	})
}

// listingBytes is the size of the fixture account's list answer.
func (e *testEnv) listingBytes(t *testing.T) int64 {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.url+"/api/links", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.fx.APIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("listing: %d %v", resp.StatusCode, err)
	}
	return n
}

// apiClient is a client of the service with the full key, for a test to
// change the account as someone outside Terraform would.
func (e *testEnv) apiClient(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{BaseURL: e.url, APIKey: e.fx.APIKey})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// onlyLink returns the account's single link, failing otherwise.
func (e *testEnv) onlyLink(t *testing.T) emulator.Link {
	t.Helper()
	links := e.srv.Links(e.fx.AccountID)
	if len(links) != 1 {
		t.Fatalf("the service holds %d links, want 1", len(links))
	}
	return links[0]
}

func replaceOnce(s, old, replacement string) string {
	return strings.Replace(s, old, replacement, 1)
}

// The provider's settings: where they come from, and those refused before
// any request.

// Each missing setting is reported on itself, the other being set.
func TestAccProvider_missingSettings(t *testing.T) {
	t.Setenv(EnvBaseURL, "")
	t.Setenv(EnvAPIKey, "")
	body := linkBody("2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60", "https://example.com/a")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			Config:      "provider \"shortlink\" {\n api_key = \"k\"\n}\n" + body,
			ExpectError: expectErr("Missing base_url", "SHORTLINK_BASE_URL"),
		}, {
			Config:      "provider \"shortlink\" {\n base_url = \"https://api.example.com\"\n}\n" + body,
			ExpectError: expectErr("Missing api_key", "SHORTLINK_API_KEY"),
		}},
	})
}

// A key that cannot be sent is reported as api_key's (or its variable's), not
// base_url's (the messages never quote a key: TestNewValidatesConfig).
func TestAccProvider_invalidAPIKey(t *testing.T) {
	t.Setenv(EnvBaseURL, "https://api.example.com")
	body := linkBody("2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60", "https://example.com/a")
	for name, tc := range map[string]struct {
		env, block string
		want       *regexp.Regexp
	}{
		"Bearer prefix in the environment": {env: "Bearer sk_SECRET_1", want: expectErr("Invalid SHORTLINK_API_KEY", `without a "Bearer" prefix`, "environment variable SHORTLINK_API_KEY (api_key is not set")},
		"only spaces in the environment":   {env: "   ", want: expectErr("Invalid SHORTLINK_API_KEY", "API key is empty")},
		"a space in the block":             {block: "sk_SECRET 2", want: expectErr("Invalid api_key", "contains spaces or control characters")},
		"an invisible character copied":    {block: "sk_SECRET_3\u200b", want: expectErr("Invalid api_key", "contains U+200B at character 12, which a Bearer token cannot hold")},
		// Refused, not a crash whose stack trace quotes the key.
		"a file's contents in the environment": {env: strings.Repeat("sk_SECRET_4", 1000), want: expectErr("Invalid SHORTLINK_API_KEY", "API key is 11000 characters long, more than the 8000 the provider sends", "give the key alone")},
		"a value far too long in the block":    {block: strings.Repeat("k", 8001), want: expectErr("Invalid api_key", "API key is 8001 characters long")},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(EnvAPIKey, tc.env)
			config := `provider "shortlink" {}` + body
			if tc.block != "" {
				config = fmt.Sprintf("provider \"shortlink\" {\n api_key = %q\n}\n", tc.block) + body
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6Providers,
				Steps:                    []resource.TestStep{{Config: config, ExpectError: tc.want}},
			})
		})
	}
}

// A refused api_key or base_url is reported on the provider block, not on
// the attribute: under an attribute's diagnostic Terraform prints its
// source line, which here holds the key. ExpectError can only match, so
// the test reads the whole output (planFailure).
func TestAccProvider_refusedSettingDoesNotShowTheKeysLine(t *testing.T) {
	const key = "sk_live_SECRET_0123456789"
	body := linkBody("2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60", "https://example.com/a")
	for name, tc := range map[string]struct{ provider, want string }{
		"a space in api_key": {
			provider: fmt.Sprintf("provider \"shortlink\" {\n base_url = \"https://api.example.com\"\n api_key = %q\n}\n", key+" 2"),
			want:     "Invalid api_key",
		},
		"the key pasted into base_url": {
			provider: fmt.Sprintf("provider \"shortlink\" {\n base_url = %q\n api_key = %q\n}\n", key, key),
			want:     "Invalid base_url",
		},
		"the key in base_url's path": {
			provider: fmt.Sprintf("provider \"shortlink\" {\n base_url = %q\n api_key = %q\n}\n", "https://api.example.com/"+key, key),
			want:     "base URL holds the API key in its path",
		},
	} {
		t.Run(name, func(t *testing.T) {
			failed := planFailure(t, tc.provider+body)
			flat := strings.Join(strings.Fields(failed), " ")
			if !strings.Contains(flat, tc.want) || strings.Contains(failed, key) {
				t.Errorf("want an error %q that does not quote the key, got:\n%s", tc.want, failed)
			}
		})
	}
}

// A setting written in the provider block wins over its environment
// variable: here both variables are wrong, and the apply works.
func TestAccProvider_blockWinsOverEnvironment(t *testing.T) {
	e := newTestEnv(t)
	t.Setenv(EnvBaseURL, "http://"+testsupport.ClosedAddr(t))
	t.Setenv(EnvAPIKey, "sk_unknown_to_the_service")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf("provider \"shortlink\" {\n base_url = %q\n api_key = %q\n}\n", e.url, e.fx.APIKey) + linkBody(e.fx.DomainID, "https://example.com/block"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("shortlink_link.test", tfjsonpath.New("destination"), knownvalue.StringExact("https://example.com/block")),
			},
		}},
	})
}

// The settings come from the environment where the provider block leaves
// them out, or sets them empty (a variable that defaults to "").
func TestAccProvider_settingsFromEnvironment(t *testing.T) {
	e := newTestEnv(t)
	t.Setenv(EnvBaseURL, e.url)
	t.Setenv(EnvAPIKey, e.fx.APIKey)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{
			{Config: linkBody(e.fx.DomainID, "https://example.com/env")},
			{Config: "provider \"shortlink\" {\n base_url = \"\"\n api_key = \"\"\n}\n" + linkBody(e.fx.DomainID, "https://example.com/env-again")},
		},
	})
}

func TestAccValidation_badProviderSettings(t *testing.T) {
	body := linkBody("2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60", "https://example.com/a")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{
				Config:      "provider \"shortlink\" {\n base_url = \"https://api.example.com\"\n api_key = \"k\"\n max_retries = 500\n}\n" + body,
				ExpectError: expectErr(`max_retries`, `must be a whole number from 0 to 100; got 500`),
			},
			{
				// A fraction is the user's mistake, not "an error in the provider".
				Config:      "provider \"shortlink\" {\n base_url = \"https://api.example.com\"\n api_key = \"k\"\n max_retries = 1.5\n}\n" + body,
				ExpectError: expectErr(`Invalid max_retries`, `must be a whole number from 0 to 100; got 1.5`),
			},
			{
				Config:      "provider \"shortlink\" {\n base_url = \"https://api.example.com\"\n api_key = \"k\"\n max_rate_limit_percent = 0\n}\n" + body,
				ExpectError: expectErr(`max_rate_limit_percent`, `must be a whole number from 1 to 100; got 0`),
			},
			{
				Config:      "provider \"shortlink\" {\n base_url = \"https://api.example.com\"\n api_key = \"k\"\n max_rate_limit_percent = 33.3\n}\n" + body,
				ExpectError: expectErr(`Invalid max_rate_limit_percent`, `must be a whole number from 1 to 100; got 33.3`),
			},
			{
				Config:      "provider \"shortlink\" {\n base_url = \"api.example.com\"\n api_key = \"k\"\n}\n" + body,
				ExpectError: expectErr(`Invalid base_url`, `base URL must be an absolute URL such as https://api.example.com: the value set has no scheme and host (write https:// before the host name`),
			},
			{
				Config:      "provider \"shortlink\" {\n base_url = \"https://api.example.com\"\n api_key = \"k\"\n adoption_window = \"7d\"\n}\n" + body,
				ExpectError: expectErr(`Invalid adoption_window`, `adoption_window "7d" is not a duration: durations have no unit for days; write it in hours, "168h"`),
			},
			{
				Config:      "provider \"shortlink\" {\n base_url = \"127.0.0.1:8080\"\n api_key = \"k\"\n}\n" + body,
				ExpectError: expectErr(`Invalid base_url`, `has no scheme and host (write https:// before the host name, or http:// before a loopback address such as the local emulator's)`),
			},
			{
				Config:      "provider \"shortlink\" {\n base_url = \"htps://api.example.com\"\n api_key = \"k\"\n}\n" + body,
				ExpectError: expectErr(`Invalid base_url`, `base URL "htps://api.example.com" must be an https URL (or http on loopback), such as https://api.example.com; its scheme is "htps"`),
			},
			{
				// The key would travel in every request's address.
				Config:      "provider \"shortlink\" {\n base_url = \"https://api.example.com/sk_live_0123456789abcdef\"\n api_key = \"sk_live_0123456789abcdef\"\n}\n" + body,
				ExpectError: expectErr(`Invalid base_url`, `base URL holds the API key in its path`),
			},
		},
	})
}

// A setting known at plan is checked there, even when the other one is
// known only after a resource is applied (the plan alone runs: before the
// check it passed, and the apply failed).
func TestAccProvider_knownSettingCheckedBesideAnUnknownOne(t *testing.T) {
	body := linkBody("2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60", "https://example.com/a")
	fromApply, knownLater := knownAtApply(t, "known_later", "https://api.example.com")
	for name, tc := range map[string]struct {
		provider string
		want     *regexp.Regexp
	}{
		"base_url plain http, api_key unknown": {
			provider: "provider \"shortlink\" {\n base_url = \"http://api.example.com\"\n api_key = " + knownLater + "\n}\n",
			want:     expectErr("Invalid base_url", "uses plain http"),
		},
		"api_key with a space, base_url unknown": {
			provider: "provider \"shortlink\" {\n base_url = " + knownLater + "\n api_key = \"sk_SECRET 2\"\n}\n",
			want:     expectErr("Invalid api_key", "contains spaces or control characters"),
		},
	} {
		t.Run(name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6Providers,
				Steps:                    []resource.TestStep{{Config: tc.provider + fromApply + body, PlanOnly: true, ExpectError: tc.want}},
			})
		})
	}
}

func TestAccSecurity_plainHTTPBaseURLRejected(t *testing.T) {
	expectFailure(t, `
provider "shortlink" {
  base_url = "http://api.example.com"
  api_key  = "sl_test_whatever"
}
`+linkBody("2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60", "https://example.com/a"), "Invalid base_url", "uses plain http", "Use https")
}

func TestAccSecurity_tlsCertificatesAreVerified(t *testing.T) {
	e := newTestEnv(t)
	tlsServer := httptest.NewTLSServer(e.srv) // a certificate no system root signed
	t.Cleanup(tlsServer.Close)
	expectFailure(t, fmt.Sprintf(`
provider "shortlink" {
  base_url = %q
  api_key  = %q
}
`, tlsServer.URL, e.fx.APIKey)+linkBody(e.fx.DomainID, "https://example.com/a"), "Cannot reach the short-link service", "x509: certificate signed by unknown authority")
	if n := len(e.srv.Links(e.fx.AccountID)); n != 0 {
		t.Fatalf("%d links were created over an unverified connection", n)
	}
}

// A base_url whose scheme does not match its port: https:// to a
// plain-http port fails the plan at once (waiting does not change a port's
// protocol); http:// to a TLS port (loopback only) fails on the TLS
// server's own 400, named as its status, not as a code of the service.
func TestAccSecurity_schemeThatDoesNotMatchThePort(t *testing.T) {
	e := newTestEnv(t)
	tlsServer := httptest.NewTLSServer(e.srv)
	t.Cleanup(tlsServer.Close)
	for name, tc := range map[string]struct {
		baseURL  string
		planOnly bool
		want     []string
	}{
		"https to plain http": {strings.Replace(e.url, "http://", "https://", 1), true, []string{"Cannot reach the short-link service", "server gave HTTP response to HTTPS client", "Check base_url"}},
		"http to TLS":         {strings.Replace(tlsServer.URL, "https://", "http://", 1), false, []string{"(400 Bad Request)", "not JSON", "Client sent an HTTP request to an HTTPS server"}},
	} {
		t.Run(name, func(t *testing.T) {
			config := fmt.Sprintf("provider \"shortlink\" {\n  base_url = %q\n  api_key  = %q\n}\n", tc.baseURL, e.fx.APIKey) +
				linkBody(e.fx.DomainID, "https://example.com/a")
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6Providers,
				Steps:                    []resource.TestStep{{Config: config, PlanOnly: tc.planOnly, ExpectError: expectErr(tc.want...)}},
			})
		})
	}
	if n := e.srv.TotalRequests(); n != 0 {
		t.Errorf("the service answered %d API requests, want none", n)
	}
}

// A conclusion is explained by the first object that claims it, per key;
// the others learn which, and that they were not first.
func TestReports_claim(t *testing.T) {
	var r reports
	for _, c := range []struct {
		key, who, explainer string
		first               bool
	}{
		{"domain a", "l-1", "l-1", true},
		{"domain a", "l-2", "l-1", false},
		{"domain b", "l-2", "l-2", true},
		{"domain b", "l-2", "l-2", false},
	} {
		if explainer, first := r.claim(c.key, c.who); explainer != c.explainer || first != c.first {
			t.Errorf("claim(%q, %q) = %q, %t; want %q, %t", c.key, c.who, explainer, first, c.explainer, c.first)
		}
	}
}
