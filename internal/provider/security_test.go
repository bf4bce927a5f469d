// The API key stays secret across everything the provider writes: the
// trace log (Terraform's and the provider's own request logging, with
// retries and an error on the way) and the state, through create, change,
// a refused change, import and refresh. The test stands alone because it
// is about no one file: the key passes through provider.go (Configure),
// the client's request and logging (internal/client) and every operation
// of link_resource.go, and it must be absent from the output of all of
// them together. The provider's other safeguards, https only and verified
// certificates, are tested with its settings in provider_test.go.

package provider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// TestAccSecurity_apiKeyNeverLoggedOrStored runs a whole lifecycle at
// TF_LOG=TRACE, with retries and an error on the way, and searches the log
// (Terraform's and the provider's) and the state for the key. The key comes
// from SHORTLINK_API_KEY, as the docs recommend: the test harness itself
// logs the configuration's text at TRACE, key included, which is no
// provider's doing.
func TestAccSecurity_apiKeyNeverLoggedOrStored(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "trace.log")
	t.Setenv("TF_LOG", "TRACE")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	e := newTestEnv(t)
	key := e.fx.APIKey
	t.Setenv(EnvAPIKey, key)
	cfg := func(dest string) string {
		return testConfig(t, "security_api_key_from_environment.tf.tmpl", e.url, e.fx.DomainID, dest)
	}
	keyNotInState := func(s *terraform.State) error {
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), key) {
			return fmt.Errorf("the API key is in the state")
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					e.srv.Burst429(2, 0)
					e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: 503, Method: http.MethodGet})
				},
				Config: cfg("https://example.com/one"),
				Check:  keyNotInState,
			},
			{Config: cfg("https://example.com/two"), Check: keyNotInState},
			{
				Config:      cfg("https://blocked.example/three"),
				ExpectError: expectErr("422 blocked_by_filter"),
			},
			{ResourceName: "shortlink_link.test", ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"timeouts"}},
			{Config: cfg("https://example.com/two"), Check: keyNotInState},
		},
	})
	raw, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	log := string(raw)
	// The log must really hold the provider's request logging, or the
	// search below proves nothing.
	for _, want := range []string{"sending request", "received response", "x_ratelimit_remaining", "status=429", "status=503"} {
		if !strings.Contains(log, want) {
			t.Fatalf("the trace log (%d bytes) lacks %q: the provider's logging was not captured", len(raw), want)
		}
	}
	if i := strings.Index(log, key); i >= 0 {
		t.Fatalf("the API key appears in the trace log: …%s…", log[max(0, i-600):i])
	}
	if strings.Contains(log, key[len(key)-12:]) {
		t.Fatal("a part of the API key appears in the trace log")
	}
}
