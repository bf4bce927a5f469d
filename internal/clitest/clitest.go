// Package clitest runs the real Terraform (or OpenTofu) CLI as a
// subprocess against a fresh build of the provider, for what
// terraform-plugin-testing cannot do: interrupting or killing a run, and
// several runs at once. The end-to-end tests (internal/e2e) and the
// benchmarks (scripts/bench) use it.
//
// The provider is built once into a temporary directory and found through a
// CLI configuration of its own (dev_overrides), never the user's
// ~/.terraformrc, so nothing is downloaded and no `terraform init` is run.
package clitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ModulePath is the provider's Go module, built by Build.
const ModulePath = "github.com/shortlink/terraform-provider-shortlink"

// CLI is a built provider and the CLI that runs it.
type CLI struct {
	// Path is the terraform (or tofu) binary.
	Path string
	// Root holds the provider build, the CLI configuration, the
	// working directories and the runs' temporary files.
	Root   string
	rcFile string
}

// tmpDir is the runs' TMPDIR under root, so that what a killed run leaves
// there (the plugin's socket) goes when root does.
func tmpDir(root string) string { return filepath.Join(root, "tmp") }

// CLIPath is the CLI to run: TF_ACC_TERRAFORM_PATH, else terraform on PATH.
func CLIPath() (string, error) {
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		return p, nil
	}
	p, err := exec.LookPath("terraform")
	if err != nil {
		return "", errors.New("no Terraform CLI: set TF_ACC_TERRAFORM_PATH or put terraform on PATH")
	}
	return p, nil
}

// Build builds the provider into root and writes the CLI configuration
// that points the CLI at it.
func Build(root string) (*CLI, error) { return BuildWith(root, BuildOptions{}) }

// BuildOptions are what the benchmarks add to a build.
type BuildOptions struct {
	// Tags are go build tags for the provider, such as "pprof".
	Tags string
	// Also are packages of more providers to build beside it; the
	// package named <name> is found as shortlink/<name>.
	Also []string
}

// BuildWith builds the provider, and the providers of o.Also, into root and
// writes the CLI configuration that points the CLI at them.
func BuildWith(root string, o BuildOptions) (*CLI, error) {
	cli, err := CLIPath()
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(root, "bin")
	overrides := ""
	for _, pkg := range append([]string{ModulePath}, o.Also...) {
		name := strings.TrimPrefix(path.Base(pkg), "terraform-provider-")
		build := exec.Command("go", "build", "-tags", o.Tags, "-o", filepath.Join(bin, "terraform-provider-"+name), pkg)
		if out, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building %s: %w\n%s", pkg, err, out)
		}
		overrides += fmt.Sprintf("    %q = %q\n", "shortlink/"+name, bin)
	}
	rc := fmt.Sprintf("provider_installation {\n  dev_overrides {\n%s  }\n  direct {}\n}\n", overrides)
	if err := os.MkdirAll(tmpDir(root), 0o755); err != nil {
		return nil, err
	}
	c := &CLI{Path: cli, Root: root, rcFile: filepath.Join(root, "cli.tfrc")}
	return c, os.WriteFile(c.rcFile, []byte(rc), 0o644)
}

// RequiredProviders is the terraform block every configuration needs.
const RequiredProviders = `
terraform {
  required_providers {
    shortlink = { source = "shortlink/shortlink" }
  }
}
`

// Workdir is one working directory: a configuration and its local state.
type Workdir struct {
	cli *CLI
	Dir string
	env []string
}

