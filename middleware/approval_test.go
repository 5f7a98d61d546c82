package middleware_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// approvalShop is a server whose tools cover the built-in policy's cases; it
// counts the calls that reach each handler.
type approvalShop struct {
	srv   *server.MCPServer
	cc    *middleware.CodeCall
	calls sync.Map // tool name -> *atomic.Int64
}

func (s *approvalShop) count(name string) int64 {
	v, _ := s.calls.LoadOrStore(name, new(atomic.Int64))
	return v.(*atomic.Int64).Load()
}

func newApprovalShop(t *testing.T, mut func(*presets.Config)) *approvalShop {
	t.Helper()
	return newApprovalShopWith(t, mut)
}

func newApprovalShopWith(t *testing.T, mut func(*presets.Config), opts ...middleware.Option) *approvalShop {
	t.Helper()
	s := &approvalShop{srv: server.NewMCPServer("shop", "1.0.0", server.WithToolCapabilities(true), server.WithElicitation())}
	handler := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		v, _ := s.calls.LoadOrStore(req.Params.Name, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
		return mcp.NewToolResultText(fmt.Sprintf(`{"tool":%q,"ok":true}`, req.Params.Name)), nil
	}
	hints := func(readOnly, destructive bool) []mcp.ToolOption {
		return []mcp.ToolOption{
			mcp.WithReadOnlyHintAnnotation(readOnly), mcp.WithDestructiveHintAnnotation(destructive),
			mcp.WithIdempotentHintAnnotation(readOnly), mcp.WithOpenWorldHintAnnotation(false),
			mcp.WithString("id"), mcp.WithString("password"),
		}
	}
	s.srv.AddTool(mcp.NewTool("shop.list_orders", hints(true, false)...), handler)
	s.srv.AddTool(mcp.NewTool("shop.update_note", hints(false, false)...), handler)
	s.srv.AddTool(mcp.NewTool("shop.delete_order", mcp.WithString("id"), mcp.WithString("password")), handler) // hints left to mcp.NewTool
	s.srv.AddTool(catalog.SetMeta(mcp.NewTool("shop.charge", hints(false, false)...), catalog.Meta{RequiresApproval: catalog.Bool(true)}), handler)
	cfg := presets.Default()
	cfg.DirectCalls.Enabled = true
	cfg.Approval.Timeout = 300 * time.Millisecond
	cfg.Tools = map[string]presets.ToolOverride{"shop.*": {VisibleInListTools: catalog.Bool(true)}}
	if mut != nil {
		mut(&cfg)
	}
	if len(cfg.Policy.Paths) == 0 {
		opts = append(opts, middleware.WithoutReload())
	}
	cc, err := middleware.Wrap(s.srv, append([]middleware.Option{middleware.WithConfig(cfg)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	s.cc = cc
	return s
}

// elicitor answers approval prompts as a person would.
type elicitor struct {
	answer   string        // approve, approve_for_session, deny, decline
	delay    time.Duration // time the person takes
	prompts  atomic.Int64
	mu       sync.Mutex
	messages []string
}

func (e *elicitor) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e.prompts.Add(1)
	e.mu.Lock()
	e.messages = append(e.messages, req.Params.Message)
	e.mu.Unlock()
	if e.delay > 0 {
		select {
		case <-time.After(e.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	res := &mcp.ElicitationResult{}
	if e.answer == "decline" {
		res.Action = mcp.ElicitationResponseActionDecline
		return res, nil
	}
	res.Action = mcp.ElicitationResponseActionAccept
	res.Content = map[string]any{"decision": e.answer}
	return res, nil
}

// era is the protocol option for a modern or a legacy client.
func era(modern bool) mcptest.Option {
	if modern {
		return mcptest.Modern()
	}
	return mcptest.Legacy()
}

var paths = []string{"direct", "invoke", "execute"}

// TestBuiltInPolicy checks the default policy on every path, for both
// protocol eras, with a client that cannot be asked.
func TestBuiltInPolicy(t *testing.T) {
	s := newApprovalShop(t, nil)
	for _, modern := range []bool{false, true} {
		c := mcptest.Connect(t, s.srv, era(modern))
		for _, via := range paths {
			for tool, want := range map[string]string{
				"shop.list_orders":  "",                  // read-only on purpose
				"shop.update_note":  "",                  // non-destructive on purpose
				"shop.delete_order": "APPROVAL_REQUIRED", // hints only mcp.NewTool's defaults
				"shop.charge":       "APPROVAL_REQUIRED", // requiresApproval in metadata
			} {
				if got := mcptest.CallVia(t, c, via, tool, map[string]any{"id": "o1"}); got != want {
					t.Errorf("modern=%v %s %s: code %q, want %q", modern, via, tool, got, want)
				}
			}
		}
	}
	if n := s.count("shop.delete_order") + s.count("shop.charge"); n != 0 {
		t.Errorf("%d calls that needed approval ran", n)
	}
}

// TestConfigCannotWaiveApproval checks that requiresApproval: false in the
// config neither turns off a tool's own requiresApproval nor the built-in
// policy's approval of a tool that may be destructive.
func TestConfigCannotWaiveApproval(t *testing.T) {
	s := newApprovalShop(t, func(cfg *presets.Config) {
		cfg.Tools["shop.charge"] = presets.ToolOverride{VisibleInListTools: catalog.Bool(true), RequiresApproval: catalog.Bool(false)}
		cfg.Tools["shop.delete_order"] = presets.ToolOverride{VisibleInListTools: catalog.Bool(true), RequiresApproval: catalog.Bool(false)}
	})
	c := mcptest.Connect(t, s.srv)
	for _, via := range paths {
		for _, tool := range []string{"shop.charge", "shop.delete_order"} {
			if code := mcptest.CallVia(t, c, via, tool, nil); code != "APPROVAL_REQUIRED" {
				t.Errorf("%s %s: code %q, want APPROVAL_REQUIRED", via, tool, code)
			}
		}
	}
}

// TestApprovalFlows runs every approval answer through every path for
// both protocol eras: a legacy client is asked with a server-initiated
// elicitation, a 2026-07-28 client with a multi-round-trip input request
// (for a plan: paused in callTool and resumed when the client calls again).
func TestApprovalFlows(t *testing.T) {
	tests := []struct {
		name      string
		answer    string
		delay     time.Duration
		wantCode  string
		wantRuns  int64 // handler calls after two calls
		wantAsked int64 // prompts shown for two calls
	}{
		{"approve", "approve", 0, "", 2, 2},
		{"deny", "deny", 0, "APPROVAL_DENIED", 0, 2},
		{"decline", "decline", 0, "APPROVAL_DENIED", 0, 2},
		{"trust for session", "approve_for_session", 0, "", 2, 1},
		{"timeout", "approve", time.Second, "APPROVAL_EXPIRED", 0, 2},
	}
	for _, modern := range []bool{false, true} {
		for _, via := range paths {
			for _, tt := range tests {
				t.Run(fmt.Sprintf("modern=%v/%s/%s", modern, via, tt.name), func(t *testing.T) {
					t.Parallel()
					s := newApprovalShop(t, nil)
					e := &elicitor{answer: tt.answer, delay: tt.delay}
					c := mcptest.Connect(t, s.srv, era(modern), mcptest.WithElicitation(e))
					for i := range 2 {
						if got := mcptest.CallVia(t, c, via, "shop.delete_order", map[string]any{"id": "o1", "password": "hunter2"}); got != tt.wantCode {
							t.Fatalf("call %d: code %q, want %q", i, got, tt.wantCode)
						}
					}
					if got := s.count("shop.delete_order"); got != tt.wantRuns {
						t.Errorf("handler ran %d times, want %d", got, tt.wantRuns)
					}
					if got := e.prompts.Load(); got != tt.wantAsked {
						t.Errorf("%d prompts, want %d", got, tt.wantAsked)
					}
					e.mu.Lock()
					defer e.mu.Unlock()
					for _, m := range e.messages {
						if !strings.Contains(m, "shop.delete_order") || !strings.Contains(m, "possibly destructive") {
							t.Errorf("prompt does not name the tool and its risk: %q", m)
						}
						if strings.Contains(m, "hunter2") {
							t.Errorf("prompt shows a secret: %q", m)
						}
					}
				})
			}
		}
	}
}

// TestSessionTrustStaysInSession checks that trust granted in one session
// does not approve calls in another.
func TestSessionTrustStaysInSession(t *testing.T) {
	s := newApprovalShop(t, nil)
	trusting := &elicitor{answer: "approve_for_session"}
	c1 := mcptest.Connect(t, s.srv, mcptest.WithElicitation(trusting))
	if code := mcptest.CallVia(t, c1, "invoke", "shop.delete_order", map[string]any{"id": "1"}); code != "" {
		t.Fatalf("first session: %s", code)
	}
	other := &elicitor{answer: "deny"}
	c2 := mcptest.Connect(t, s.srv, mcptest.WithElicitation(other))
	if code := mcptest.CallVia(t, c2, "invoke", "shop.delete_order", map[string]any{"id": "1"}); code != "APPROVAL_DENIED" {
		t.Fatalf("second session: code %q, want APPROVAL_DENIED (trust must not cross sessions)", code)
	}
	if other.prompts.Load() != 1 {
		t.Fatalf("second session was not asked")
	}
}

// TestPausedPlanKeepsItsWork checks that a plan paused for a 2026-07-28
// client's approval resumes where it was: calls made before the prompt
// are not made again.
func TestPausedPlanKeepsItsWork(t *testing.T) {
	s := newApprovalShop(t, nil)
	c := mcptest.Connect(t, s.srv, mcptest.Modern(), mcptest.WithElicitation(&elicitor{answer: "approve"}))
	req := mcp.CallToolRequest{}
	req.Params.Name = "codecall.execute"
	req.Params.Arguments = map[string]any{"script": `
		const before = await callTool('shop.list_orders', {});
		const del = await callTool('shop.delete_order', {id: 'o1'});
		const after = await callTool('shop.list_orders', {});
		return [before.ok, del.ok, after.ok];`}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("plan failed: %v", res.Content)
	}
	if got := s.count("shop.list_orders"); got != 2 {
		t.Fatalf("list_orders ran %d times, want 2 (a resumed plan must not repeat its calls)", got)
	}
	if got := s.count("shop.delete_order"); got != 1 {
		t.Fatalf("delete_order ran %d times, want 1", got)
	}
}

// TestApprovalStopsThePlanClock checks that a person taking longer than a
// plan's whole timeout to approve a call does not time the plan out, in
// process and in worker-process isolation: the wait does not count.
func TestApprovalStopsThePlanClock(t *testing.T) {
	for _, iso := range []presets.Isolation{presets.IsolationInProcess, presets.IsolationProcess} {
		t.Run(string(iso), func(t *testing.T) {
			s := newApprovalShop(t, func(cfg *presets.Config) {
				cfg.VM.Isolation = iso
				cfg.VM.Timeout = 400 * time.Millisecond
				cfg.VM.AllowLoops = true
				cfg.Approval.Timeout = 10 * time.Second
			})
			if got := s.cc.Isolation().Effective; got != iso {
				t.Skipf("plans run %s here: %s", got, s.cc.Isolation().Fallback)
			}
			c := mcptest.Connect(t, s.srv, mcptest.WithElicitation(&elicitor{answer: "approve", delay: time.Second}))
			if code := mcptest.CallVia(t, c, "execute", "shop.delete_order", map[string]any{"id": "o1"}); code != "" {
				t.Fatalf("code %q: the approval wait counted against the plan's timeout", code)
			}
			if s.count("shop.delete_order") != 1 {
				t.Fatal("the approved call did not run")
			}
			// The clock runs again after the answer: a plan that then loops
			// still times out.
			req := mcp.CallToolRequest{}
			req.Params.Name = "codecall.execute"
			req.Params.Arguments = map[string]any{"script": "await callTool('shop.delete_order', {id: 'o2'}); while (true) {}"}
			res, err := c.CallTool(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if text := mcp.GetTextFromContent(res.Content[0]); !strings.Contains(text, `"status":"timeout"`) {
				t.Fatalf("a busy plan after the approval must still time out: %s", text)
			}
		})
	}
}

// TestValidateBeforeApproval checks that a call whose input does not
// match the tool's schema fails with VALIDATION before anybody is asked:
// an eliciting client is never prompted, and a client that cannot be asked
// learns that its input is wrong, not that approval was unavailable.
func TestValidateBeforeApproval(t *testing.T) {
	for _, modern := range []bool{false, true} {
		for _, via := range paths {
			for _, elicits := range []bool{true, false} {
				t.Run(fmt.Sprintf("modern=%v/%s/elicits=%v", modern, via, elicits), func(t *testing.T) {
					t.Parallel()
					s := newApprovalShop(t, nil)
					e := &elicitor{answer: "approve"}
					opts := []mcptest.Option{era(modern)}
					if elicits {
						opts = append(opts, mcptest.WithElicitation(e))
					}
					c := mcptest.Connect(t, s.srv, opts...)
					// shop.charge requires approval; id must be a string.
					if got := mcptest.CallVia(t, c, via, "shop.charge", map[string]any{"id": 42}); got != "VALIDATION" {
						t.Fatalf("code %q, want VALIDATION", got)
					}
					if n := e.prompts.Load(); n != 0 {
						t.Errorf("%d approval prompts for a call that could never run", n)
					}
					if n := s.count("shop.charge"); n != 0 {
						t.Errorf("the handler ran %d times", n)
					}
				})
			}
		}
	}
}
