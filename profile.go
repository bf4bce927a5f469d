//go:build !pprof

package main

// startProfile does nothing in the provider as shipped: the profiling hook
// is built only with -tags pprof (profile_pprof.go).
func startProfile() (stop func()) { return func() {} }
