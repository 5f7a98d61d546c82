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
	// The suspended time is left out: 40 ms before, 100 ms suspended, so
	// 10 ms remain after resuming, not 0.
	var at atomic.Int64
	start := time.Now()
	tm := New(50*time.Millisecond, func() { at.Store(int64(time.Since(start))) })
	time.Sleep(40 * time.Millisecond)
	r := tm.Suspend()
	time.Sleep(100 * time.Millisecond)
	r()
	time.Sleep(100 * time.Millisecond)
	if d := time.Duration(at.Load()); d < 145*time.Millisecond {
		t.Fatalf("fired after %v; the suspension was counted", d)
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
