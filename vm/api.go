// Package vm runs a validated plan in a fresh, hardened goja runtime under
// a preset's limits: async tool calls with bounded concurrency on an event
// loop, a deadline, a tool-call cap, log and result budgets, a memory
// watchdog, and a JSON-only bridge to the host.
//
// # The runtime
//
// Every Run builds its own goja.Runtime; runs share nothing but the
// immutable compiled program. The plan's global object is a fresh one
// holding CodeCall's bindings (callTool, getTool, searchTools,
// describeTools, mcpLog, mcpNotify,
// codecallContext and, when the preset allows, console), each frozen and
// bound non-writable and non-configurable, in front of the standard
// built-ins and the web platform globals CodeCall implements itself: URL
// and URLSearchParams (the WHATWG URL Standard, see internal/whatwg),
// TextEncoder and TextDecoder (UTF-8 only), structuredClone, and
// setTimeout and clearTimeout. Their instances are plain objects whose
// state stays on the Go side; they, their prototypes and methods are
// frozen, and like the rarely used built-ins they are built on first use.
// eval, the Function constructor and the constructor property of
// Function.prototype, %AsyncFunction.prototype% and
// %GeneratorFunction.prototype% are a locked function that ends the run
// with illegal_access (kind code_generation): every route to code from
// strings ends there, however the plan reaches it. GoError and every
// source of BigInt values are removed.
//
// Nothing Go crosses the boundary by reference. Tool inputs, log metadata
// and results are serialised to JSON inside the runtime, by a JSON.stringify
// with depth, size and cycle checks, while the deadline is armed; tool
// results, tool descriptions and the request context are checked for size
// and depth and parsed by JSON.parse inside the runtime. Names are taken
// only from string primitives, and every argument is converted once.
//
// # Limits
//
// A watchdog goroutine interrupts the run at its deadline, on cancellation
// of the caller's context (in-flight tool calls see the cancellation too),
// and when the process's heap grows past the memory budget.
//
// Timers run on the event loop, on the plan's clock: the deadline, which
// stands still while a tool call waits for a person (SuspendClock). Each
// setTimeout counts against the preset's maxTimers; none fires after the
// deadline or outlives the run, a plan left waiting only on timers due
// after its deadline ends with timeout at once, and a callback that
// throws ends the run with its error. String callbacks are code
// generation. setInterval, setImmediate and queueMicrotask are not
// provided.
//
// goja's interrupt reaches only script code, so the built-ins that
// allocate in proportion to an argument, walk an array-like's length
// natively or recurse on the Go stack are guarded: their sizes are capped
// by the memory budget, their lengths read once, their loops checkpointed
// and their recursion bounded. So are those whose output or work grows
// faster than their input: normalize, the case mappings, encodeURI,
// encodeURIComponent, escape, and Uint8Array's toHex and toBase64 count or
// bound their output against the string cap before (or while) they make
// it; localeCompare collates at most a sixty-fourth of the string cap;
// indexOf, lastIndexOf, includes, split and replace search for a long
// needle in linear time of their own (goja's search is quadratic when a
// needle's bytes match at odd offsets), and replaceAll with many matches
// replaces them as it finds them; parseFloat scans a long string instead
// of running a regular expression over it. The functions that list own
// keys (Object.keys and its kin, Object.assign, freeze, Reflect.ownKeys),
// and the Proxy constructor for its target, cap the virtual index keys of
// strings and typed arrays; Object.entries and
// Object.getOwnPropertyDescriptors build their objects in checkpointed
// loops. Callbacks and comparators of native loops (the array and typed
// array callback methods, sort, Array.from's mapper, Map and Set's
// forEach) are checkpoints, a typed array's default sort runs in the
// sandbox, and the array and string iterators' next are checkpoints. Every
// function a plan can reach is either made by the sandbox or listed, with
// the reason it needs no guard, in a test that fails when a goja upgrade
// adds one. The web globals take the same caps: URL strings and
// URLSearchParams lists are bounded by a quarter of the string cap,
// decode's input by the string cap, encode's output by the buffer cap, and
// structuredClone by the depth, element and buffer caps. Regular
// expressions run in a matcher of the sandbox's own, with a time limit on
// every backtracking match.
//
// The result is exported while the deadline is armed, by an encoder that
// checks the stop flag as it goes: an export that outlives the deadline
// ends the run with timeout. A result over maxResultBytes becomes a
// preview ({truncated, preview, bytes}); its encoding stops at twice the
// budget, where bytes becomes a lower bound (atLeast: true), and a typed
// array is encoded a slot at a time, never by listing its keys.
//
// A host that runs plans in its own process sets Options.ReturnMemory:
// after a run that grew the heap by 64 MiB or more, Run returns the freed
// memory to the operating system (debug.FreeOSMemory, at most once a
// second across the process). The package never sets the process's soft
// memory limit; that is the host's (GOMEMLIMIT).
//
// BoundsFor states what a run under given limits can ask of its host and
// put in its Result; a host that cannot see inside the run (package
// sandbox, across a process boundary) holds the run to it.
//
// # What this does not cover
//
// goja is not a security boundary, and this package is the in-process
// wall only. The memory watchdog is process-wide and approximate; string
// concatenation and other growth in script code is stopped by it, not by a
// guard, and may overshoot the budget by one step: a string doubling in a
// loop reaches several times the budget before it is stopped. Object
// spread of a string or a typed array ({...s}) copies every index in one
// step of goja's interpreter, which no guard reaches. Prototype chains are
// bounded only by the memory budget (goja's property lookup recurses on the
// Go stack per level). BigInt literals must be refused by the validator:
// ** and << on BigInts allocate without bound in one native step. The
// worker process (see DESIGN.md) is the wall that holds against the rest.
package vm

