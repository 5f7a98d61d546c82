package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
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
		if code := DirectCode(res); code != "" {
			return code
		}
		return NotCodeCalls
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

// NotCodeCalls is what CallVia returns for a direct call that failed
// without CodeCall's code: the tool's own error result, or a refusal by
// the server before any middleware ran (mcp-go's input validation).
const NotCodeCalls = "(not CodeCall's)"

// DirectCode returns the code of a direct tools/call that CodeCall
// refused, read as data from the result's _meta["codecall/error"]
// (meta.ErrorMetaKey), "" when the result carries none.
func DirectCode(res *mcp.CallToolResult) string {
	if res == nil || res.Meta == nil {
		return ""
	}
	e, _ := res.Meta.AdditionalFields["codecall/error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}
