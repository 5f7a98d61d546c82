package benchmarks

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/presets"
)

// benchPolicy is a policy of the size operators write: per-app allowlist
// from data, an argument check and a destructive-tool rule.
const benchPolicy = `package codecall

import rego.v1

default decision := {"allow": false, "requireApproval": false, "reason": "app not allowed"}

decision := {"allow": true, "requireApproval": false, "reason": "read-only"} if {
	input.tool.appId in data.apps.allowed
	input.tool.annotations.readOnlyHint
	input.tool.annotations.explicit.readOnlyHint
}

decision := {"allow": true, "requireApproval": input.args.amountCents > 10000, "reason": "charge"} if {
	input.tool.name == "billing.charge"
	input.args.amountCents <= 100000
}
`

// benchPolicyFiles are benchPolicy and the data it reads.
var benchPolicyFiles = map[string]string{"p.rego": benchPolicy, "apps.json": `{"apps": {"allowed": ["bench", "crm"]}}`}

func readOnlyHints() []mcp.ToolOption {
	return []mcp.ToolOption{mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false)}
}

// reportPercentiles reports the median and p99 of durations in ns.
func reportPercentiles(b *testing.B, durations []time.Duration) {
	slices.Sort(durations)
	pct := func(p float64) float64 { return float64(durations[int(p*float64(len(durations)-1))].Nanoseconds()) }
	b.ReportMetric(pct(0.50), "p50-ns")
	b.ReportMetric(pct(0.99), "p99-ns")
}

// BenchmarkPolicyDecision is one decision of the gate: access rules plus
// the built-in policy, or plus a prepared Rego policy.
func BenchmarkPolicyDecision(b *testing.B) {
	cfg := presets.Default()
	snap, _, err := catalog.Build([]mcp.Tool{mcp.NewTool("bench.read", readOnlyHints()...)}, catalog.Options{Config: cfg, DefaultAppID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	engine, err := policy.LoadEngine(context.Background(), []string{mcptest.WritePolicies(b, benchPolicyFiles)}, presets.DefaultPolicyQuery)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		engine *policy.Engine
	}{{"builtin", nil}, {"rego", engine}} {
		b.Run(tc.name, func(b *testing.B) {
			gate, err := policy.NewGate(cfg, policy.WithPolicies(policy.NewPolicies(tc.engine)))
			if err != nil {
				b.Fatal(err)
			}
			call := policy.Call{Tool: "bench.read", Via: policy.ViaExecute, Args: map[string]any{"id": "o-1", "limit": 10},
				SessionID: "s", Run: &policy.RunInfo{ID: "r", ScriptSHA256: "x", CallIndex: 1}}
			ctx := context.Background()
			durations := make([]time.Duration, 0, 1024)
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				out, err := gate.Decide(ctx, snap, call)
				durations = append(durations, time.Since(start))
				if err != nil || !out.Decision.Allow {
					b.Fatalf("denied: %v", err)
				}
			}
			reportPercentiles(b, durations)
		})
	}
}

// BenchmarkDirectCallGate is a client's direct tools/call of a visible
// tool through the MCP handler: the unwrapped server, then the same server
// wrapped (built-in policy, then a Rego policy), each on its own; then
// the three interleaved in one loop ("interleaved"), which reports the
// ratios of the wrapped servers' medians to the unwrapped one's: the
// separate sub-benchmarks run seconds apart on a shared machine, and their
// ratio moves with its load.
func BenchmarkDirectCallGate(b *testing.B) {
	newServer := func() *server.MCPServer {
		srv := server.NewMCPServer("bench", "1", server.WithToolCapabilities(true))
		tool := catalog.SetMeta(mcp.NewTool("bench.read", readOnlyHints()...), catalog.Meta{VisibleInListTools: catalog.Bool(true)})
		srv.AddTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(`{"ok":true}`), nil
		})
		return srv
	}
	msg := toolCall(b, "bench.read", map[string]any{"id": "o-1"})
	run := func(b *testing.B, srv *server.MCPServer) {
		mustOK(b, srv, msg)
		ctx := context.Background()
		durations := make([]time.Duration, 0, 1024)
		b.ReportAllocs()
		for b.Loop() {
			start := time.Now()
			srv.HandleMessage(ctx, msg)
			durations = append(durations, time.Since(start))
		}
		reportPercentiles(b, durations)
	}
	wrappedServer := func(b *testing.B, paths []string) *server.MCPServer {
		srv := newServer()
		cfg := presets.Default()
		cfg.Policy.Paths = paths
		cc, err := middleware.Wrap(srv, middleware.WithConfig(cfg), middleware.WithoutReload(), middleware.WithLogger(quiet))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cc.Close() })
		return srv
	}
	rego := []string{mcptest.WritePolicies(b, benchPolicyFiles)}
	b.Run("unwrapped", func(b *testing.B) { run(b, newServer()) })
	b.Run("wrapped-builtin", func(b *testing.B) { run(b, wrappedServer(b, nil)) })
	b.Run("wrapped-rego", func(b *testing.B) { run(b, wrappedServer(b, rego)) })
	b.Run("interleaved", func(b *testing.B) {
		servers := []*server.MCPServer{newServer(), wrappedServer(b, nil), wrappedServer(b, rego)}
		for _, srv := range servers {
			mustOK(b, srv, msg)
		}
		ctx := context.Background()
		durations := make([][]time.Duration, len(servers))
		for i := 0; b.Loop(); i++ {
			for k := range servers {
				k = (k + i) % len(servers) // each server goes first in turn
				start := time.Now()
				servers[k].HandleMessage(ctx, msg)
				durations[k] = append(durations[k], time.Since(start))
			}
		}
		b.StopTimer()
		unwrapped := median(durations[0])
		b.ReportMetric(unwrapped, "unwrapped-p50-µs")
		b.ReportMetric(median(durations[1])/unwrapped, "builtin/unwrapped")
		b.ReportMetric(median(durations[2])/unwrapped, "rego/unwrapped")
	})
}
