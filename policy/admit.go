package policy

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/toolerr"
)

// Handler runs a call Admit let through: t is the tool it resolved to. It
// is where the path differs (the server's own handler chain for a direct
// call, an internal tools/call for invoke and plans).
type Handler func(ctx context.Context, call Call, t *catalog.Tool) (*mcp.CallToolResult, error)

// Asker asks a person to approve one call: the part of approval that
// differs by client. It returns the answer (the outcome, and the channel
// and person it came through, which the audit log records), or a prompt
// to hand back to the client as the call's result (a 2026-07-28 client
// answers by calling again); err, when set, explains an ApprovalFailed
// outcome and is only logged. Ask is called from the call's goroutine, at
// most once per call.
type Asker interface {
	Ask(ctx context.Context, req ApprovalRequest) (answer Answer, prompt *mcp.CallToolResult, err error)
}

// Observer follows one call through Admit, for audit, traces and logs.
// Admit calls Decided exactly once, Approved at most once (when the call
// needed approval and got an answer), and Ended exactly once, for every
// call it receives, refusals included. Methods are called from the call's
// goroutine, in that order. A nil Observer observes nothing.
type Observer interface {
	// Decided records the gate's verdict: out is nil when the call was
	// refused before the policy ran (an unknown tool, a meta-tool, a tool
	// outside the run's allowedTools, invalid input); err is the refusal.
	Decided(ctx context.Context, out *Outcome, err error)
	// Approved records how an approval ended, through which channel and
	// by whom; err explains ApprovalFailed.
	Approved(ctx context.Context, answer Answer, err error)
	// Ended records how the call ended: res is what the handler returned
	// (or the approval prompt), err a refusal or a failure.
	Ended(ctx context.Context, res *mcp.CallToolResult, err error)
}

// Admit is the one door to a tool. Every path (a client's direct
// tools/call, codecall.invoke, a plan's callTool) sends its calls through
// it, and it runs, in this order:
//
//  1. meta-tool refusal: CodeCall's own tools are never reached from
//     inside CodeCall (SELF_REFERENCE);
//  2. access: the tool must exist and be offered on the call's path, and be
//     in the run's allowedTools when the call carries them (NOT_FOUND,
//     ACCESS_DENIED);
//  3. validation of the arguments against the tool's input schema
//     (VALIDATION), so nobody is asked to approve a call that cannot run;
//  4. the policy in force (ACCESS_DENIED with its reason);
//  5. approval, when the decision asks for it: session trust first, then
//     asker (APPROVAL_DENIED, APPROVAL_EXPIRED, APPROVAL_REQUIRED);
//  6. next, with the tool the name resolved to, bounded by the tool's own
//     timeout when it has one (TIMEOUT; see callWithin). Approval is not
//     counted against it.
//
// obs sees every step; a refusal returns a *toolerr.Error and no result. A
// prompt from asker is returned as the result, without running next.
func (g *Gate) Admit(ctx context.Context, snap *catalog.Snapshot, call Call, asker Asker, obs Observer, next Handler) (*mcp.CallToolResult, error) {
	if obs == nil {
		obs = nopObserver{}
	}
	res, err := g.admit(ctx, snap, call, asker, obs, next)
	obs.Ended(ctx, res, err)
	return res, err
}

func (g *Gate) admit(ctx context.Context, snap *catalog.Snapshot, call Call, asker Asker, obs Observer, next Handler) (*mcp.CallToolResult, error) {
	out, err := g.Decide(ctx, snap, call)
	obs.Decided(ctx, out, err)
	if err != nil {
		return nil, err
	}
	if out.NeedsApproval() {
		prompt, err := g.approve(ctx, call, out, asker, obs)
		if prompt != nil || err != nil {
			return prompt, err
		}
	}
	return callWithin(ctx, call, out.Tool, next)
}

// callWithin runs next under the tool's own timeout, when it has one: the
// call's context ends at the earliest of the client's deadline, a plan's
// remaining time and the tool's timeout. A call the tool's timeout cut
// short (and nothing before it) ends with a TIMEOUT error naming the tool,
// the timeout and where it is configured, whatever next returned once
// cancelled; an end the caller's context caused is the caller's to report.
func callWithin(ctx context.Context, call Call, t *catalog.Tool, next Handler) (*mcp.CallToolResult, error) {
	if t.Timeout <= 0 {
		return next(ctx, call, t)
	}
	tctx, cancel := catalog.WithCallTimeout(ctx, t.Timeout)
	defer cancel()
	res, err := next(tctx, call, t)
	if ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		return nil, timeoutError(call.Tool, t)
	}
	return res, err
}

