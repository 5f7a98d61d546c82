package vm

import (
	"runtime/debug"
	"sync/atomic"
	"time"
)

// Returning memory. A plan can make hundreds of megabytes of garbage before
// the heap watchdog stops it; once collected, the Go runtime keeps those
// pages mapped and hands them back to the operating system only gradually
// (its background scavenger), so a server that runs plans in its own
// process stays at its high-water mark for minutes. A run with
// Options.ReturnMemory whose heap grew by at least returnAfterGrowth
// returns them at once with debug.FreeOSMemory (a forced collection, then
// every free page released), after the run's own objects have become
// garbage. FreeOSMemory stops the world briefly and costs the run that
// calls it tens of milliseconds, so it runs at most once per
// returnInterval across the process; a heavy run that falls inside the
// interval leaves the return pending for the next run with ReturnMemory
// that ends after it.
//
// The process-wide soft memory limit (debug.SetMemoryLimit, GOMEMLIMIT) is
// the host's to set; this package never changes it.

const (
	// returnAfterGrowth is the heap growth during a run, in bytes, from
	// which the run returns memory.
	returnAfterGrowth = 64 << 20
	// returnInterval is the least time between two returns.
	returnInterval = time.Second
)

var (
	lastReturn    atomic.Int64 // when memory was last returned, in Unix nanoseconds
	pendingReturn atomic.Bool  // a heavy run ended inside the interval
	memoryReturns atomic.Int64 // how many times memory was returned, for tests
)

// returnMemory returns freed memory to the operating system when a run
// grew the heap by grew bytes, or an earlier one's return is pending, and
// the last return is at least returnInterval old.
func returnMemory(grew uint64) {
	if grew >= returnAfterGrowth {
		pendingReturn.Store(true)
	}
	if !pendingReturn.Load() {
		return
	}
	now := time.Now().UnixNano()
	last := lastReturn.Load()
	if now-last < int64(returnInterval) || !lastReturn.CompareAndSwap(last, now) {
		return
	}
	pendingReturn.Store(false)
	debug.FreeOSMemory()
	memoryReturns.Add(1)
}
