package meta

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/toolerr"
)

// SessionID returns the MCP session of the request behind ctx, "" when the
// transport has none.
func SessionID(ctx context.Context) string {
	if s := server.ClientSessionFromContext(ctx); s != nil {
		return s.SessionID()
	}
	return ""
}

// ErrorMetaKey is the key, in the _meta of a refused direct call's result,
// of the refusal as data: {code, message, reason?, hint?}. The text of the
// result says the same for people and models ("ACCESS_DENIED: ...").
const ErrorMetaKey = toolerr.MetaKey

// Direct runs a client's own tools/call of a tool through the gate's one
// door, then next (the server's handler chain). A refusal is an error
// result: its text is "CODE: message", and its _meta[ErrorMetaKey] holds
// the same as data.
func Direct(ctx context.Context, st *State, req mcp.CallToolRequest, next server.ToolHandlerFunc) (*mcp.CallToolResult, error) {
	call := policy.Call{Tool: req.Params.Name, Via: policy.ViaDirect, Args: req.GetArguments(), SessionID: SessionID(ctx)}
	ctx, obs := st.observe(ctx, call, "")
	res, err := st.Gate.Admit(ctx, st.Catalog, call, st.withOutOfBand(policy.ClientAsker(ctx, st.Approvals, req)), obs,
		func(ctx context.Context, _ policy.Call, _ *catalog.Tool) (*mcp.CallToolResult, error) {
			return next(ctx, req)
		})
	if te := toolerr.As(err); te != nil {
		return refusedDirect(te), nil
	}
	return res, err
}

func refusedDirect(te *toolerr.Error) *mcp.CallToolResult {
	res := mcp.NewToolResultError(te.Error())
	res.Meta = mcp.NewMetaFromMap(map[string]any{ErrorMetaKey: errorData(te)})
	return res
}

// errorData is a refusal as the client reads it.
func errorData(te *toolerr.Error) map[string]any {
	d := map[string]any{"code": string(te.Code), "message": te.Message}
	if te.Reason != "" {
		d["reason"] = te.Reason
	}
	if te.Hint != "" {
		d["hint"] = te.Hint
	}
	return d
}
