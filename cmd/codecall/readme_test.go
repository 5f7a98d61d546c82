package main

import (
	"context"
	"encoding/json"
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

// TestReadmePlan runs every example plan of the README (its ```js blocks)
// against the demo server, so the README stays true: each must end ok with
// a result.
func TestReadmePlan(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var scripts []string
	for rest := string(readme); ; {
		var ok bool
		if _, rest, ok = strings.Cut(rest, "```js\n"); !ok {
			break
		}
		var script string
		script, rest, _ = strings.Cut(rest, "```")
		scripts = append(scripts, script)
	}
	if len(scripts) == 0 {
		t.Fatal("README has no ```js block")
	}

	srv := demo.New()
	cc, err := middleware.Wrap(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx := context.Background()
	c := mcptest.Connect(t, srv, mcptest.Modern())
	for i, script := range scripts {
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
			t.Errorf("README plan %d:\n%s\nanswer: %s", i+1, script, tc.Text)
		}
	}
}
