package policy_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
)

// recorder is an Observer that writes down what it was told.
type recorder struct{ events []string }

func (r *recorder) Decided(_ context.Context, out *policy.Outcome, err error) {
	s := "decided:"
	switch {
	case err != nil:
		s += string(toolerr.CodeOf(err))
	case out.NeedsApproval():
		s += "approval"
	default:
		s += "allow"
	}
	r.events = append(r.events, s)
}

func (r *recorder) Approved(_ context.Context, a policy.Answer, _ error) {
	r.events = append(r.events, "approved:"+a.Outcome.Audited())
}

func (r *recorder) Ended(_ context.Context, res *mcp.CallToolResult, err error) {
	s := "ended:"
	switch {
	case err != nil:
		s += string(toolerr.CodeOf(err))
	case res != nil && res.ResultType == mcp.ResultTypeInputRequired:
		s += "prompt"
	default:
		s += "ok"
	}
	r.events = append(r.events, s)
}

// fakeAsker answers every prompt the same way and counts them.
type fakeAsker struct {
	outcome policy.ApprovalOutcome
	prompt  bool
	asked   int
}

func (a *fakeAsker) Ask(context.Context, policy.ApprovalRequest) (policy.Answer, *mcp.CallToolResult, error) {
	a.asked++
	if a.prompt {
		return policy.Answer{}, &mcp.CallToolResult{Result: mcp.Result{ResultType: mcp.ResultTypeInputRequired}}, nil
	}
	return policy.Answer{Outcome: a.outcome}, nil, nil
}

