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

// TestReadmePlan runs the README's example plans, in JavaScript and in
// TypeScript, against the demo server, so the README stays true.
func TestReadmePlan(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range []string{"js", "ts"} {
		_, rest, ok := strings.Cut(string(readme), "```"+lang+"\n")
		if !ok {
			t.Fatalf("README has no ```%s block", lang)
		}
		script, _, _ := strings.Cut(rest, "```")
		t.Run(lang, func(t *testing.T) { runReadmePlan(t, script) })
	}
}

func runReadmePlan(t *testing.T, script string) {
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
	if out.Status != "ok" || len(out.Result) == 0 {
		t.Errorf("README plan: %s", tc.Text)
	}
}