// timeoutError is the error of a call of t that ran past the tool's own
// timeout: which tool, which timeout, where it is set.
func timeoutError(name string, t *catalog.Tool) *toolerr.Error {
	from := t.TimeoutFrom
	if from == "" {
		from = "the tool's metadata"
	}
	return &toolerr.Error{Code: toolerr.Timeout, Tool: name, Retryable: true,
		Message: fmt.Sprintf("tool %q did not finish within %v, its timeout (set by %s); the call was cancelled", name, t.Timeout, from),
		Hint:    "The tool was slow: the call may succeed if made again, and may have had its effect already. If it needs longer, raise the timeout where it is set."}
}

// approve gets a person's answer for a call that needs one. Trust granted
// earlier in the session answers without asking.
func (g *Gate) approve(ctx context.Context, call Call, out *Outcome, asker Asker, obs Observer) (*mcp.CallToolResult, error) {
	ap := g.approvals
	if ap == nil {
		// A gate built without approvals cannot ask anybody: fail closed.
		obs.Approved(ctx, Answer{Outcome: ApprovalNoClient}, nil)
		return nil, ApprovalError(call.Tool, ApprovalNoClient, 0)
	}
	if ap.Trusted(call.SessionID, out.Tool.Name) {
		obs.Approved(ctx, Answer{Outcome: ApprovalTrusted}, nil)
		return nil, nil
	}
	var (
		answer = Answer{Outcome: ApprovalNoClient} // nobody to ask
		prompt *mcp.CallToolResult
		err    error
	)
	if asker != nil {
		answer, prompt, err = asker.Ask(ctx, ApprovalRequest{Tool: out.Tool, Args: call.Args, Via: call.Via,
			SessionID: call.SessionID, Reason: out.Decision.Reason, Run: call.Run})
		if prompt != nil {
			return prompt, nil // the client answers in a later request
		}
	}
	obs.Approved(ctx, answer, err)
	if perr := ApprovalError(call.Tool, answer.Outcome, ap.Timeout()); perr != nil {
		return nil, perr
	}
	return nil, nil
}

// Access runs the checks of Admit that need no arguments (meta-tool
// refusal, access on the call's path, the run's allowedTools) and returns
// the tool call.Tool resolves to. A plan's getTool uses it, so a plan sees
// exactly the tools it may call.
func (g *Gate) Access(ctx context.Context, snap *catalog.Snapshot, call Call) (*catalog.Tool, error) {
	if g.reserved[call.Tool] {
		return nil, &toolerr.Error{Code: toolerr.SelfReference, Tool: call.Tool, Message: selfReference(call.Via, call.Tool)}
	}
	t, err := g.Authorize(ctx, snap, Request{Tool: call.Tool, Via: call.Via})
	if err != nil {
		return nil, err
	}
	if len(call.Allowed) > 0 && !call.Allowed.Match(t.Name) {
		return nil, &toolerr.Error{Code: toolerr.AccessDenied, Tool: call.Tool,
			Message: fmt.Sprintf("tool %q is not in this run's allowedTools", call.Tool),
			Hint:    "add the tool to allowedTools, or leave allowedTools out"}
	}
	return t, nil
}

func selfReference(via Via, name string) string {
	switch via {
	case ViaExecute:
		return fmt.Sprintf("a plan cannot call the CodeCall meta-tool %s; call the tools themselves", name)
	case ViaInvoke:
		return fmt.Sprintf("invoke cannot call the CodeCall meta-tool %s; call the tool itself", name)
	default:
		return fmt.Sprintf("the CodeCall meta-tool %s cannot be called from inside CodeCall", name)
	}
}

type nopObserver struct{}

func (nopObserver) Decided(context.Context, *Outcome, error)          {}
func (nopObserver) Approved(context.Context, Answer, error)           {}
func (nopObserver) Ended(context.Context, *mcp.CallToolResult, error) {}
