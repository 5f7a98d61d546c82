package gateway

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// The forwarded tools/call is the gateway's hot path. mcp-go's
// Client.CallTool decodes a result about eight times over (a probe for
// the content, the result, each content item twice, with a validity scan
// before each): on a 1 KiB text result that is most of the CPU the
// gateway spends on a call (BENCHMARKS.md, "Where the time goes"). On a
// connection of protocol 2025-11-25 or earlier, where CallTool adds
// nothing to the request (no _meta, no standard headers, no multi round
// trip), the gateway sends the request on the client's transport itself
// and decodes a result whose content is all text in one pass. Everything
// else (a 2026-07-28 connection, other content, a result asking for
// input) takes mcp-go's path, so the two give the same result.

// callTool forwards req to the upstream through cl. id is the call's
// JSON-RPC id on the fast path, unique among the gateway's calls and
// distinct from the client's own (numeric) ids.
func callTool(ctx context.Context, cl *client.Client, id string, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if mcp.IsModernProtocol(cl.ProtocolVersion()) {
		return cl.CallTool(ctx, req)
	}
	request := transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId(id),
		Method:  string(mcp.MethodToolsCall),
		Params:  req.Params,
	}
	// As Client.sendRequest: a request whose context has ended is not
	// sent, and errors of the transport are *transport.Error.
	if err := ctx.Err(); err != nil {
		return nil, transport.NewError(err)
	}
	t := cl.GetTransport()
	resp, err := t.SendRequest(ctx, request)
	if err != nil {
		if ctx.Err() != nil {
			cancelUpstream(ctx, t, request)
		}
		return nil, transport.NewError(err)
	}
	if resp.Error != nil {
		return nil, resp.Error.AsError()
	}
	return decodeToolResult(resp.Result)
}

// cancelUpstream tells a stdio upstream that the caller abandoned the
// request, as Client.sendRequest does; over HTTP the transport (and, for
// older servers, cancellingHTTP and cancellingSSE) does it.
func cancelUpstream(ctx context.Context, t transport.Interface, req transport.JSONRPCRequest) {
	if _, ok := t.(transport.HTTPConnection); ok {
		return
	}
	notifyCancelled(ctx, t, req)
}

// textResult is a tools/call result as decoded on the fast path: the
// fields of mcp.CallToolResult, with content items that can only be text.
type textResult struct {
	Meta              *mcp.Meta       `json:"_meta,omitempty"`
	ResultType        json.RawMessage `json:"resultType,omitempty"`
	Content           []textItem      `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	InputRequests     json.RawMessage `json:"inputRequests,omitempty"`
	RequestState      json.RawMessage `json:"requestState,omitempty"`
}

// textItem holds every field of mcp.TextContent; Type says whether the
// item was text (otherwise its other fields were not kept).
type textItem struct {
	Type        string           `json:"type"`
	Text        string           `json:"text"`
	Annotations *mcp.Annotations `json:"annotations,omitempty"`
	Meta        *mcp.Meta        `json:"_meta,omitempty"`
}

// decodeToolResult decodes a tools/call result as mcp.ParseCallToolResult
// does, in one pass when every content item is text.
func decodeToolResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	var r textResult
	if err := json.Unmarshal(raw, &r); err != nil || !r.plain() {
		// Other content, a result asking for input, no content or a
		// malformed result: mcp-go's decoding and its errors.
		return mcp.ParseCallToolResult(&raw)
	}
	res := &mcp.CallToolResult{Result: mcp.Result{Meta: r.Meta}, IsError: r.IsError}
	if len(r.Content) > 0 {
		res.Content = make([]mcp.Content, len(r.Content))
		for i, c := range r.Content {
			res.Content[i] = mcp.TextContent{Annotated: mcp.Annotated{Annotations: c.Annotations}, Meta: c.Meta, Type: mcp.ContentTypeText, Text: c.Text}
		}
	}
	if len(r.StructuredContent) > 0 {
		// As mcp-go: the bytes as received (which its server sends on in
		// preference) and their decoding.
		res.RawStructuredContent = append(json.RawMessage(nil), r.StructuredContent...)
		if err := json.Unmarshal(r.StructuredContent, &res.StructuredContent); err != nil {
			return mcp.ParseCallToolResult(&raw)
		}
	}
	return res, nil
}

// plain says whether the result takes the fast path: content present and
// all text, and none of the fields of a result asking for input.
func (r *textResult) plain() bool {
	if r.Content == nil || len(r.ResultType) > 0 || len(r.InputRequests) > 0 || len(r.RequestState) > 0 {
		return false
	}
	for _, c := range r.Content {
		if c.Type != mcp.ContentTypeText {
			return false
		}
	}
	return true
}
