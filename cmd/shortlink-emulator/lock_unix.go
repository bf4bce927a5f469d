//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDataFile takes an exclusive lock on FILE.lock for as long as the
// emulator runs, so that a second emulator on the same data file is
// refused rather than interleave its journal with the first's and lose
// answered changes. unlock releases it and removes the file.
func lockDataFile(dataFile string) (unlock func(), _ error) {
	name := dataFile + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("-data %s: another emulator is using it (it holds %s); stop that one, or give this one another file", dataFile, name)
		}
		return nil, fmt.Errorf("-data %s: locking %s: %w", dataFile, name, err)
	}
	return func() {
		_ = os.Remove(name)
		_ = f.Close()
	}, nil
}
