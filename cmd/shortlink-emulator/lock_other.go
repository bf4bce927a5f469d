//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

// lockDataFile locks nothing where flock(2) is missing (Windows): two
// emulators on one data file are then the user's to avoid (EMULATOR.md).
func lockDataFile(string) (unlock func(), _ error) { return func() {}, nil }
