package benchmarks

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/gateway"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// upstreamVar makes the test binary an upstream MCP server on stdio.
const upstreamVar = "CODECALLTEST_BENCH_UPSTREAM"

func TestMain(m *testing.M) {
	if os.Getenv(upstreamVar) != "" {
		_ = server.ServeStdio(upstreamServer())
		os.Exit(0)
	}
	os.Exit(mcptest.RunWithStateDir(m.Run))
}

// upstreamServer has one tool returning a record of about 1 KiB, the size
// of a typical API object.
func upstreamServer() *server.MCPServer {
	srv := server.NewMCPServer("upstream", "1", server.WithToolCapabilities(true))
	notes := strings.Repeat("lorem ipsum dolor sit amet ", 30)
	srv.AddTool(mcp.NewTool("get_record", mcp.WithNumber("id", mcp.Required()), mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			id := req.GetInt("id", 0)
			rec := map[string]any{"id": id, "name": fmt.Sprintf("record %d", id), "amount": id * 10, "notes": notes,
				"tags": []string{"alpha", "beta", "gamma"}, "updatedAt": "2026-11-21T12:00:00Z"}
			b, _ := json.Marshal(rec)
			return mcp.NewToolResultText(string(b)), nil
		})
	return srv
}

func upstreamEntry(b *testing.B) presets.Upstream {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	return presets.Upstream{Command: exe, Env: map[string]string{upstreamVar: "1"}, Paths: []string{filepath.Dir(exe) + ":ro"}}
}

// gatewayFor puts CodeCall in front of the upstreams with their tools
// visible, so a client can call them directly through the gateway too.
func gatewayFor(b *testing.B, servers map[string]presets.Upstream) *server.MCPServer {
	gw, err := gateway.New(servers, gateway.WithLogger(discard()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = gw.Close() })
	if err := gw.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	cfg := presets.Default()
	cfg.VM.Isolation = presets.IsolationInProcess
	cfg.VM.MaxToolCalls = 1000
	cfg.Tools = map[string]presets.ToolOverride{"*": {VisibleInListTools: ptr(true)}}
	cc, err := middleware.Wrap(gw.Server(), middleware.WithConfig(cfg), middleware.WithLogger(discard()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cc.Close() })
	return gw.Server()
}

