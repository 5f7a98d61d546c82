package benchmarks

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// noopServer has one tool that does nothing, so plan benchmarks measure
// CodeCall and mcp-go, not tools. Plans run in process.
func noopServer(b *testing.B) *server.MCPServer {
	srv, _ := noopServerWith(b, presets.IsolationInProcess)
	return srv
}

// noopServerWith is noopServer with plans run under the given isolation.
func noopServerWith(b testing.TB, isolation presets.Isolation, mut ...func(*presets.Config)) (*server.MCPServer, *middleware.CodeCall) {
	srv := server.NewMCPServer("bench", "1", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("bench.noop", mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(`{"ok":true}`), nil
		})
	cfg := presets.Default()
	cfg.VM.Isolation = isolation
	cfg.VM.MaxConcurrency = 10
	for _, m := range mut {
		m(&cfg)
	}
	cc, err := middleware.Wrap(srv, middleware.WithConfig(cfg), middleware.WithLogger(quiet))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cc.Close() })
	if iso := cc.Isolation(); iso.Effective != isolation {
		b.Skipf("plans cannot run with %s isolation here: %s", isolation, iso.Fallback)
	}
	return srv, cc
}

func toolCall(b testing.TB, name string, args map[string]any) []byte {
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
	if err != nil {
		b.Fatal(err)
	}
	return msg
}

func mustOK(b testing.TB, srv *server.MCPServer, msg []byte) {
	mustOKIn(context.Background(), b, srv, msg)
}

// mustOKIn is mustOK for a request in ctx (a client session's).
func mustOKIn(ctx context.Context, b testing.TB, srv *server.MCPServer, msg []byte) {
	resp, ok := srv.HandleMessage(ctx, msg).(mcp.JSONRPCResponse)
	if !ok {
		b.Fatalf("not a result: %+v", resp)
	}
	res := resp.Result.(*mcp.CallToolResult)
	if res.IsError {
		tc, _ := mcp.AsTextContent(res.Content[0])
		b.Fatalf("call failed: %s", tc.Text)
	}
}

// measure runs msg b.N times through the handler and reports p50/p95/p99.
func measure(b *testing.B, srv *server.MCPServer, msgs ...[]byte) {
	for _, m := range msgs {
		mustOK(b, srv, m)
	}
	ctx := context.Background()
	durations := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		for _, m := range msgs {
			srv.HandleMessage(ctx, m)
		}
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(durations)
	pct := func(p float64) float64 {
		return float64(durations[int(p*float64(len(durations)-1))].Microseconds())
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.95), "p95-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

func plan(script string) map[string]any { return map[string]any{"script": script} }

// BenchmarkExecute is codecall.execute end to end through the MCP handler,
// against the direct-call baseline of the same ten calls in the same run.
func BenchmarkExecute(b *testing.B) {
	ten := strings.Repeat(`await callTool("bench.noop", {});`+"\n", 10)
	b.Run("trivial", func(b *testing.B) {
		measure(b, noopServer(b), toolCall(b, "codecall.execute", plan("return 1")))
	})
	b.Run("10-sequential-calls", func(b *testing.B) {
		measure(b, noopServer(b), toolCall(b, "codecall.execute", plan(ten+"return 1")))
	})
	b.Run("10-parallel-calls", func(b *testing.B) {
		measure(b, noopServer(b), toolCall(b, "codecall.execute",
			plan(`return (await Promise.all(Array.from({length: 10}, () => callTool("bench.noop", {})))).length`)))
	})
	b.Run("direct-10-calls-baseline", func(b *testing.B) {
		// The same ten calls sent by a client straight to the tool, on a
		// server without CodeCall: what the plan saves the client is these
		// ten round trips through the model.
		plain := server.NewMCPServer("bench", "1", server.WithToolCapabilities(true))
		plain.AddTool(mcp.NewTool("bench.noop"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(`{"ok":true}`), nil
		})
		msgs := make([][]byte, 10)
		for i := range msgs {
			msgs[i] = toolCall(b, "bench.noop", map[string]any{})
		}
		measure(b, plain, msgs...)
	})
}

// BenchmarkExecuteThroughput runs trivial plans from every core at once.
func BenchmarkExecuteThroughput(b *testing.B) {
	srv := noopServer(b)
	msg := toolCall(b, "codecall.execute", plan("return 1"))
	mustOK(b, srv, msg)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			srv.HandleMessage(ctx, msg)
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "runs/s")
}
