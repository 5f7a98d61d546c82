package middleware_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/examples/demo"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// TestMetaToolArgumentErrors sends every kind of wrong argument to every
// meta-tool, on a server with mcp-go's own input validation on, and wants
// CodeCall's answer each time: isError with {error: {code: VALIDATION,
// message, field, hint}}, the message naming the allowed arguments when
// one is unknown, and no Go value formatting anywhere in the answer.
func TestMetaToolArgumentErrors(t *testing.T) {
	srv := demo.New()
	cfg := presets.Default()
	cfg.DirectCalls.Enabled = true
	cc, err := middleware.Wrap(srv, middleware.WithConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := connect(t, srv).c
	cases := []struct {
		tool  string
		args  any
		field string
		want  string // in the message
	}{
		{"codecall.search", map[string]any{"query": "x", "limit": 3}, "limit", "allowed: query, topK, filter"},
		{"codecall.search", map[string]any{"query": 7}, "query", "query must be a string, not number"},
		{"codecall.search", map[string]any{}, "query", "query must be a non-empty string"},
		{"codecall.search", map[string]any{"query": "x", "topK": "3"}, "topK", "topK must be an integer, not string"},
		{"codecall.search", map[string]any{"query": "x", "topK": 0}, "topK", "between 1 and"},
		{"codecall.search", map[string]any{"query": "x", "filter": map[string]any{"app": "crm"}}, "filter.app", "allowed: appIds, tags"},
		{"codecall.search", map[string]any{"query": "x", "filter": map[string]any{"appIds": "crm"}}, "filter.appIds", "must be an array"},
		{"codecall.search", "refund", "", "arguments must be an object"},
		{"codecall.describe", map[string]any{"names": []string{"crm.get_contact"}}, "names", "allowed: tools, max, format"},
		{"codecall.describe", map[string]any{}, "tools", "at least one tool name"},
		{"codecall.describe", map[string]any{"tools": "crm.get_contact"}, "tools", "tools must be an array, not string"},
		{"codecall.describe", map[string]any{"tools": []string{"crm.get_contact"}, "format": "yaml"}, "format", "ts, json or both"},
		{"codecall.execute", map[string]any{}, "script", "script must be"},
		{"codecall.execute", map[string]any{"code": "return 1"}, "code", "allowed: script, language, allowedTools, context, output"},
		{"codecall.execute", map[string]any{"script": 1}, "script", "script must be a string, not number"},
		{"codecall.execute", map[string]any{"script": "return 1", "allowedTools": "crm.*"}, "allowedTools", "must be an array"},
		{"codecall.execute", map[string]any{"script": "return 1", "output": map[string]any{"format": "xml"}}, "output.format", "json, compact or toon"},
		{"codecall.execute", map[string]any{"script": "return 1", "output": map[string]any{"style": "toon"}}, "output.style", "allowed: format"},
		{"codecall.execute", []any{"return 1"}, "", "arguments must be an object"},
		{"codecall.invoke", map[string]any{"name": "crm.get_contact"}, "name", "allowed: tool, input"},
		{"codecall.invoke", map[string]any{}, "tool", "tool must name the tool"},
		{"codecall.invoke", map[string]any{"tool": "crm.get_contact", "input": "con_001"}, "input", "input must be an object, not string"},
	}
	for _, tc := range cases {
		b, _ := json.Marshal(tc.args)
		t.Run(tc.tool+" "+string(b), func(t *testing.T) {
			req := mcp.CallToolRequest{}
			req.Params.Name = tc.tool
			req.Params.Arguments = tc.args
			res, err := c.CallTool(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			whole, _ := json.Marshal(res)
			if strings.Contains(string(whole), "&{") {
				t.Fatalf("Go value formatting reached the client: %s", whole)
			}
			var body struct {
				Error struct{ Code, Message, Field, Hint string }
			}
			raw, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(raw, &body); err != nil || !res.IsError {
				t.Fatalf("want an isError result with {error}, got %s", whole)
			}
			e := body.Error
			if e.Code != "VALIDATION" || e.Field != tc.field || !strings.Contains(e.Message, tc.want) || !strings.HasPrefix(e.Hint, "Arguments: {") {
				t.Fatalf("error = %+v; want VALIDATION, field %q, message with %q, a hint with the arguments", e, tc.field, tc.want)
			}
		})
	}
}

// TestListedSchemasAreReal checks that tools/list shows the meta-tools'
// real input schemas, not the permissive ones they are registered with.
func TestListedSchemasAreReal(t *testing.T) {
	srv := demo.New()
	cc, err := middleware.Wrap(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	res, err := connect(t, srv).c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, tool := range res.Tools {
		if !strings.HasPrefix(tool.Name, "codecall.") {
			continue
		}
		seen++
		var listed struct {
			InputSchema struct {
				Type       string
				Properties map[string]any
				Required   []string
			}
		}
		b, _ := json.Marshal(tool)
		if err := json.Unmarshal(b, &listed); err != nil || listed.InputSchema.Type != "object" ||
			len(listed.InputSchema.Properties) == 0 || len(listed.InputSchema.Required) == 0 {
			t.Errorf("%s is listed as %s", tool.Name, b)
		}
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
	}
	if seen != 3 {
		t.Fatalf("listed %d meta-tools, want 3", seen)
	}
}
