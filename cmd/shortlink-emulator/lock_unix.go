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
// answered changes. unlock removes the file and releases the lock.
func lockDataFile(dataFile string) (unlock func(), _ error) {
	name := dataFile + ".lock"
	for {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			_ = f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("another emulator is using it (it holds %s); stop that one, or give this one another file", name)
			}
			return nil, fmt.Errorf("locking %s: %w", name, err)
		}
		// The file locked may be one that an emulator stopping removed
		// meanwhile, and another emulator may lock the new one: lock the
		// file the name holds.
		held, errHeld := f.Stat()
		named, errNamed := os.Stat(name)
		if errHeld == nil && errNamed == nil && os.SameFile(held, named) {
			return func() {
				_ = os.Remove(name)
				_ = f.Close()
			}, nil
		}
		_ = f.Close()
	}
}
