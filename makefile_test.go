package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The README promises that `make test` works with only Go and the Terraform
// CLI. Without a C compiler Go turns cgo off, and `go test -race` then stops
// before running a test ("-race requires cgo") everywhere but on macOS.
func TestMakefile_raceDetectorOnlyWhereGoCanBuildIt(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not on PATH")
	}
	for _, tc := range []struct {
		name, cgo, goos string
		race            bool
	}{
		{"a C compiler", "1", "linux", true},
		{"no C compiler", "0", "linux", false},
		{"no C compiler on macOS", "0", "darwin", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{"CGO_ENABLED=" + tc.cgo, "GOOS=" + tc.goos}
			dryRun := runMake(t, env, "-n", "test")
			// The race-checked run; fuzzing and the pacing simulation go without.
			testLines := linesContaining(dryRun, "-skip '^TestInterrupt_'")
			if len(testLines) != 1 {
				t.Fatalf("make -n test: want one run of the race-checked packages, got %d:\n%s", len(testLines), dryRun)
			}
			for _, line := range testLines {
				if strings.Contains(line, "-race") != tc.race {
					t.Errorf("with CGO_ENABLED=%s on %s, want race detector %v: %s", tc.cgo, tc.goos, tc.race, line)
				}
			}

			out, err := makeCommand(env, "race-available").CombinedOutput()
			if tc.race && err != nil {
				t.Errorf("make race-available failed where the race detector runs: %v\n%s", err, out)
			}
			if !tc.race && (err == nil || !strings.Contains(string(out), "install gcc or clang")) {
				t.Errorf("make race-available (which make ci runs first) must fail and say what to install, got err=%v:\n%s", err, out)
			}
		})
	}
}

// OLDEST_TERRAFORM_VERSION was renamed OLDEST_TERRAFORM_VERSIONS: an
// override by the old name must stop make, not leave the default releases
// to run in its place.
func TestMakefile_oldestTerraformVariableByItsOldName(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not on PATH")
	}
	out, err := makeCommand(nil, "-n", "testacc-oldest-terraform", "OLDEST_TERRAFORM_VERSION=1.2.3").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `write OLDEST_TERRAFORM_VERSIONS="1.2.3"`) {
		t.Errorf("make testacc-oldest-terraform OLDEST_TERRAFORM_VERSION=1.2.3 must fail and say to write OLDEST_TERRAFORM_VERSIONS=\"1.2.3\", got err=%v:\n%s", err, out)
	}
}

func runMake(t *testing.T, env []string, args ...string) string {
	t.Helper()
	out, err := makeCommand(env, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// makeCommand runs the project's GNUmakefile with env on top of the test's
// environment, less what a `make test RACE=…` around the test would pass on.
func makeCommand(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command("make", append([]string{"--no-print-directory"}, args...)...)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "RACE" && name != "MAKEFLAGS" && name != "MAKELEVEL" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

func linesContaining(text, substr string) []string {
	var found []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, substr) {
			found = append(found, line)
		}
	}
	return found
}
