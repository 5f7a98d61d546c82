package benchmarks

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/examples/demo"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

func callBench(b *testing.B, srv *server.MCPServer, name string, args map[string]any) {
	b.Helper()
	c := mcptest.Connect(b, srv, mcptest.Modern())
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	ctx := context.Background()
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError {
		b.Fatalf("%s: %v %+v", name, err, res)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.CallTool(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func wrapped(b *testing.B, srv *server.MCPServer) *server.MCPServer {
	cfg := presets.Default()
	cfg.DirectCalls.Enabled = true
	cc, err := middleware.Wrap(srv, middleware.WithConfig(cfg))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cc.Close() })
	return srv
}

// BenchmarkSearchViaMCP is codecall.search end to end through an MCP client.
func BenchmarkSearchViaMCP(b *testing.B) {
	b.Run("demo", func(b *testing.B) {
		callBench(b, wrapped(b, demo.New()), "codecall.search", map[string]any{"query": "refund a customer's payment"})
	})
	b.Run("corpus", func(b *testing.B) {
		callBench(b, wrapped(b, corpusServer(b)), "codecall.search", map[string]any{"query": "open a pull request"})
	})
}

// BenchmarkDescribeViaMCP describes three tools, TypeScript included.
func BenchmarkDescribeViaMCP(b *testing.B) {
	callBench(b, wrapped(b, demo.New()), "codecall.describe",
		map[string]any{"tools": []string{"billing.refund_payment", "crm.get_contact", "support.open_ticket"}})
}

// BenchmarkInvokeViaMCP is one codecall.invoke through the server's whole
// pipeline, against the direct tools/call it wraps.
func BenchmarkInvokeViaMCP(b *testing.B) {
	b.Run("invoke", func(b *testing.B) {
		callBench(b, wrapped(b, demo.New()), "codecall.invoke", map[string]any{"tool": "billing.get_balance", "input": map[string]any{"customer_id": "con_001"}})
	})
	b.Run("direct-unwrapped", func(b *testing.B) {
		callBench(b, demo.New(), "billing.get_balance", map[string]any{"customer_id": "con_001"})
	})
}

// BenchmarkMetaHandler measures the meta-tools at the server's MCP handler
// (srv.HandleMessage), without a client's encoding and decoding.
func BenchmarkMetaHandler(b *testing.B) {
	cases := []struct {
		name, tool string
		args       map[string]any
		srv        func(testing.TB) *server.MCPServer
	}{
		{"search/demo", "codecall.search", map[string]any{"query": "refund a customer's payment"}, func(testing.TB) *server.MCPServer { return demo.New() }},
		{"search/corpus", "codecall.search", map[string]any{"query": "open a pull request"}, corpusServer},
		{"describe/3-tools", "codecall.describe", map[string]any{"tools": []string{"billing.refund_payment", "crm.get_contact", "support.open_ticket"}},
			func(testing.TB) *server.MCPServer { return demo.New() }},
		{"invoke", "codecall.invoke", map[string]any{"tool": "billing.get_balance", "input": map[string]any{"customer_id": "con_001"}},
			func(testing.TB) *server.MCPServer { return demo.New() }},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			srv := wrapped(b, tc.srv(b))
			msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
				"params": map[string]any{"name": tc.tool, "arguments": tc.args}})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if resp, ok := srv.HandleMessage(ctx, msg).(mcp.JSONRPCResponse); !ok || resp.Result.(*mcp.CallToolResult).IsError {
				b.Fatalf("%s failed: %+v", tc.tool, resp)
			}
			b.ResetTimer()
			for b.Loop() {
				srv.HandleMessage(ctx, msg)
			}
		})
	}
}
