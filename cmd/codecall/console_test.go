package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// consoleToken is the console token of the tests' servers.
const consoleToken = "test-console-token-0123456789abcdef"

// startConsoleServe runs the real codecall serve --http --console on a
// free loopback port, with a short approval timeout and an audit log.
func startConsoleServe(t *testing.T, approvalTimeout string) (addr string) {
	t.Helper()
	t.Setenv("CONSOLE_TOKEN_TEST", consoleToken)
	addr = freeAddr(t, "127.0.0.1")
	config := writeFile(t, "codecall.yaml", fmt.Sprintf("preset: balanced\nvm: {isolation: inprocess}\napproval: {timeout: %s}\nconsole: {enabled: true, tokenEnv: CONSOLE_TOKEN_TEST}\n"+
		"directCalls: {enabled: true}\ntools: {billing.refund_payment: {visibleInListTools: true}}\n", approvalTimeout))
	stderr := serveInBackground(t, "serve", "--http", addr, "--config", config)
	waitHTTP(t, addr, stderr)
	return addr
}

// mcpOverHTTP connects an MCP client without the elicitation capability,
// one that cannot show approval prompts.
func mcpOverHTTP(t *testing.T, addr string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient("http://" + addr + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = "2025-06-18"
	init.Params.ClientInfo = mcp.Implementation{Name: "console-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// refundPlan reads, then refunds: the refund needs approval.
const refundPlan = `const p = await callTool("billing.list_payments", {customer_id: "con_001"});
const r = await callTool("billing.refund_payment", {payment_id: p.payments[0].id, amount_cents: 100});
return {refunded: r.amount_cents ?? true};`

// execute runs script in the background and delivers its result.
func execute(c *client.Client, script string) <-chan map[string]any {
	out := make(chan map[string]any, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "codecall.execute"
		req.Params.Arguments = map[string]any{"script": script}
		res, err := c.CallTool(context.Background(), req)
		if err != nil {
			out <- map[string]any{"status": "client error: " + err.Error()}
			return
		}
		var m map[string]any
		_ = json.Unmarshal([]byte(mcp.GetTextFromContent(res.Content[0])), &m)
		out <- m
	}()
	return out
}

// waitPending runs codecall approvals list until it shows a call, and
// returns the first id.
func waitPending(t *testing.T, addr string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^(ap-[0-9a-f]+)\s+billing\.refund_payment\s+execute\s`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, out, errOut := runCLI(t, "approvals", "list", "--url", "http://"+addr, "--token-env", "CONSOLE_TOKEN_TEST")
		if code != 0 {
			t.Fatalf("approvals list: exit %d: %s", code, errOut)
		}
		if m := re.FindStringSubmatch(out); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no call waits for approval: %s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestApprovalsCLI answers approvals with codecall approvals against a real
// running serve: approve lets the plan finish, deny ends it with
// APPROVAL_DENIED, and a second answer to the same id is refused.
func TestApprovalsCLI(t *testing.T) {
	addr := startConsoleServe(t, "30s")
	c := mcpOverHTTP(t, addr)
	for _, tt := range []struct{ verb, wantStatus, wantCode string }{
		{"approve", "ok", ""},
		{"deny", "tool_error", "APPROVAL_DENIED"},
	} {
		t.Run(tt.verb, func(t *testing.T) {
			done := execute(c, refundPlan)
			id := waitPending(t, addr)
			code, out, errOut := runCLI(t, "approvals", tt.verb, "--url", "http://"+addr, "--token-env", "CONSOLE_TOKEN_TEST", "--as", "bob", id)
			if code != 0 || !strings.Contains(out, id) {
				t.Fatalf("approvals %s: exit %d, out %q, err %q", tt.verb, code, out, errOut)
			}
			select {
			case res := <-done:
				if res["status"] != tt.wantStatus {
					t.Fatalf("plan status %v, want %s: %v", res["status"], tt.wantStatus, res)
				}
				if tt.wantCode != "" {
					if e, _ := res["error"].(map[string]any); e["code"] != tt.wantCode {
						t.Errorf("plan error %v, want code %s", res["error"], tt.wantCode)
					}
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the plan did not finish after the answer")
			}
			if code, _, errOut := runCLI(t, "approvals", tt.verb, "--url", "http://"+addr, "--token-env", "CONSOLE_TOKEN_TEST", id); code != 1 || !strings.Contains(errOut, "404") {
				t.Errorf("a second answer: exit %d, %q; want exit 1 and the server's 404", code, errOut)
			}
		})
	}
	t.Run("errors", func(t *testing.T) {
		t.Setenv("WRONG_TOKEN", "not-the-console-token-at-all")
		for _, args := range [][]string{
			{"approvals", "list", "--url", "http://" + addr, "--token-env", "WRONG_TOKEN"},
			{"approvals", "list", "--url", "http://" + addr, "--token-env", "NO_SUCH_VARIABLE_SET"},
			{"approvals", "approve", "--url", "http://" + addr, "--token-env", "CONSOLE_TOKEN_TEST"},
			{"approvals", "list", "--url", "ftp://x", "--token-env", "CONSOLE_TOKEN_TEST"},
		} {
			if code, _, errOut := runCLI(t, args...); code != 1 || errOut == "" {
				t.Errorf("%v: exit %d, stderr %q; want exit 1 with a message", args, code, errOut)
			}
		}
		if code, _, _ := runCLI(t, "approvals", "frobnicate"); code != 2 {
			t.Errorf("unknown verb: exit %d, want 2", code)
		}
	})
}

// TestApprovalExpiresInAPlanAndADirectCall: nobody answers, so the call
// ends APPROVAL_EXPIRED, in a plan and in codecall.invoke's direct call.
func TestApprovalExpiresInAPlanAndADirectCall(t *testing.T) {
	addr := startConsoleServe(t, "1s")
	c := mcpOverHTTP(t, addr)
	res := <-execute(c, refundPlan)
	if e, _ := res["error"].(map[string]any); res["status"] != "tool_error" || e["code"] != "APPROVAL_EXPIRED" || res["approvalState"] != "EXPIRED" {
		t.Errorf("plan: %v, want tool_error APPROVAL_EXPIRED, approvalState EXPIRED", res)
	}
	// A client's own tools/call of the (visible) tool, and the same
	// through codecall.invoke.
	req := mcp.CallToolRequest{}
	req.Params.Name = "billing.refund_payment"
	req.Params.Arguments = map[string]any{"payment_id": "pay_001"}
	direct, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if text := mcp.GetTextFromContent(direct.Content[0]); !direct.IsError || !strings.HasPrefix(text, "APPROVAL_EXPIRED: ") {
		t.Errorf("direct call: isError %v, %s; want APPROVAL_EXPIRED", direct.IsError, text)
	}
	req.Params.Name = "codecall.invoke"
	req.Params.Arguments = map[string]any{"tool": "billing.refund_payment", "input": map[string]any{"payment_id": "pay_001"}}
	inv, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if text := mcp.GetTextFromContent(inv.Content[0]); !inv.IsError || !strings.Contains(text, `"code":"APPROVAL_EXPIRED"`) {
		t.Errorf("invoke: isError %v, %s; want APPROVAL_EXPIRED", inv.IsError, text)
	}
}
