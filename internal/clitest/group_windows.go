//go:build windows

package clitest

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// inOwnGroup leaves cmd as it is: Windows has no process groups to signal.
func inOwnGroup(*exec.Cmd) {}

// signalGroup kills the process pid; Windows delivers no other signal to
// another process, so the tests that interrupt a run skip there.
func signalGroup(pid int, sig syscall.Signal) error {
	if sig != syscall.SIGKILL {
		return errors.New("clitest: only SIGKILL can be sent on Windows")
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
