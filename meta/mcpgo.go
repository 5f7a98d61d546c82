package meta

import (
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/toolerr"
)

// MCPGoCode classifies an error mcp-go's server reports only as text: a
// JSON-RPC error of tools/call (rpcCode, its message) or the text of a
// result flagged isError (rpcCode 0). It is the one place that reads
// mcp-go's wording; TestMCPGoWording pins the texts it relies on, so an
// mcp-go upgrade that rewords them fails there rather than silently
// changing the codes plans and the audit log see.
//
// The gate validates input and resolves names before a call reaches
// mcp-go, so these texts appear only when the server's own checks see
// something the gate did not (a tool removed between decision and
// dispatch, a schema only mcp-go compiles).
func MCPGoCode(rpcCode int, text string) toolerr.Code {
	switch {
	case rpcCode == mcp.INVALID_PARAMS && strings.HasPrefix(text, "tool '") && strings.Contains(text, "' not found"):
		return toolerr.NotFound
	case rpcCode == mcp.INVALID_PARAMS:
		return toolerr.Validation
	case rpcCode == mcp.REQUEST_INTERRUPTED:
		return toolerr.Timeout
	case rpcCode == 0 && (strings.HasPrefix(text, "input schema validation failed") || strings.HasPrefix(text, "invalid arguments")):
		return toolerr.Validation
	}
	return toolerr.Execution
}
