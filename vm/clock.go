package vm

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/codecall-go/codecall/internal/pausetimer"
)

// Clock is a run's timeout, which a host may stop while it waits for a
// person (an approval prompt): time spent waiting for a human does not
// count against the plan's budget.
type Clock interface {
	// Suspend stops the clock until resume is called. Calls nest; resume
	// is idempotent.
	Suspend() (resume func())
}

type clockKey struct{}

// ContextWithClock returns ctx carrying c, for hosts that run a plan
// somewhere else (a worker process) and hand its calls to another Host.
func ContextWithClock(ctx context.Context, c Clock) context.Context {
	return context.WithValue(ctx, clockKey{}, c)
}

// SuspendClock stops the timeout of the run whose tool call ctx belongs to
// (the ctx Host.CallTool receives) until resume is called. Outside a run it
// does nothing.
func SuspendClock(ctx context.Context) (resume func()) {
	if c, ok := ctx.Value(clockKey{}).(Clock); ok {
		return c.Suspend()
	}
	return func() {}
}

// errDeadline is the cancellation cause of a run whose time ran out.
var errDeadline = errors.New("run deadline exceeded")

// deadline is a run's suspendable timeout: a timer that cancels the run's
// context when the budget is spent, stopped while suspended. It is also
// the plan's clock, on which setTimeout's delays run.
type deadline struct {
	cancel context.CancelCauseFunc
	timer  *pausetimer.Timer
	// changed, once the plan has a timer, receives a token whenever the
	// clock is suspended or resumed, so the event loop recomputes when the
	// next timer is due. It is created on the VM goroutine by watch.
	changed atomic.Pointer[chan struct{}]
}

func newDeadline(budget time.Duration, cancel context.CancelCauseFunc) *deadline {
	return &deadline{cancel: cancel, timer: pausetimer.New(budget, func() { cancel(errDeadline) })}
}

// Suspend implements Clock.
func (d *deadline) Suspend() func() {
	resume := d.timer.Suspend()
	d.notify()
	return func() {
		resume()
		d.notify()
	}
}

func (d *deadline) notify() {
	if ch := d.changed.Load(); ch != nil {
		select {
		case *ch <- struct{}{}:
		default:
		}
	}
}

// watch returns the channel that signals suspensions and resumptions,
// creating it on first use. VM goroutine only.
func (d *deadline) watch() <-chan struct{} {
	if ch := d.changed.Load(); ch != nil {
		return *ch
	}
	ch := make(chan struct{}, 1)
	d.changed.Store(&ch)
	return ch
}

// elapsed is the plan's clock: the time the run has spent, leaving out
// suspensions, and whether the clock is running.
func (d *deadline) elapsed() (time.Duration, bool) { return d.timer.Elapsed() }

// stop ends the clock for good.
func (d *deadline) stop() {
	d.timer.Stop()
	d.cancel(context.Canceled)
}
