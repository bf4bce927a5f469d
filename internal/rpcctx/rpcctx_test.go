package rpcctx

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
	"weak"
)

type key struct{}

func TestDetach_forwardsValuesUntilReleased(t *testing.T) {
	parent := context.WithValue(context.Background(), key{}, "logger")
	ctx, release := Detach(parent)
	if got := ctx.Value(key{}); got != "logger" {
		t.Fatalf("Value before release = %v, want the parent's value", got)
	}
	if ctx.Err() != nil {
		t.Fatalf("Err before release = %v, want nil", ctx.Err())
	}
	release()
	if got := ctx.Value(key{}); got != nil {
		t.Fatalf("Value after release = %v, want nil", got)
	}
	select {
	case <-ctx.Done():
	default:
		t.Fatal("Done is open after release")
	}
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("Err after release = %v, want context.Canceled", ctx.Err())
	}
	release() // a second release is harmless
}

func TestDetach_endsWithParent(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	ctx, release := Detach(parent)
	defer release()
	child, cancelChild := context.WithCancel(ctx)
	defer cancelChild()
	cancel()
	waitDone(t, child.Done(), "the parent's cancellation")
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("Err = %v, want context.Canceled", ctx.Err())
	}
	if got := ctx.Value(key{}); got != nil {
		t.Fatalf("Value(unset key) = %v", got)
	}
}

func TestDetach_keepsParentDeadline(t *testing.T) {
	parent, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	ctx, release := Detach(parent)
	defer release()
	want, _ := parent.Deadline()
	if got, ok := ctx.Deadline(); !ok || !got.Equal(want) {
		t.Fatalf("Deadline = %v %v, want %v", got, ok, want)
	}
	<-ctx.Done()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err = %v, want context.DeadlineExceeded", ctx.Err())
	}
	release()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err after release = %v, want the parent's error kept", ctx.Err())
	}
}

func TestDetach_releasedChildrenCancelled(t *testing.T) {
	ctx, release := Detach(context.Background())
	child, cancel := context.WithCancel(ctx)
	defer cancel()
	release()
	waitDone(t, child.Done(), "its release")
}

// waitDone fails unless done (of a child of a detached context) closes after
// what ended its parent.
func waitDone(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("a child of the detached context outlived %s", what)
	}
}

// TestDetach_heldContextDoesNotKeepParentValues holds on to the contexts as
// terraform-plugin-framework does (the cancel function of a child of every
// RPC's context, until the provider stops) and checks that the parent's
// values can be collected once the RPC is over.
func TestDetach_heldContextDoesNotKeepParentValues(t *testing.T) {
	var held []context.CancelFunc
	var probes []weak.Pointer[[1 << 16]byte]
	for range 8 {
		payload := new([1 << 16]byte)
		probes = append(probes, weak.Make(payload))
		parent, cancelParent := context.WithCancel(context.WithValue(context.Background(), key{}, payload))
		ctx, release := Detach(parent)
		_, cancel := context.WithCancel(ctx)
		held = append(held, cancel)
		release()
		cancelParent()
	}
	runtime.GC()
	runtime.GC()
	for i, p := range probes {
		if p.Value() != nil {
			t.Errorf("value %d of a finished RPC is still reachable through the held context", i)
		}
	}
	runtime.KeepAlive(held)
}

// TestWithoutDetach_heldContextKeepsParentValues shows what Detach is for:
// the same holding keeps every value alive.
func TestWithoutDetach_heldContextKeepsParentValues(t *testing.T) {
	payload := new([1 << 16]byte)
	probe := weak.Make(payload)
	parent, cancelParent := context.WithCancel(context.WithValue(context.Background(), key{}, payload))
	_, cancel := context.WithCancel(parent)
	held := []context.CancelFunc{cancel}
	cancelParent()
	runtime.GC()
	if probe.Value() == nil {
		t.Fatal("the held context let go of its parent's values: the retention Detach works around is gone")
	}
	runtime.KeepAlive(held)
}