// Workdir creates a new working directory, its name starting with name,
// holding files, whose runs get env (such as SHORTLINK_BASE_URL=…) on top
// of the process's own. Each call gets a directory of its own, so a test
// run again in the same process (go test -count=2) starts with no state
// or generated file of the run before.
func (c *CLI) Workdir(name string, files map[string]string, env ...string) (*Workdir, error) {
	dir, err := os.MkdirTemp(c.Root, name+"-")
	if err != nil {
		return nil, err
	}
	for file, content := range files {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	base := append(os.Environ(), "TF_CLI_CONFIG_FILE="+c.rcFile, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TMPDIR="+tmpDir(c.Root))
	return &Workdir{cli: c, Dir: dir, env: append(base, env...)}, nil
}

// Setenv adds variables (NAME=value) to the environment of later runs.
func (w *Workdir) Setenv(kv ...string) { w.env = append(w.env, kv...) }

// WriteFile replaces one file of the configuration.
func (w *Workdir) WriteFile(name, content string) error {
	return os.WriteFile(filepath.Join(w.Dir, name), []byte(content), 0o644)
}

// Run is one CLI process (or a shell that runs it), started in a process
// group of its own so that a signal can reach the CLI and the provider
// together, as a terminal's Ctrl-C does (Signal), or the first process
// only, as GitHub Actions' runner signals a step's shell (SignalProcess).
type Run struct {
	cmd  *exec.Cmd
	out  *SyncBuffer
	done chan struct{}
	err  error
	// Exited is when the process ended; zero while it runs.
	Exited time.Time
}

// Start starts the CLI with args (without -chdir, which it adds).
func (w *Workdir) Start(args ...string) (*Run, error) {
	return w.start(exec.Command(w.cli.Path, append([]string{"-chdir=" + w.Dir}, args...)...))
}

// StartScript starts bash on script in the working directory, with the
// CLI's path in $TF, as GitHub Actions runs a step's `run`: from a file
// (bash -c would exec a lone command itself), so the shell is the step's
// process and the CLI its child, unless the script execs it.
func (w *Workdir) StartScript(script string) (*Run, error) {
	file := filepath.Join(w.Dir, "step.sh")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", file)
	cmd.Dir = w.Dir
	return w.start(cmd, "TF="+w.cli.Path)
}

func (w *Workdir) start(cmd *exec.Cmd, env ...string) (*Run, error) {
	cmd.Env = append(slices.Clip(w.env), env...)
	inOwnGroup(cmd)
	out := &SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := &Run{cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		r.err = cmd.Wait()
		r.Exited = time.Now()
		close(r.done)
	}()
	return r, nil
}

// Signal sends sig to the run's process group.
func (r *Run) Signal(sig syscall.Signal) error {
	return signalGroup(r.cmd.Process.Pid, sig)
}

// SignalProcess sends sig to the run's first process only.
func (r *Run) SignalProcess(sig syscall.Signal) error {
	return r.cmd.Process.Signal(sig)
}

// Done is closed when the run has ended: its process, and every process
// that holds its output (a shell's children outlive it).
func (r *Run) Done() <-chan struct{} { return r.done }

// Wait waits for the run to end, at most limit (then it kills the group),
// and returns its output and its error (an *exec.ExitError on failure).
func (r *Run) Wait(limit time.Duration) (string, error) {
	select {
	case <-r.done:
	case <-time.After(limit):
		_ = r.Signal(syscall.SIGKILL)
		<-r.done
		return r.out.String(), fmt.Errorf("%s did not end within %s; killed", strings.Join(r.cmd.Args, " "), limit)
	}
	return r.out.String(), r.err
}

// Terraform runs the CLI to its end (at most limit) and returns its output;
// a non-zero exit is an error carrying the output's tail.
func (w *Workdir) Terraform(ctx context.Context, limit time.Duration, args ...string) (string, error) {
	r, err := w.Start(args...)
	if err != nil {
		return "", err
	}
	stop := context.AfterFunc(ctx, func() { _ = r.Signal(syscall.SIGKILL) })
	defer stop()
	out, err := r.Wait(limit)
	if err != nil {
		return out, fmt.Errorf("terraform %s: %w\n%s", strings.Join(args, " "), err, tail(out, 4000))
	}
	return out, nil
}

// ExitCode is the exit status of a finished run's error (0 for nil, -1
// when it was not an exit).
func ExitCode(err error) int {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	return -1
}

// StateInstance is one resource instance of the local state file.
type StateInstance struct {
	Address string
	ID      string
	Tainted bool
}

// ErrStateCutShort is a local state file that does not parse: a CLI killed
// while writing it (the local backend truncates, then writes) leaves it
// cut short, and Terraform itself cannot read it either.
var ErrStateCutShort = errors.New("terraform.tfstate was cut short (the CLI was killed while writing it)")

// State reads the working directory's local state; no file is no state.
func (w *Workdir) State() ([]StateInstance, error) {
	b, err := os.ReadFile(filepath.Join(w.Dir, "terraform.tfstate"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		// Terraform truncates the file before writing it; a run killed in
		// between leaves it empty, which Terraform reads as no state.
		return nil, nil
	}
	var st struct {
		Resources []struct {
			Mode, Type, Name string
			Instances        []struct {
				IndexKey   any    `json:"index_key"`
				Status     string `json:"status"`
				Attributes struct {
					ID string `json:"id"`
				} `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStateCutShort, err)
	}
	var out []StateInstance
	for _, r := range st.Resources {
		for _, in := range r.Instances {
			addr := r.Type + "." + r.Name
			if in.IndexKey != nil {
				addr += fmt.Sprintf("[%v]", in.IndexKey)
			}
			out = append(out, StateInstance{Address: addr, ID: in.Attributes.ID, Tainted: in.Status == "tainted"})
		}
	}
	return out, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// SyncBuffer is a bytes.Buffer safe for a process's writers and its
// readers: the output of a CLI run, or of a server started by a test.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Version reads the major and minor version from what `terraform version
// -json` (or `tofu version -json`) printed; text before the JSON, such as
// a warning, is skipped.
func Version(printed string) (major, minor int, err error) {
	start := strings.Index(printed, "{")
	if start < 0 {
		return 0, 0, fmt.Errorf("`version -json` printed no JSON:\n%s", printed)
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err := json.NewDecoder(strings.NewReader(printed[start:])).Decode(&v); err != nil {
		return 0, 0, fmt.Errorf("reading `version -json`: %w\n%s", err, printed)
	}
	if _, err := fmt.Sscanf(v.Version, "%d.%d", &major, &minor); err != nil {
		return 0, 0, fmt.Errorf("reading the version %q: %w", v.Version, err)
	}
	return major, minor, nil
}
