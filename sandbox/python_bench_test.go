package sandbox

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/codecall-go/codecall/vm"
)

// BenchmarkPythonSpawn measures a Python worker's start-up, from spawn to
// ready (confined, the interpreter started, its modules imported and its
// event loop built), one at a time.
func BenchmarkPythonSpawn(b *testing.B) {
	p := newPythonPool(b, limits(b))
	args := append(append([]string{p.cfg.marker}, p.workerLimits().args()...), p.cfg.python.args()...)
	var ds []time.Duration
	for b.Loop() {
		w, err := spawn(context.Background(), "/proc/self/exe", args, env(), DefaultReadyTimeout, nil)
		if err != nil {
			b.Fatal(err)
		}
		ds = append(ds, w.ready)
		w.kill("benchmark")
		w.reap(exitGrace)
	}
	b.StopTimer()
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "ready-p50-ms")
	b.ReportMetric(float64(ds[int(0.95*float64(len(ds)-1))].Microseconds())/1000, "ready-p95-ms")
}

// BenchmarkPythonRun measures a trivial Python plan's run in a warm pool,
// with and without vm.Replay: a run under Replay starts the interpreter
// again with a fixed hash key (bootstrap.py's _hash_reexec), and this is
// its price.
func BenchmarkPythonRun(b *testing.B) {
	l := limits(b)
	p := newPythonPool(b, l, WithSize(2))
	for _, bc := range []struct {
		name   string
		replay *vm.Replay
	}{{"plain", nil}, {"replay", &vm.Replay{Seed: 1, EpochMs: 1_700_000_000_000}}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				res := p.RunPython(context.Background(), "result = 1", newTestHost(), vm.Options{RunID: "bench", Limits: l, Replay: bc.replay})
				if res.Status != vm.StatusOK {
					b.Fatalf("%s: %+v", res.Status, res.Error)
				}
			}
		})
	}
}
