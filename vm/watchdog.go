package vm

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"time"
)

// heapSample is how often the watchdog samples the heap.
const heapSample = 2 * time.Millisecond

// The Go runtime's heap figures. heapObjects counts bytes in heap objects,
// live or not yet swept, and moves with every allocation; heapLive counts
// the bytes found live by the last collection.
const (
	heapObjects = "/memory/classes/heap/objects:bytes"
	heapLive    = "/gc/heap/live:bytes"
)

// watchdog is the goroutine that ends a run from outside: when its
// deadline passes or the caller cancels (both through the run's context),
// and when the heap grows past the memory budget.
//
// The heap figures are process-wide and compared against baselines taken
// when the run starts (and lowered whenever the heap shrinks below them),
// so allocations by other goroutines, other runs included, count against
// this run too. Every few milliseconds the
// watchdog compares the bytes in heap objects with its baseline; garbage
// counts there until it is swept, so when that growth passes the budget it
// forces a collection and compares the live heap with the live heap of the
// last collection before the run. The measure is approximate by design: it
// bounds how far a run can push the process; it is not an accounting of
// the run's own allocations.
type watchdog struct {
	quit chan struct{}
	done chan struct{}

	// start is the bytes in heap objects when the run started; peak the
	// most the watchdog saw. The watchdog's goroutine writes peak; read it
	// only after stop.
	start, peak uint64
}

func startWatchdog(r *run) *watchdog {
	w := &watchdog{quit: make(chan struct{}), done: make(chan struct{})}
	w.start = heapBytes([]metrics.Sample{{Name: heapObjects}})
	w.peak = w.start
	go w.watch(r)
	return w
}

// heapGrowth is how far the heap grew above its size when the run started,
// at the watchdog's samples and now.
func (r *run) heapGrowth() uint64 {
	if r.watch == nil {
		return 0
	}
	now := heapBytes([]metrics.Sample{{Name: heapObjects}})
	return grown(max(r.watch.peak, now), r.watch.start)
}

// stop ends the watchdog and waits for it.
func (w *watchdog) stop() {
	close(w.quit)
	<-w.done
}

func (w *watchdog) watch(r *run) {
	defer close(w.done)
	var tick <-chan time.Time
	var objects, live []metrics.Sample
	var baseObjects, baseLive uint64
	if r.caps.memoryBytes > 0 {
		objects = []metrics.Sample{{Name: heapObjects}}
		live = []metrics.Sample{{Name: heapLive}}
		baseObjects, baseLive = heapBytes(objects), heapBytes(live)
		t := time.NewTicker(heapSample)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-w.quit:
			return
		case <-r.ctx.Done():
			r.stopForContext()
			return
		case <-tick:
			now := heapBytes(objects)
			w.peak = max(w.peak, now)
			// The baselines follow the heap down: a collection during the
			// run frees garbage that was counted in them when it started.
			baseObjects = min(baseObjects, now)
			baseLive = min(baseLive, heapBytes(live))
			if now-baseObjects <= uint64(r.caps.memoryBytes) {
				continue
			}
			runtime.GC()
			used := grown(heapBytes(live), baseLive)
			if used > uint64(r.caps.memoryBytes) {
				r.stop(limitOutcome(LimitMemory, fmt.Sprintf("the run used more than its memory budget of %d bytes (this preset's memoryBytes)", r.caps.memoryBytes)))
				return
			}
			// Mostly garbage: measure growth from here, counting what the
			// run still holds.
			if now := heapBytes(objects); now > used {
				baseObjects = now - used
			}
		}
	}
}

func heapBytes(s []metrics.Sample) uint64 {
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

func grown(now, baseline uint64) uint64 {
	if now < baseline {
		return 0
	}
	return now - baseline
}

// stopForContext stops the run because its context is done: the deadline
// passed or the caller cancelled. A caller's context that ended at its
// own deadline (context.DeadlineExceeded, or a cancel whose cause is one)
// is a timeout, the client's; any other end of it is a cancellation.
func (r *run) stopForContext() {
	if r.parent.Err() != nil {
		if errors.Is(context.Cause(r.parent), context.DeadlineExceeded) {
			r.stop(&outcome{status: StatusTimeout, err: &ErrorInfo{Message: "the run reached the client's deadline for the request"}})
			return
		}
		r.stop(&outcome{status: StatusCancelled, err: &ErrorInfo{Message: "the run was cancelled by the client"}})
		return
	}
	r.stop(&outcome{status: StatusTimeout, err: &ErrorInfo{Message: fmt.Sprintf("the run exceeded its timeout of %v", r.caps.timeout)}})
}
