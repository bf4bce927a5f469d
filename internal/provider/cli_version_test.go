package provider

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/shortlink/terraform-provider-shortlink/internal/clitest"
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
	path := os.Getenv("TF_ACC_TERRAFORM_PATH")
	out, err := exec.Command(path, "version", "-json").Output()
	if err != nil {
		return [2]int{}, fmt.Errorf("%s version -json: %w", path, err)
	}
	major, minor, err := clitest.Version(string(out))
	return [2]int{major, minor}, err
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

// knownAtApply declares a string that a plan does not know and an apply
// does: the block to add to the configuration and the expression that
// reads the value. The value comes from terraform_data (Terraform 1.4 and
// later, every OpenTofu), unknown at a plan that creates or changes it. An
// older CLI has no terraform_data: there the value is built on timestamp(),
// which Terraform leaves unknown at every plan and knows at apply, so that
// what the tests check (a setting unknown at plan) is still checked; the
// value is then unknown at every plan, not only at those that change it.
func knownAtApply(t testing.TB, name, value string) (block, expr string) {
	t.Helper()
	if strings.ContainsAny(value, `"\$%`) {
		t.Fatalf("knownAtApply writes %q into HCL as it stands; give it a value without quotes, backslashes, $ or %%", value)
	}
	if os.Getenv("TF_ACC") != "" {
		if major, minor := cliVersion(t); major == 1 && minor < 4 {
			return "", fmt.Sprintf(`"${substr(timestamp(), 0, 0)}%s"`, value)
		}
	}
	return fmt.Sprintf("resource \"terraform_data\" %q {\n  input = %q\n}\n", name, value), "terraform_data." + name + ".output"
}
