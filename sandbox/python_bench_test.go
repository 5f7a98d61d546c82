package sandbox

import (
	"context"
	"slices"
	"testing"
	"time"
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
