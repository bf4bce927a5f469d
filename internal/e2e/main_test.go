package e2e

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/shortlink/terraform-provider-shortlink/internal/clitest"
)

var (
	buildOnce sync.Once
	buildRoot string // holds the build and every working directory; "" until built
	built     *clitest.CLI
	buildErr  error
)

// TestMain removes the provider the tests built, and their working
// directories beside it, once every test has passed: each run of the
// package leaves 30 MB in the temporary directory otherwise. After a
// failure they are kept, for the state and logs they hold.
func TestMain(m *testing.M) {
	code := m.Run()
	switch {
	case buildRoot == "":
	case code == 0:
		os.RemoveAll(buildRoot)
	default:
		fmt.Fprintf(os.Stderr, "the working directories of these tests are kept in %s\n", buildRoot)
	}
	os.Exit(code)
}

// cli builds the provider once for every test of the package.
func cli(t *testing.T) *clitest.CLI {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("end-to-end tests run the Terraform CLI; set TF_ACC=1")
	}
	return buildProvider(t)
}

// buildProvider builds the provider once, for tests that choose their CLI
// by a switch of their own.
func buildProvider(t *testing.T) *clitest.CLI {
	t.Helper()
	buildOnce.Do(func() {
		buildRoot, buildErr = os.MkdirTemp("", "shortlink-e2e-")
		if buildErr == nil {
			built, buildErr = clitest.Build(buildRoot)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}
