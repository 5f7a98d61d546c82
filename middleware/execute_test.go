package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/meta"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// planServer is a server with tools shaped to exercise the unwrapping rules,
// concurrency and failures.
func planServer(t *testing.T, sleeps *atomic.Int32) *server.MCPServer {
	t.Helper()
	srv := server.NewMCPServer("plans", "1.0.0", server.WithToolCapabilities(true), server.WithInputSchemaValidation(), server.WithLogging())
	add := func(tool mcp.Tool, h server.ToolHandlerFunc) { srv.AddTool(tool, h) }
	ro := hints(true)
	add(mcp.NewTool("data.structured", append(ro, mcp.WithString("id", mcp.Required()))...),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"id": req.GetArguments()["id"], "kind": "structured"}, "ignored text"), nil
		})
	add(mcp.NewTool("data.json_text", ro...), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(`{"kind":"json text","n":[1,2,3]}`), nil
	})
	add(mcp.NewTool("data.plain_text", ro...), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("just words"), nil
	})
	add(mcp.NewTool("data.two_blocks", ro...), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("a"), mcp.NewTextContent("b")}}, nil
	})
	add(mcp.NewTool("data.fail", ro...), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("the warehouse is closed"), nil
	})
	add(mcp.NewTool("data.sleep", append(ro, mcp.WithNumber("ms", mcp.Required()))...),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if sleeps != nil {
				sleeps.Add(1)
			}
			d := time.Duration(req.GetFloat("ms", 0)) * time.Millisecond
			select {
			case <-time.After(d):
				return mcp.NewToolResultText(`"slept"`), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	add(catalog.SetMeta(mcp.NewTool("data.hidden", ro...), catalog.Meta{EnabledInCodeCall: catalog.Bool(false)}),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			t.Error("a disabled tool ran")
			return mcp.NewToolResultText("no"), nil
		})
	return srv
}

func planConfig(mut func(*presets.Config)) presets.Config {
	cfg := presets.Default()
	cfg.VM.Isolation = presets.IsolationInProcess
	if mut != nil {
		mut(&cfg)
	}
	return cfg
}

func (s *session) execute(args map[string]any) (map[string]any, bool) {
	s.t.Helper()
	out, isErr, err := s.call("codecall.execute", args)
	if err != nil {
		s.t.Fatalf("execute: JSON-RPC error %v (a plan's failure must be a result)", err)
	}
	return out, isErr
}

