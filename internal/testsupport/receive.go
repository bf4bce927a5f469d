package testsupport

import (
	"testing"
	"time"
)

// Receive takes a value from ch, failing the test rather than hanging when
// none comes. The bound is far above any expected wait, even on a loaded
// machine: it only turns a hang into a failure that names what, the thing
// waited for.
func Receive[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not come within 20s", what)
		panic("unreachable")
	}
}
