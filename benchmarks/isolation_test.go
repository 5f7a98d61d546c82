package benchmarks

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// BenchmarkIsolation runs the same plan in process and in a sandboxed
// worker process, alternately in one loop, so both see the same machine
// load; it reports each mode's percentiles, their medians' difference and
// ratio. Between iterations, untimed, it waits for the worker pool to be
// back to its size: this is the latency of a run that finds a warm worker.
// BenchmarkIsolationThroughput measures runs back to back.
func BenchmarkIsolation(b *testing.B) {
	ten := strings.Repeat(`await callTool("bench.noop", {});`+"\n", 10)
	for _, tc := range []struct{ name, script string }{
		{"trivial", "return 1"},
		{"10-sequential-calls", ten + "return 1"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			in, _ := noopServerWith(b, presets.IsolationInProcess)
			pr, cc := noopServerWith(b, presets.IsolationProcess)
			msg := toolCall(b, "codecall.execute", plan(tc.script))
			mustOK(b, in, msg)
			mustOK(b, pr, msg)
			ctx := context.Background()
			var dIn, dPr []time.Duration
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				waitWarm(b, cc)
				b.StartTimer()
				t0 := time.Now()
				in.HandleMessage(ctx, msg)
				t1 := time.Now()
				pr.HandleMessage(ctx, msg)
				t2 := time.Now()
				dIn, dPr = append(dIn, t1.Sub(t0)), append(dPr, t2.Sub(t1))
			}
			b.StopTimer()
			pIn, pPr := percentiles(dIn), percentiles(dPr)
			b.ReportMetric(pIn[0], "inprocess-p50-µs")
			b.ReportMetric(pIn[1], "inprocess-p95-µs")
			b.ReportMetric(pPr[0], "process-p50-µs")
			b.ReportMetric(pPr[1], "process-p95-µs")
			b.ReportMetric(pPr[0]-pIn[0], "p50-diff-µs")
			b.ReportMetric(pPr[0]/pIn[0], "p50-ratio")
		})
	}
}

// waitWarm waits until the pool's warm workers are started and ready and
// no worker is starting or exiting; workers parked for a session's next
// run (sandbox.reuseRuns) may remain.
func waitWarm(b *testing.B, cc *middleware.CodeCall) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		p := cc.Isolation().Pool
		if p != nil && p.Warm+p.Parked == p.Live && p.Warm >= 2 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the worker pool did not refill: %+v", p)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// percentiles returns the p50 and p95 of ds in microseconds.
func percentiles(ds []time.Duration) [2]float64 {
	slices.Sort(ds)
	at := func(p float64) float64 { return float64(ds[int(p*float64(len(ds)-1))].Microseconds()) }
	return [2]float64{at(0.50), at(0.95)}
}

// BenchmarkIsolationThroughput runs trivial plans in worker processes from
// several goroutines at once: one per core, and 16 per core, a burst
// beyond the pool's 8 processes that waits in its queue. Every run comes
// from one MCP session, as a client's do, so a worker serves the
// session's successive runs (sandbox.reuseRuns), each in a fresh runtime;
// worker-per-run turns that off (reuseRuns: 1), as for runs without a
// session. Workers are the benchmark binary re-executed (which
// initialises everything the server links, a search index library
// included), or the small codecall-worker command (sandbox.command).
func BenchmarkIsolationThroughput(b *testing.B) {
	worker := buildWorker(b)
	for _, tc := range []struct {
		name        string
		parallelism int
		command     string
		reuseRuns   int
	}{
		{"self/one-per-core", 1, "", 0}, {"self/burst", 16, "", 0},
		{"codecall-worker/one-per-core", 1, worker, 0}, {"codecall-worker/burst", 16, worker, 0},
		{"self/one-per-core/worker-per-run", 1, "", 1},
	} {
		b.Run(tc.name, func(b *testing.B) {
			if tc.command == "" && strings.HasPrefix(tc.name, "codecall-worker") {
				b.Skip("codecall-worker could not be built")
			}
			// One client sends every run: it may use the whole pool,
			// and queue the whole burst.
			srv, _ := noopServerWith(b, presets.IsolationProcess, func(c *presets.Config) {
				c.Sandbox.Command = tc.command
				c.Sandbox.MaxRunningPerSession, c.Sandbox.MaxQueuedPerSession = c.Sandbox.MaxWorkers, 256
				c.Sandbox.ReuseRuns = tc.reuseRuns
			})
			throughput(srv.WithContext(context.Background(), fakeSession{"bench-client"}), b, srv, tc.parallelism)
		})
	}
}

// buildWorker builds cmd/codecall-worker into a temporary directory and
// returns its path, or "" when the go command is not at hand.
func buildWorker(b *testing.B) string {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return ""
	}
	out := filepath.Join(b.TempDir(), "codecall-worker")
	if msg, err := exec.Command(goCmd, "build", "-o", out, "../cmd/codecall-worker").CombinedOutput(); err != nil {
		b.Logf("building codecall-worker: %v\n%s", err, msg)
		return ""
	}
	return out
}

func throughput(ctx context.Context, b *testing.B, srv *server.MCPServer, parallelism int) {
	msg := toolCall(b, "codecall.execute", plan("return 1"))
	mustOKIn(ctx, b, srv, msg)
	b.SetParallelism(parallelism)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			mustOKIn(ctx, b, srv, msg)
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "runs/s")
}
