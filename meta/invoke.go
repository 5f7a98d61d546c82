package meta

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/catalog"
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
	if field, msg, ok := invokeArgs.decode(req.Params.Arguments, &in); !ok {
		return invokeArgs.invalid(field, msg), nil
	}
	if in.Tool == "" {
		return invokeArgs.invalid("tool", "tool must name the tool to call, as returned by codecall.search"), nil
	}
	if in.Input == nil {
		in.Input = map[string]any{}
	}
	st, release := h.env.Acquire(ctx)
	defer release()
	call := policy.Call{Tool: in.Tool, Via: policy.ViaInvoke, Args: in.Input, SessionID: SessionID(ctx)}
	runID := newRunID()
	ctx, obs := st.observe(ctx, call, runID)
	var schema json.RawMessage
	res, err := st.Gate.Admit(ctx, st.Catalog, call, st.withOutOfBand(policy.ClientAsker(ctx, st.Approvals, req)), obs,
		func(ctx context.Context, call policy.Call, t *catalog.Tool) (*mcp.CallToolResult, error) {
			schema = t.OutputSchema
			return dispatch(ctx, h.env, call)
		})
	switch {
	case err != nil:
		return st.Redactor.ToolResult(toolError(in.Tool, in.Input, runID, err), nil), nil
	case res.ResultType == mcp.ResultTypeInputRequired:
		return res, nil
	}
	return st.Redactor.ToolResult(res, schema), nil
}

// dispatch sends an admitted call through the server's pipeline and turns
// a result flagged isError into a *toolerr.Error, so every path reports
// the tool's failure with a code.
func dispatch(ctx context.Context, env Env, call policy.Call) (*mcp.CallToolResult, error) {
	res, err := env.Call(ctx, call.Tool, call.Args)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return res, ResultError(call.Tool, res)
	}
	return res, nil
}

// ResultError turns a tool result flagged isError into a *toolerr.Error:
// the result's text is the message, and mcp-go's own input-validation
// refusals are VALIDATION (see MCPGoCode).
//
// A result may carry the error as data under toolerr.MetaKey (the
// gateway does, for an upstream that is down or slow): its hint and
// retryable are taken, and its code only when it is TIMEOUT or
// UNAUTHENTICATED, so a tool cannot pass its failure off as a refusal of
// the gate.
func ResultError(tool string, res *mcp.CallToolResult) *toolerr.Error {
	msg := ResultText(res)
	if msg == "" {
		msg = "the tool reported an error without a message"
	}
	e := &toolerr.Error{Code: MCPGoCode(0, msg), Tool: tool, Message: msg}
	if res.Meta != nil {
		if data, ok := res.Meta.AdditionalFields[toolerr.MetaKey].(map[string]any); ok {
			e.Hint, _ = data["hint"].(string)
			e.Retryable, _ = data["retryable"].(bool)
			// Codes a tool may state about itself; never one of the gate's.
			if c, _ := data["code"].(string); toolerr.Code(c) == toolerr.Timeout || toolerr.Code(c) == toolerr.Unauthenticated {
				e.Code = toolerr.Code(c)
			}
		}
	}
	return e
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

// toolError is codecall.invoke's answer to a failed call: the error with
// its code, hint and retryable, the input it was given, and the run id the
// audit log files the call under.
func toolError(tool string, input map[string]any, runID string, err error) *mcp.CallToolResult {
	body := ToolErrorBody{Source: "tool", ToolName: tool, Code: toolerr.Execution, Message: "the tool call failed"}
	if te := toolerr.As(err); te != nil {
		body.Code, body.Message, body.Reason, body.Hint, body.Retryable = te.Code, te.Message, te.Reason, te.Hint, te.Retryable
	}
	if body.Hint == "" {
		body.Hint = toolerr.HintFor(body.Code)
	}
	if b, err := json.Marshal(input); err == nil && len(b) <= maxToolInputEcho {
		body.ToolInput = b
	}
	return result(ToolErrorResult{Status: "tool_error", Error: body, RunID: runID}, true)
}

// maxToolInputEcho bounds the input an invoke error repeats; a larger one
// is left out (the caller sent it and has it).
const maxToolInputEcho = 4 << 10
