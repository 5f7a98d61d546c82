package benchmarks

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/presets"
)

// BenchmarkFloor measures codecall.execute end to end (JSON-RPC in and
// out through srv.HandleMessage, secure preset) against the floor of what
// it is made of, in one loop, so that both sides see the same load:
//
//   - a trivial plan (`return 1`) against a bare goja runtime compiling
//     and running the same function plus one direct tools/call of the same
//     no-op tool on a server without CodeCall;
//   - a plan of ten sequential callTool against the same ten calls sent
//     directly;
//   - one callTool inside a plan ((ten-call plan − trivial plan) / 10)
//     against one direct tools/call.
//
// Each iteration runs all four measurements, the sides of each pair one
// after the other, in an order that alternates between iterations; each
// measurement is floorBurst runs back to back, as the judged floor script
// (../shared/bench/floor/run.sh) runs each side in a loop of its own, so
// that the runtimes vm.Runtimes prepares between requests help only as
// much as they do when plans come back to back. The ratios of the medians
// are reported as metrics (trivial/floor, ten/direct, call/direct), which
// is how the performance goals are stated. The process sub-benchmark runs
// the plans in worker processes, without a session (so a worker per run,
// as the floor script's requests get); it skips when workers cannot start
// here.
func BenchmarkFloor(b *testing.B) {
	for _, isolation := range []presets.Isolation{presets.IsolationInProcess, presets.IsolationProcess} {
		b.Run(string(isolation), func(b *testing.B) { benchFloor(b, isolation) })
	}
}

func benchFloor(b *testing.B, isolation presets.Isolation) {
	cc, _ := noopServerWith(b, isolation)
	bare := bareNoopServer()
	direct := toolCall(b, "bench.noop", map[string]any{})
	trivial := toolCall(b, "codecall.execute", plan("return 1"))
	ten := toolCall(b, "codecall.execute", plan(strings.Repeat(`await callTool("bench.noop", {});`+"\n", 10)+"return 1"))
	mustOK(b, cc, trivial)
	mustOK(b, cc, ten)
	mustOK(b, bare, direct)
	if err := floorRun(bare, direct); err != nil {
		b.Fatal(err)
	}

	ctx := context.Background()
	timed := func(f func()) time.Duration {
		start := time.Now()
		for range floorBurst {
			f()
		}
		return time.Since(start) / floorBurst
	}
	var floor1, exec1, direct10, exec10 []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		floorOp := func() {
			if err := floorRun(bare, direct); err != nil {
				b.Fatal(err)
			}
		}
		execOp := func() { cc.HandleMessage(ctx, trivial) }
		directOp := func() {
			for range 10 {
				bare.HandleMessage(ctx, direct)
			}
		}
		tenOp := func() { cc.HandleMessage(ctx, ten) }
		if i%2 == 0 {
			floor1 = append(floor1, timed(floorOp))
			exec1 = append(exec1, timed(execOp))
			direct10 = append(direct10, timed(directOp))
			exec10 = append(exec10, timed(tenOp))
		} else {
			exec10 = append(exec10, timed(tenOp))
			direct10 = append(direct10, timed(directOp))
			exec1 = append(exec1, timed(execOp))
			floor1 = append(floor1, timed(floorOp))
		}
	}
	b.StopTimer()
	f1, e1, d10, e10 := median(floor1), median(exec1), median(direct10), median(exec10)
	call := (e10 - e1) / 10
	b.ReportMetric(f1, "floor-trivial-µs")
	b.ReportMetric(e1, "execute-trivial-µs")
	b.ReportMetric(e1/f1, "trivial/floor")
	b.ReportMetric(d10, "direct10-µs")
	b.ReportMetric(e10, "execute10-µs")
	b.ReportMetric(e10/d10, "ten/direct")
	b.ReportMetric(call, "call-µs")
	b.ReportMetric(call/(d10/10), "call/direct")
}

// floorBurst is how many times each side of BenchmarkFloor runs back to
// back in an iteration.
const floorBurst = 16

// bareNoopServer is the no-op tool on a server without CodeCall.
func bareNoopServer() *server.MCPServer {
	srv := server.NewMCPServer("bench", "1", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("bench.noop", readOnlyHints()...), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(`{"ok":true}`), nil
	})
	return srv
}

// floorRun is the floor of a trivial plan: a fresh goja runtime compiling
// and running it, and one direct tools/call.
func floorRun(srv *server.MCPServer, direct []byte) error {
	rt := goja.New()
	if _, err := rt.RunString("(function(){ return 1; })()"); err != nil {
		return err
	}
	srv.HandleMessage(context.Background(), direct)
	return nil
}

// median returns the median of ds in microseconds, with the fraction kept:
// the floor is a few microseconds, and rounding it would skew the ratios.
func median(ds []time.Duration) float64 {
	slices.Sort(ds)
	return float64(ds[(len(ds)-1)/2].Nanoseconds()) / 1e3
}
