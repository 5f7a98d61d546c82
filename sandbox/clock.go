package sandbox

import (
	"sync"
	"time"
)

// killTimer is the server's deadline for a worker. A tool call waiting
// for a person (an approval prompt) stops it, as it stops the plan's own
// clock inside the worker: time a human takes is not the plan's.
type killTimer struct {
	fired chan struct{} // closed when the deadline passes

	mu        sync.Mutex
	t         *time.Timer
	remaining time.Duration
	since     time.Time
	suspended int
	stopped   bool
	once      sync.Once
}

func newKillTimer(d time.Duration) *killTimer {
	k := &killTimer{fired: make(chan struct{}), remaining: d, since: time.Now()}
	k.t = time.AfterFunc(d, k.fire)
	return k
}

func (k *killTimer) fire() { k.once.Do(func() { close(k.fired) }) }

// Suspend stops the deadline until the returned function is called.
func (k *killTimer) Suspend() func() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.suspended == 0 && !k.stopped && k.t.Stop() {
		k.remaining -= time.Since(k.since)
	}
	k.suspended++
	var once sync.Once
	return func() {
		once.Do(func() {
			k.mu.Lock()
			defer k.mu.Unlock()
			k.suspended--
			if k.suspended == 0 && !k.stopped {
				k.since = time.Now()
				k.t = time.AfterFunc(max(k.remaining, 0), k.fire)
			}
		})
	}
}

func (k *killTimer) stop() {
	k.mu.Lock()
	k.stopped = true
	k.t.Stop()
	k.mu.Unlock()
}

// callClock is the vm.Clock the server gives a brokered tool call: it
// stops the kill timer here and, through the bridge, the plan's clock in
// the worker.
type callClock struct {
	kill *killTimer
	send func(t string)
}

// Suspend implements vm.Clock.
func (c *callClock) Suspend() func() {
	resumeKill := c.kill.Suspend()
	c.send(msgSuspend)
	var once sync.Once
	return func() {
		once.Do(func() {
			c.send(msgResume)
			resumeKill()
		})
	}
}
