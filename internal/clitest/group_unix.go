//go:build !windows

package clitest

import (
	"os/exec"
	"syscall"
)

// inOwnGroup starts cmd in a process group of its own, so that a signal
// reaches the CLI and the provider it started, as a terminal's Ctrl-C does.
func inOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group led by pid.
func signalGroup(pid int, sig syscall.Signal) error {
	return syscall.Kill(-pid, sig)
}