import (
	"context"
	"encoding/json"

	"github.com/codecall-go/codecall/presets"
)

// Status is the outcome of a run, as codecall.execute reports it.
type Status string

// The statuses of DESIGN.md's execute contract. SyntaxError is produced by
// validation, before a runtime exists. Cancelled is a run the client
// stopped (its request was cancelled); Timeout is a run a deadline stopped,
// the plan's own or the client's, so each names its true cause.
const (
	StatusOK            Status = "ok"
	StatusSyntaxError   Status = "syntax_error"
	StatusIllegalAccess Status = "illegal_access"
	StatusRuntimeError  Status = "runtime_error"
	StatusToolError     Status = "tool_error"
	StatusTimeout       Status = "timeout"
	StatusLimitExceeded Status = "limit_exceeded"
	StatusCancelled     Status = "cancelled"
)

// Host is what a run needs from CodeCall. Every method may be called from
// any goroutine; CallTool runs on its own goroutine while the plan goes on.
type Host interface {
	// CallTool runs one tool call through the access gate and the server's
	// pipeline and returns the unwrapped result as JSON. A refusal or a
	// failed call is a *toolerr.Error (its Code is what the plan sees).
	CallTool(ctx context.Context, name string, input map[string]any) (json.RawMessage, error)
	// GetTool returns a JSON description of a tool the plan may call
	// ({name, description, appId, source, inputSchema, and when set title,
	// outputSchema, annotations, tags, examples, requiresApproval}), or ok
	// false.
	GetTool(name string) (desc json.RawMessage, ok bool)
	// Discover answers the plan's searchTools (op DiscoverSearch) and
	// describeTools (op DiscoverDescribe): args and the answer are JSON,
	// and the answer is what codecall.search and codecall.describe would
	// give, through the same index and gate. A failure is a
	// *toolerr.Error.
	Discover(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error)
	// Log sends an MCP logging message to the client (mcpLog).
	Log(ctx context.Context, level, message string, data json.RawMessage)
	// Notify sends an MCP notification to the client (mcpNotify).
	Notify(ctx context.Context, event string, payload json.RawMessage)
}

// Options configure one run.
type Options struct {
	// RunID names the run in results, traces and logs.
	RunID string
	// Limits are the preset's limits, with overrides applied.
	Limits presets.Limits
	// Context is the request's context object, frozen as codecallContext.
	Context json.RawMessage
	// Session is the MCP session the run is for, "" when its request came
	// without one. vm.Run ignores it; a runner that shares capacity among
	// sessions (sandbox.Pool) limits and orders runs by it, all runs
	// without a session counting as one.
	Session string
	// ReturnMemory asks Run, after a run that grew the heap by 64 MiB or
	// more, to return the memory the process no longer uses to the
	// operating system (runtime/debug.FreeOSMemory), at most once a second
	// across the process. Hosts that run plans in their own process set
	// it (meta.InProcess does); a worker process that exits after its run
	// has no use for it.
	ReturnMemory bool
	// CodeMode, when set, makes the run a Code Mode run: the plan is a
	// module linked by ast.ValidateModule, its imports are these modules,
	// and its result is what it leaves in ResultGlobal (see CodeMode).
	CodeMode *CodeMode
	// Runtimes, when set, supplies the run's hardened runtime, built
	// before the run started (see Runtimes); nil builds it in the run.
	Runtimes *Runtimes
	// Replay, when set, makes the run repeatable (see Replay): a plan
	// that may pause for approval and be resumed by running it again.
	Replay *Replay
}

