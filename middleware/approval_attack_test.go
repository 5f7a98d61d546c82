package middleware_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// rawModernCall sends a 2026-07-28 tools/call straight to the server, as a
// hostile client could, and returns the result.
func rawModernCall(t *testing.T, s *approvalShop, name string, args map[string]any, state string, answer string) *mcp.CallToolResult {
	t.Helper()
	params := map[string]any{
		"name": name, "arguments": args,
		"_meta": map[string]any{
			mcp.MetaKeyProtocolVersion:    mcp.LATEST_PROTOCOL_VERSION,
			mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}},
			mcp.MetaKeyClientInfo:         map[string]any{"name": "attacker", "version": "1"},
		},
	}
	if state != "" {
		params["requestState"] = state
	}
	if answer != "" {
		params["inputResponses"] = map[string]any{"codecall.approval": map[string]any{
			"action": "accept", "content": map[string]any{"decision": answer}}}
	}
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "a-1", "method": "tools/call", "params": params})
	resp, ok := s.srv.HandleMessage(context.Background(), msg).(mcp.JSONRPCResponse)
	if !ok {
		t.Fatalf("not a result")
	}
	res, ok := resp.Result.(*mcp.CallToolResult)
	if !ok {
		t.Fatalf("result is %T", resp.Result)
	}
	return res
}

// TestApprovalForgery tries to get a call that needs approval to run
// without a person's answer to a prompt the server issued for that call.
func TestApprovalForgery(t *testing.T) {
	invoke := func(args map[string]any) map[string]any {
		return map[string]any{"tool": "shop.delete_order", "input": args}
	}
	tests := []struct {
		name string
		run  func(t *testing.T, s *approvalShop)
	}{
		{"answer without a prompt", func(t *testing.T, s *approvalShop) {
			res := rawModernCall(t, s, "codecall.invoke", invoke(map[string]any{"id": "1"}), "", "approve")
			if res.ResultType != mcp.ResultTypeInputRequired {
				t.Fatalf("an unsolicited answer must start a prompt, got %+v", res)
			}
		}},
		{"made-up state", func(t *testing.T, s *approvalShop) {
			res := rawModernCall(t, s, "shop.delete_order", map[string]any{"id": "1"}, "cc-approval-00000000000000000000000000000000", "approve")
			if res.ResultType != mcp.ResultTypeInputRequired {
				t.Fatalf("a forged state must start a prompt, got %+v", res)
			}
		}},
		{"approval replayed", func(t *testing.T, s *approvalShop) {
			first := rawModernCall(t, s, "codecall.invoke", invoke(map[string]any{"id": "1"}), "", "")
			state := first.RequestState
			if rawModernCall(t, s, "codecall.invoke", invoke(map[string]any{"id": "1"}), state, "approve").IsError {
				t.Fatal("the genuine answer was refused")
			}
			res := rawModernCall(t, s, "codecall.invoke", invoke(map[string]any{"id": "1"}), state, "approve")
			if res.ResultType != mcp.ResultTypeInputRequired {
				t.Fatalf("a replayed answer must not approve again, got %+v", res)
			}
		}},
		{"approval moved to other arguments", func(t *testing.T, s *approvalShop) {
			first := rawModernCall(t, s, "codecall.invoke", invoke(map[string]any{"id": "1"}), "", "")
			res := rawModernCall(t, s, "codecall.invoke", invoke(map[string]any{"id": "2"}), first.RequestState, "approve")
			if !res.IsError || !strings.Contains(mcp.GetTextFromContent(res.Content[0]), "APPROVAL_DENIED") {
				t.Fatalf("an answer for id 1 must not approve id 2: %+v", res)
			}
		}},
		{"approval moved to another tool", func(t *testing.T, s *approvalShop) {
			first := rawModernCall(t, s, "codecall.invoke", map[string]any{"tool": "shop.charge", "input": map[string]any{"id": "1"}}, "", "")
			res := rawModernCall(t, s, "codecall.invoke", invoke(map[string]any{"id": "1"}), first.RequestState, "approve")
			if !res.IsError {
				t.Fatalf("an answer for shop.charge must not approve shop.delete_order: %+v", res)
			}
		}},
		{"someone else's paused plan", func(t *testing.T, s *approvalShop) {
			script := map[string]any{"script": "return await callTool('shop.delete_order', {id: '1'})"}
			first := rawModernCall(t, s, "codecall.execute", script, "", "")
			if first.ResultType != mcp.ResultTypeInputRequired {
				t.Fatalf("plan did not pause: %+v", first)
			}
			other := map[string]any{"script": "return await callTool('shop.delete_order', {id: '2'})"}
			res := rawModernCall(t, s, "codecall.execute", other, first.RequestState, "approve")
			if !res.IsError || !strings.Contains(mcp.GetTextFromContent(res.Content[0]), "another session or another script") {
				t.Fatalf("an answer sent with another script must be refused: %+v", res)
			}
			// The genuine answer still resumes the plan.
			res = rawModernCall(t, s, "codecall.execute", script, first.RequestState, "approve")
			if res.IsError {
				t.Fatalf("genuine answer after the hijack attempt: %+v", res)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newApprovalShop(t, nil)
			tt.run(t, s)
			want := int64(0)
			if tt.name == "approval replayed" || tt.name == "someone else's paused plan" {
				want = 1 // the genuine approval
			}
			if got := s.count("shop.delete_order"); got != want {
				t.Fatalf("delete_order ran %d times, want %d", got, want)
			}
		})
	}
}
