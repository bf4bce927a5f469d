package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
)

// skipBelowTerraform skips a test on a CLI older than Terraform 1.<minor>,
// saying which of its features (feature) the test needs, before the test
// sets anything up. Every OpenTofu release has what these tests need
// (OpenTofu 1.6 has Terraform 1.6's features), so one number serves both.
// Without TF_ACC it does nothing: resource.Test skips the test then.
func skipBelowTerraform(t *testing.T, minor int, feature string) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		return
	}
	if major, got := cliVersion(t); major == 1 && got < minor {
		t.Skipf("%s needs Terraform 1.%d or later; this CLI is 1.%d: skipping the test", feature, minor, got)
	}
}

var readCLIVersion = sync.OnceValues(func() ([2]int, error) {
	var v [2]int
	path := os.Getenv("TF_ACC_TERRAFORM_PATH")
	out, err := exec.Command(path, "version", "-json").Output()
	if err != nil {
		return v, fmt.Errorf("%s version -json: %w", path, err)
	}
	var version struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &version); err != nil {
		return v, fmt.Errorf("reading `version -json`: %w\n%s", err, out)
	}
	if _, err := fmt.Sscanf(version.Version, "%d.%d", &v[0], &v[1]); err != nil {
		return v, fmt.Errorf("CLI version %q: %w", version.Version, err)
	}
	return v, nil
})

// cliVersion is the major and minor version of the CLI the acceptance
// tests run (TF_ACC_TERRAFORM_PATH; Terraform and OpenTofu alike).
func cliVersion(t testing.TB) (major, minor int) {
	t.Helper()
	v, err := readCLIVersion()
	if err != nil {
		t.Fatal(err)
	}
	return v[0], v[1]
}