// bareProxy is the least an mcp-go gateway can do: an mcp-go server with
// the upstream's tool under the gateway's name, forwarding each call
// through up, an initialized client of its own.
func bareProxy(b *testing.B, up *client.Client) *server.MCPServer {
	mcptest.Initialize(b, up)
	srv := server.NewMCPServer("floor", "1", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("up.get_record", mcp.WithNumber("id", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fwd := mcp.CallToolRequest{}
			fwd.Params.Name = "get_record"
			fwd.Params.Arguments = req.Params.Arguments
			return up.CallTool(ctx, fwd)
		})
	return srv
}

func ptr[T any](v T) *T { return &v }

func callRecord(b *testing.B, c *client.Client, name string, id int) *mcp.CallToolResult {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = map[string]any{"id": id}
	res, err := c.CallTool(context.Background(), req)
	if err != nil || res.IsError {
		b.Fatalf("%s: %v %+v", name, err, res)
	}
	return res
}

func percentile(d []time.Duration, p float64) float64 {
	slices.Sort(d)
	return float64(d[int(p*float64(len(d)-1))].Microseconds())
}

// BenchmarkGatewayOverhead is one tools/call through the gateway (client ->
// CodeCall gateway -> upstream) against the same call made directly to the
// upstream by a client, alternating in the same run. The upstream is a
// stdio process or a streamable HTTP server.
//
// A third call in each round goes through the floor of any mcp-go gateway:
// a bare mcp-go server on the same in-memory stdio front whose handler
// forwards the call with an mcp-go client of its own (no gate, policy,
// audit or redaction). floor-p50-ratio is what the extra hop costs before
// CodeCall does anything; vs-floor-p50 is CodeCall's own share.
func BenchmarkGatewayOverhead(b *testing.B) {
	for _, kind := range []string{"stdio", "http"} {
		b.Run(kind, func(b *testing.B) {
			var entry presets.Upstream
			var dial func() *client.Client
			switch kind {
			case "stdio":
				entry = upstreamEntry(b)
				dial = func() *client.Client {
					return client.NewClient(transport.NewStdioWithOptions(entry.Command, []string{upstreamVar + "=1"}, nil))
				}
			case "http":
				hs := httptest.NewServer(server.NewStreamableHTTPServer(upstreamServer()))
				b.Cleanup(hs.Close)
				entry = presets.Upstream{URL: hs.URL + "/mcp"}
				dial = func() *client.Client {
					t, err := transport.NewStreamableHTTP(entry.URL)
					if err != nil {
						b.Fatal(err)
					}
					return client.NewClient(t)
				}
			}
			direct := dial()
			mcptest.Initialize(b, direct)
			viaGateway := mcptest.Connect(b, gatewayFor(b, map[string]presets.Upstream{"up": entry}), mcptest.Stdio())
			viaFloor := mcptest.Connect(b, bareProxy(b, dial()), mcptest.Stdio())
			callRecord(b, direct, "get_record", 1)
			callRecord(b, viaGateway, "up.get_record", 1)
			callRecord(b, viaFloor, "up.get_record", 1)

			var dd, gd, fd []time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				callRecord(b, direct, "get_record", i)
				dd = append(dd, time.Since(start))
				start = time.Now()
				callRecord(b, viaGateway, "up.get_record", i)
				gd = append(gd, time.Since(start))
				start = time.Now()
				callRecord(b, viaFloor, "up.get_record", i)
				fd = append(fd, time.Since(start))
			}
			b.StopTimer()
			b.ReportMetric(percentile(dd, 0.5), "direct-p50-µs")
			b.ReportMetric(percentile(dd, 0.95), "direct-p95-µs")
			b.ReportMetric(percentile(gd, 0.5), "gateway-p50-µs")
			b.ReportMetric(percentile(gd, 0.95), "gateway-p95-µs")
			b.ReportMetric(percentile(fd, 0.5), "floor-p50-µs")
			b.ReportMetric(percentile(gd, 0.5)/percentile(dd, 0.5), "p50-ratio")
			b.ReportMetric(percentile(gd, 0.95)/percentile(dd, 0.95), "p95-ratio")
			b.ReportMetric(percentile(fd, 0.5)/percentile(dd, 0.5), "floor-p50-ratio")
			b.ReportMetric(percentile(gd, 0.5)/percentile(fd, 0.5), "vs-floor-p50")
		})
	}
}

// BenchmarkGatewayPlan20 is one codecall.execute plan making 20 calls across
// two stdio upstreams and returning a small summary, against a client
// making the same 20 calls itself through the gateway. It reports wall
// time and the bytes the gateway sent to the client.
func BenchmarkGatewayPlan20(b *testing.B) {
	srv := gatewayFor(b, map[string]presets.Upstream{"left": upstreamEntry(b), "right": upstreamEntry(b)})
	var sent atomic.Int64 // bytes the gateway sent to the client
	c := mcptest.Connect(b, srv, mcptest.CountSent(&sent))
	script := `
		const ids = Array.from({length: 10}, (_, i) => i + 1);
		const recs = await Promise.all(ids.flatMap((id) => [
			callTool("left.get_record", {id}), callTool("right.get_record", {id: id + 100})]));
		return {count: recs.length, total: recs.reduce((s, r) => s + r.amount, 0)};`
	runPlan := func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "codecall.execute"
		req.Params.Arguments = map[string]any{"script": script}
		res, err := c.CallTool(context.Background(), req)
		if err != nil || res.IsError {
			b.Fatalf("plan: %v %+v", err, res)
		}
	}
	runDirect := func() {
		for id := 1; id <= 10; id++ {
			callRecord(b, c, "left.get_record", id)
			callRecord(b, c, "right.get_record", id+100)
		}
	}
	runPlan()
	runDirect()
	var pd, dd []time.Duration
	var pBytes, dBytes int64
	b.ResetTimer()
	for b.Loop() {
		before := sent.Load()
		start := time.Now()
		runPlan()
		pd = append(pd, time.Since(start))
		pBytes += sent.Load() - before
		before = sent.Load()
		start = time.Now()
		runDirect()
		dd = append(dd, time.Since(start))
		dBytes += sent.Load() - before
	}
	b.StopTimer()
	n := float64(len(pd))
	b.ReportMetric(percentile(pd, 0.5), "plan-p50-µs")
	b.ReportMetric(percentile(dd, 0.5), "direct20-p50-µs")
	b.ReportMetric(float64(pBytes)/n, "plan-bytes-to-client")
	b.ReportMetric(float64(dBytes)/n, "direct20-bytes-to-client")
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
