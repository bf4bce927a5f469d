// Package rpcctx gives each plugin RPC a context that lets go of the RPC's
// own context when the RPC returns.
//
// Why: terraform-plugin-framework keeps the cancel function of every RPC's
// context until the provider is stopped (proto6server.registerContext, so
// that StopProvider can cancel RPCs in flight), and a cancel function keeps
// its context and every parent alive. Each RPC's context carries the
// terraform-plugin-go loggers and the gRPC stream, some 10 to 60 KB, so a
// plan of 5,000 links kept more than 250 MB alive. Handing the framework a
// context from Detach, and releasing it when the RPC returns, leaves it only
// a small husk to hold on to.
package rpcctx

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Detach returns a context that carries parent's values, deadline and
// cancellation, and a release function to call when the RPC returns. Once
// released (or once parent is done) the context is done and, once released,
// refers to parent no more: Value answers nil, so whatever keeps the context
// alive no longer keeps parent's values alive.
func Detach(parent context.Context) (context.Context, func()) {
	c := &detached{done: make(chan struct{})}
	c.parent.Store(&parent)
	c.deadline, c.hasDeadline = parent.Deadline()
	stop := context.AfterFunc(parent, func() { c.finish(parent.Err()) })
	release := func() {
		stop()
		c.finish(context.Canceled)
		c.parent.Store(nil)
	}
	return c, release
}

// detached is the context Detach returns.
type detached struct {
	parent      atomic.Pointer[context.Context] // nil once released
	deadline    time.Time
	hasDeadline bool
	done        chan struct{}
	once        sync.Once
	err         atomic.Pointer[error]
}

var _ context.Context = (*detached)(nil)

// finish makes the context done with err, the first time only.
func (c *detached) finish(err error) {
	c.once.Do(func() {
		if err == nil {
			err = context.Canceled
		}
		c.err.Store(&err)
		close(c.done)
	})
}

func (c *detached) Deadline() (time.Time, bool) { return c.deadline, c.hasDeadline }

func (c *detached) Done() <-chan struct{} { return c.done }

// Err is nil until Done is closed, then parent's error, or
// context.Canceled once released.
func (c *detached) Err() error {
	if p := c.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (c *detached) Value(key any) any {
	p := c.parent.Load()
	if p == nil {
		return nil
	}
	return (*p).Value(key)
}
