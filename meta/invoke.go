package meta

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/toolerr"
)

// InvokeInput is codecall.invoke's input.
type InvokeInput struct {
	Tool  string         `json:"tool"`
	Input map[string]any `json:"input,omitempty"`
}

func (h *handlers) invoke(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in InvokeInput
	if field, msg, ok := decodeArgs(req.Params.Arguments, &in, "tool, input"); !ok {
		return invalid(field, msg), nil
	}
	if in.Tool == "" {
		return invalid("tool", "tool must name the tool to call, as returned by codecall.search"), nil
	}
	if in.Input == nil {
		in.Input = map[string]any{}
	}
	st, release := h.env.Acquire(ctx)
	defer release()
	if NamesFor(st.Config).Has(in.Tool) {
		return toolError(in.Tool, &toolerr.Error{Code: toolerr.SelfReference, Tool: in.Tool,
			Message: "codecall.invoke cannot call a CodeCall meta-tool; call the tool itself"}), nil
	}
	call := policy.Call{Tool: in.Tool, Via: policy.ViaInvoke, Args: in.Input, SessionID: SessionID(ctx)}
	ctx, obs := st.observeCall(ctx, call)
	res, err := h.invokeAdmitted(ctx, st, obs, req, call)
	obs.end(ctx, res, err)
	if err != nil {
		return st.Redactor.ToolResult(toolError(in.Tool, err), nil), nil
	}
	if res.ResultType == mcp.ResultTypeInputRequired {
		return res, nil
	}
	var schema json.RawMessage
	if t, ok := st.Catalog.Lookup(in.Tool); ok {
		schema = t.OutputSchema
	}
	return st.Redactor.ToolResult(res, schema), nil
}

func (h *handlers) invokeAdmitted(ctx context.Context, st *State, obs *callObserver, req mcp.CallToolRequest, call policy.Call) (*mcp.CallToolResult, error) {
	out, ask, err := admit(ctx, st, obs, req, call)
	switch {
	case err != nil:
		return nil, err
	case ask != nil:
		return ask, nil
	}
	res, err := h.env.Call(ctx, st, call.Tool, call.Args, policy.ViaInvoke)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		rerr := ResultError(call.Tool, res)
		if rerr.Code == toolerr.Validation {
			if why := explainValidation(out.Tool.InputSchema, call.Args); why != "" {
				rerr.Message = "input does not match the tool's input schema: " + why
			}
		}
		return nil, rerr
	}
	return res, nil
}

// ResultError turns a tool result flagged isError into a *toolerr.Error,
// classifying mcp-go's input-validation failures as VALIDATION.
func ResultError(tool string, res *mcp.CallToolResult) *toolerr.Error {
	msg := ResultText(res)
	if msg == "" {
		msg = "the tool reported an error without a message"
	}
	code := toolerr.Execution
	if strings.HasPrefix(msg, "input schema validation failed") || strings.HasPrefix(msg, "invalid arguments") {
		code = toolerr.Validation
	}
	return &toolerr.Error{Code: code, Tool: tool, Message: msg}
}

// ResultText joins a result's text blocks.
func ResultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func toolError(tool string, err error) *mcp.CallToolResult {
	body := ToolErrorBody{Source: "tool", ToolName: tool, Code: toolerr.Execution, Message: err.Error()}
	if pe, ok := asPolicyError(err); ok {
		body.Code, body.Message, body.Reason = pe.Code, pe.Message, pe.Reason
	}
	return result(ToolErrorResult{Status: "tool_error", Error: body}, true)
}
