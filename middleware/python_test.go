package middleware_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// withPython lists python in vm.languages, with process isolation.
func withPython(c *presets.Config) {
	c.VM.Isolation = presets.IsolationProcess
	c.VM.Languages = []string{presets.LanguageJavaScript, presets.LanguagePython}
}

// wrapPython wraps srv with Python plans on, or skips where they cannot
// run (no python3 3.11+, no sandboxed workers).
func wrapPython(t *testing.T, srv *server.MCPServer, opts ...middleware.Option) *middleware.CodeCall {
	t.Helper()
	cc, err := middleware.Wrap(srv, append([]middleware.Option{middleware.WithConfig(config(withPython)), middleware.WithoutReload(),
		middleware.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	if py := cc.Isolation().Python; py == nil || py.Off != "" {
		if os.Getenv("CODECALLTEST_PYTHON") == "1" {
			t.Fatalf("CODECALLTEST_PYTHON=1 and Python plans cannot run: %+v", py)
		}
		t.Skipf("Python plans cannot run here: %+v", py)
	}
	return cc
}

func executeDescription(t *testing.T, s *session) string {
	t.Helper()
	res, err := s.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == "codecall.execute" {
			return tool.Description
		}
	}
	t.Fatal("no codecall.execute")
	return ""
}

// TestPythonLanguageRefused: Python plans are refused, saying why, where
// the configuration does not take them; an unknown language is a
// validation error; python without process isolation is a configuration
// error.
func TestPythonLanguageRefused(t *testing.T) {
	srv := newShop(t)
	cc, err := middleware.Wrap(srv, middleware.WithConfig(config(nil)), middleware.WithoutReload())
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	s := connect(t, srv)
	if d := executeDescription(t, s); strings.Contains(d, "Python plans") {
		t.Errorf("the description teaches Python where it is off: %s", d)
	}
	for _, c := range []struct {
		name, language, want string
	}{
		{"python off", "python", "vm.languages does not list python"},
		{"unknown language", "ruby", "language must be javascript, typescript or python"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, isErr, err := s.call("codecall.execute", map[string]any{"language": c.language, "script": "result = 1"})
			if err != nil || !isErr {
				t.Fatalf("got %v %v %v, want an error", out, isErr, err)
			}
			b, _ := json.Marshal(out)
			if !strings.Contains(string(b), c.want) {
				t.Errorf("answer %s lacks %q", b, c.want)
			}
		})
	}
	cfg := config(withPython)
	cfg.VM.Isolation = presets.IsolationInProcess
	if _, err := middleware.Wrap(newShop(t), middleware.WithConfig(cfg)); err == nil || !strings.Contains(err.Error(), "python plans run only in sandboxed worker processes") {
		t.Errorf("python with in-process isolation: %v", err)
	}
}

// TestPythonPlansThroughTheGate: a Python plan's calls go through the
// same gate, allowedTools, notifications, redaction, audit and output
// formats as a JavaScript plan's.
func TestPythonPlansThroughTheGate(t *testing.T) {
	srv := newShop(t)
	srv.AddTool(mcp.NewTool("vault.read_secret", readOnlyOpts()...), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(`{"apiKey":"` + leakedKey + `"}`), nil
	})
	var auditLog mcptest.Buffer
	wrapPython(t, srv, middleware.WithAuditHandler(slog.NewJSONHandler(&auditLog, nil)))
	s := connect(t, srv)
	if d := executeDescription(t, s); !strings.Contains(d, `language: "python"`) || !strings.Contains(d, "mcp_") {
		t.Errorf("the description does not teach the Python form: %s", d)
	}

	// allowedTools narrows the proxies and the calls.
	out, isErr, err := s.call("codecall.execute", map[string]any{"language": "python", "allowedTools": []string{"crm.*"}, "script": `
servers = await list_servers()
found = await mcp_crm.find_contacts(query="ada")
try:
    await call_tool("billing.list_invoices", {})
    denied = None
except ToolError as e:
    denied = e.code
result = {"servers": servers, "found": found["tool"], "denied": denied}
`})
	if err != nil || isErr {
		t.Fatalf("plan: %v %v %v", out, isErr, err)
	}
	got, _ := json.Marshal(out["result"])
	if string(got) != `{"denied":"ACCESS_DENIED","found":"crm.find_contacts","servers":["crm"]}` {
		t.Errorf("result %s", got)
	}
	if n := len(s.notes.Of("notifications/codecall/tool_call")); n < 2 {
		t.Errorf("%d tool_call notifications, want the start and end of each call", n)
	}

	// Secrets are redacted from the result and the logs; the audit log
	// has the run's start and end and its call.
	out, isErr, err = s.call("codecall.execute", map[string]any{"language": "python", "script": `
s = await mcp_vault.read_secret()
print("key", s["apiKey"])
result = s`})
	b, _ := json.Marshal(out)
	if err != nil || isErr || strings.Contains(string(b), leakedKey) || !strings.Contains(string(b), `"logs"`) {
		t.Errorf("redaction: %s %v %v", b, isErr, err)
	}
	for _, want := range []string{`"execute.start"`, `"execute.end"`, `"tool.call"`, `vault.read_secret`} {
		if !strings.Contains(auditLog.String(), want) {
			t.Errorf("the audit log lacks %s", want)
		}
	}
	if strings.Contains(auditLog.String(), leakedKey) {
		t.Error("the audit log holds the secret")
	}

	// output.format shapes the text block only.
	req := mcp.CallToolRequest{}
	req.Params.Name = "codecall.execute"
	req.Params.Arguments = map[string]any{"language": "python", "output": map[string]any{"format": "toon"},
		"script": `result = {"rows": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]}`}
	res, err := s.c.CallTool(context.Background(), req)
	if err != nil || res.IsError {
		t.Fatalf("toon: %v %+v", err, res)
	}
	text := mcp.GetTextFromContent(res.Content[0])
	if json.Valid([]byte(text)) || !strings.Contains(text, "rows[2]") {
		t.Errorf("the TOON text block: %s", text)
	}
}

