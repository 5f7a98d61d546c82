package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/examples/demo"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
)

// TestReadmePlan runs the README's example plan against the demo server, so
// the README stays true.
func TestReadmePlan(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "```js\n")
	if !ok {
		t.Fatal("README has no ```js block")
	}
	script, _, _ := strings.Cut(rest, "```")

	srv := demo.New()
	cc, err := middleware.Wrap(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx := context.Background()
	c := mcptest.Connect(t, srv, mcptest.Modern())
	req := mcp.CallToolRequest{}
	req.Params.Name = "codecall.execute"
	req.Params.Arguments = map[string]any{"script": script}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	tc, _ := mcp.AsTextContent(res.Content[0])
	var out struct {
		Status string
		Result map[string]any
	}
	if err := json.Unmarshal([]byte(tc.Text), &out); err != nil {
		t.Fatal(err)
	}
	if out.Status != "ok" || out.Result["name"] == nil || out.Result["openTickets"] == nil {
		t.Errorf("README plan: %s", tc.Text)
	}
}
