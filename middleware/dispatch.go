package middleware

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/meta"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/toolerr"
)

// internalKey marks a tools/call that CodeCall itself sends through the
// server. Only this package can set it, so a client cannot forge it.
type internalKey struct{}

type internalCall struct {
	via   policy.Via
	state *meta.State
}

func internalFrom(ctx context.Context) *internalCall {
	ic, _ := ctx.Value(internalKey{}).(*internalCall)
	return ic
}

// filter is the server's tool filter: it decides what tools/list shows and,
// because mcp-go applies filters at call time too, what tools/call reaches.
func (c *CodeCall) filter(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	g := c.acquire()
	defer g.release()
	st := &g.state
	ic := internalFrom(ctx)
	via := policy.ViaDirect
	if ic != nil {
		st, via = ic.state, ic.via
	}
	names := meta.NamesFor(st.Config)
	out := make([]mcp.Tool, 0, len(tools))
	for _, t := range tools {
		if names.Has(t.Name) {
			if d, ok := g.descriptions[t.Name]; ok {
				t.Description = d
				out = append(out, t)
			}
			continue
		}
		if _, err := st.Gate.Authorize(ctx, st.Catalog, policy.Request{Tool: t.Name, Via: via}); err == nil {
			out = append(out, t)
		}
	}
	return out
}

// gate is tool-handler middleware: the last check before any handler runs,
// on the same gate as every other path.
func (c *CodeCall) gate(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ic := internalFrom(ctx)
		var st *meta.State
		if ic != nil {
			st = ic.state
		} else {
			g := c.acquire()
			defer g.release()
			st = &g.state
		}
		name := req.Params.Name
		if meta.NamesFor(st.Config).Has(name) {
			if ic != nil {
				return mcp.NewToolResultError(fmt.Sprintf("%s: a CodeCall meta-tool cannot be called from CodeCall", toolerr.SelfReference)), nil
			}
			return next(ctx, req)
		}
		if ic != nil {
			// Made by a meta-tool, which ran the whole gate (policy and
			// approval included) before sending it; this re-checks access
			// in case the catalog changed under it.
			if _, err := st.Gate.Authorize(ctx, st.Catalog, policy.Request{Tool: name, Via: ic.via}); err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return next(ctx, req)
		}
		return meta.Direct(ctx, st, req, next)
	}
}

// Call implements meta.Env: it sends tools/call through the server's whole
// pipeline (hooks, filter, input validation, middleware, handler) with the
// caller's context, so the client's session sees progress and logs.
func (c *CodeCall) Call(ctx context.Context, st *meta.State, name string, args map[string]any, via policy.Via) (*mcp.CallToolResult, error) {
	// Inner ids must not collide with the client's own, or they would take
	// over its cancellation handle.
	id := fmt.Sprintf("cc-%s-%d", c.idBase, c.seq.Add(1))
	msg, err := json.Marshal(map[string]any{
		"jsonrpc": mcp.JSONRPC_VERSION, "id": id, "method": string(mcp.MethodToolsCall),
		"params": map[string]any{"name": name, "arguments": args},
	})
	if err != nil {
		return nil, &toolerr.Error{Code: toolerr.Validation, Tool: name, Message: "input cannot be encoded as JSON: " + err.Error()}
	}
	ctx = context.WithValue(ctx, internalKey{}, &internalCall{via: via, state: st})
	switch resp := c.srv.HandleMessage(ctx, msg).(type) {
	case mcp.JSONRPCResponse:
		if res, ok := resp.Result.(*mcp.CallToolResult); ok && res != nil {
			return res, nil
		}
		return nil, &toolerr.Error{Code: toolerr.Execution, Tool: name, Message: fmt.Sprintf("the server answered with %T, not a tool result", resp.Result)}
	case mcp.JSONRPCError:
		return nil, rpcError(name, resp.Error)
	case nil:
		return nil, &toolerr.Error{Code: toolerr.Execution, Tool: name, Message: "the server gave no answer"}
	default:
		return nil, &toolerr.Error{Code: toolerr.Execution, Tool: name, Message: fmt.Sprintf("unexpected answer %T", resp)}
	}
}

func rpcError(tool string, e mcp.JSONRPCErrorDetails) *toolerr.Error {
	code := toolerr.Execution
	switch {
	case strings.Contains(e.Message, "not found"):
		code = toolerr.NotFound
	case e.Code == mcp.INVALID_PARAMS:
		code = toolerr.Validation
	case e.Code == mcp.REQUEST_INTERRUPTED:
		code = toolerr.Timeout
	}
	return &toolerr.Error{Code: code, Tool: tool, Message: e.Message}
}
