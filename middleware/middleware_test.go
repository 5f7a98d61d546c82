package middleware_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

func hints(readOnly bool) []mcp.ToolOption {
	return []mcp.ToolOption{
		mcp.WithReadOnlyHintAnnotation(readOnly), mcp.WithDestructiveHintAnnotation(!readOnly),
		mcp.WithIdempotentHintAnnotation(readOnly), mcp.WithOpenWorldHintAnnotation(false),
	}
}

func echoHandler(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	out := map[string]any{"tool": req.Params.Name, "input": req.GetArguments()}
	b, _ := json.Marshal(out)
	return mcp.NewToolResultStructured(out, string(b)), nil
}

func newShop(t *testing.T, opts ...server.ServerOption) *server.MCPServer {
	t.Helper()
	opts = append([]server.ServerOption{server.WithToolCapabilities(true), server.WithInputSchemaValidation()}, opts...)
	srv := server.NewMCPServer("shop", "1.0.0", opts...)
	add := func(name, desc string, readOnly bool, meta *catalog.Meta, extra ...mcp.ToolOption) {
		o := append([]mcp.ToolOption{mcp.WithDescription(desc)}, hints(readOnly)...)
		tool := mcp.NewTool(name, append(o, extra...)...)
		if meta != nil {
			tool = catalog.SetMeta(tool, *meta)
		}
		srv.AddTool(tool, echoHandler)
	}
	add("crm.find_contacts", "Find contacts by name or email.", true, nil, mcp.WithString("query", mcp.Required()))
	add("crm.delete_contact", "Delete a contact permanently.", false, nil, mcp.WithString("id", mcp.Required()))
	add("billing.refund_payment", "Refund a payment to the customer's card.", false, nil, mcp.WithString("paymentId", mcp.Required()))
	add("billing.list_invoices", "List invoices of a customer.", true, nil, mcp.WithString("customerId"))
	add("admin.drop_database", "Drop the production database.", false, nil)
	add("health", "Report service health.", true, &catalog.Meta{VisibleInListTools: catalog.Bool(true)})
	return srv
}

func config(mut func(*presets.Config)) presets.Config {
	cfg := presets.Default()
	cfg.DirectCalls.Enabled = true
	cfg.Exclude = []string{"admin.*"}
	if mut != nil {
		mut(&cfg)
	}
	return cfg
}

type session struct {
	t     *testing.T
	c     *client.Client
	notes mcptest.Notifications
}

func connect(t *testing.T, srv *server.MCPServer) *session {
	t.Helper()
	s := &session{t: t}
	s.c = mcptest.Connect(t, srv, mcptest.Modern(), mcptest.Record(&s.notes))
	return s
}

func (s *session) list() []string {
	s.t.Helper()
	res, err := s.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		s.t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// call calls a tool and decodes its JSON text into a map; rpcErr is a
// JSON-RPC level failure.
func (s *session) call(name string, args map[string]any) (out map[string]any, isError bool, rpcErr error) {
	s.t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := s.c.CallTool(context.Background(), req)
	if err != nil {
		return nil, false, err
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			text += tc.Text
		}
	}
	out = map[string]any{}
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		out = map[string]any{"text": text}
		// A server with input validation on refuses a malformed meta-tool
		// call itself, before CodeCall's handler sees it.
		if res.IsError && strings.Contains(text, "validation failed") {
			out["error"] = map[string]any{"code": "VALIDATION", "message": text}
		}
	}
	return out, res.IsError, nil
}

func (s *session) searchNames(query string, filter map[string]any) []string {
	s.t.Helper()
	args := map[string]any{"query": query, "topK": 50}
	if filter != nil {
		args["filter"] = filter
	}
	out, isErr, err := s.call("codecall.search", args)
	if err != nil || isErr {
		s.t.Fatalf("search %q: %v %v", query, err, out)
	}
	var names []string
	for _, h := range out["tools"].([]any) {
		names = append(names, h.(map[string]any)["name"].(string))
	}
	return names
}