func TestExecuteStatuses(t *testing.T) {
	srv := planServer(t, nil)
	wrap(t, srv, middleware.WithConfig(planConfig(nil)))
	s := connect(t, srv)
	tests := []struct {
		name, script string
		status       string
		check        func(t *testing.T, out map[string]any)
	}{
		{"ok", `const a = await callTool("data.structured", {id: "x"}); return {id: a.id, kind: a.kind};`, "ok",
			func(t *testing.T, out map[string]any) {
				if r := out["result"].(map[string]any); r["id"] != "x" || r["kind"] != "structured" {
					t.Errorf("result = %v", r)
				}
			}},
		{"undefined is null", `await callTool("data.plain_text", {});`, "ok",
			func(t *testing.T, out map[string]any) {
				if v, ok := out["result"]; ok && v != nil {
					t.Errorf("result = %v, want null", v)
				}
			}},
		{"seed style", `async function main() { return (await callTool("data.json_text", {})).n.length; } return main();`, "ok",
			func(t *testing.T, out map[string]any) {
				if out["result"] != float64(3) {
					t.Errorf("result = %v", out["result"])
				}
			}},
		{"syntax error located", "const a = 1;\nconst = 2;", "syntax_error",
			func(t *testing.T, out map[string]any) {
				loc := out["error"].(map[string]any)["location"].(map[string]any)
				if loc["line"] != float64(2) {
					t.Errorf("location = %v, want line 2", loc)
				}
			}},
		{"illegal access", `return eval("1")`, "illegal_access",
			func(t *testing.T, out map[string]any) {
				if out["error"].(map[string]any)["kind"] != "banned_identifier" {
					t.Errorf("error = %v", out["error"])
				}
			}},
		{"runtime error", `const x = null; return x.y;`, "runtime_error",
			func(t *testing.T, out map[string]any) {
				e := out["error"].(map[string]any)
				if e["source"] != "script" || e["name"] != "TypeError" {
					t.Errorf("error = %v", e)
				}
			}},
		{"tool error", `return await callTool("data.fail", {});`, "tool_error",
			func(t *testing.T, out map[string]any) {
				e := out["error"].(map[string]any)
				if e["source"] != "tool" || e["toolName"] != "data.fail" || e["code"] != "EXECUTION" || !strings.Contains(e["message"].(string), "warehouse is closed") {
					t.Errorf("error = %v", e)
				}
				if _, ok := e["toolInput"]; !ok {
					t.Errorf("tool_error lacks toolInput: %v", e)
				}
			}},
		{"validation", `return await callTool("data.structured", {});`, "tool_error",
			func(t *testing.T, out map[string]any) {
				e := out["error"].(map[string]any)
				if e["code"] != "VALIDATION" || !strings.Contains(e["message"].(string), "id") {
					t.Errorf("error = %v", e)
				}
			}},
		{"self reference", `return await callTool("codecall.search", {query: "x"});`, "tool_error",
			func(t *testing.T, out map[string]any) {
				if c := out["error"].(map[string]any)["code"]; c != "SELF_REFERENCE" {
					t.Errorf("code = %v", c)
				}
			}},
		{"disabled tool", `return await callTool("data.hidden", {});`, "tool_error",
			func(t *testing.T, out map[string]any) {
				if c := out["error"].(map[string]any)["code"]; c != "NOT_FOUND" {
					t.Errorf("code = %v", c)
				}
			}},
		{"throwOnError false", `const r = await callTool("data.fail", {}, {throwOnError: false}); const s = await callTool("data.plain_text", {}, {throwOnError: false}); return [r.ok, r.error.code, s.ok, s.data];`, "ok",
			func(t *testing.T, out map[string]any) {
				got, _ := json.Marshal(out["result"])
				if string(got) != `[false,"EXECUTION",true,"just words"]` {
					t.Errorf("result = %s", got)
				}
			}},
		{"caught tool error", `try { await callTool("data.fail", {}); } catch (e) { return [e.toolName, e.code]; }`, "ok",
			func(t *testing.T, out map[string]any) {
				got, _ := json.Marshal(out["result"])
				if string(got) != `["data.fail","EXECUTION"]` {
					t.Errorf("result = %s", got)
				}
			}},
		{"unwrapping", `return [await callTool("data.structured", {id: "s"}), await callTool("data.json_text", {}), await callTool("data.plain_text", {}), (await callTool("data.two_blocks", {})).content.length];`, "ok",
			func(t *testing.T, out map[string]any) {
				got, _ := json.Marshal(out["result"])
				want := `[{"id":"s","kind":"structured"},{"kind":"json text","n":[1,2,3]},"just words",2]`
				if string(got) != want {
					t.Errorf("result = %s, want %s", got, want)
				}
			}},
		{"context", `return codecallContext.tenant + ":" + Object.isFrozen(codecallContext);`, "ok",
			func(t *testing.T, out map[string]any) {
				if out["result"] != "acme:true" {
					t.Errorf("result = %v", out["result"])
				}
			}},
		{"getTool", `const t = getTool("data.structured"); return [t.name, t.inputSchema.required[0], getTool("data.hidden"), getTool("codecall.search")];`, "ok",
			func(t *testing.T, out map[string]any) {
				got, _ := json.Marshal(out["result"])
				if string(got) != `["data.structured","id",null,null]` {
					t.Errorf("result = %s", got)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, isErr := s.execute(map[string]any{"script": tt.script, "context": map[string]any{"tenant": "acme"}})
			if out["status"] != tt.status {
				t.Fatalf("status = %v, want %s: %v", out["status"], tt.status, out)
			}
			if isErr != (tt.status != "ok") {
				t.Errorf("isError = %v for status %s", isErr, tt.status)
			}
			for _, k := range []string{"runId", "toolTrace", "metrics"} {
				if _, ok := out[k]; !ok {
					t.Errorf("result lacks %s: %v", k, out)
				}
			}
			if b, _ := json.Marshal(out); strings.Contains(string(b), ".go:") || strings.Contains(string(b), "goroutine ") {
				t.Errorf("result leaks Go internals: %s", b)
			}
			tt.check(t, out)
		})
	}
}

func TestExecuteParallelCalls(t *testing.T) {
	var sleeps atomic.Int32
	srv := planServer(t, &sleeps)
	wrap(t, srv, middleware.WithConfig(planConfig(func(c *presets.Config) { c.VM.MaxConcurrency = 10 })))
	s := connect(t, srv)
	start := time.Now()
	out, _ := s.execute(map[string]any{"script": `
		const calls = Array.from({length: 10}, () => callTool("data.sleep", {ms: 50}));
		return (await Promise.all(calls)).length;`})
	elapsed := time.Since(start)
	if out["status"] != "ok" || out["result"] != float64(10) {
		t.Fatalf("out = %v", out)
	}
	if elapsed > 450*time.Millisecond {
		t.Errorf("10 parallel 50 ms calls took %v; they did not run concurrently", elapsed)
	}
	if trace := out["toolTrace"].([]any); len(trace) != 10 {
		t.Errorf("toolTrace has %d entries, want 10", len(trace))
	}
	if m := out["metrics"].(map[string]any); m["toolCalls"] != float64(10) {
		t.Errorf("metrics = %v", m)
	}
}

func TestExecuteAllowedTools(t *testing.T) {
	srv := planServer(t, nil)
	wrap(t, srv, middleware.WithConfig(planConfig(nil)))
	s := connect(t, srv)
	out, _ := s.execute(map[string]any{"script": `await callTool("data.plain_text", {}); return await callTool("data.json_text", {});`,
		"allowedTools": []string{"data.plain_*"}})
	if e, _ := out["error"].(map[string]any); out["status"] != "tool_error" || e["code"] != "ACCESS_DENIED" || e["toolName"] != "data.json_text" {
		t.Errorf("out = %v", out)
	}
}

func TestExecuteCancellation(t *testing.T) {
	var sleeps atomic.Int32
	srv := planServer(t, &sleeps)
	wrap(t, srv, middleware.WithConfig(planConfig(func(c *presets.Config) { c.VM.Timeout = 300 * time.Millisecond })))
	s := connect(t, srv)
	start := time.Now()
	out, isErr := s.execute(map[string]any{"script": `return await callTool("data.sleep", {ms: 5000});`})
	if out["status"] != "timeout" || !isErr {
		t.Fatalf("out = %v", out)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a 300 ms timeout took %v: the tool call was not cancelled", d)
	}
	// The client cancels: the run and its tool call stop.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = "codecall.execute"
	req.Params.Arguments = map[string]any{"script": `return await callTool("data.sleep", {ms: 5000});`}
	start = time.Now()
	_, _ = s.c.CallTool(ctx, req)
	if d := time.Since(start); d > time.Second {
		t.Errorf("cancelled request returned after %v", d)
	}
}

func TestExecuteNotifiesTheClient(t *testing.T) {
	srv := planServer(t, nil)
	wrap(t, srv, middleware.WithConfig(planConfig(nil)))
	s := connect(t, srv)
	if err := s.c.SetLevel(context.Background(), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelDebug}}); err != nil {
		t.Fatal(err)
	}
	out, _ := s.execute(map[string]any{"script": `
		await callTool("data.plain_text", {password: "hunter2", q: 1});
		await callTool("data.nope", {}).catch(() => null);
		mcpLog("info", "halfway", {step: 1});
		mcpNotify("progress", {done: 1});
		return 1;`})
	if out["status"] != "ok" {
		t.Fatalf("out = %v", out)
	}
	waitFor(t, func() bool { return s.count("notifications/message") >= 1 }, "the mcpLog logging message")
	waitFor(t, func() bool { return s.count("notifications/codecall/event") >= 1 }, "the mcpNotify notification")
	waitFor(t, func() bool { return s.count(meta.ToolCallNotification) >= 4 }, "start and end of both tool calls")
	var phases []string
	calls := map[string]int{}
	for _, n := range s.notes.Of(meta.ToolCallNotification) {
		f := n.Params.AdditionalFields
		phases = append(phases, fmt.Sprintf("%v %v %v", f["toolName"], f["phase"], f["status"]))
		id, _ := f["callId"].(string)
		calls[id]++
		if f["runId"] != out["runId"] || id == "" {
			t.Errorf("notification without the run's id or a call id: %v", f)
		}
		if f["phase"] == "end" && f["durationMs"] == nil {
			t.Errorf("end notification without durationMs: %v", f)
		}
		if in, _ := json.Marshal(f["input"]); f["toolName"] == "data.plain_text" && (strings.Contains(string(in), "hunter2") || !strings.Contains(string(in), `"q":1`)) {
			t.Errorf("input in the notification = %s; want it redacted, not dropped", in)
		}
		if f["toolName"] == "data.nope" && f["phase"] == "end" {
			if e, _ := f["error"].(map[string]any); e["code"] != "NOT_FOUND" {
				t.Errorf("end of a refused call = %v, want error.code NOT_FOUND", f)
			}
		}
	}
	want := []string{"data.plain_text start <nil>", "data.plain_text end ok", "data.nope start <nil>", "data.nope end error"}
	if !slices.Equal(phases, want) || len(calls) != 2 {
		t.Errorf("tool-call notifications = %v (call ids %v), want %v", phases, calls, want)
	}

	req := mcp.CallToolRequest{}
	req.Params.Name = "codecall.execute"
	req.Params.Arguments = map[string]any{"script": `await callTool("data.plain_text", {}); return 2;`}
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-1"}
	if _, err := s.c.CallTool(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return s.count("notifications/progress") >= 2 }, "progress notifications for a request with a progress token")
}
