package pausetimer

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestTimer(t *testing.T) {
	tests := []struct {
		name    string
		run     func(tm *Timer)
		wait    time.Duration
		wantHit bool
	}{
		{"fires", func(*Timer) {}, 150 * time.Millisecond, true},
		{"suspended does not fire", func(tm *Timer) { tm.Suspend() }, 150 * time.Millisecond, false},
		{"resumed fires", func(tm *Timer) { r := tm.Suspend(); time.Sleep(80 * time.Millisecond); r(); r() }, 200 * time.Millisecond, true},
		{"nested suspends need every resume", func(tm *Timer) { r1 := tm.Suspend(); tm.Suspend(); r1() }, 150 * time.Millisecond, false},
		{"stopped does not fire", func(tm *Timer) { tm.Stop() }, 150 * time.Millisecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var hits atomic.Int32
			tm := New(50*time.Millisecond, func() { hits.Add(1) })
			tt.run(tm)
			time.Sleep(tt.wait)
			if got := hits.Load() == 1; got != tt.wantHit {
				t.Fatalf("fired = %v (%d times), want %v", got, hits.Load(), tt.wantHit)
			}
		})
	}
	// The suspended time is left out: the timer fires no sooner than its
	// budget plus the time it spent suspended. A loaded machine only makes
	// timers late, so the bound holds however the sleeps overrun.
	const budget = 500 * time.Millisecond
	fired := make(chan time.Time, 1)
	start := time.Now()
	tm := New(budget, func() { fired <- time.Now() })
	time.Sleep(40 * time.Millisecond)
	r := tm.Suspend()
	suspended := time.Now()
	time.Sleep(100 * time.Millisecond)
	resumed := time.Now()
	r()
	select {
	case at := <-fired:
		if d, want := at.Sub(start), budget+resumed.Sub(suspended); d < want {
			t.Fatalf("fired after %v, before its budget plus the %v suspended (%v): the suspension was counted", d, resumed.Sub(suspended), want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the timer never fired after resuming")
	}
}

func TestElapsed(t *testing.T) {
	tm := New(time.Second, func() {})
	defer tm.Stop()
	time.Sleep(30 * time.Millisecond)
	r := tm.Suspend()
	e1, running := tm.Elapsed()
	if running || e1 < 30*time.Millisecond {
		t.Fatalf("suspended: elapsed %v, running %v", e1, running)
	}
	time.Sleep(60 * time.Millisecond)
	if e2, _ := tm.Elapsed(); e2 != e1 {
		t.Fatalf("the clock moved while suspended: %v, then %v", e1, e2)
	}
	r()
	time.Sleep(10 * time.Millisecond)
	e3, running := tm.Elapsed()
	if !running || e3 < e1+10*time.Millisecond || e3 > e1+time.Second {
		t.Fatalf("resumed: elapsed %v (was %v), running %v", e3, e1, running)
	}
}