// LogEntry is one captured console or mcpLog line.
type LogEntry struct {
	Level   string `json:"level"`
	Message string `json:"message"`
	// TimeMs is when the line was logged, in milliseconds since the run
	// started.
	TimeMs int64 `json:"timeMs"`
}

// TraceEntry is one tool call of a run; it never holds inputs or outputs.
type TraceEntry struct {
	ToolName   string  `json:"toolName"`
	AppID      string  `json:"appId,omitempty"` // filled in by the host, which knows the catalog
	DurationMs float64 `json:"durationMs"`
	OK         bool    `json:"ok"`
	Error      string  `json:"error,omitempty"` // the error code
}

// Metrics describe a run.
type Metrics struct {
	DurationMs float64 `json:"durationMs"`
	ToolCalls  int     `json:"toolCalls"`
}

// ErrorInfo is the error of a non-ok status. Which fields are set depends
// on the status: Kind and Location for illegal_access; Source "script",
// Name and, when the error carries a stack, Location for runtime_error;
// Source "tool", ToolName, ToolInput, Code, Details for tool_error; Limit
// for limit_exceeded.
type ErrorInfo struct {
	Source    string          `json:"source,omitempty"`
	Message   string          `json:"message"`
	Name      string          `json:"name,omitempty"`
	Kind      string          `json:"kind,omitempty"`
	Location  *Location       `json:"location,omitempty"`
	ToolName  string          `json:"toolName,omitempty"`
	ToolInput json.RawMessage `json:"toolInput,omitempty"`
	Code      string          `json:"code,omitempty"`
	Reason    string          `json:"reason,omitempty"` // the policy's reason, when a policy denied the call
	Hint      string          `json:"hint,omitempty"`   // what to do next, when the gate knows
	Retryable bool            `json:"retryable,omitempty"`
	Details   json.RawMessage `json:"details,omitempty"`
	Limit     string          `json:"limit,omitempty"`
}

// Location is a 1-based position in the user's script.
type Location struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// Warning is an advisory note, e.g. a truncated result or log.
type Warning struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Warning types a run reports.
const (
	WarningResultTruncated    = "result_truncated"     // the result was over maxResultBytes and became a preview
	WarningLogsTruncated      = "logs_truncated"       // the logs reached maxLogBytes; later lines were dropped
	WarningMessagesDropped    = "messages_dropped"     // mcpLog/mcpNotify calls beyond the per-run limit were dropped
	WarningContextDropped     = "context_dropped"      // Options.Context could not be given to the plan
	WarningUnhandledToolError = "unhandled_tool_error" // a callTool failed and nothing in the plan handled it
	WarningLateToolError      = "late_tool_error"      // a callTool failed after the plan had returned
	WarningNoResult           = "no_result"            // the plan returned undefined (most often: no return statement)
)

// Result is the outcome of a run, ready to be encoded as codecall.execute's
// structured result.
type Result struct {
	Status    Status          `json:"status"`
	Result    json.RawMessage `json:"result,omitempty"` // set when Status is ok; JSON null for undefined
	Error     *ErrorInfo      `json:"error,omitempty"`
	Logs      []LogEntry      `json:"logs,omitempty"`
	ToolTrace []TraceEntry    `json:"toolTrace"`
	Metrics   Metrics         `json:"metrics"`
	Warnings  []Warning       `json:"warnings,omitempty"`
	RunID     string          `json:"runId"`
}

// Limit names reported in limit_exceeded errors: the YAML key of the limit.
const (
	LimitToolCalls = "maxToolCalls"
	LimitTimers    = "maxTimers"
	LimitMemory    = "memoryBytes"
	LimitStack     = "maxStackDepth"
	LimitRegexTime = "regexTimeout"
	LimitLogBytes  = "maxLogBytes"
	LimitResult    = "maxResultBytes"
)

// Kinds of illegal_access found at run time (validation reports its own
// kinds, see package ast).
const (
	KindCodeGeneration = "code_generation" // eval/Function/constructor reached at run time
	KindRegex          = "regex"           // a RegExp the preset forbids, built at run time
	KindIsolation      = "isolation"       // the preset requires a worker process this host cannot start
)
