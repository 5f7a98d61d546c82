package vm

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/codecall-go/codecall/toolerr"
)

// Replay makes a run repeatable, so that a plan paused for a person's
// approval can be run again from its start on any replica and reach the
// same calls with the same inputs (package meta answers the calls it
// already made from its journal). Under Replay:
//
//   - Math.random draws from a generator seeded with Seed;
//   - Date reads a clock that starts at EpochMs and moves only when a
//     timer fires, to that timer's due time: time spent in tool calls is
//     not seen, so a plan reads the same dates however long its calls
//     took the first time;
//   - tool calls settle in the order the plan made them: a call that
//     completes before an earlier one waits for it, so the continuations
//     of Promise.all and Promise.race run in one order;
//   - a timer fires only when no tool call is in flight or queued, in the
//     order of its due time on that clock, after waiting for the
//     difference in real time (a plan that sleeps between polls still
//     sleeps). Promise.race between a tool call and a timer is therefore
//     always won by the call.
//
// Host.CallTool and Host.Discover receive the call's index in the run
// (CallIndex), the same on every replay.
type Replay struct {
	// Seed seeds Math.random; derive it from the run ID.
	Seed uint64 `json:"seed"`
	// EpochMs is what Date.now() reads when the run starts, in Unix
	// milliseconds; the first run records it and replays reuse it.
	EpochMs int64 `json:"epochMs"`
}

// KindReplayDiverged is ErrorInfo.Kind of a run (StatusRuntimeError) that
// ended because a host answered a call with toolerr.ReplayDiverged.
const KindReplayDiverged = "replay_diverged"

// SeedFrom derives a Replay seed from a run ID.
func SeedFrom(runID string) uint64 {
	// FNV-1a: stable across versions and processes, unlike hash/maphash.
	h := uint64(14695981039346656037)
	for i := 0; i < len(runID); i++ {
		h ^= uint64(runID[i])
		h *= 1099511628211
	}
	return h
}

type callIndexKey struct{}

// CallIndex returns the index of the call whose context ctx is (the ctx
// Host.CallTool and Host.Discover receive in a run under Replay): 0 for
// the plan's first callTool, searchTools or describeTools, and so on.
func CallIndex(ctx context.Context) (int, bool) {
	i, ok := ctx.Value(callIndexKey{}).(int)
	return i, ok
}

// ContextWithCallIndex returns ctx carrying the index of a call, for hosts
// that run a plan somewhere else (a worker process) and hand its calls to
// another Host.
func ContextWithCallIndex(ctx context.Context, i int) context.Context {
	return context.WithValue(ctx, callIndexKey{}, i)
}

// determinism is a Replay run's state. VM goroutine only.
type determinism struct {
	epoch   time.Time
	virtual time.Duration     // the clock Date reads, past epoch
	next    int               // the index of the next call to settle
	ready   map[int]*toolCall // completed calls waiting for earlier ones
	wait    *time.Timer       // the real wait before a timer fires
	rng     *rand.Rand        // Math.random
}

// startReplay installs Replay's clock and generator on the runtime.
func (r *run) startReplay() {
	rp := r.opts.Replay
	if rp == nil {
		return
	}
	d := &determinism{epoch: time.UnixMilli(rp.EpochMs), ready: map[int]*toolCall{},
		rng: rand.New(rand.NewPCG(rp.Seed, rp.Seed^0x9e3779b97f4a7c15))}
	r.det = d
	r.rt.SetRandSource(d.rng.Float64)
	r.rt.SetTimeSource(func() time.Time { return d.epoch.Add(d.virtual) })
}

// callContext is the context a call's host method receives.
func (r *run) callContext(c *toolCall) context.Context {
	if r.det == nil {
		return r.ctx
	}
	return ContextWithCallIndex(r.ctx, c.index)
}

// completeInOrder settles completed calls in the order the plan made
// them: c waits until every earlier call has settled.
func (r *run) completeInOrder(c *toolCall) {
	d := r.det
	d.ready[c.index] = c
	for {
		next, ok := d.ready[d.next]
		if !ok {
			return
		}
		delete(d.ready, d.next)
		d.next++
		r.complete(next)
		if r.stopping.Load() {
			return
		}
	}
}

// pending counts the completed calls waiting for an earlier one.
func (d *determinism) pending() int { return len(d.ready) }

// divergedOutcome is the outcome that ends a run whose host answered c
// with toolerr.ReplayDiverged, nil for any other answer.
func divergedOutcome(c *toolCall) *outcome {
	if c.err == nil {
		return nil
	}
	te := toolerr.As(c.err)
	if te == nil || te.Code != toolerr.ReplayDiverged {
		return nil
	}
	return &outcome{status: StatusRuntimeError, err: &ErrorInfo{Kind: KindReplayDiverged, Code: string(te.Code),
		ToolName: c.name, Message: clip(te.Message, maxErrorMessageBytes)}}
}

// fireReplayTimer runs the next timer of a Replay run when nothing else
// can happen first: no call in flight, queued or waiting to settle. It
// waits the timer's delay on Date's clock in real time, moves that clock
// to the timer's due time and runs it. It reports whether it ran a timer
// (or ended the run).
func (r *run) fireReplayTimer() bool {
	d := r.det
	if !r.pendingTimers() || r.inflight > 0 || len(r.queue) > 0 || d.pending() > 0 {
		return false
	}
	q := r.timers
	t := q.order[0]
	wait := t.due - d.virtual
	if elapsed, _ := r.clock.elapsed(); elapsed+wait > r.caps.timeout {
		r.outcome = &outcome{status: StatusTimeout, err: &ErrorInfo{
			Message: fmt.Sprintf("the plan is waiting for a timer due after the run's timeout of %v", r.caps.timeout)}}
		r.stop(r.outcome)
		return true
	}
	if wait > 0 {
		if d.wait == nil {
			d.wait = time.NewTimer(wait)
		} else {
			d.wait.Reset(wait)
		}
		select {
		case <-d.wait.C:
		case <-r.stopCh:
			return true
		}
	}
	d.virtual = t.due
	return r.fireTimer()
}

// timerNow is the time setTimeout counts a delay from: the plan's clock,
// or under Replay the clock Date reads.
func (r *run) timerNow() time.Duration {
	if r.det != nil {
		return r.det.virtual
	}
	now, _ := r.clock.elapsed()
	return now
}
