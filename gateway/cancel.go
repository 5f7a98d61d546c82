package gateway

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Over HTTP, mcp-go's client cancels an abandoned request only on protocol
// 2026-07-28, where ending the request's stream is the cancellation. Servers
// on earlier revisions (most servers today, the TypeScript SDK's among them)
// learn of it only from notifications/cancelled, so the wrappers below send
// one when a request's context ends before its answer on such a connection.

// legacyCancel remembers the negotiated protocol and sends the notification.
type legacyCancel struct {
	modern atomic.Bool
}

func (l *legacyCancel) setVersion(v string) { l.modern.Store(mcp.IsModernProtocol(v)) }

// after runs when a request has returned; it tells the server to stop when
// the request was abandoned on a legacy connection.
func (l *legacyCancel) after(ctx context.Context, t transport.Interface, req transport.JSONRPCRequest, err error) {
	if err == nil || ctx.Err() == nil || l.modern.Load() || req.Method == string(mcp.MethodInitialize) {
		return
	}
	notifyCancelled(ctx, t, req)
}

// cancelNoticeTimeout bounds the notifications/cancelled sent for an
// abandoned call.
const cancelNoticeTimeout = 5 * time.Second

// notifyCancelled sends notifications/cancelled for req, abandoned by
// ctx's caller, off the caller's path: it has its error already, and a
// peer that does not read must not hold it up.
func notifyCancelled(ctx context.Context, t transport.Interface, req transport.JSONRPCRequest) {
	n := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationCancelled),
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": req.ID, "reason": ctx.Err().Error()}},
		},
	}
	go func() {
		sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelNoticeTimeout)
		defer cancel()
		_ = t.SendNotification(sendCtx, n)
	}()
}

// cancellingHTTP is the streamable HTTP transport with legacy cancellation.
type cancellingHTTP struct {
	*transport.StreamableHTTP
	lc legacyCancel
}

// SetProtocolVersion records the negotiated version and passes it on.
func (c *cancellingHTTP) SetProtocolVersion(v string) {
	c.lc.setVersion(v)
	c.StreamableHTTP.SetProtocolVersion(v)
}

// SendRequest sends the request and cancels it upstream when abandoned.
func (c *cancellingHTTP) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := c.StreamableHTTP.SendRequest(ctx, req)
	c.lc.after(ctx, c.StreamableHTTP, req, err)
	return resp, err
}

// cancellingSSE is the SSE transport with legacy cancellation.
type cancellingSSE struct {
	*transport.SSE
	lc legacyCancel
}

// SetProtocolVersion records the negotiated version and passes it on.
func (c *cancellingSSE) SetProtocolVersion(v string) {
	c.lc.setVersion(v)
	c.SSE.SetProtocolVersion(v)
}

// SendRequest sends the request and cancels it upstream when abandoned.
func (c *cancellingSSE) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := c.SSE.SendRequest(ctx, req)
	c.lc.after(ctx, c.SSE, req, err)
	return resp, err
}
