package sandbox

import (
	"sync"
	"time"

	"github.com/codecall-go/codecall/internal/pausetimer"
)

// killTimer is the server's deadline for a worker. A tool call waiting
// for a person (an approval prompt) stops it, as it stops the plan's own
// clock inside the worker: time a human takes is not the plan's.
type killTimer struct {
	fired chan struct{} // closed when the deadline passes
	*pausetimer.Timer
}

func newKillTimer(d time.Duration) *killTimer {
	k := &killTimer{fired: make(chan struct{})}
	k.Timer = pausetimer.New(d, func() { close(k.fired) })
	return k
}

func (k *killTimer) stop() { k.Timer.Stop() }

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
