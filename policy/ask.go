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
func (a ElicitAsker) Ask(ctx context.Context, req ApprovalRequest) (Answer, *mcp.CallToolResult, error) {
	c := a.Client
	if c == nil {
		c = ctx
	}
	outcome, err := a.Approvals.Ask(c, server.ServerFromContext(c), req)
	return ClientAnswer(outcome, ChannelElicitation), nil, err
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
func (a PromptAsker) Ask(ctx context.Context, req ApprovalRequest) (Answer, *mcp.CallToolResult, error) {
	outcome, answered, err := a.Approvals.Resume(ctx, a.State, a.Responses, req)
	if answered {
		return ClientAnswer(outcome, ChannelPrompt), nil, err
	}
	if !CanElicit(ctx) {
		return Answer{Outcome: ApprovalNoClient}, nil, nil
	}
	token, prompt, err := a.Approvals.Begin(ctx, req)
	if err != nil {
		return Answer{Outcome: ApprovalFailed}, nil, err
	}
	return Answer{}, InputRequired(token, prompt), nil
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

// Channel names the way an approval request reached the person who
// answered it. The values are audited (approvalChannel).
type Channel string

// The channels.
const (
	// ChannelElicitation: a server-initiated elicitation (clients before
	// protocol 2026-07-28).
	ChannelElicitation Channel = "elicitation"
	// ChannelPrompt: an input request in a 2026-07-28 result, answered by
	// the client's next request.
	ChannelPrompt Channel = "prompt"
	// ChannelConsole: an operator in the console of codecall serve.
	ChannelConsole Channel = "console"
	// ChannelCLI: an operator running codecall approvals against the
	// server.
	ChannelCLI Channel = "cli"
	// ChannelOutOfBand: the request waited for an operator (console or
	// CLI), and none answered in time.
	ChannelOutOfBand Channel = "out_of_band"
)

// Answer is how an approval request ended, and who ended it.
type Answer struct {
	// Outcome is the verdict.
	Outcome ApprovalOutcome
	// Channel is the way the person was asked; empty when nobody was
	// (session trust, no client able to ask).
	Channel Channel
	// By names who answered, as the channel knows them (an operator's
	// name from the console or the CLI); empty when the channel does not
	// say (an MCP client answers for its user).
	By string
}

// ClientAnswer is an answer an MCP client gave through ch. An outcome
// that no person gave (no client able to ask) carries no channel.
func ClientAnswer(o ApprovalOutcome, ch Channel) Answer {
	if o == ApprovalNoClient {
		return Answer{Outcome: o}
	}
	return Answer{Outcome: o, Channel: ch}
}
