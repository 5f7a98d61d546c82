package vm

import (
	"container/heap"
	"fmt"
	"math"
	"time"

	"github.com/dop251/goja"
)

// Timers are setTimeout's: callbacks the event loop runs once the plan's
// clock (the run's deadline, which stands still while a tool call waits
// for a person) has run for their delay. A timer never outlives its run:
// the run ends when the plan's promise settles, with timers still
// pending, and nothing runs after the deadline. Every setTimeout counts
// against the preset's maxTimers, including those cleared before they
// fire; going over it ends the run with limit_exceeded.
//
// setInterval, setImmediate and queueMicrotask are not provided (the
// validator refuses them): an interval repeats until cleared, so each of
// its firings would have to count against maxTimers, ending a run that
// forgot to clear one with a limit the plan cannot see coming; a repeated
// setTimeout makes each firing explicit. setImmediate and queueMicrotask
// add nothing over setTimeout(fn, 0) and promises.

// maxTimerDelay is the longest delay, in milliseconds (2^31-1, as in
// browsers, which would wrap a longer one to 0; here it is clamped). Any
// delay past the run's timeout means the timer never fires.
const maxTimerDelay = math.MaxInt32

// timer is one pending setTimeout.
type timer struct {
	id    int64
	due   time.Duration // on the plan's clock
	fn    goja.Callable
	args  []goja.Value
	index int // in the heap
}

// timerQueue holds a run's pending timers in the order they fire: by due
// time, then by creation. VM goroutine only.
type timerQueue struct {
	created int
	byID    map[int64]*timer
	order   timerHeap
	wake    *time.Timer // the event loop's alarm for the next due timer
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].due != h[j].due {
		return h[i].due < h[j].due
	}
	return h[i].id < h[j].id
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return t
}

// installTimers defines setTimeout and clearTimeout, on first use.
func (r *run) installTimers() {
	set := r.newFunction("setTimeout", 1, r.setTimeout)
	clear := r.newFunction("clearTimeout", 0, r.clearTimeout)
	r.freeze(set)
	r.freeze(clear)
	r.setGlobal("setTimeout", set)
	r.setGlobal("clearTimeout", clear)
}

// setTimeout implements setTimeout(callback, delay, ...args). A string
// callback would be compiled as code: reaching for it is a code
// generation attempt, like eval.
func (r *run) setTimeout(call goja.FunctionCall) goja.Value {
	cb := call.Argument(0)
	fn, ok := goja.AssertFunction(cb)
	if !ok {
		if o, isObj := cb.(*goja.Object); goja.IsString(cb) || (isObj && o.ClassName() == "String") {
			r.codeGeneration("setTimeout with a string of code")
		}
		r.throwType("setTimeout: the callback must be a function")
	}
	q := r.timers
	if q == nil {
		q = &timerQueue{byID: make(map[int64]*timer)}
		r.timers = q
		r.clock.watch()
	}
	if q.created >= r.opts.Limits.MaxTimers {
		r.stop(limitOutcome(LimitTimers, fmt.Sprintf("the plan set more than %d timers, this preset's maxTimers", r.opts.Limits.MaxTimers)))
		r.throwRange("timer limit reached")
	}
	delay := timerDelay(call.Argument(1))
	q.created++
	t := &timer{id: int64(q.created), due: r.timerNow() + delay, fn: fn}
	if len(call.Arguments) > 2 {
		t.args = append([]goja.Value(nil), call.Arguments[2:]...)
	}
	q.byID[t.id] = t
	heap.Push(&q.order, t)
	return r.rt.ToValue(t.id)
}

// timerDelay converts a delay in milliseconds once: NaN, negative and
// missing delays are 0, delays past 2^31-1 ms are clamped to it.
func timerDelay(v goja.Value) time.Duration {
	if goja.IsUndefined(v) {
		return 0
	}
	ms := v.ToFloat()
	switch {
	case math.IsNaN(ms) || ms <= 0:
		return 0
	case ms > maxTimerDelay:
		ms = maxTimerDelay
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// clearTimeout implements clearTimeout(id): anything that is not the id
// of a pending timer is ignored.
func (r *run) clearTimeout(call goja.FunctionCall) goja.Value {
	q := r.timers
	v := call.Argument(0)
	if q == nil || !goja.IsNumber(v) {
		return goja.Undefined()
	}
	f := v.ToFloat()
	if f != math.Trunc(f) || f < 1 || f > float64(q.created) {
		return goja.Undefined()
	}
	if t := q.byID[int64(f)]; t != nil {
		heap.Remove(&q.order, t.index)
		delete(q.byID, t.id)
	}
	return goja.Undefined()
}

// pendingTimers reports whether any timer is waiting to fire.
func (r *run) pendingTimers() bool { return r.timers != nil && len(r.timers.order) > 0 }

// fireTimer runs the first timer if it is due, and reports whether it
// did. A callback that throws ends the run with its error, as an uncaught
// exception would: nothing else could ever see it.
func (r *run) fireTimer() bool {
	if !r.pendingTimers() {
		return false
	}
	q := r.timers
	t := q.order[0]
	if t.due > r.timerNow() {
		return false
	}
	heap.Pop(&q.order)
	delete(q.byID, t.id)
	if _, err := t.fn(goja.Undefined(), t.args...); err != nil {
		r.outcome = r.classifyError(err)
		r.stop(r.outcome)
	}
	return true
}

// timerWait returns what the event loop waits on for the next timer: an
// alarm for when it is due (nil while the clock is suspended) and the
// clock's suspend/resume signal. unreachable is true when the next timer
// is due after the run's timeout while the clock runs.
func (r *run) timerWait() (alarm <-chan time.Time, changed <-chan struct{}, unreachable bool) {
	q := r.timers
	changed = r.clock.watch()
	now, running := r.clock.elapsed()
	if !running {
		return nil, changed, false
	}
	due := q.order[0].due
	if due > r.caps.timeout {
		return nil, changed, true
	}
	if q.wake == nil {
		q.wake = time.NewTimer(due - now)
	} else {
		q.wake.Reset(due - now)
	}
	return q.wake.C, changed, false
}

// stopTimers drops the timers still pending when the run ends.
func (r *run) stopTimers() {
	if r.timers == nil {
		return
	}
	if r.timers.wake != nil {
		r.timers.wake.Stop()
	}
	r.timers.order, r.timers.byID = nil, nil
}
