package benchmarks

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/examples/demo"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

func callBench(b *testing.B, srv *server.MCPServer, name string, args map[string]any) {
	b.Helper()
	c := newClient(b, srv)
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
		callBench(b, wrapped(b, demo.New()), "codecall.invoke", map[string]any{"tool": "billing.get_balance", "input": map[string]any{"customerId": "cus_001"}})
	})
	b.Run("direct-unwrapped", func(b *testing.B) {
		callBench(b, demo.New(), "billing.get_balance", map[string]any{"customerId": "cus_001"})
	})
}