// TestPythonPlanDurable: with a state store, a 2026-07-28 client's Python
// plan that pauses for an approval is saved like a JavaScript one, and
// the answer may reach another replica: the plan runs again there under
// vm.Replay, its first call answered from the journal, and no tool runs
// twice.
func TestPythonPlanDurable(t *testing.T) {
	r := newReplicas(t, 2, nil, func(_ int, cfg *presets.Config) {
		withPython(cfg)
		cfg.Approval.Timeout = 30 * time.Second
	})
	if py := r.shops[0].cc.Isolation().Python; py == nil || py.Off != "" {
		if os.Getenv("CODECALLTEST_PYTHON") == "1" {
			t.Fatalf("CODECALLTEST_PYTHON=1 and Python plans cannot run: %+v", py)
		}
		t.Skipf("Python plans cannot run here: %+v", py)
	}
	args := map[string]any{"language": "python", "script": `import random, time, uuid
before = await call_tool("shop.list_orders", {})
tag = f"{random.random()}-{time.time()}-{uuid.uuid4()}"
r = await call_tool("shop.delete_order", {"id": tag})
result = {"listed": before["ok"], "deleted": r["ok"]}`}
	first := rawModernCall(t, r.shops[0], "codecall.execute", args, "", "")
	o := readOutcome(t, rawModernCall(t, r.shops[1], "codecall.execute", args, mustPause(t, first), "approve"))
	if o.Status != "ok" || string(o.Result) != `{"listed":true,"deleted":true}` {
		t.Fatalf("after the approval on another replica: %+v %+v", o, o.Error)
	}
	if r.count("shop.list_orders") != 1 || r.count("shop.delete_order") != 1 {
		t.Fatalf("list ran %d times, delete %d; want 1 and 1", r.count("shop.list_orders"), r.count("shop.delete_order"))
	}
	if len(o.Warnings) == 0 || o.Warnings[0].Type != "replayed" {
		t.Errorf("the resumed run should say it was replayed: %+v", o.Warnings)
	}
}