func wrap(t *testing.T, srv *server.MCPServer, opts ...middleware.Option) *middleware.CodeCall {
	t.Helper()
	cc, err := middleware.Wrap(srv, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

func TestListShowsMetaToolsAndVisibleTools(t *testing.T) {
	srv := newShop(t)
	wrap(t, srv, middleware.WithConfig(config(nil)))
	s := connect(t, srv)
	want := []string{"codecall.describe", "codecall.execute", "codecall.invoke", "codecall.search", "health"}
	if got := s.list(); !slices.Equal(got, want) {
		t.Fatalf("tools/list = %v, want %v", got, want)
	}
	res, err := s.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == "codecall.search" && !strings.Contains(tool.Description, "billing") {
			t.Errorf("search description should name the apps: %q", tool.Description)
		}
	}
}

func TestExcludedToolIsUnreachableOnEveryPath(t *testing.T) {
	srv := newShop(t)
	var handled atomic.Int32
	srv.Use(func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.Name == "admin.drop_database" {
				handled.Add(1)
			}
			return next(ctx, req)
		}
	})
	wrap(t, srv, middleware.WithConfig(config(func(c *presets.Config) {
		c.Tools = map[string]presets.ToolOverride{"crm.delete_contact": {EnabledInCodeCall: catalog.Bool(false)}}
	})), middleware.WithIncludeTools(func(ti middleware.ToolInfo) bool { return ti.Name != "billing.refund_payment" }))
	s := connect(t, srv)

	for _, hidden := range []string{"admin.drop_database", "crm.delete_contact", "billing.refund_payment"} {
		t.Run(hidden, func(t *testing.T) {
			if names := s.searchNames(hidden, nil); slices.Contains(names, hidden) {
				t.Errorf("search shows %s: %v", hidden, names)
			}
			if names := s.searchNames(strings.ReplaceAll(hidden, "_", " "), nil); slices.Contains(names, hidden) {
				t.Errorf("search by words shows %s", hidden)
			}
			out, _, _ := s.call("codecall.describe", map[string]any{"tools": []string{hidden}})
			if nf, _ := out["notFound"].([]any); len(nf) != 1 || len(out["tools"].([]any)) != 0 {
				t.Errorf("describe = %v, want it in notFound", out)
			}
			for _, variant := range []string{hidden, strings.ToUpper(hidden), hidden + " ", " " + hidden, hidden + "\x00", strings.Replace(hidden, ".", ":", 1)} {
				out, isErr, err := s.call("codecall.invoke", map[string]any{"tool": variant, "input": map[string]any{"id": "1", "paymentId": "p"}})
				if err != nil || !isErr {
					t.Fatalf("invoke %q: want an error result, got %v %v", variant, out, err)
				}
				if code := out["error"].(map[string]any)["code"]; code != "NOT_FOUND" {
					t.Errorf("invoke %q: code %v, want NOT_FOUND", variant, code)
				}
			}
			if _, isErr, err := s.call(hidden, map[string]any{"id": "1", "paymentId": "p"}); err == nil && !isErr {
				t.Errorf("a direct tools/call reached hidden tool %s", hidden)
			}
		})
	}
	if n := handled.Load(); n != 0 {
		t.Errorf("the excluded tool's pipeline ran %d times", n)
	}
}

