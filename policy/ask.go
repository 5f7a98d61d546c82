package policy

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ElicitAsker asks with a server-initiated elicitation, the way of clients
// before protocol 2026-07-28: the call waits for the answer, at most
// approval.timeout.
type ElicitAsker struct {
	Approvals *Approvals
	// Client is the request whose client is asked, when that is not the
	// call's own: a plan's calls run detached from the execute request,
	// whose session the prompt must reach. Nil asks through the call's
	// context.
	Client context.Context
}

// Ask implements Asker.
func (a ElicitAsker) Ask(ctx context.Context, req ApprovalRequest) (ApprovalOutcome, *mcp.CallToolResult, error) {
	c := a.Client
	if c == nil {
		c = ctx
	}
	outcome, err := a.Approvals.Ask(c, server.ServerFromContext(c), req)
	return outcome, nil, err
}

// PromptAsker asks a 2026-07-28 client inside the call's own result: the
// first call returns an input request, and the client calls again with
// the answer (State and Responses), which is checked against the prompt
// it was issued for.
type PromptAsker struct {
	Approvals *Approvals
	State     string
	Responses mcp.InputResponses
}

// Ask implements Asker.
func (a PromptAsker) Ask(ctx context.Context, req ApprovalRequest) (ApprovalOutcome, *mcp.CallToolResult, error) {
	if outcome, answered := a.Approvals.Resume(a.State, a.Responses, req); answered {
		return outcome, nil, nil
	}
	if !CanElicit(ctx) {
		return ApprovalNoClient, nil, nil
	}
	token, prompt := a.Approvals.Begin(req)
	return "", InputRequired(token, prompt), nil
}

// ClientAsker returns the asker for a call a client made in req itself (a
// direct tools/call, or codecall.invoke): a prompt in the result for a
// 2026-07-28 request, an elicitation otherwise.
func ClientAsker(ctx context.Context, a *Approvals, req mcp.CallToolRequest) Asker {
	if server.IsModernRequest(ctx) {
		return PromptAsker{Approvals: a, State: req.Params.RequestState, Responses: req.Params.InputResponses}
	}
	return ElicitAsker{Approvals: a}
}
