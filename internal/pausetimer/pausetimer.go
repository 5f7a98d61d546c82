// Package pausetimer is a one-shot timer that can be paused: a deadline
// from which time spent waiting for a person is left out.
package pausetimer

import (
	"sync"
	"time"
)

// Timer calls its function once, when its budget is spent. Time between a
// Suspend and the call of the function it returns does not count.
type Timer struct {
	fire   func()
	budget time.Duration

	mu        sync.Mutex
	t         *time.Timer
	remaining time.Duration
	since     time.Time
	suspended int
	stopped   bool
}

// New starts a timer that calls fire once budget has run while not
// suspended. fire runs on its own goroutine.
func New(budget time.Duration, fire func()) *Timer {
	var once sync.Once
	t := &Timer{fire: func() { once.Do(fire) }, budget: budget, remaining: budget, since: time.Now()}
	t.t = time.AfterFunc(budget, t.fire)
	return t
}

// Suspend stops the timer until the returned function is called. Calls
// nest; the returned function is idempotent.
func (t *Timer) Suspend() (resume func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.suspended == 0 && !t.stopped && t.t.Stop() {
		t.remaining -= time.Since(t.since)
	}
	t.suspended++
	var once sync.Once
	return func() { once.Do(t.resume) }
}

func (t *Timer) resume() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.suspended--
	if t.suspended == 0 && !t.stopped {
		t.since = time.Now()
		t.t = time.AfterFunc(max(t.remaining, 0), t.fire)
	}
}

// Elapsed returns how much of the budget has run, leaving out suspended
// time, and whether the clock is running (neither suspended nor stopped).
func (t *Timer) Elapsed() (elapsed time.Duration, running bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	elapsed = t.budget - t.remaining
	running = t.suspended == 0 && !t.stopped
	if running {
		elapsed += time.Since(t.since)
	}
	return elapsed, running
}

// Stop ends the timer for good; fire is not called after Stop returns
// unless it had already started.
func (t *Timer) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	t.t.Stop()
}