func TestInvokeRunsTheServersPluginChain(t *testing.T) {
	hooks := &server.Hooks{}
	var hooked atomic.Int32
	hooks.AddBeforeCallTool(func(ctx context.Context, id any, req *mcp.CallToolRequest) {
		if req.Params.Name == "crm.find_contacts" {
			hooked.Add(1)
		}
	})
	srv := newShop(t, server.WithHooks(hooks))
	var seen atomic.Int32
	srv.Use(func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			seen.Add(1)
			if q, _ := req.GetArguments()["query"].(string); q == "forbidden" {
				return mcp.NewToolResultError("blocked by the server's own middleware"), nil
			}
			return next(ctx, req)
		}
	})
	wrap(t, srv, middleware.WithConfig(config(nil)))
	s := connect(t, srv)

	out, isErr, err := s.call("codecall.invoke", map[string]any{"tool": "crm.find_contacts", "input": map[string]any{"query": "ada"}})
	if err != nil || isErr {
		t.Fatalf("invoke: %v %v", out, err)
	}
	if out["tool"] != "crm.find_contacts" {
		t.Errorf("invoke returned %v, want the tool's own result", out)
	}
	if hooked.Load() != 1 {
		t.Errorf("before-call hook ran %d times for the inner call, want 1", hooked.Load())
	}
	before := seen.Load()
	out, isErr, _ = s.call("codecall.invoke", map[string]any{"tool": "crm.find_contacts", "input": map[string]any{"query": "forbidden"}})
	if !isErr || !strings.Contains(out["error"].(map[string]any)["message"].(string), "blocked by the server's own middleware") {
		t.Errorf("middleware short-circuit not surfaced: %v", out)
	}
	if seen.Load() <= before {
		t.Error("the server's middleware did not see the inner call")
	}
	// Input validation of the server runs too.
	out, isErr, _ = s.call("codecall.invoke", map[string]any{"tool": "crm.find_contacts", "input": map[string]any{}})
	if !isErr || out["error"].(map[string]any)["code"] != "VALIDATION" || out["error"].(map[string]any)["toolName"] != "crm.find_contacts" {
		t.Errorf("invalid input: %v, want a VALIDATION tool_error", out)
	}
	if out["status"] != "tool_error" {
		t.Errorf("status = %v, want tool_error", out["status"])
	}
}

func TestInvokeRules(t *testing.T) {
	tests := []struct {
		name string
		cfg  func(*presets.Config)
		args map[string]any
		code string
	}{
		{"self reference", nil, map[string]any{"tool": "codecall.search", "input": map[string]any{"query": "x"}}, "SELF_REFERENCE"},
		{"not allowed", func(c *presets.Config) { c.DirectCalls.AllowedTools = []string{"crm.*"} },
			map[string]any{"tool": "billing.list_invoices"}, "ACCESS_DENIED"},
		{"unknown tool", nil, map[string]any{"tool": "nope"}, "NOT_FOUND"},
		{"missing tool", nil, map[string]any{"input": map[string]any{}}, "VALIDATION"},
		{"unknown argument", nil, map[string]any{"tool": "health", "args": map[string]any{}}, "VALIDATION"},
		{"wrong type", nil, map[string]any{"tool": 3}, "VALIDATION"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newShop(t)
			wrap(t, srv, middleware.WithConfig(config(tt.cfg)))
			s := connect(t, srv)
			out, isErr, err := s.call("codecall.invoke", tt.args)
			if err != nil || !isErr {
				t.Fatalf("want an error result, got %v %v", out, err)
			}
			if code := out["error"].(map[string]any)["code"]; code != tt.code {
				t.Errorf("code = %v, want %s (%v)", code, tt.code, out)
			}
		})
	}
	t.Run("direct-call filter", func(t *testing.T) {
		srv := newShop(t)
		wrap(t, srv, middleware.WithConfig(config(nil)), middleware.WithDirectCallFilter(func(ti middleware.ToolInfo) bool {
			return ti.AppID != "billing"
		}))
		s := connect(t, srv)
		out, isErr, _ := s.call("codecall.invoke", map[string]any{"tool": "billing.list_invoices", "input": map[string]any{}})
		if code := out["error"].(map[string]any)["code"]; !isErr || code != "ACCESS_DENIED" {
			t.Errorf("invoke of a filtered tool = %v, want ACCESS_DENIED", out)
		}
		if out, isErr, _ := s.call("codecall.invoke", map[string]any{"tool": "crm.find_contacts", "input": map[string]any{"query": "a"}}); isErr {
			t.Errorf("invoke of an unfiltered tool = %v", out)
		}
		// The filter is for direct calls only: a plan still reaches the tool.
		if out, _ := s.execute(map[string]any{"script": `return (await callTool('billing.list_invoices', {})) !== null`}); out["status"] != "ok" {
			t.Errorf("a plan calling a tool the direct-call filter refuses: %v", out)
		}
	})
	t.Run("disabled", func(t *testing.T) {
		srv := newShop(t)
		wrap(t, srv, middleware.WithConfig(config(func(c *presets.Config) { c.DirectCalls.Enabled = false })))
		s := connect(t, srv)
		if slices.Contains(s.list(), "codecall.invoke") {
			t.Error("codecall.invoke listed although directCalls.enabled is false")
		}
		if _, isErr, err := s.call("codecall.invoke", map[string]any{"tool": "health"}); err == nil && !isErr {
			t.Error("codecall.invoke callable although disabled")
		}
	})
}

