package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/examples/demo"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
)

// TestReadmePlan runs every example plan of the README (its ```js blocks,
// and its ```ts blocks but the declarations codecall.describe returns)
// against the demo server, so the README stays true: each must end ok with
// a result.
func TestReadmePlan(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, lang := range []string{"js", "ts"} {
		for i, rest := 0, string(readme); ; i++ {
			var ok bool
			if _, rest, ok = strings.Cut(rest, "```"+lang+"\n"); !ok {
				break
			}
			var script string
			script, rest, _ = strings.Cut(rest, "```")
			if strings.Contains(script, "declare function") {
				continue
			}
			n++
			t.Run(fmt.Sprintf("%s-%d", lang, i+1), func(t *testing.T) { runReadmePlan(t, script) })
		}
	}
	if n < 2 {
		t.Fatalf("README has %d example plans; want at least one in JavaScript and one in TypeScript", n)
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
	if out.Status != "ok" || len(out.Result) == 0 || slices.Contains(slices.Collect(maps.Values(out.Result)), any(nil)) {
		t.Errorf("README plan:\n%s\nanswer: %s", script, tc.Text)
	}
}
