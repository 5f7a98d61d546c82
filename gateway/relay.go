package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// relay passes an upstream's sampling/createMessage and elicitation/create
// to the client whose tool call is in flight on that upstream, and the
// client's answer back. Such requests belong to a call (the upstream asks
// while it runs a tool), but the protocol does not say which one; the
// gateway relays when every in-flight call of the upstream comes from one
// client session and refuses otherwise rather than ask the wrong person.
//
// These are the upstream's own requests, sent to the client as they are;
// CodeCall's approval prompts are separate elicitations that the
// middleware makes before a call reaches the gateway.
type relay struct{ u *upstream }

// errNoCaller says why a request from the upstream could not be relayed.
var errNoCaller = errors.New("no tool call of this server is in flight through the gateway, so there is no client to ask")

// caller returns the context of the call the upstream's request belongs
// to.
func (r relay) caller() (context.Context, error) {
	ctxs := r.u.callers(true)
	switch len(ctxs) {
	case 0:
		return nil, errNoCaller
	case 1:
		return ctxs[0], nil
	default:
		return nil, fmt.Errorf("calls from %d client sessions are in flight on upstream %q; the gateway cannot tell which one this request is for", len(ctxs), r.u.id)
	}
}

// CreateMessage implements client.SamplingHandler.
func (r relay) CreateMessage(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	call, err := r.caller()
	if err != nil {
		return nil, fmt.Errorf("sampling/createMessage: %w", err)
	}
	ctx, cancel := joinCancel(call, ctx)
	defer cancel()
	return r.u.g.srv.RequestSampling(ctx, req)
}

// Elicit implements client.ElicitationHandler.
func (r relay) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	call, err := r.caller()
	if err != nil {
		return nil, fmt.Errorf("elicitation/create: %w", err)
	}
	ctx, cancel := joinCancel(call, ctx)
	defer cancel()
	return r.u.g.srv.RequestElicitation(ctx, req)
}

// joinCancel keeps the values of call (its client session and request) and
// ends when either context ends.
func joinCancel(call, other context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(call)
	stop := context.AfterFunc(other, func() { cancel(context.Cause(other)) })
	return ctx, func() { stop(); cancel(context.Canceled) }
}

// sessionOf is the id of the client session a context belongs to, or "".
func sessionOf(ctx context.Context) string {
	if s := server.ClientSessionFromContext(ctx); s != nil {
		return s.SessionID()
	}
	return ""
}
