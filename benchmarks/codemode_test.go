package benchmarks

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/examples/demo"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/meta"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// codeModeServer is noopServer offering both surfaces, so codemode.run and
// codecall.execute are measured on the same server, in the same run.
func codeModeServer(b *testing.B) *server.MCPServer {
	srv, _ := noopServerWith(b, presets.IsolationInProcess, func(c *presets.Config) {
		c.Surfaces = []presets.Surface{presets.SurfaceCodeCall, presets.SurfaceCodeMode}
	})
	return srv
}

// mustRun checks that a codemode.run message runs without a diagnostic
// diagnostic and sets the result: codemode.run is never isError, so
// mustOK alone would not notice a broken script.
func mustRun(b *testing.B, srv *server.MCPServer, msg []byte) {
	resp, ok := srv.HandleMessage(context.Background(), msg).(mcp.JSONRPCResponse)
	if !ok {
		b.Fatalf("not a result: %+v", resp)
	}
	var out meta.CodeModeOutput
	if err := json.Unmarshal([]byte(textOf(resp.Result.(*mcp.CallToolResult))), &out); err != nil {
		b.Fatal(err)
	}
	if len(out.Diagnostics) > 0 || string(out.Result) == "null" {
		b.Fatalf("the script failed: %+v", out)
	}
}

// module is codemode.run's arguments for a script.
func module(code string) map[string]any { return map[string]any{"code": code} }

// BenchmarkCodeModeRun is codemode.run end to end through the MCP handler,
// next to the same work as a codecall.execute plan on the same server:
// a trivial script, and one that calls one tool (through its server
// module, and through callTool).
func BenchmarkCodeModeRun(b *testing.B) {
	for _, bm := range []struct {
		name string
		msg  func(b *testing.B) []byte
	}{
		{"trivial", func(b *testing.B) []byte {
			return toolCall(b, "codemode.run", module(`globalThis.__codemode_result__ = 1`))
		}},
		{"execute-trivial", func(b *testing.B) []byte {
			return toolCall(b, "codecall.execute", plan("return 1"))
		}},
		{"one-call", func(b *testing.B) []byte {
			return toolCall(b, "codemode.run", module(`import * as bench from "@codemode/servers/bench";
globalThis.__codemode_result__ = await bench.noop({});`))
		}},
		{"execute-one-call", func(b *testing.B) []byte {
			return toolCall(b, "codecall.execute", plan(`return await callTool("bench.noop", {})`))
		}},
	} {
		b.Run(bm.name, func(b *testing.B) {
			srv, msg := codeModeServer(b), bm.msg(b)
			if bm.name == "trivial" || bm.name == "one-call" {
				mustRun(b, srv, msg)
			}
			measure(b, srv, msg)
		})
	}
	// The ratios, from the two requests interleaved on one server, so that
	// a shared machine's drift weighs on both alike.
	b.Run("trivial-vs-execute", func(b *testing.B) {
		measurePair(b, codeModeServer(b), toolCall(b, "codemode.run", module(`globalThis.__codemode_result__ = 1`)),
			toolCall(b, "codecall.execute", plan("return 1")))
	})
	b.Run("one-call-vs-execute", func(b *testing.B) {
		measurePair(b, codeModeServer(b), toolCall(b, "codemode.run", module(`import * as bench from "@codemode/servers/bench";
globalThis.__codemode_result__ = await bench.noop({});`)),
			toolCall(b, "codecall.execute", plan(`return await callTool("bench.noop", {})`)))
	})
}

// measurePair sends a codemode.run request and its codecall.execute
// equivalent alternately, b.N times each (every other iteration the
// execute request goes first), and reports codemode.run's p50, the
// execute's p50 and their ratio; ns/op is the pair's.
func measurePair(b *testing.B, srv *server.MCPServer, codeMode, execute []byte) {
	mustRun(b, srv, codeMode)
	mustOK(b, srv, execute)
	ctx := context.Background()
	var runs, execs []time.Duration
	timed := func(msg []byte) time.Duration {
		start := time.Now()
		srv.HandleMessage(ctx, msg)
		return time.Since(start)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			runs = append(runs, timed(codeMode))
			execs = append(execs, timed(execute))
		} else {
			execs = append(execs, timed(execute))
			runs = append(runs, timed(codeMode))
		}
	}
	b.StopTimer()
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[(len(d)-1)/2].Nanoseconds()) / 1e3
	}
	r, e := p50(runs), p50(execs)
	b.ReportMetric(r, "run-p50-µs")
	b.ReportMetric(e, "execute-p50-µs")
	b.ReportMetric(r/e, "run/execute")
}

// TestCodeModeTokens measures, in o200k tokens, what a model reads from
// the Code Mode surface alone: tools/list (codemode.run, and the demo's
// visible health tool) and the prompt "codemode", at 39 tools (the demo)
// and at 918 (the corpus); codemode.run's description must stay within
// 1,500 tokens at 918 tools.
func TestCodeModeTokens(t *testing.T) {
	for _, set := range []struct {
		name   string
		srv    func(testing.TB) *server.MCPServer
		budget int
	}{
		{"demo", func(testing.TB) *server.MCPServer { return demo.New() }, 0},
		{"corpus", corpusServer, 1500},
	} {
		t.Run(set.name, func(t *testing.T) {
			srv := set.srv(t)
			cc, err := middleware.Wrap(srv, middleware.WithSurfaces(presets.SurfaceCodeMode), middleware.WithLogger(quiet))
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			encs, err := encodings()
			if err != nil {
				t.Fatal(err)
			}
			o200k := func(s string) int { return len(encs["o200k_base"].Encode(s, nil, nil)) }
			ctx := context.Background()
			c := mcptest.Connect(t, srv, mcptest.Modern())
			res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(res.Tools)
			if err != nil {
				t.Fatal(err)
			}
			var description string
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
				if tool.Name == presets.CodeModeRun {
					description = tool.Description
				}
			}
			if description == "" {
				t.Fatalf("tools/list has no %s: %v", presets.CodeModeRun, names)
			}
			pr, err := c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: meta.CodeModePrompt}})
			if err != nil {
				t.Fatal(err)
			}
			prompt := textOfPrompt(pr)
			if prompt == "" {
				t.Fatalf("the prompt %q is empty: %+v", meta.CodeModePrompt, pr)
			}
			t.Logf("tools/list: %v, %d bytes, %d o200k tokens", names, len(b), o200k(string(b)))
			t.Logf("%s description: %d bytes, %d o200k tokens", presets.CodeModeRun, len(description), o200k(description))
			t.Logf("prompt %q: %d bytes, %d o200k tokens", meta.CodeModePrompt, len(prompt), o200k(prompt))
			if n := o200k(description); set.budget > 0 && n > set.budget {
				t.Errorf("%s's description is %d o200k tokens; the budget is %d", presets.CodeModeRun, n, set.budget)
			}
		})
	}
}

func textOfPrompt(pr *mcp.GetPromptResult) string {
	var s string
	for _, m := range pr.Messages {
		if tc, ok := mcp.AsTextContent(m.Content); ok {
			s += tc.Text
		}
	}
	return s
}
