package vm

import (
	"context"
	"errors"
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
// context when the budget is spent, stopped while suspended.
type deadline struct {
	cancel context.CancelCauseFunc
	timer  *pausetimer.Timer
}

func newDeadline(budget time.Duration, cancel context.CancelCauseFunc) *deadline {
	return &deadline{cancel: cancel, timer: pausetimer.New(budget, func() { cancel(errDeadline) })}
}

// Suspend implements Clock.
func (d *deadline) Suspend() func() { return d.timer.Suspend() }

// stop ends the clock for good.
func (d *deadline) stop() {
	d.timer.Stop()
	d.cancel(context.Canceled)
}
