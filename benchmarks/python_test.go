package benchmarks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// BenchmarkPython is codecall.execute end to end through the MCP handler
// in process isolation (warm pools), a JavaScript plan and the same plan
// in Python alternately in one loop: a trivial plan and ten sequential
// calls of a no-op tool. Both pools are back at their size before each
// timed run, so every run finds a warm worker and no worker of either
// pool is starting while it runs (a Python worker's start-up takes tens
// of milliseconds of CPU).
func BenchmarkPython(b *testing.B) {
	for _, tc := range []struct{ name, js, py string }{
		{"trivial", "return 1", "result = 1"},
		{"10-sequential-calls", strings.Repeat(`await callTool("bench.noop", {});`+"\n", 10) + "return 1",
			strings.Repeat(`await call_tool("bench.noop", {})`+"\n", 10) + "result = 1"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			srv, cc := noopServerWith(b, presets.IsolationProcess, func(c *presets.Config) {
				c.VM.Languages = []string{presets.LanguageJavaScript, presets.LanguagePython}
			})
			if py := cc.Isolation().Python; py == nil || py.Pool == nil {
				b.Skipf("Python plans cannot run here: %+v", py)
			}
			js := toolCall(b, "codecall.execute", plan(tc.js))
			py := toolCall(b, "codecall.execute", map[string]any{"language": "python", "script": tc.py})
			mustOK(b, srv, js)
			mustOK(b, srv, py)
			ctx := context.Background()
			var dJS, dPy []time.Duration
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				waitWarm(b, cc)
				waitPythonWarm(b, cc)
				b.StartTimer()
				t0 := time.Now()
				srv.HandleMessage(ctx, js)
				dJS = append(dJS, time.Since(t0))
				b.StopTimer()
				waitWarm(b, cc)
				waitPythonWarm(b, cc)
				b.StartTimer()
				t1 := time.Now()
				srv.HandleMessage(ctx, py)
				dPy = append(dPy, time.Since(t1))
			}
			b.StopTimer()
			pJS, pPy := percentiles(dJS), percentiles(dPy)
			b.ReportMetric(pJS[0], "js-p50-µs")
			b.ReportMetric(pJS[1], "js-p95-µs")
			b.ReportMetric(pPy[0], "python-p50-µs")
			b.ReportMetric(pPy[1], "python-p95-µs")
			b.ReportMetric(pPy[0]/pJS[0], "p50-ratio")
		})
	}
}

// waitPythonWarm waits until every Python worker is started and ready.
func waitPythonWarm(b *testing.B, cc *middleware.CodeCall) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		py := cc.Isolation().Python
		if py != nil && py.Pool != nil && py.Pool.Warm == py.Pool.Live && py.Pool.Warm >= 2 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the Python worker pool did not refill: %+v", py)
		}
		time.Sleep(200 * time.Microsecond)
	}
}
