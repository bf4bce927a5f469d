//go:build pprof

package main

import (
	"fmt"
	"log"
	"os"
	"runtime/pprof"
)

// startProfile writes a CPU profile of this provider process to
// $SHORTLINK_CPUPROFILE.<pid> (Terraform starts the provider more than
// once per command), for `go tool pprof -top`. Built only with
// -tags pprof: `go build -tags pprof -o … .` then run the CLI with the
// variable set; the benchmark does this with -profile.
func startProfile() (stop func()) {
	prefix := os.Getenv("SHORTLINK_CPUPROFILE")
	if prefix == "" {
		return func() {}
	}
	f, err := os.Create(fmt.Sprintf("%s.%d", prefix, os.Getpid()))
	if err != nil {
		log.Printf("cpu profile: %v", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Printf("cpu profile: %v", err)
		_ = f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}
