package middleware_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/sandbox"
)

// executeVia runs script through codecall.execute as client c and decodes
// the result.
func executeVia(t *testing.T, c *client.Client, script string) map[string]any {
	req := mcp.CallToolRequest{}
	req.Params.Name = "codecall.execute"
	req.Params.Arguments = map[string]any{"script": script}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Errorf("execute: %v", err)
		return nil
	}
	tc, _ := mcp.AsTextContent(res.Content[0])
	out := map[string]any{}
	if err := json.Unmarshal([]byte(tc.Text), &out); err != nil {
		t.Errorf("execute: %v: %s", err, tc.Text)
	}
	return out
}

// TestFairQueueThroughExecute floods a server in process isolation from
// one MCP session while another session sends a trivial plan. It checks
// causes, not timing: the flooding session's plans past its queue limit
// end at once with limit_exceeded, limit concurrency, retryable; the other
// session's plan runs while the flooding session's plans still wait; and
// the waiting plans run once the running one ends.
func TestFairQueueThroughExecute(t *testing.T) {
	var held atomic.Int32
	release := make(chan struct{})
	var once sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	defer letGo()
	var cc *middleware.CodeCall
	srv := server.NewMCPServer("fair", "1.0.0", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("test.hold", hints(true)...), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		held.Add(1)
		select {
		case <-release:
			return mcp.NewToolResultText(`"released"`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	srv.AddTool(mcp.NewTool("test.probe", hints(true)...), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		b, _ := json.Marshal(map[string]any{"held": held.Load(), "queued": cc.Isolation().Pool.Queued})
		return mcp.NewToolResultText(string(b)), nil
	})
	cfg := presetConfig(presets.Secure)
	// Two workers at most: one session may run one plan and queue four.
	cfg.Sandbox = presets.SandboxConfig{PoolSize: 1, MaxWorkers: 2, QueueTimeout: 10 * time.Minute}
	cfg.VM.Timeout = 2 * time.Minute // a held plan ends when the test lets it
	var err error
	reader := sdkmetric.NewManualReader()
	cc, err = middleware.Wrap(srv, middleware.WithConfig(cfg), middleware.WithLogger(slog.New(slog.NewTextHandler(discard{}, nil))),
		middleware.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	if iso := cc.Isolation(); iso.Effective != presets.IsolationProcess {
		t.Skipf("worker processes are not available here: %s", iso.Fallback)
	}
	a, b := mcptest.Connect(t, srv), mcptest.Connect(t, srv) // two sessions

	const flood = 7
	results := make(chan map[string]any, flood)
	for range flood {
		go func() { results <- executeVia(t, a, `return await callTool("test.hold", {})`) }()
	}
	// One runs, four wait; the two past the queue limit come back at once.
	for range 2 {
		out := <-results
		e, _ := out["error"].(map[string]any)
		if out["status"] != "limit_exceeded" || e["limit"] != sandbox.LimitConcurrency || e["retryable"] != true || e["hint"] == nil ||
			!strings.Contains(e["message"].(string), "this session had 4 plans waiting") {
			t.Fatalf("a plan past the queue limit: %v", out)
		}
	}
	waitFor(t, func() bool { return held.Load() == 1 && cc.Isolation().Pool.Queued == 4 }, "one plan running and four waiting")

	out := executeVia(t, b, `return await callTool("test.probe", {})`)
	r, _ := out["result"].(map[string]any)
	if out["status"] != "ok" || r["held"] != float64(1) || r["queued"] != float64(4) {
		t.Errorf("the other session's plan: %v; want ok, run while the first session had 1 plan running and 4 waiting", out)
	}
	letGo()
	for range flood - 2 {
		if out := <-results; out["status"] != "ok" {
			t.Errorf("a queued plan: %v", out)
		}
	}
	if p := cc.Isolation().Pool; p.Refusals[sandbox.RefusedQueueFull] != 2 {
		t.Errorf("refusals %v, want 2 %s", p.Refusals, sandbox.RefusedQueueFull)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	refusals := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if d, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "codecall.sandbox.refusals" {
				for _, p := range d.DataPoints {
					reason, _ := p.Attributes.Value("reason")
					refusals[reason.AsString()] += p.Value
				}
			}
		}
	}
	if refusals[sandbox.RefusedQueueFull] != 2 || len(refusals) != 1 {
		t.Errorf("codecall.sandbox.refusals %v, want 2 with reason %s", refusals, sandbox.RefusedQueueFull)
	}
}
