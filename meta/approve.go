package meta

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/policy"
)

// SessionID returns the MCP session of the request behind ctx, "" when the
// transport has none.
func SessionID(ctx context.Context) string {
	if s := server.ClientSessionFromContext(ctx); s != nil {
		return s.SessionID()
	}
	return ""
}

// Direct runs a client's own tools/call of a visible tool through the one
// gate, then next (the server's handler chain). A refusal is an error
// result whose text starts with the code ("ACCESS_DENIED: ...").
func Direct(ctx context.Context, st *State, req mcp.CallToolRequest, next server.ToolHandlerFunc) (*mcp.CallToolResult, error) {
	call := policy.Call{Tool: req.Params.Name, Via: policy.ViaDirect, Args: req.GetArguments(), SessionID: SessionID(ctx)}
	ctx, obs := st.observeCall(ctx, call)
	_, ask, err := admit(ctx, st, obs, req, call)
	switch {
	case err != nil:
		obs.end(ctx, nil, err)
		return mcp.NewToolResultError(err.Error()), nil
	case ask != nil:
		obs.end(ctx, ask, nil)
		return ask, nil
	}
	res, err := next(ctx, req)
	obs.end(ctx, res, err)
	return res, err
}

// admit runs the one gate for a call a client made to a handler itself: a
// direct tools/call of a visible tool, or codecall.invoke. In order: the
// access rules, the policy, then approval. It returns the policy outcome
// when the call may run; an input request to return to the client as it
// is (a 2026-07-28 client answers an approval prompt by calling again);
// or a refusal, a *toolerr.Error.
//
// Older clients are asked with a server-initiated elicitation and the call
// waits for the answer, at most approval.timeout.
func admit(ctx context.Context, st *State, obs *callObserver, req mcp.CallToolRequest, call policy.Call) (*policy.Outcome, *mcp.CallToolResult, error) {
	out, err := st.Gate.Decide(ctx, st.Catalog, call)
	obs.decided(ctx, out, err)
	if err != nil {
		return out, nil, err
	}
	if !out.NeedsApproval() {
		return out, nil, nil
	}
	areq := policy.ApprovalRequest{Tool: out.Tool, Args: call.Args, Via: call.Via, SessionID: call.SessionID, Reason: out.Decision.Reason}
	ap := st.Approvals
	if ap.Trusted(call.SessionID, out.Tool.Name) {
		obs.approved(ctx, policy.ApprovalTrusted)
		return out, nil, nil
	}
	var outcome policy.ApprovalOutcome
	if server.IsModernRequest(ctx) {
		var answered bool
		outcome, answered = ap.Resume(req.Params.RequestState, req.Params.InputResponses, areq)
		if !answered {
			if !policy.CanElicit(ctx) {
				outcome = policy.ApprovalNoClient
			} else {
				token, prompt := ap.Begin(areq)
				return out, policy.InputRequired(token, prompt), nil
			}
		}
	} else {
		var askErr error
		outcome, askErr = ap.Ask(ctx, server.ServerFromContext(ctx), areq)
		if askErr != nil {
			st.logger().Warn("codecall: approval prompt failed", "tool", call.Tool, "error", askErr)
		}
	}
	obs.approved(ctx, outcome)
	if perr := policy.ApprovalError(call.Tool, outcome, ap.Timeout()); perr != nil {
		return out, nil, perr
	}
	return out, nil, nil
}
