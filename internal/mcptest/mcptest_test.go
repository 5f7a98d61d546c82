package mcptest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/vm"
)

var _ vm.Host = (*mcptest.Host)(nil)

func echoServer() *server.MCPServer {
	srv := server.NewMCPServer("echo", "1", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("echo"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(req.GetString("text", "")), nil
	})
	return srv
}

// TestConnect checks that each transport reaches the server at the
// protocol the options choose.
func TestConnect(t *testing.T) {
	tests := []struct {
		name string
		opts []mcptest.Option
		want string
	}{
		{"in process", nil, mcp.ProtocolVersion20251125},
		{"in process, legacy", []mcptest.Option{mcptest.Legacy()}, mcp.ProtocolVersion20251125},
		{"in process, modern", []mcptest.Option{mcptest.Modern()}, mcp.ProtocolVersion20260728},
		{"stdio", []mcptest.Option{mcptest.Stdio()}, mcp.ProtocolVersion20251125},
		{"http", []mcptest.Option{mcptest.HTTP()}, mcp.ProtocolVersion20251125},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mcptest.Connect(t, echoServer(), tt.opts...)
			if got := c.ProtocolVersion(); got != tt.want {
				t.Errorf("protocol %s, want %s", got, tt.want)
			}
			req := mcp.CallToolRequest{}
			req.Params.Name = "echo"
			req.Params.Arguments = map[string]any{"text": "hi"}
			res, err := c.CallTool(context.Background(), req)
			if err != nil || res.IsError || mcp.GetTextFromContent(res.Content[0]) != "hi" {
				t.Fatalf("call: %+v %v", res, err)
			}
		})
	}
}

func TestWritePolicy(t *testing.T) {
	dir := mcptest.WritePolicies(t, map[string]string{"a.rego": "package a\n", "sub/data.json": "{}"})
	for name, want := range map[string]string{"a.rego": "package a\n", "sub/data.json": "{}"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != want {
			t.Errorf("%s = %q %v, want %q", name, b, err, want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%d entries, want a.rego and sub only", len(entries))
	}
}
