// Package toolerr defines the error a tool call ends with when it does not
// succeed, on every path: a client's direct tools/call, codecall.invoke and
// a plan's callTool, in process or in a sandboxed worker.
//
// It is a leaf: it imports nothing of the project and nothing outside the
// standard library, so the runtime (package vm), the worker process
// (package sandbox) and the gate (package policy) share one type without
// the runtime linking the policy engine. Codes are values: match them with
// errors.As and compare Code, never read them from message text.
package toolerr

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Code classifies why a call did not succeed. The values are part of the
// public contract: plans see them as error.code, clients in tool_error
// results, and operators in the audit log's errorCode.
type Code string

// The codes.
const (
	// NotFound: no tool of that name is available on this path. A tool
	// CodeCall hides answers NotFound too, so a refusal never confirms that
	// a hidden tool exists.
	NotFound Code = "NOT_FOUND"
	// AccessDenied: the access rules or the policy refuse the call.
	AccessDenied Code = "ACCESS_DENIED"
	// ApprovalRequired: the call needs a person's approval and nobody could
	// be asked.
	ApprovalRequired Code = "APPROVAL_REQUIRED"
	// ApprovalDenied: a person declined the call.
	ApprovalDenied Code = "APPROVAL_DENIED"
	// ApprovalExpired: the call needed a person's approval and nobody
	// answered within approval.timeout; the call was not made.
	ApprovalExpired Code = "APPROVAL_EXPIRED"
	// Validation: the input does not match the tool's input schema.
	Validation Code = "VALIDATION"
	// Execution: the tool ran and failed, or its result cannot be used.
	Execution Code = "EXECUTION"
	// Timeout: the call or the request it belongs to ran out of time.
	Timeout Code = "TIMEOUT"
	// Limit: a limit of the run was reached (a result too large or too deep).
	Limit Code = "LIMIT"
	// SelfReference: a CodeCall meta-tool was called from inside CodeCall.
	SelfReference Code = "SELF_REFERENCE"
	// Cancelled: the caller cancelled the call.
	Cancelled Code = "CANCELLED"
	// Unauthenticated: the tool's server refused the call for missing or
	// invalid credentials.
	Unauthenticated Code = "UNAUTHENTICATED"
	// ServerNotFound: a Code Mode discovery request named a server that is
	// not connected (or not offered).
	ServerNotFound Code = "SERVER_NOT_FOUND"
	// ReplayDiverged: a resumed plan, run again from its start, made a
	// call other than the one its journal recorded at that place (another
	// tool, or other input). The run ends there (vm.KindReplayDiverged):
	// answering it from the journal would be wrong, and calling the tool
	// could do twice what was done once.
	ReplayDiverged Code = "REPLAY_DIVERGED"
)

// Error is a refused or failed tool call.
type Error struct {
	// Code says why, as a value.
	Code Code
	// Tool is the tool's name as the caller wrote it.
	Tool string
	// Message says what happened, in words a model can act on.
	Message string
	// Reason is a policy's reason for a denial or an approval prompt.
	Reason string
	// Hint says what to do next, when there is something better to do
	// than to retry ("use codecall.search to find tools").
	Hint string
	// Retryable is true only when the same call may succeed if made again
	// unchanged (a transient cause such as a timeout).
	Retryable bool
	// Mismatch says where an input failed its schema, for a Validation
	// error the gate raised; nil otherwise.
	Mismatch *Mismatch
}

// Mismatch locates an input's failure to match its tool's input schema,
// for a caller that shows it field by field (Code Mode's
// SchemaValidationError).
type Mismatch struct {
	// Pointer is the JSON Pointer of the failing value in the input, ""
	// for the input itself.
	Pointer string `json:"pointer"`
	// Expected and Received say what the schema asked for and what the
	// input holds there, in a few words ("string", "integer >= 1",
	// "a missing property").
	Expected string `json:"expected,omitempty"`
	Received string `json:"received,omitempty"`
	// Example is a small input that matches the schema: one of the tool's
	// examples, or one made from the schema's required properties.
	Example json.RawMessage `json:"example,omitempty"`
}

// Error returns the code and the message, "CODE: message".
func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// As returns the *Error in err's chain, or nil.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// CodeOf returns the code of the *Error in err's chain, "" when there is
// none.
func CodeOf(err error) Code {
	if e := As(err); e != nil {
		return e.Code
	}
	return ""
}

// MetaKey is the key, in the _meta of a tool result flagged isError, under
// which CodeCall carries the error as data ({code, message, hint?,
// retryable?}): on a refused direct call, and from the gateway on an
// upstream's transient failure. CodeCall reads only hint and retryable
// (and code TIMEOUT) from a tool's own result, so a tool cannot pass its
// failure off as a refusal of the gate.
const MetaKey = "codecall/error"

// HintFor returns what a caller should do about an error of code c when
// the error carries no hint of its own: one sentence a model can act on.
func HintFor(c Code) string {
	switch c {
	case NotFound:
		return "Names are exact: find the tool with searchTools or codecall.search."
	case AccessDenied:
		return "The access rules or the policy refuse this call; do not retry it, choose another way or ask the user."
	case ApprovalRequired:
		return "This call needs a person's approval and this client cannot ask one; tell the user."
	case ApprovalDenied:
		return "A person declined this call; the denial is final, do not retry it."
	case ApprovalExpired:
		return "Nobody approved this call in time and it was not made; do not retry it on your own, tell the user."
	case Validation:
		return "Fix the input to match the tool's input schema (describeTools or codecall.describe shows it)."
	case Execution:
		return "The tool ran and failed; read the message, then fix the input or choose another tool."
	case Timeout:
		return "The call ran out of time; retry only if retryable is true."
	case Limit:
		return "A limit of the run was reached; ask for less (filters, pagination) or split the work."
	case SelfReference:
		return "Meta-tools cannot be called from a plan; call the tools they find."
	case Cancelled:
		return "The caller cancelled the call."
	case Unauthenticated:
		return "The tool's server refused the credentials; tell the user, since a plan cannot fix them."
	case ServerNotFound:
		return "Server ids are exact: list the connected servers with listServers()."
	}
	return ""
}
