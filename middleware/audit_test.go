package middleware_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

const (
	leakedKey      = "sk_live_51HxQ2eZvKYlo2C8Qw9"
	leakedPassword = "correct-horse-battery-staple"
)

// TestAuditAndRedaction checks the audit trail of a plan and that no
// secret, returned by a tool or passed as an argument, reaches the audit
// log, the approval prompt or the result the client reads.
func TestAuditAndRedaction(t *testing.T) {
	srv := server.NewMCPServer("vault", "1", server.WithToolCapabilities(true), server.WithElicitation())
	srv.AddTool(mcp.NewTool("vault.read_secret", readOnlyOpts()...), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(`{"name":"stripe","apiKey":"` + leakedKey + `","header":"Authorization: Bearer ` + leakedKey + `"}`), nil
	})
	srv.AddTool(mcp.NewTool("vault.rotate", mcp.WithString("password"), mcp.WithString("old")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(`{"rotated":true}`), nil
	})
	var auditLog mcptest.Buffer
	cfg := presets.Default()
	cfg.DirectCalls.Enabled = true
	cc, err := middleware.Wrap(srv, middleware.WithConfig(cfg), middleware.WithoutReload(),
		middleware.WithAuditHandler(slog.NewJSONHandler(&auditLog, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	e := &elicitor{answer: "approve"}
	c := mcptest.Connect(t, srv, mcptest.WithElicitation(e))

	req := mcp.CallToolRequest{}
	req.Params.Name = "codecall.execute"
	req.Params.Arguments = map[string]any{"script": `
		const s = await callTool('vault.read_secret', {});
		await callTool('vault.rotate', {password: '` + leakedPassword + `', old: s.apiKey});
		console.log('rotated ' + s.apiKey);
		return s;`}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	out := mcp.GetTextFromContent(res.Content[0])
	if res.IsError || !strings.Contains(out, `"name":"stripe"`) {
		t.Fatalf("plan failed: %s", out)
	}
	if !strings.Contains(out, `{"appId":"vault","durationMs"`) {
		t.Errorf("toolTrace entries should carry the tool's appId: %s", out)
	}
	req.Params.Name = "codecall.invoke"
	req.Params.Arguments = map[string]any{"tool": "vault.read_secret"}
	res, err = c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	invoked := mcp.GetTextFromContent(res.Content[0])

	e.mu.Lock()
	prompts := strings.Join(e.messages, "\n")
	e.mu.Unlock()
	for where, text := range map[string]string{"execute result": out, "invoke result": invoked, "approval prompt": prompts, "audit log": auditLog.String()} {
		for _, secret := range []string{leakedKey, leakedPassword} {
			if strings.Contains(text, secret) {
				t.Errorf("the %s shows a secret:\n%s", where, text)
			}
		}
	}
	if !strings.Contains(prompts, "vault.rotate") || !strings.Contains(prompts, "[REDACTED]") {
		t.Errorf("the prompt should name the tool and show redacted arguments:\n%s", prompts)
	}

	// The plan's events share its runId; its calls carry their index.
	type event struct {
		Msg, RunID, ParentRunID, Tool, Via, Decision, Approval, Status, ScriptSHA256, ArgsSHA256 string
		CallIndex                                                                                int
	}
	var events []event
	sc := bufio.NewScanner(strings.NewReader(auditLog.String()))
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line is not JSON: %s", sc.Text())
		}
		events = append(events, ev)
	}
	var kinds []string
	runID := ""
	for _, ev := range events {
		if ev.Via != "execute" {
			continue
		}
		kinds = append(kinds, ev.Msg+":"+ev.Tool)
		if runID == "" {
			runID = ev.RunID
		}
		if ev.RunID != runID {
			t.Errorf("event %s has runId %q, want the run's %q", ev.Msg, ev.RunID, runID)
		}
		if ev.Tool != "" && (ev.ParentRunID != runID || ev.CallIndex == 0 || ev.ArgsSHA256 == "") {
			t.Errorf("call event %+v lacks its parent run, index or argument digest", ev)
		}
	}
	want := []string{
		"execute.start:", "policy.decision:vault.read_secret", "tool.call:vault.read_secret",
		"policy.decision:vault.rotate", "approval:vault.rotate", "tool.call:vault.rotate", "execute.end:",
	}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Errorf("execute events:\n got %v\nwant %v", kinds, want)
	}
	if events[len(events)-1].Msg != "invoke" {
		t.Errorf("the invoke call was not audited: %+v", events[len(events)-1])
	}
}

func readOnlyOpts() []mcp.ToolOption {
	return []mcp.ToolOption{mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false)}
}
