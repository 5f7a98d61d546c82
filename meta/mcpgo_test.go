package meta

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/toolerr"
)

// TestMCPGoWording pins the texts of mcp-go's server that MCPGoCode reads:
// if an mcp-go upgrade rewords them, this fails instead of the codes plans
// and the audit log see changing silently.
func TestMCPGoWording(t *testing.T) {
	srv := server.NewMCPServer("pin", "1", server.WithToolCapabilities(true), server.WithInputSchemaValidation())
	srv.AddTool(mcp.NewTool("pin.tool", mcp.WithString("id", mcp.Required())), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ran"), nil
	})
	srv.AddTool(mcp.NewTool("pin.slow"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	srv.HandleMessage(context.Background(), json.RawMessage(init))
	call := func(ctx context.Context, name string, args map[string]any) mcp.JSONRPCMessage {
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
			"params": map[string]any{"name": name, "arguments": args}})
		return srv.HandleMessage(ctx, msg)
	}
	classify := func(t *testing.T, resp mcp.JSONRPCMessage) toolerr.Code {
		t.Helper()
		switch r := resp.(type) {
		case mcp.JSONRPCError:
			return MCPGoCode(r.Error.Code, r.Error.Message)
		case mcp.JSONRPCResponse:
			res, ok := r.Result.(*mcp.CallToolResult)
			if !ok || !res.IsError {
				t.Fatalf("expected an error result, got %#v", r.Result)
			}
			return MCPGoCode(0, ResultText(res))
		}
		t.Fatalf("unexpected answer %T", resp)
		return ""
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		resp func() mcp.JSONRPCMessage
		want toolerr.Code
	}{
		{"unknown tool", func() mcp.JSONRPCMessage { return call(context.Background(), "pin.nope", nil) }, toolerr.NotFound},
		{"missing property", func() mcp.JSONRPCMessage { return call(context.Background(), "pin.tool", map[string]any{}) }, toolerr.Validation},
		{"wrong type", func() mcp.JSONRPCMessage { return call(context.Background(), "pin.tool", map[string]any{"id": 7}) }, toolerr.Validation},
		{"handler error", func() mcp.JSONRPCMessage { return call(cancelled, "pin.slow", nil) }, toolerr.Execution},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify(t, tt.resp()); got != tt.want {
				t.Fatalf("code = %s, want %s (answer %#v)", got, tt.want, tt.resp())
			}
		})
	}
	// A tool's own error text that merely mentions "not found" is the
	// tool's failure, not an unknown tool.
	if got := MCPGoCode(0, "customer not found"); got != toolerr.Execution {
		t.Fatalf("a tool's 'not found' text = %s, want EXECUTION", got)
	}
}

// TestResultErrorReadsTransientData checks what ResultError takes from the
// error data a result carries: hint and retryable always, the code only
// when it is TIMEOUT.
func TestResultErrorReadsTransientData(t *testing.T) {
	for _, tc := range []struct {
		name      string
		data      map[string]any
		code      toolerr.Code
		retryable bool
	}{
		{"none", nil, toolerr.Execution, false},
		{"unavailable", map[string]any{"code": "EXECUTION", "retryable": true, "hint": "retry soon"}, toolerr.Execution, true},
		{"timeout", map[string]any{"code": "TIMEOUT", "retryable": true}, toolerr.Timeout, true},
		{"claims a denial", map[string]any{"code": "APPROVAL_DENIED"}, toolerr.Execution, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := mcp.NewToolResultError("upstream went away")
			if tc.data != nil {
				res.Meta = mcp.NewMetaFromMap(map[string]any{toolerr.MetaKey: tc.data})
			}
			e := ResultError("x.y", res)
			if e.Code != tc.code || e.Retryable != tc.retryable || e.Message != "upstream went away" {
				t.Fatalf("ResultError = %+v, want code %s retryable %v", e, tc.code, tc.retryable)
			}
		})
	}
}