func TestAdmitOrderAndObservation(t *testing.T) {
	cfg := presets.Default()
	tools := []mcp.Tool{
		mcp.NewTool("shop.read", mcp.WithString("id", mcp.Required()), mcp.WithReadOnlyHintAnnotation(true)),
		mcp.NewTool("shop.write", mcp.WithString("id", mcp.Required()), mcp.WithReadOnlyHintAnnotation(false), mcp.WithDestructiveHintAnnotation(true)),
	}
	snap, _, err := catalog.Build(tools, catalog.Options{Config: cfg, DefaultAppID: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	approvals := policy.NewApprovals(time.Minute, true)
	// Session s-trust approved shop.write for the session earlier.
	write, _ := snap.Lookup("shop.write")
	approvals.Interpret(&mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept,
		Content: map[string]any{"decision": policy.ChoiceApproveSession}}}, policy.ApprovalRequest{Tool: write, SessionID: "s-trust"})
	gate, err := policy.NewGate(cfg, policy.WithApprovals(approvals), policy.WithReserved("codecall.search"))
	if err != nil {
		t.Fatal(err)
	}
	ok := map[string]any{"id": "1"}
	tests := []struct {
		name    string
		call    policy.Call
		asker   *fakeAsker
		failRun bool
		want    []string
		asked   int
		ran     bool
	}{
		{name: "meta-tool", call: policy.Call{Tool: "codecall.search", Via: policy.ViaExecute},
			want: []string{"decided:SELF_REFERENCE", "ended:SELF_REFERENCE"}},
		{name: "unknown tool", call: policy.Call{Tool: "shop.nope", Via: policy.ViaExecute, Args: ok},
			want: []string{"decided:NOT_FOUND", "ended:NOT_FOUND"}},
		{name: "outside allowedTools", call: policy.Call{Tool: "shop.read", Via: policy.ViaExecute, Args: ok, Allowed: mustGlobs(t, "shop.write")},
			want: []string{"decided:ACCESS_DENIED", "ended:ACCESS_DENIED"}},
		{name: "inside allowedTools", call: policy.Call{Tool: "shop.read", Via: policy.ViaExecute, Args: ok, Allowed: mustGlobs(t, "shop.*")},
			want: []string{"decided:allow", "ended:ok"}, ran: true},
		{name: "invalid input is refused before anyone is asked", call: policy.Call{Tool: "shop.write", Via: policy.ViaExecute, Args: map[string]any{"id": 3}},
			asker: &fakeAsker{outcome: policy.ApprovalApproved}, want: []string{"decided:VALIDATION", "ended:VALIDATION"}},
		{name: "read-only runs unasked", call: policy.Call{Tool: "shop.read", Via: policy.ViaExecute, Args: ok},
			asker: &fakeAsker{outcome: policy.ApprovalDenied}, want: []string{"decided:allow", "ended:ok"}, ran: true},
		{name: "approved", call: policy.Call{Tool: "shop.write", Via: policy.ViaExecute, Args: ok},
			asker: &fakeAsker{outcome: policy.ApprovalApproved}, want: []string{"decided:approval", "approved:approved", "ended:ok"}, asked: 1, ran: true},
		{name: "declined", call: policy.Call{Tool: "shop.write", Via: policy.ViaExecute, Args: ok},
			asker: &fakeAsker{outcome: policy.ApprovalDenied}, want: []string{"decided:approval", "approved:denied", "ended:APPROVAL_DENIED"}, asked: 1},
		{name: "prompt returned to the client", call: policy.Call{Tool: "shop.write", Via: policy.ViaExecute, Args: ok},
			asker: &fakeAsker{prompt: true}, want: []string{"decided:approval", "ended:prompt"}, asked: 1},
		{name: "trusted for the session", call: policy.Call{Tool: "shop.write", Via: policy.ViaExecute, Args: ok, SessionID: "s-trust"},
			asker: &fakeAsker{outcome: policy.ApprovalDenied}, want: []string{"decided:approval", "approved:trusted", "ended:ok"}, ran: true},
		{name: "no asker", call: policy.Call{Tool: "shop.write", Via: policy.ViaExecute, Args: ok},
			want: []string{"decided:approval", "approved:unavailable", "ended:APPROVAL_REQUIRED"}},
		{name: "the handler fails", call: policy.Call{Tool: "shop.read", Via: policy.ViaExecute, Args: ok}, failRun: true,
			want: []string{"decided:allow", "ended:EXECUTION"}, ran: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			ran := false
			var asker policy.Asker
			if tt.asker != nil {
				asker = tt.asker
			}
			_, err := gate.Admit(context.Background(), snap, tt.call, asker, rec,
				func(ctx context.Context, call policy.Call, tool *catalog.Tool) (*mcp.CallToolResult, error) {
					ran = true
					if tool.Name != call.Tool {
						t.Errorf("handler got tool %q for call %q", tool.Name, call.Tool)
					}
					if tt.failRun {
						return nil, &toolerr.Error{Code: toolerr.Execution, Tool: call.Tool, Message: "broke"}
					}
					return mcp.NewToolResultText("done"), nil
				})
			if got := strings.Join(rec.events, " "); got != strings.Join(tt.want, " ") {
				t.Errorf("observed %q, want %q", got, strings.Join(tt.want, " "))
			}
			if ran != tt.ran {
				t.Errorf("handler ran = %v, want %v (err %v)", ran, tt.ran, err)
			}
			if tt.asker != nil && tt.asker.asked != tt.asked {
				t.Errorf("asked %d times, want %d", tt.asker.asked, tt.asked)
			}
			if err != nil && toolerr.As(err) == nil {
				t.Errorf("a refusal must be a *toolerr.Error, got %T", err)
			}
		})
	}
	t.Run("nil observer", func(t *testing.T) {
		_, err := gate.Admit(context.Background(), snap, policy.Call{Tool: "shop.nope", Via: policy.ViaExecute}, nil, nil, nil)
		if toolerr.CodeOf(err) != toolerr.NotFound {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("without approvals the gate fails closed", func(t *testing.T) {
		bare, err := policy.NewGate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		asker := &fakeAsker{outcome: policy.ApprovalApproved}
		_, err = bare.Admit(context.Background(), snap, policy.Call{Tool: "shop.write", Via: policy.ViaExecute, Args: ok}, asker, nil,
			func(context.Context, policy.Call, *catalog.Tool) (*mcp.CallToolResult, error) {
				t.Fatal("ran without approval")
				return nil, nil
			})
		if toolerr.CodeOf(err) != toolerr.ApprovalRequired || asker.asked != 0 {
			t.Fatalf("err = %v, asked %d", err, asker.asked)
		}
	})
}

func mustGlobs(t *testing.T, patterns ...string) presets.Globs {
	t.Helper()
	g, err := presets.CompileGlobs(patterns)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestAdmitBoundsTheCallByTheToolsTimeout checks step 6's bound: the
// handler's context ends at the tool's timeout (marked for handlers with
// a ceiling of their own), a call past it is a TIMEOUT naming the tool,
// the timeout and where it is set, and an end the caller's context caused
// (a cancellation, an earlier deadline) is the caller's to report.
func TestAdmitBoundsTheCallByTheToolsTimeout(t *testing.T) {
	cfg := presets.Default()
	cfg.Tools = map[string]presets.ToolOverride{"shop.slow": {Timeout: 100 * time.Millisecond}}
	ro := mcp.WithReadOnlyHintAnnotation(true)
	snap, _, err := catalog.Build([]mcp.Tool{mcp.NewTool("shop.slow", ro), mcp.NewTool("shop.free", ro)}, catalog.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	gate, err := policy.NewGate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// waits returns a handler that waits d or for its context to end.
	waits := func(d time.Duration) policy.Handler {
		return func(ctx context.Context, _ policy.Call, _ *catalog.Tool) (*mcp.CallToolResult, error) {
			select {
			case <-time.After(d):
				return mcp.NewToolResultText("done"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	tests := []struct {
		name    string
		tool    string
		ctx     func() (context.Context, context.CancelFunc)
		handler policy.Handler
		code    toolerr.Code // "" for a result
		err     error        // the caller's own error, passed on
		message string
	}{
		{name: "within its timeout", tool: "shop.slow", handler: waits(0)},
		{name: "past its timeout", tool: "shop.slow", handler: waits(time.Minute), code: toolerr.Timeout,
			message: `tool "shop.slow" did not finish within 100ms, its timeout (set by tools."shop.slow".timeout in the config)`},
		{name: "a result returned past its timeout is still late", tool: "shop.slow", code: toolerr.Timeout,
			handler: func(ctx context.Context, _ policy.Call, _ *catalog.Tool) (*mcp.CallToolResult, error) {
				<-ctx.Done()
				return mcp.NewToolResultText("too late"), nil
			}},
		{name: "no timeout of its own", tool: "shop.free", handler: waits(200 * time.Millisecond)},
		{name: "the caller cancels first", tool: "shop.slow", handler: waits(time.Minute), err: context.Canceled,
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(20*time.Millisecond, cancel)
				return ctx, cancel
			}},
		{name: "the caller's deadline comes first", tool: "shop.slow", handler: waits(time.Minute), err: context.DeadlineExceeded,
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 20*time.Millisecond)
			}},
		{name: "the handler sees the bound and its mark", tool: "shop.slow",
			handler: func(ctx context.Context, _ policy.Call, _ *catalog.Tool) (*mcp.CallToolResult, error) {
				d, ok := catalog.CallTimeout(ctx)
				deadline, has := ctx.Deadline()
				if !ok || d != 100*time.Millisecond || !has || time.Until(deadline) > d {
					return nil, &toolerr.Error{Code: toolerr.Execution, Message: "the call is not bounded"}
				}
				return mcp.NewToolResultText("done"), nil
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			res, err := gate.Admit(ctx, snap, policy.Call{Tool: tt.tool, Via: policy.ViaExecute, Args: map[string]any{}}, nil, nil, tt.handler)
			switch {
			case tt.err != nil:
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want the caller's %v", err, tt.err)
				}
			case tt.code != "":
				te := toolerr.As(err)
				if te == nil || te.Code != tt.code || !te.Retryable || !strings.Contains(te.Message, tt.message) {
					t.Fatalf("err = %#v, want %s with %q", err, tt.code, tt.message)
				}
			case err != nil || res == nil:
				t.Fatalf("res %v err %v, want a result", res, err)
			}
		})
	}
}
