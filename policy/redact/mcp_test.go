package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestText(t *testing.T) {
	schema := json.RawMessage(`{"properties":{"pin":{"writeOnly":true}}}`)
	tests := []struct{ in, want string }{
		{`{"pin":"1234","user":"bob"}`, `{"pin":"[REDACTED]","user":"bob"}`},
		{`  {"user": "bob"}  `, `  {"user": "bob"}  `},
		{"plain text with password=hunter2", "plain text with password=[REDACTED]"},
		{`[{"token":"x"}]`, `[{"token":"[REDACTED]"}]`},
	}
	for _, tt := range tests {
		if got := Default().Text(tt.in, schema); got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestToolResult(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"card":{"type":"object","x-sensitive":true}}}`)
	text := mcp.NewTextContent(`{"card":{"number":"4111111111111111"},"apiKey":"k1","ok":true}`)
	ptrText := &mcp.TextContent{Type: "text", Text: "Bearer " + bearerTok}
	res := &mcp.CallToolResult{
		Content: []mcp.Content{
			text, ptrText,
			mcp.NewImageContent("aGk=", "image/png"),
			mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "file:///a", Text: "secret: abc"}),
			&mcp.EmbeddedResource{Type: "resource", Resource: &mcp.TextResourceContents{URI: "file:///b", Text: ghToken}},
			mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "file:///c", Blob: "AAAA"}),
		},
		StructuredContent:    map[string]any{"card": map[string]any{"number": "4111111111111111"}, "apiKey": "k1", "ok": true},
		RawStructuredContent: json.RawMessage(`{"card":{"number":"4111111111111111"},"apiKey":"k1","ok":true}`),
		IsError:              true,
	}
	before, _ := json.Marshal(res)
	out := Default().ToolResult(res, schema)
	after, _ := json.Marshal(res)
	if string(before) != string(after) {
		t.Fatal("ToolResult modified its input")
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, leaked := range []string{"4111111111111111", "k1", bearerTok, "abc", ghToken} {
		if strings.Contains(got, leaked) {
			t.Errorf("%q leaked: %s", leaked, got)
		}
	}
	for _, kept := range []string{`"isError":true`, `"data":"aGk="`, `"blob":"AAAA"`, `"ok":true`, `file:///b`} {
		if !strings.Contains(got, kept) {
			t.Errorf("%s missing: %s", kept, got)
		}
	}
	if sc := encode(t, out.StructuredContent); sc != `{"apiKey":"[REDACTED]","card":"[REDACTED]","ok":true}` {
		t.Errorf("structuredContent = %s", sc)
	}
	if Default().ToolResult(nil, nil) != nil {
		t.Error("ToolResult(nil) != nil")
	}
}
