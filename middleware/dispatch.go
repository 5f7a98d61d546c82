package middleware

import (
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/meta"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/toolerr"
)

// internalKey marks a tools/call that CodeCall itself sends through the
// server after the gate admitted it. Only this package can set it, so a
// client cannot forge it.
type internalKey struct{}

// internalCall is the mark of one admitted call. It is good for the tool
// it names and for one handler run: a handler that passes its context on
// to another tools/call does not carry the admission with it.
type internalCall struct {
	tool string
	used atomic.Bool
}

func internalFrom(ctx context.Context) *internalCall {
	ic, _ := ctx.Value(internalKey{}).(*internalCall)
	return ic
}

// filter is the server's tool filter: it decides what tools/list shows
// and, because mcp-go applies filters at call time too, what a client's
// tools/call reaches. An admitted internal call passes without a second
// decision (and without taking any lock).
func (c *CodeCall) filter(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	if ic := internalFrom(ctx); ic != nil && !ic.used.Load() && len(tools) == 1 && tools[0].Name == ic.tool {
		return tools
	}
	g := c.acquire()
	defer g.release()
	st := &g.state
	names := meta.NamesFor(st.Config)
	out := make([]mcp.Tool, 0, len(tools))
	for _, t := range tools {
		if names.Has(t.Name) {
			if listed, ok := g.metaTools[t.Name]; ok {
				out = append(out, meta.WithUnavailable(st, listed))
			}
			continue
		}
		if _, err := st.Gate.Authorize(ctx, st.Catalog, policy.Request{Tool: t.Name, Via: policy.ViaDirect}); err == nil {
			out = append(out, t)
		}
	}
	return out
}

// gate is tool-handler middleware, in front of every handler: a client's
// call goes through the gate's one door (meta.Direct); a call CodeCall
// admitted and sent itself runs as it is; a meta-tool runs its handler.
func (c *CodeCall) gate(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if ic := internalFrom(ctx); ic != nil && ic.tool == req.Params.Name && ic.used.CompareAndSwap(false, true) {
			return next(ctx, req)
		}
		g := c.acquire()
		defer g.release()
		st := &g.state
		if meta.NamesFor(st.Config).Has(req.Params.Name) {
			return next(ctx, req)
		}
		return meta.Direct(ctx, st, req, next)
	}
}

// Call implements meta.Env: it sends an admitted tools/call through the
// server's whole pipeline (hooks, filter, input validation, middleware,
// handler) with the caller's context, so the client's session sees
// progress and logs.
func (c *CodeCall) Call(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	// Inner ids must not collide with the client's own, or they would take
	// over its cancellation handle.
	id := "cc-" + c.idBase + "-" + strconv.FormatUint(c.seq.Add(1), 10)
	msg, err := json.Marshal(internalRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Method: string(mcp.MethodToolsCall),
		Params: internalParams{Name: name, Arguments: args}})
	if err != nil {
		return nil, &toolerr.Error{Code: toolerr.Validation, Tool: name, Message: "input cannot be encoded as JSON: " + err.Error()}
	}
	ctx = context.WithValue(ctx, internalKey{}, &internalCall{tool: name})
	switch resp := c.srv.HandleMessage(ctx, msg).(type) {
	case mcp.JSONRPCResponse:
		if res, ok := resp.Result.(*mcp.CallToolResult); ok && res != nil {
			return res, nil
		}
		return nil, &toolerr.Error{Code: toolerr.Execution, Tool: name, Message: "the server answered a tools/call with something other than a tool result"}
	case mcp.JSONRPCError:
		return nil, &toolerr.Error{Code: meta.MCPGoCode(resp.Error.Code, resp.Error.Message), Tool: name, Message: resp.Error.Message}
	case nil:
		return nil, &toolerr.Error{Code: toolerr.Execution, Tool: name, Message: "the server gave no answer"}
	default:
		return nil, &toolerr.Error{Code: toolerr.Execution, Tool: name, Message: "the server gave an answer of an unexpected kind"}
	}
}

// internalRequest is the tools/call Call sends. A struct rather than a
// map: it encodes in a third of the time, without sorting keys, and every
// tool call of a plan pays for it.
type internalRequest struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      string         `json:"id"`
	Method  string         `json:"method"`
	Params  internalParams `json:"params"`
}

type internalParams struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}
