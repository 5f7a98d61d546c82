package benchmarks

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/examples/demo"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// The parts of a description that come from the corpus are masked in its
// golden file: the corpus's texts stay out of the repository.
var (
	appsPart    = regexp.MustCompile(`\(apps: [^)]*\)`)
	examplePart = regexp.MustCompile(`Example: const r = await callTool\([^\n]*\); return r;`)
)

// TestMetaToolDescriptions holds each meta-tool's description, as
// tools/list shows it at 39 tools (the demo) and at 918 (the corpus),
// against a golden file (go test ./benchmarks -run TestMetaToolDescriptions
// -update rewrites them), and the whole tools/list at 918 tools within
// 1,200 o200k tokens.
func TestMetaToolDescriptions(t *testing.T) {
	for _, set := range []struct {
		name   string
		srv    func(testing.TB) *server.MCPServer
		mask   bool
		budget int
	}{
		{"demo", func(testing.TB) *server.MCPServer { return demo.New() }, false, 0},
		{"corpus", corpusServer, true, 1200},
	} {
		t.Run(set.name, func(t *testing.T) {
			srv := set.srv(t)
			cc, err := middleware.Wrap(srv)
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			c := mcptest.Connect(t, srv, mcptest.Modern())
			res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			encs, err := encodings()
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range res.Tools {
				if len(tool.Name) < 9 || tool.Name[:9] != "codecall." {
					continue
				}
				d := tool.Description
				if set.mask {
					d = appsPart.ReplaceAllString(d, "(apps: <the corpus's apps>)")
					d = examplePart.ReplaceAllString(d, "Example: <a call of a corpus tool>")
				}
				t.Logf("%s: %d o200k tokens", tool.Name, len(encs["o200k_base"].Encode(tool.Description, nil, nil)))
				golden := filepath.Join("testdata", "descriptions", set.name, tool.Name+".txt")
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, []byte(d+"\n"), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update to write it)", err)
				}
				if string(want) != d+"\n" {
					t.Errorf("%s's description changed; if on purpose, run go test ./benchmarks -run TestMetaToolDescriptions -update\ngot:\n%s\nwant:\n%s", tool.Name, d, want)
				}
			}
			b, err := json.Marshal(res.Tools)
			if err != nil {
				t.Fatal(err)
			}
			tokens := len(encs["o200k_base"].Encode(string(b), nil, nil))
			t.Logf("tools/list: %d tools, %d o200k tokens", len(res.Tools), tokens)
			if set.budget > 0 && tokens > set.budget {
				t.Errorf("tools/list is %d o200k tokens at %d tools; the budget is %d", tokens, len(res.Tools), set.budget)
			}
		})
	}
}

// TestExamplePlanRuns runs the example plan codecall.execute's description
// gives, as a model that copies it would: it must name a real tool with
// fields the tool accepts.
func TestExamplePlanRuns(t *testing.T) {
	srv := demo.New()
	cc, err := middleware.Wrap(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := mcptest.Connect(t, srv, mcptest.Modern())
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var example string
	for _, tool := range res.Tools {
		if tool.Name == "codecall.execute" {
			example = examplePart.FindString(tool.Description)
		}
	}
	if example == "" {
		t.Fatal("codecall.execute's description has no example plan")
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "codecall.execute"
	req.Params.Arguments = map[string]any{"script": example[len("Example: "):]}
	out, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if out.IsError {
		t.Fatalf("the example plan %q fails: %s", example, textOf(out))
	}
}
