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
	msg, err := c.internalRequest(name, args)
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

// internalRequest encodes the tools/call Call sends. Every tool call of a
// plan pays for it, so it is written into one buffer of the right size
// behind a prefix encoded once (see callPrefix) rather than marshalled
// from a struct: only the sequence number, the name and the arguments
// change from call to call. Inner ids must not collide with the client's
// own, or they would take over its cancellation handle: they are
// "cc-<this instance's random base>-<sequence>".
func (c *CodeCall) internalRequest(name string, args map[string]any) ([]byte, error) {
	argsJSON, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	msg := make([]byte, 0, len(c.callPrefix)+20+len(callMethod)+len(name)+2+len(`,"arguments":`)+len(argsJSON)+2)
	msg = append(msg, c.callPrefix...)
	msg = strconv.AppendUint(msg, c.seq.Add(1), 10)
	msg = append(msg, callMethod...)
	if msg, err = appendJSONString(msg, name); err != nil {
		return nil, err
	}
	msg = append(msg, `,"arguments":`...)
	msg = append(msg, argsJSON...)
	return append(msg, "}}"...), nil
}

// callMethod follows an internal call's id, up to its name.
const callMethod = `","method":"` + string(mcp.MethodToolsCall) + `","params":{"name":`

// callPrefix is the start of every internal tools/call message, up to the
// sequence number of its id.
func callPrefix(idBase string) []byte {
	return []byte(`{"jsonrpc":"` + mcp.JSONRPC_VERSION + `","id":"cc-` + idBase + "-")
}

// appendJSONString appends s as a JSON string. A tool name is printable
// ASCII in practice and is copied as it is; anything else goes through
// encoding/json, which escapes it.
func appendJSONString(dst []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			b, err := json.Marshal(s)
			return append(dst, b...), err
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"'), nil
}
