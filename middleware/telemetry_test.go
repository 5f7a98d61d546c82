package middleware_test

import (
	"encoding/json"

	"github.com/codecall-go/codecall/internal/mcptest"

	"context"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/codecall-go/codecall/middleware"
)

// TestSpans checks the spans of execute, search and tool calls, with the
// policy decision on each tool call.
func TestSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	s := newApprovalShopWith(t, nil, middleware.WithTracerProvider(tp))
	c := mcptest.Connect(t, s.srv)
	mcptest.CallVia(t, c, "execute", "shop.list_orders", nil)
	mcptest.CallVia(t, c, "execute", "shop.delete_order", nil) // needs approval this client cannot give
	mcptest.CallVia(t, c, "direct", "shop.update_note", nil)
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "codecall.search", map[string]any{"query": "orders"}
	if _, err := c.CallTool(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	type key struct{ name, tool, decision string }
	got := map[key]int{}
	names := map[string]string{}
	for _, sp := range rec.Ended() {
		names[sp.SpanContext().SpanID().String()] = sp.Name()
	}
	for _, sp := range rec.Ended() {
		k := key{name: sp.Name()}
		for _, a := range sp.Attributes() {
			switch a.Key {
			case "codecall.tool":
				k.tool = a.Value.AsString()
			case "codecall.policy.decision":
				k.decision = a.Value.AsString()
			}
		}
		got[k]++
		if k.name == "codecall.tool_call" && k.tool != "shop.update_note" {
			if parent := names[sp.Parent().SpanID().String()]; parent != "codecall.execute" {
				t.Errorf("a plan's call of %s has parent span %q, want codecall.execute", k.tool, parent)
			}
		}
	}
	for _, want := range []key{
		{"codecall.execute", "", ""},
		{"codecall.search", "", ""},
		{"codecall.tool_call", "shop.list_orders", "allow"},
		{"codecall.tool_call", "shop.delete_order", "approval"},
		{"codecall.tool_call", "shop.update_note", "allow"},
	} {
		if got[want] == 0 {
			t.Errorf("no span %+v; got %v", want, got)
		}
	}
}

// TestExecuteCarriesTraceID checks that with tracing on, an execute result
// names the trace of its codecall.execute span.
func TestExecuteCarriesTraceID(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	s := newApprovalShopWith(t, nil, middleware.WithTracerProvider(tp))
	c := mcptest.Connect(t, s.srv)
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "codecall.execute", map[string]any{"script": "return 1"}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ TraceID string }
	if err := json.Unmarshal([]byte(mcp.GetTextFromContent(res.Content[0])), &out); err != nil {
		t.Fatal(err)
	}
	for _, sp := range rec.Ended() {
		if sp.Name() == "codecall.execute" {
			if want := sp.SpanContext().TraceID().String(); out.TraceID != want {
				t.Errorf("traceId = %q, want the execute span's trace %q", out.TraceID, want)
			}
			return
		}
	}
	t.Fatal("no codecall.execute span")
}
