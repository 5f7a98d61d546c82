package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// CallVia calls tool through one of CodeCall's paths — "direct" (the
// client's own tools/call), "invoke" (codecall.invoke) or "execute" (a
// plan's callTool) — and returns the error code the caller sees, "" when
// the call ran. A direct call's code is the text before the first colon
// of its error result.
func CallVia(t testing.TB, c *client.Client, via, tool string, args map[string]any) string {
	t.Helper()
	req := mcp.CallToolRequest{}
	switch via {
	case "direct":
		req.Params.Name, req.Params.Arguments = tool, args
	case "invoke":
		req.Params.Name, req.Params.Arguments = "codecall.invoke", map[string]any{"tool": tool, "input": args}
	case "execute":
		in, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		req.Params.Name = "codecall.execute"
		req.Params.Arguments = map[string]any{"script": fmt.Sprintf("return await callTool(%q, %s);", tool, in)}
	default:
		t.Fatalf("unknown path %q", via)
	}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s %s: %v", via, tool, err)
	}
	if !res.IsError {
		return ""
	}
	text := mcp.GetTextFromContent(res.Content[0])
	if via == "direct" {
		code, _, _ := strings.Cut(text, ":")
		return code
	}
	var body struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(text), &body); err != nil || body.Error.Code == "" {
		t.Fatalf("%s %s: unexpected error result %s", via, tool, text)
	}
	return body.Error.Code
}
