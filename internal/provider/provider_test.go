package provider

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
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
	settings := emulator.DefaultSettings()
	settings.Filter.Delay = 0
	settings.Limits.Write, settings.Limits.Read = 10000, 10000
	for _, c := range change {
		c(&settings)
	}
	srv, err := emulator.New(emulator.Options{Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	fx, err := srv.SeedFixture("acceptance", "go.example.test")
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &testEnv{srv: srv, url: ts.URL, fx: fx}
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

// checkNoLinks is a CheckDestroy: the account holds no link any more.
func (e *testEnv) checkNoLinks(*terraform.State) error {
	if links := e.srv.Links(e.fx.AccountID); len(links) != 0 {
		return fmt.Errorf("the service still holds %d links after destroy, first %s", len(links), links[0].ID)
	}
	return nil
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
