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
	// ApprovalDenied: a person declined the call, or did not answer in time.
	ApprovalDenied Code = "APPROVAL_DENIED"
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
