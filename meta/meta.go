// Package meta holds CodeCall's agent-facing surface: the meta-tools'
// schemas, descriptions, handlers and result shapes; the plan host that
// answers a running plan's calls; the askers and observers that every tool
// call brings to the gate's one door (policy.Gate.Admit); and the direct
// path's entry (Direct). Deciding is policy's job, searching search's,
// running plans vm's and sandbox's, and dispatching through the server the
// composition root's (middleware).
package meta

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/policy/audit"
	"github.com/codecall-go/codecall/policy/redact"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/render"
	"github.com/codecall-go/codecall/search"
	"github.com/codecall-go/codecall/toolerr"
)

// Searcher answers search queries over one catalog snapshot.
type Searcher interface {
	Search(ctx context.Context, q search.Query) (search.Result, error)
}

// State is one consistent view a request works on: the config, the catalog
// snapshot, its index and the gate, all of the same version.
type State struct {
	Config  *presets.Config
	Catalog *catalog.Snapshot
	Index   Searcher
	Gate    *policy.Gate

	// The fields below live as long as the server, across generations.

	// Approvals asks people to approve calls and remembers session trust.
	Approvals *policy.Approvals
	// Paused holds plans waiting for a 2026-07-28 client's approval answer.
	Paused *PausedRuns
	// Durable, when set, keeps the codecall.execute plans of 2026-07-28
	// clients that pause for approval in a state store, to be resumed on
	// any replica by running them again (see Durable); nil keeps them
	// paused in this process (Paused).
	Durable *Durable
	// OutOfBand, when set, asks an operator (console, CLI) for the calls
	// whose client cannot show an approval prompt; nil keeps such calls
	// at APPROVAL_REQUIRED.
	OutOfBand policy.Asker
	// Logger receives decisions that deny and policy failures.
	Logger *slog.Logger
	// Tracer starts the spans of execute, search and every tool call; nil
	// means no tracing.
	Tracer trace.Tracer
	// Audit receives the audit events; nil writes none.
	Audit *audit.Logger
	// Redactor removes secrets from results returned to the client, from
	// approval prompts and from logs; nil applies the built-in rules.
	Redactor *redact.Redactor
	// Runner runs codecall.execute's plans; nil runs them in process. It is
	// a sandboxed runner when the config asks for process isolation and the
	// platform provides it.
	Runner Runner
	// Python runs Python plans (always in worker processes); nil when the
	// config does not list python in vm.languages or no Python worker
	// could start, and then PythonOff says why.
	Python    PythonRunner
	PythonOff string
	// CodeMode is the catalog's Code Mode modules, when the config offers
	// the Code Mode surface (NewModules); nil otherwise.
	CodeMode *Modules
	// Servers makes codemode.run's requestedCapabilities available (the
	// gateway's upstreams); nil when the catalog has no servers to start.
	Servers Servers
}

// Env is what the meta-tools need from the composition root.
type Env interface {
	// Acquire returns the current state; release must be called when the
	// request no longer uses it.
	Acquire(ctx context.Context) (st *State, release func())
	// Call runs a call the gate admitted through the server's whole
	// pipeline (hooks, input validation, middleware, handler), without
	// deciding it again. A failure to dispatch is a *toolerr.Error.
	Call(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error)
}

// Names are the meta-tools' names: the CodeCall surface's under a
// config's prefix, and the Code Mode surface's codemode.run.
type Names struct {
	Search, Describe, Execute, Invoke string
	// Run is codemode.run, whatever the prefix.
	Run string
}

// NamesFor returns the meta-tool names a config gives.
func NamesFor(cfg *presets.Config) Names {
	p := cfg.MetaTools.Prefix
	return Names{Search: p + "search", Describe: p + "describe", Execute: p + "execute", Invoke: p + "invoke", Run: presets.CodeModeRun}
}

// All returns every meta-tool name, registered or not and whichever
// surfaces are offered, so that none can be reached as an ordinary tool.
func (n Names) All() []string { return []string{n.Search, n.Describe, n.Execute, n.Invoke, n.Run} }

// Has reports whether name is one of the meta-tools.
func (n Names) Has(name string) bool {
	return name == n.Search || name == n.Describe || name == n.Execute || name == n.Invoke || name == n.Run
}

// Warning is an advisory note in a meta-tool's result.
type Warning struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// ErrorBody is the error of a meta-tool result whose request was refused.
type ErrorBody struct {
	Code    toolerr.Code `json:"code"`
	Message string       `json:"message"`
	Field   string       `json:"field,omitempty"`
	// Hint says how to fix the request: for an argument error, the
	// meta-tool's arguments.
	Hint string `json:"hint,omitempty"`
}

type errorResult struct {
	Error ErrorBody `json:"error"`
}

// ToolErrorBody is the error of a tool call that failed, as DESIGN.md's
// tool_error status describes it.
type ToolErrorBody struct {
	Source   string       `json:"source"`
	ToolName string       `json:"toolName"`
	Code     toolerr.Code `json:"code"`
	Message  string       `json:"message"`
	Reason   string       `json:"reason,omitempty"`
	// Hint says what to do next; Retryable is true only when the same
	// call may succeed if made again.
	Hint      string `json:"hint,omitempty"`
	Retryable bool   `json:"retryable"`
	// ToolInput is the input the call was given, when it is small.
	ToolInput json.RawMessage `json:"toolInput,omitempty"`
	Details   map[string]any  `json:"details,omitempty"`
}

// ToolErrorResult is the result of codecall.invoke when the call failed.
type ToolErrorResult struct {
	Status string        `json:"status"`
	Error  ToolErrorBody `json:"error"`
	// RunID is the id the audit log holds the call under.
	RunID string `json:"runId,omitempty"`
}

// result encodes v as structured content and as the same JSON in one text
// block, so clients that read either see the whole answer.
func result(v any, isError bool) *mcp.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(errorResult{ErrorBody{Code: toolerr.Execution, Message: "result cannot be encoded: " + err.Error()}})
		isError = true
	}
	r := mcp.NewToolResultStructured(json.RawMessage(b), string(b))
	r.IsError = isError
	return r
}

// rendered is result with the text block in format f (output.format);
// structuredContent is the same JSON whatever the format.
func rendered(v any, isError bool, f render.Format) *mcp.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		return result(v, isError)
	}
	return renderedJSON(b, isError, f)
}

func renderedJSON(b []byte, isError bool, f render.Format) *mcp.CallToolResult {
	text := string(b)
	if f != render.JSON {
		// The document is ours and shallow; should it ever fail, JSON is
		// still a faithful text block.
		if t, err := render.Value(f, b); err == nil {
			text = t
		}
	}
	r := mcp.NewToolResultStructured(json.RawMessage(b), text)
	r.IsError = isError
	return r
}

func refused(err error) *mcp.CallToolResult {
	if te := toolerr.As(err); te != nil {
		return result(errorResult{ErrorBody{Code: te.Code, Message: te.Message}}, true)
	}
	return result(errorResult{ErrorBody{Code: toolerr.Execution, Message: err.Error()}}, true)
}

// withOutOfBand makes the operator's out-of-band approval the fallback of
// asker, when the server offers it.
func (st *State) withOutOfBand(asker policy.Asker) policy.Asker {
	if st.OutOfBand == nil {
		return asker
	}
	return policy.Fallback(asker, st.OutOfBand)
}
