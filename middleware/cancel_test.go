package middleware_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// auditEvents decodes the JSON audit lines of buf whose msg is typ.
func auditEvents(t *testing.T, buf *mcptest.Buffer, typ string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if line == "" || json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		if m["msg"] == typ {
			out = append(out, m)
		}
	}
	return out
}

// auditedPlans wraps a plan server under the balanced preset in isolation
// iso with a plan timeout, and connects a real mcp-go client over stdio
// (which sends notifications/cancelled when a call's context ends).
func auditedPlans(t *testing.T, iso presets.Isolation, timeout time.Duration) (c *client.Client, auditLog *mcptest.Buffer, sleeps *atomic.Int32) {
	t.Helper()
	sleeps, auditLog = &atomic.Int32{}, &mcptest.Buffer{}
	srv := planServer(t, sleeps)
	cfg := presetConfig(presets.Balanced)
	cfg.VM.Isolation = iso
	cfg.VM.Timeout = timeout
	cc, err := middleware.Wrap(srv, middleware.WithConfig(cfg), middleware.WithoutReload(),
		middleware.WithLogger(slog.New(slog.NewTextHandler(discard{}, nil))),
		middleware.WithAuditHandler(slog.NewJSONHandler(auditLog, nil)))
	if err != nil {
		if strings.Contains(err.Error(), "cannot start one") {
			t.Skipf("worker processes are not available here: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	if got := cc.Isolation().Effective; got != iso {
		t.Skipf("isolation %s requested, %s in effect (%s)", iso, got, cc.Isolation().Fallback)
	}
	return mcptest.Connect(t, srv, mcptest.Stdio()), auditLog, sleeps
}

const sleepingPlan = `console.log("started"); await callTool("data.sleep", {ms: 60000}); return 1`

func executeRequest(script string) mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Params.Name = "codecall.execute"
	req.Params.Arguments = map[string]any{"script": script}
	return req
}

// TestClientCancelsAPlan cancels, from a real mcp-go client, a plan
// waiting on a long tool call, in both isolation modes: the run ends with
// status cancelled, not timeout, the tool call in flight is cancelled, and
// the audit's execute.end counts the log line the plan wrote before. A
// plan that runs past its own timeout still ends as timeout, with its
// logs in the answer.
func TestClientCancelsAPlan(t *testing.T) {
	for _, iso := range []presets.Isolation{presets.IsolationInProcess, presets.IsolationProcess} {
		t.Run(string(iso)+"/cancelled", func(t *testing.T) {
			c, auditLog, sleeps := auditedPlans(t, iso, 30*time.Second)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ended := make(chan error, 1)
			go func() {
				_, err := c.CallTool(ctx, executeRequest(sleepingPlan))
				ended <- err
			}()
			waitFor(t, func() bool { return sleeps.Load() == 1 }, "the plan's call to data.sleep")
			cancel()
			if err := <-ended; err == nil {
				t.Error("the cancelled call returned a result to the client that cancelled it")
			}
			waitFor(t, func() bool { return len(auditEvents(t, auditLog, "execute.end")) == 1 }, "the run's execute.end audit event")
			end := auditEvents(t, auditLog, "execute.end")[0]
			if end["status"] != "cancelled" {
				t.Errorf("execute.end status %v, want cancelled: %v", end["status"], end)
			}
			if end["logLines"] != float64(1) || end["logBytes"] != float64(len("started")) {
				t.Errorf("execute.end does not count the log line written before the cancellation: %v", end)
			}
			calls := auditEvents(t, auditLog, "tool.call")
			if len(calls) != 1 || calls[0]["tool"] != "data.sleep" || calls[0]["status"] == "ok" {
				t.Errorf("the call in flight was not recorded as cut short: %v", calls)
			}
		})
		t.Run(string(iso)+"/timeout", func(t *testing.T) {
			c, auditLog, _ := auditedPlans(t, iso, 700*time.Millisecond)
			res, err := c.CallTool(context.Background(), executeRequest(sleepingPlan))
			if err != nil {
				t.Fatal(err)
			}
			text := mcp.GetTextFromContent(res.Content[0])
			var out map[string]any
			if err := json.Unmarshal([]byte(text), &out); err != nil {
				t.Fatal(err)
			}
			if out["status"] != "timeout" || !strings.Contains(text, `"started"`) {
				t.Errorf("a plan past its timeout: %s", text)
			}
			waitFor(t, func() bool { return len(auditEvents(t, auditLog, "execute.end")) == 1 }, "the run's execute.end audit event")
			if end := auditEvents(t, auditLog, "execute.end")[0]; end["status"] != "timeout" {
				t.Errorf("execute.end %v, want status timeout", end)
			}
		})
	}
}