func TestMetaToolsRejectBadInputAndKeepServing(t *testing.T) {
	srv := newShop(t)
	wrap(t, srv, middleware.WithConfig(config(nil)))
	s := connect(t, srv)
	tests := []struct {
		tool  string
		args  map[string]any
		field string
	}{
		{"codecall.search", map[string]any{"query": ""}, "query"},
		{"codecall.search", map[string]any{"query": "   "}, "query"},
		{"codecall.search", map[string]any{"query": "refund", "topK": 0}, "topK"},
		{"codecall.search", map[string]any{"query": "refund", "topK": -3}, "topK"},
		{"codecall.search", map[string]any{"query": "refund", "topK": 1000000}, "topK"},
		{"codecall.search", map[string]any{"query": "refund", "filter": map[string]any{"sources": []string{"ftp"}}}, "filter.sources[0]"},
		{"codecall.search", map[string]any{"query": strings.Repeat("a", 5000)}, "query"},
		{"codecall.describe", map[string]any{"tools": []string{}}, "tools"},
		{"codecall.describe", map[string]any{"tools": []string{"health"}, "max": 0}, "max"},
	}
	for _, tt := range tests {
		out, isErr, err := s.call(tt.tool, tt.args)
		if err != nil {
			// mcp-go's own schema validation may answer first; it must still
			// be a clear error, and the server must keep serving.
			if !strings.Contains(err.Error(), tt.field) && !strings.Contains(err.Error(), "validation") {
				t.Errorf("%s %v: unclear error %v", tt.tool, tt.args, err)
			}
			continue
		}
		if !isErr {
			t.Errorf("%s %v: want an error result, got %v", tt.tool, tt.args, out)
			continue
		}
		e, _ := out["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if e == nil || msg == "" || (e["field"] != tt.field && !strings.Contains(msg, tt.field)) {
			t.Errorf("%s %v: error %v does not name %q", tt.tool, tt.args, out, tt.field)
		}
	}
	if names := s.searchNames("refund a payment", nil); len(names) == 0 || names[0] != "billing.refund_payment" {
		t.Errorf("after bad input, search = %v", names)
	}
}

func TestSearchFiltersAndDescribe(t *testing.T) {
	srv := newShop(t)
	wrap(t, srv, middleware.WithConfig(config(func(c *presets.Config) {
		c.Tools = map[string]presets.ToolOverride{"billing.*": {Tags: []string{"payments"}, Source: "openapi"}}
	})))
	s := connect(t, srv)
	for _, name := range s.searchNames("list contacts invoices refunds", map[string]any{"appIds": []string{"billing"}}) {
		if !strings.HasPrefix(name, "billing.") {
			t.Errorf("appIds filter let %s through", name)
		}
	}
	for _, name := range s.searchNames("find things", map[string]any{"includeOpenApi": false}) {
		if strings.HasPrefix(name, "billing.") {
			t.Errorf("includeOpenApi=false let %s through", name)
		}
	}
	out, _, _ := s.call("codecall.search", map[string]any{"query": "refund", "filter": map[string]any{"appIds": []string{"nosuchapp"}}})
	if ws, _ := out["warnings"].([]any); len(ws) == 0 {
		t.Errorf("unknown appId: want a warning, got %v", out)
	}

	out, isErr, err := s.call("codecall.describe", map[string]any{"tools": []string{"billing.refund_payment", "crm.find_contacts", "ghost"}, "format": "both"})
	if err != nil || isErr {
		t.Fatalf("describe: %v %v", out, err)
	}
	tools := out["tools"].([]any)
	if len(tools) != 2 || !slices.Equal(toStrings(out["notFound"]), []string{"ghost"}) {
		t.Fatalf("describe = %v", out)
	}
	first := tools[0].(map[string]any)
	if first["name"] != "billing.refund_payment" || first["inputSchema"] == nil ||
		!strings.Contains(first["typescript"].(string), "billing.refund_payment") {
		t.Errorf("describe entry = %v", first)
	}
	out, _, _ = s.call("codecall.describe", map[string]any{"tools": []string{"billing.refund_payment", "crm.find_contacts"}, "max": 1})
	if len(out["tools"].([]any)) != 1 || out["warnings"] == nil {
		t.Errorf("max 1: %v", out)
	}
	for format, want := range map[string][2]bool{"": {false, true}, "ts": {false, true}, "json": {true, false}, "both": {true, true}} {
		args := map[string]any{"tools": []string{"billing.refund_payment"}}
		if format != "" {
			args["format"] = format
		}
		out, _, _ = s.call("codecall.describe", args)
		entry := out["tools"].([]any)[0].(map[string]any)
		if got := [2]bool{entry["inputSchema"] != nil, entry["typescript"] != nil}; got != want {
			t.Errorf("format %q: has inputSchema, typescript = %v, want %v", format, got, want)
		}
	}
}

