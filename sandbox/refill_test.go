package sandbox

import (
	"testing"
	"time"

	"github.com/codecall-go/codecall/vm"
)

func withRefillDelay(d time.Duration) Option { return func(c *poolConfig) { c.refillDelay = d } }

// TestRefillWaitsForTheRun checks when the replacement of a taken worker
// starts: while another worker is warm, not during the run (its spawn would
// take a core from it) but when the run ends, or after the refill delay;
// at once when the run took the last warm worker. Live counts the worker
// processes, a spawn in progress included.
func TestRefillWaitsForTheRun(t *testing.T) {
	tests := []struct {
		name  string
		size  int
		delay time.Duration
		// spawnsDuringRun: the replacement starts while the run holds.
		spawnsDuringRun bool
	}{
		{"another warm: after the run", 2, time.Hour, false},
		{"another warm: after the delay", 2, 50 * time.Millisecond, true},
		{"the last warm: at once", 1, time.Hour, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPool(t, WithSize(tc.size), WithMaxWorkers(4), withRefillDelay(tc.delay))
			waitUntil(t, "a warm pool", func() bool { s := p.Stats(); return s.Warm == tc.size && s.Live == tc.size })
			h := newHoldHost(nil)
			defer h.letAll()
			res := runAs(t, p, "s1", h.host(), `await callTool("hold", {}); return 1`)
			waitUntil(t, "the run to hold", func() bool { return h.held.Load() == 1 })
			if tc.spawnsDuringRun {
				waitUntil(t, "the replacement to start during the run", func() bool { return p.Stats().Live == tc.size+1 })
			} else {
				// The spawners were not woken: nothing starts however long
				// the run holds its worker.
				time.Sleep(300 * time.Millisecond)
				if s := p.Stats(); s.Live != tc.size || s.Spawned != int64(tc.size) {
					t.Fatalf("during the run: %d live, %d spawned; want %d and %d (no replacement yet)", s.Live, s.Spawned, tc.size, tc.size)
				}
			}
			h.letAll()
			if r := <-res; r.Status != vm.StatusOK {
				t.Fatalf("run: %s %+v", r.Status, r.Error)
			}
			waitUntil(t, "the replacement after the run", func() bool { s := p.Stats(); return s.Warm == tc.size && s.Spawned == int64(tc.size+1) })
		})
	}
}