// TestDescribeDeclarationSaysApprovalAndEffects checks the comment on each
// tool's TypeScript declaration: approval from config or metadata, the
// author's hints in one line, and nothing for hints mcp.NewTool filled in.
func TestDescribeDeclarationSaysApprovalAndEffects(t *testing.T) {
	srv := newShop(t)
	srv.AddTool(mcp.NewTool("crm.tidy", mcp.WithDescription("Tidy contacts.")), echoHandler)
	wrap(t, srv, middleware.WithConfig(config(func(c *presets.Config) {
		c.Tools = map[string]presets.ToolOverride{"billing.refund_payment": {RequiresApproval: catalog.Bool(true)}}
	})))
	s := connect(t, srv)
	out, isErr, err := s.call("codecall.describe", map[string]any{"tools": []string{"billing.refund_payment", "crm.find_contacts", "crm.tidy"}})
	if err != nil || isErr {
		t.Fatalf("describe: %v %v", out, err)
	}
	const approval = "Requires approval: a person confirms each call; a denial is final."
	for _, tc := range []struct {
		tool       string
		want, lack []string
	}{
		{"billing.refund_payment", []string{approval, "@remarks destructive, not idempotent\n"}, nil},
		{"crm.find_contacts", []string{"@remarks read-only */\n"}, []string{approval}},
		{"crm.tidy", []string{"/** Tidy contacts. */\ndeclare function"}, []string{"@remarks", approval}},
	} {
		var ts string
		for _, d := range out["tools"].([]any) {
			if d := d.(map[string]any); d["name"] == tc.tool {
				ts, _ = d["typescript"].(string)
			}
		}
		for _, w := range tc.want {
			if !strings.Contains(ts, w) {
				t.Errorf("%s: declaration lacks %q:\n%s", tc.tool, w, ts)
			}
		}
		for _, l := range tc.lack {
			if strings.Contains(ts, l) {
				t.Errorf("%s: declaration has %q:\n%s", tc.tool, l, ts)
			}
		}
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestToolsAddedAfterWrapArePickedUp(t *testing.T) {
	srv := newShop(t)
	cc := wrap(t, srv, middleware.WithConfig(config(nil)))
	s := connect(t, srv)

	held, release := cc.Acquire(context.Background())
	defer release()

	srv.AddTool(mcp.NewTool("crm.merge_contacts", append([]mcp.ToolOption{mcp.WithDescription("Merge two duplicate contacts into one.")}, hints(false)...)...), echoHandler)
	if names := s.searchNames("merge duplicate contacts", nil); len(names) == 0 || names[0] != "crm.merge_contacts" {
		t.Fatalf("new tool not found by search: %v", names)
	}
	if _, ok := held.Catalog.Lookup("crm.merge_contacts"); ok {
		t.Error("a state acquired before the change must keep its snapshot")
	}
	srv.AddTool(catalog.SetMeta(mcp.NewTool("status", hints(true)...), catalog.Meta{VisibleInListTools: catalog.Bool(true)}), echoHandler)
	if !slices.Contains(s.list(), "status") {
		t.Error("a visible tool added after Wrap is not listed")
	}
	srv.DeleteTools("crm.merge_contacts")
	if names := s.searchNames("merge duplicate contacts", nil); slices.Contains(names, "crm.merge_contacts") {
		t.Errorf("deleted tool still found: %v", names)
	}
	waitFor(t, func() bool { return s.count(mcp.MethodNotificationToolsListChanged) >= 2 }, "tools/list_changed after AddTool/DeleteTools")
}

func (s *session) count(method string) int { return len(s.notes.Of(method)) }

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestWrapErrors(t *testing.T) {
	if _, err := middleware.Wrap(nil); err == nil {
		t.Error("Wrap(nil) must fail")
	}
	srv := newShop(t)
	srv.AddTool(mcp.NewTool("codecall.search"), echoHandler)
	if _, err := middleware.Wrap(srv); err == nil || !strings.Contains(err.Error(), "codecall.search") {
		t.Errorf("meta-tool name clash: err = %v", err)
	}
	bad := presets.Default()
	bad.Mode = "everything"
	if _, err := middleware.Wrap(newShop(t), middleware.WithConfig(bad)); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Errorf("bad mode: err = %v", err)
	}
	if _, err := middleware.Wrap(newShop(t), middleware.WithConfigFile("/nonexistent/codecall.yaml")); err == nil {
		t.Error("missing config file must fail")
	}
}

// writeFile writes then renames, as editors and deploy tools do, so a
// watcher never reads half a file.
func writeFile(t *testing.T, path, body string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestConfigReload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "codecall.yaml")
	write := func(s string) { t.Helper(); writeFile(t, path, s) }
	write("directCalls: {enabled: true}\n")
	srv := newShop(t)
	wrap(t, srv, middleware.WithConfigFile(path))
	s := connect(t, srv)
	if got := s.list(); !slices.Equal(got, []string{"codecall.describe", "codecall.execute", "codecall.invoke", "codecall.search", "health"}) {
		t.Fatalf("initial list = %v", got)
	}

	write("directCalls: {enabled: true}\ntools:\n  \"billing.list_invoices\": {visibleInListTools: true}\n")
	waitFor(t, func() bool { return slices.Contains(s.list(), "billing.list_invoices") }, "the reloaded config to show billing.list_invoices")
	waitFor(t, func() bool { return s.count(mcp.MethodNotificationToolsListChanged) >= 1 }, "tools/list_changed after a reload")

	// A broken edit keeps the last good config.
	write("mode: everything\n")
	time.Sleep(500 * time.Millisecond) // longer than the watcher's debounce
	if !slices.Contains(s.list(), "billing.list_invoices") {
		t.Error("a broken config replaced the last good one")
	}

	write("mode: codecall_opt_in\n")
	waitFor(t, func() bool { return !slices.Contains(s.list(), "codecall.invoke") }, "directCalls off after reload")
	out, _, _ := s.call("codecall.search", map[string]any{"query": "refund a payment"})
	if n := len(out["tools"].([]any)); n != 0 {
		t.Errorf("codecall_opt_in with no opted-in tool: search found %d tools", n)
	}
}

func TestInvokeExplainsValidationFailures(t *testing.T) {
	srv := newShop(t)
	wrap(t, srv, middleware.WithConfig(config(nil)))
	s := connect(t, srv)
	out, isErr, _ := s.call("codecall.invoke", map[string]any{"tool": "crm.find_contacts", "input": map[string]any{"query": 3}})
	e := out["error"].(map[string]any)
	msg := e["message"].(string)
	if !isErr || e["code"] != "VALIDATION" || !strings.Contains(msg, "/query") || !strings.Contains(msg, "string") || strings.Contains(msg, "&{") {
		t.Errorf("validation message %q should name the field and the expected type in plain words", msg)
	}
	out, _, _ = s.call("codecall.invoke", map[string]any{"tool": "crm.find_contacts", "input": map[string]any{}})
	if msg := out["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "missing property") || !strings.Contains(msg, "query") {
		t.Errorf("missing property message %q", msg)
	}
}
