package meta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/codemode"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/policy/audit"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/render"
	"github.com/codecall-go/codecall/vm"
)

// CodeModeInput is codemode.run's input (Code Mode §3.2).
type CodeModeInput struct {
	// Code is the script: an ES module.
	Code string `json:"code"`
	// Limits may lower the operator's limits: timeoutMs, maxMemoryBytes,
	// maxLogBytes and maxToolCalls. Other keys are ignored.
	Limits map[string]any `json:"limits,omitempty"`
	// RequestedCapabilities name the servers the script means to use.
	RequestedCapabilities []string `json:"requestedCapabilities,omitempty"`
}

// CodeModeOutput is codemode.run's answer (Code Mode §3.3). Every request
// gets one, whatever went wrong: failures are diagnostics.
type CodeModeOutput struct {
	Logs        []CodeModeLog   `json:"logs"`
	Result      json.RawMessage `json:"result"`
	Diagnostics []Diagnostic    `json:"diagnostics"`
	ToolTrace   []CodeModeTrace `json:"toolTrace"`
	// RunID names the run in the audit log.
	RunID string `json:"runId"`
}

// CodeModeLog is one console line.
type CodeModeLog struct {
	Level   string `json:"level"`
	Message string `json:"message"`
	TimeMs  int64  `json:"timeMs"`
}

// Diagnostic is one finding about a run (§3.3.3).
type Diagnostic struct {
	Severity   string `json:"severity"`
	Code       string `json:"code"`
	Message    string `json:"message"`
	Hint       string `json:"hint,omitempty"`
	Path       string `json:"path,omitempty"`
	ErrorClass string `json:"errorClass,omitempty"`
}

// CodeModeTrace is one tool call of a run, without its input or output.
type CodeModeTrace struct {
	ServerID   string `json:"serverId"`
	ToolName   string `json:"toolName"`
	DurationMs int64  `json:"durationMs"`
	OK         bool   `json:"ok"`
	Error      string `json:"error,omitempty"`
}

// Diagnostic codes codemode.run reports.
const (
	DiagSyntaxError       = "SYNTAX_ERROR"
	DiagImportFailure     = "IMPORT_FAILURE"
	DiagIllegalAccess     = "ILLEGAL_ACCESS"
	DiagUncaught          = "UNCAUGHT_EXCEPTION"
	DiagSandboxLimit      = "SANDBOX_LIMIT"
	DiagInvalidArgument   = "INVALID_ARGUMENT"
	DiagLimitClamped      = "LIMIT_CLAMPED"
	DiagLimitIgnored      = "LIMIT_IGNORED"
	DiagCapability        = "CAPABILITY_UNAVAILABLE"
	DiagNoResult          = "NO_RESULT"
	DiagResultTruncated   = "RESULT_TRUNCATED"
	DiagLogsTruncated     = "LOGS_TRUNCATED"
	DiagUnhandledToolCall = "UNHANDLED_TOOL_ERROR"
	DiagInternal          = "INTERNAL_ERROR"
	DiagCancelled         = "CANCELLED"
)

// Severities.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
)

var runArgs = argSpec{
	names: []string{"code", "limits", "requestedCapabilities"},
	usage: `{code: string (an ES module; set globalThis.__codemode_result__), limits?: {timeoutMs?, maxMemoryBytes?, maxLogBytes?, maxToolCalls?}, requestedCapabilities?: string[] (server ids)}`,
}

// Servers is what codemode.run's requestedCapabilities reach: the servers
// behind the catalog (the gateway's upstreams). A host without one has
// nothing to start, and a capability is available when its module is.
type Servers interface {
	// Ensure makes the server with this id available, starting it when it
	// has not started; it returns why it cannot.
	Ensure(ctx context.Context, id string) error
}

// ServerHealth is what Servers may also tell: which servers are down, so
// that search and describe say so instead of a model finding nothing or
// meeting UNAVAILABLE at its first call. It may be called from any
// goroutine, on every search.
type ServerHealth interface {
	Unavailable() []UnavailableServer
}

// UnavailableServer is a server (an app) that is not running.
type UnavailableServer struct {
	// ID is the server's id, which is the app id of its tools.
	ID string `json:"appId"`
	// Reason says why it is down, secrets removed.
	Reason string `json:"reason"`
	// Since is when it went down; RetryAt when it is tried again (zero:
	// not scheduled).
	Since   time.Time `json:"since"`
	RetryAt time.Time `json:"retryAt,omitempty"`
}

// unavailable returns the servers down now, by id; nil when none is or
// the servers cannot say.
func (st *State) unavailable() map[string]UnavailableServer {
	h, ok := st.Servers.(ServerHealth)
	if !ok {
		return nil
	}
	var out map[string]UnavailableServer
	for _, s := range h.Unavailable() {
		if out == nil {
			out = map[string]UnavailableServer{}
		}
		out[s.ID] = s
	}
	return out
}

// unavailableWarning tells a model that a server is down, since when, why
// and when it is retried.
func unavailableWarning(s UnavailableServer, now time.Time) Warning {
	msg := fmt.Sprintf("upstream %q is not running since %s (%s ago): %s", s.ID, s.Since.UTC().Format(time.RFC3339), now.Sub(s.Since).Round(time.Second), s.Reason)
	if !s.RetryAt.IsZero() {
		msg += fmt.Sprintf("; it is retried at %s (in %s)", s.RetryAt.UTC().Format(time.RFC3339), max(s.RetryAt.Sub(now), 0).Round(time.Second))
	}
	msg += "; its tools (appId " + s.ID + ") answer UNAVAILABLE until then"
	return Warning{Type: "upstream_unavailable", Message: msg}
}

// limitKeys maps §3.2.4's limit keys to how they lower the operator's
// limits; each returns the ceiling in the key's unit.
var limitKeys = []struct {
	key   string
	unit  string
	get   func(l *presets.Limits) int64
	apply func(l *presets.Limits, v int64)
}{
	{"timeoutMs", "ms", func(l *presets.Limits) int64 { return l.Timeout.Milliseconds() },
		func(l *presets.Limits, v int64) { l.Timeout = time.Duration(v) * time.Millisecond }},
	{"maxMemoryBytes", "bytes", func(l *presets.Limits) int64 { return l.MemoryBytes },
		func(l *presets.Limits, v int64) { l.MemoryBytes = v }},
	{"maxLogBytes", "bytes", func(l *presets.Limits) int64 { return l.MaxLogBytes },
		func(l *presets.Limits, v int64) { l.MaxLogBytes = v }},
	{"maxToolCalls", "calls", func(l *presets.Limits) int64 { return int64(l.MaxToolCalls) },
		func(l *presets.Limits, v int64) { l.MaxToolCalls = int(v) }},
}

// applyLimits lowers limits by a request's limits: a value above the
// operator's ceiling is clamped to it (info), a value that is not a
// positive integer is ignored (warning), and unknown keys are ignored
// silently (§3.2.4).
func applyLimits(l presets.Limits, req map[string]any) (presets.Limits, []Diagnostic) {
	var diags []Diagnostic
	for _, k := range limitKeys {
		raw, ok := req[k.key]
		if !ok {
			continue
		}
		f, isNum := raw.(float64)
		if !isNum || f < 1 || f != math.Trunc(f) || f > math.MaxInt64/2 {
			diags = append(diags, Diagnostic{Severity: SeverityWarning, Code: DiagLimitIgnored, Path: "/limits/" + k.key,
				Message: fmt.Sprintf("limits.%s must be a positive integer (%s); it was ignored and the server's limit applies", k.key, k.unit),
				Hint:    fmt.Sprintf("Send limits.%s as a whole number of %s, or leave it out.", k.key, k.unit)})
			continue
		}
		v, ceiling := int64(f), k.get(&l)
		if v > ceiling {
			diags = append(diags, Diagnostic{Severity: SeverityInfo, Code: DiagLimitClamped, Path: "/limits/" + k.key,
				Message: fmt.Sprintf("limits.%s asked for %d %s; the server allows at most %d, which applies", k.key, v, k.unit, ceiling),
				Hint:    "Limits can only lower the server's; ask for at most the server's value."})
			continue
		}
		k.apply(&l, v)
	}
	return l, diags
}

// run is codemode.run's handler.
func (h *handlers) run(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	start := time.Now()
	runID := newRunID()
	var in CodeModeInput
	if field, msg, ok := runArgs.decode(req.Params.Arguments, &in); !ok {
		return runInvalid(runID, field, msg), nil
	}
	if strings.TrimSpace(in.Code) == "" {
		return runInvalid(runID, "code", "code must be an ES module, e.g. \"import * as shop from '@codemode/servers/shop'; globalThis.__codemode_result__ = await shop.get_order({id: 'o1'});\""), nil
	}
	st, release := h.env.Acquire(ctx)
	defer release()
	mods := st.CodeMode
	if mods == nil {
		return runInvalid(runID, "", "this server does not offer the Code Mode surface"), nil
	}
	scriptSHA := sha256Hex(in.Code)
	if state := req.Params.RequestState; state != "" {
		invalid := func(field, msg string) *mcp.CallToolResult { return runInvalid(runID, field, msg) }
		if st.Durable != nil && IsDurableState(state) {
			return h.resumeDurable(ctx, st, req, state, scriptSHA, invalid), nil
		}
		return h.resume(ctx, st, req, state, scriptSHA, invalid), nil
	}
	limits, diags := applyLimits(st.Config.VM, in.Limits)
	diags = append(diags, h.capabilities(ctx, st, mods, in.RequestedCapabilities)...)

	ctx, span := st.tracer().Start(ctx, "codemode.run", trace.WithAttributes(
		attribute.String("codecall.run_id", runID), attribute.String("codecall.preset", string(st.Config.Preset)),
		attribute.Int("codecall.script_bytes", len(in.Code))))
	defer span.End()
	session := SessionID(ctx)
	st.Audit.Log(ctx, audit.Event{Type: audit.ExecuteStart, RunID: runID, SessionID: session, Via: viaCodeMode, ScriptSHA256: scriptSHA})
	refuse := func(status vm.Status, refusal []Diagnostic) *mcp.CallToolResult {
		first := refusal[0]
		st.Audit.Log(ctx, audit.Event{Type: audit.ExecuteEnd, RunID: runID, SessionID: session, Via: viaCodeMode,
			ScriptSHA256: scriptSHA, Status: string(status), Duration: time.Since(start), ErrorCode: first.Code, Error: first.Message})
		span.SetAttributes(attribute.String("codecall.status", string(status)))
		return runAnswer(CodeModeOutput{Logs: []CodeModeLog{}, Result: json.RawMessage("null"),
			Diagnostics: append(diags, refusal...), ToolTrace: []CodeModeTrace{}, RunID: runID})
	}
	runner, noRunner := st.runnerFor(limits)
	if noRunner != nil {
		return refuse(vm.StatusIllegalAccess, []Diagnostic{{Severity: SeverityError, Code: DiagIllegalAccess,
			Message: noRunner.Message, Hint: noRunner.Hint}}), nil
	}
	rules := ast.RulesFor(limits)
	rules.Preset = st.Config.Preset
	linker := &moduleLinker{mods: mods}
	checked, err := ast.ValidateModule(in.Code, rules, linker)
	if err != nil {
		status, refusal := validationDiagnostics(err, mods)
		return refuse(status, refusal), nil
	}
	launch := codeModeLaunch(runner, checked, rules, mods.link(linker.imports))
	if st.Durable != nil && server.IsModernRequest(ctx) {
		// A 2026-07-28 client's script that pauses for an approval is
		// saved and replayed on the answer, on any replica (see Durable).
		res, status := h.runDurable(ctx, st, req, newCodeModePlan(st, in, diags, runID, session, scriptSHA, start), launch, limits)
		span.SetAttributes(attribute.String("codecall.status", string(status)))
		return res, nil
	}

	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	pr := &pausedRun{session: session, scriptSHA: scriptSHA, cancel: cancel, runID: runID, start: start,
		done: make(chan *vm.Result, 1), asks: make(chan *approvalAsk), secrets: &runSecrets{r: st.Redactor}, approval: &runApproval{},
		format: render.JSON}
	pr.finish = func(ctx context.Context, st *State, pr *pausedRun, res *vm.Result) *mcp.CallToolResult {
		return finishCodeMode(ctx, st, pr, res, diags)
	}
	host := &planHost{env: h.env, st: st, reqCtx: ctx, runID: runID, session: session, scriptSHA: scriptSHA,
		secrets: pr.secrets, approval: pr.approval, codeMode: mods}
	var asker policy.Asker = policy.ElicitAsker{Approvals: st.Approvals, Client: ctx}
	if server.IsModernRequest(ctx) {
		asker = pauseAsker{run: pr, client: ctx, approvals: st.Approvals}
	}
	host.asker = planAsker{next: st.withOutOfBand(asker), secrets: pr.secrets}
	host.notifyCalls, host.progress = listeners(ctx, progressToken(req))
	go func() {
		defer cancel()
		pr.done <- launch(runCtx, host, vm.Options{RunID: runID, Limits: limits, Context: json.RawMessage("{}"), Session: session})
	}()
	res, status := h.await(ctx, st, pr)
	span.SetAttributes(attribute.String("codecall.status", string(status)))
	return res, nil
}

// viaCodeMode marks codemode.run in audit events.
const viaCodeMode = "codemode"

// moduleLinker links a script against the modules of one generation and
// keeps what it imports.
type moduleLinker struct {
	mods    *Modules
	imports []string
}

// LinkModule implements ast.ModuleLinker.
func (l *moduleLinker) LinkModule(script string) (*ast.Stripped, error) {
	linked, err := codemode.Link(script, l.mods)
	if err != nil {
		return nil, err
	}
	l.imports = linked.Imports
	return &linked.Stripped, nil
}

// capabilities checks a request's requestedCapabilities: each must name a
// server module, which is made available (started, through the gateway)
// now; one that is not available is an eager warning (§3.2.3).
func (h *handlers) capabilities(ctx context.Context, st *State, mods *Modules, ids []string) []Diagnostic {
	var diags []Diagnostic
	for i, id := range ids {
		path := fmt.Sprintf("/requestedCapabilities/%d", i)
		s, ok := mods.Server(id)
		if !ok {
			diags = append(diags, Diagnostic{Severity: SeverityWarning, Code: DiagCapability, Path: path, ErrorClass: "ServerNotFoundError",
				Message: fmt.Sprintf("requested capability %q is not the id of a connected server; a script cannot import it or call its tools", id),
				Hint:    "Use a server id listServers() returns (connected: " + mods.modulePathsOf(10) + ")."})
			continue
		}
		if st.Servers == nil {
			continue
		}
		if err := st.Servers.Ensure(ctx, s.AppID); err != nil {
			diags = append(diags, Diagnostic{Severity: SeverityWarning, Code: DiagCapability, Path: path, ErrorClass: "ServerNotFoundError",
				Message: fmt.Sprintf("requested capability %q is unavailable: %s; its tools will fail with ToolCallError", id, st.Redactor.String(err.Error())),
				Hint:    "Retry later, or do without this server."})
		}
	}
	return diags
}

// validationDiagnostics turns a script the validator or the linker refused
// into the run's status and diagnostics. An import of a server module that
// mods does not have is a ServerNotFoundError.
func validationDiagnostics(err error, mods *Modules) (vm.Status, []Diagnostic) {
	var le *codemode.LinkError
	var syn *ast.SyntaxError
	var ill *ast.IllegalError
	switch {
	case errors.As(err, &le):
		d := Diagnostic{Severity: SeverityError, Code: le.Code, Message: le.Message, Hint: le.Hint, Path: location(le.Line, le.Column)}
		status := vm.StatusSyntaxError
		if le.Code == DiagImportFailure {
			status = vm.StatusIllegalAccess
			if _, found := mods.Exports(le.Specifier); !found && strings.HasPrefix(le.Specifier, specServersPrefix) {
				d.ErrorClass = "ServerNotFoundError"
			}
		}
		return status, []Diagnostic{d}
	case errors.As(err, &syn):
		return vm.StatusSyntaxError, []Diagnostic{{Severity: SeverityError, Code: DiagSyntaxError, Message: syn.Message,
			Hint: "Fix the syntax at this line and column; the script is an ES module (import/export, top-level await).",
			Path: location(syn.Location.Line, syn.Location.Column)}}
	case errors.As(err, &ill) && len(ill.Violations) > 0:
		out := make([]Diagnostic, 0, len(ill.Violations))
		for _, v := range ill.Violations {
			code := DiagIllegalAccess
			if v.Kind == ast.KindImport {
				code = DiagImportFailure
			}
			msg, hint := splitHint(v.Message)
			out = append(out, Diagnostic{Severity: SeverityError, Code: code, Message: msg, Hint: hint,
				Path: location(v.Location.Line, v.Location.Column)})
		}
		return vm.StatusIllegalAccess, out
	}
	return vm.StatusIllegalAccess, []Diagnostic{{Severity: SeverityError, Code: DiagIllegalAccess, Message: err.Error(),
		Hint: "Simplify or rewrite the script."}}
}

// splitHint splits a validator message "what (line 3, column 5); how to
// fix" into the message and the hint.
func splitHint(msg string) (string, string) {
	if i := strings.Index(msg, "); "); i >= 0 {
		return msg[:i+1], upperFirst(msg[i+3:])
	}
	return msg, "Rewrite the script without it."
}

func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// location renders a 1-based line and column as a diagnostic's path.
func location(line, column int) string {
	if line < 1 {
		return ""
	}
	return fmt.Sprintf("script.js:%d:%d", line, column)
}

// runInvalid answers a request whose arguments are wrong, in the shape of
// every codemode.run answer.
func runInvalid(runID, field, msg string) *mcp.CallToolResult {
	d := Diagnostic{Severity: SeverityError, Code: DiagInvalidArgument, Message: msg, Hint: "Arguments: " + runArgs.usage}
	if field != "" {
		d.Path = "/" + strings.ReplaceAll(field, ".", "/")
	}
	return runAnswer(CodeModeOutput{Logs: []CodeModeLog{}, Result: json.RawMessage("null"), Diagnostics: []Diagnostic{d},
		ToolTrace: []CodeModeTrace{}, RunID: runID})
}

// runAnswer encodes an answer. A failed script is not a failed call
// (§3.3.4): the answer is never isError; its diagnostics say what failed.
func runAnswer(out CodeModeOutput) *mcp.CallToolResult {
	if out.Diagnostics == nil {
		out.Diagnostics = []Diagnostic{}
	}
	return result(out, false)
}

// finishCodeMode audits the end of a Code Mode run and renders its answer,
// with secrets redacted from everything the client reads.
func finishCodeMode(ctx context.Context, st *State, pr *pausedRun, res *vm.Result, diags []Diagnostic) *mcp.CallToolResult {
	e := audit.Event{Type: audit.ExecuteEnd, RunID: pr.runID, SessionID: pr.session, Via: viaCodeMode,
		ScriptSHA256: pr.scriptSHA, Status: string(res.Status), Duration: time.Since(pr.start)}
	if res.Error != nil {
		e.ErrorCode, e.Error = res.Error.Code, res.Error.Message
		if e.ErrorCode == "" {
			e.ErrorCode = res.Error.Limit
		}
	}
	if len(res.Result) > 0 {
		e.ResultSHA256, e.ResultBytes = audit.DigestBytes(res.Result)
	}
	e.LogLines, e.LogBytes = logCounts(res.Logs)
	st.Audit.Log(ctx, e)

	out := CodeModeOutput{Logs: make([]CodeModeLog, len(res.Logs)), Result: json.RawMessage("null"),
		Diagnostics: append([]Diagnostic{}, diags...), ToolTrace: make([]CodeModeTrace, 0, len(res.ToolTrace)), RunID: pr.runID}
	for i, l := range res.Logs {
		level := l.Level
		if level == "info" {
			level = "log"
		}
		out.Logs[i] = CodeModeLog{Level: level, Message: l.Message, TimeMs: l.TimeMs}
	}
	for _, t := range res.ToolTrace {
		ct := CodeModeTrace{ToolName: t.ToolName, DurationMs: int64(math.Round(t.DurationMs)), OK: t.OK, Error: t.Error}
		if mt, ok := st.CodeMode.tool(t.ToolName); ok {
			ct.ServerID = mt.server.Path
		}
		out.ToolTrace = append(out.ToolTrace, ct)
	}
	if res.Status == vm.StatusOK && len(res.Result) > 0 {
		out.Result = res.Result
	}
	out.Diagnostics = append(out.Diagnostics, runDiagnostics(res)...)
	b, err := json.Marshal(out)
	if err != nil {
		return result(out, false)
	}
	b = pr.secrets.scrubJSON(st.Redactor.JSON(b, nil))
	return renderedJSON(b, false, render.JSON)
}

// runDiagnostics are the diagnostics of a run's end: its error, if any,
// and its warnings. A cancelled run has its own diagnostic: the client
// stopped the run, no limit did.
func runDiagnostics(res *vm.Result) []Diagnostic {
	var out []Diagnostic
	switch e := res.Error; {
	case e == nil || res.Status == vm.StatusOK:
	case res.Status == vm.StatusCancelled:
		out = append(out, Diagnostic{Severity: SeverityError, Code: DiagCancelled, Message: "the request was cancelled, which stopped the run",
			Hint: "Send the request again if its result is still needed."})
	default:
		out = append(out, errorDiagnostic(res.Status, e))
	}
	for _, w := range res.Warnings {
		d := Diagnostic{Severity: SeverityWarning, Message: w.Message}
		switch w.Type {
		case vm.WarningResultTruncated:
			d.Code, d.Hint = DiagResultTruncated, "Return less: filter, aggregate or paginate before setting the result."
		case vm.WarningLogsTruncated:
			d.Code, d.Hint = DiagLogsTruncated, "Log summaries (counts, top-N) rather than whole datasets."
		case vm.WarningUnhandledToolError, vm.WarningLateToolError:
			d.Code, d.Hint = DiagUnhandledToolCall, "Await every tool call, and catch the errors you expect."
		default:
			d.Code = strings.ToUpper(w.Type)
		}
		out = append(out, d)
	}
	if res.Status == vm.StatusOK && (len(res.Result) == 0 || string(res.Result) == "null") {
		out = append(out, Diagnostic{Severity: SeverityInfo, Code: DiagNoResult,
			Message: "the script did not set globalThis.__codemode_result__ (or set it to null or undefined), so the result is null",
			Hint:    "End the script with globalThis.__codemode_result__ = value."})
	}
	return out
}

// limitNames maps the runtime's limit names to §3.2.4's keys where one
// exists.
var limitNames = map[string]string{
	vm.LimitToolCalls: "maxToolCalls", vm.LimitMemory: "maxMemoryBytes", vm.LimitLogBytes: "maxLogBytes",
}

// errorDiagnostic is the diagnostic of a run that did not end ok.
func errorDiagnostic(status vm.Status, e *vm.ErrorInfo) Diagnostic {
	d := Diagnostic{Severity: SeverityError, Message: e.Message, Hint: e.Hint}
	if e.Location != nil {
		d.Path = location(e.Location.Line, e.Location.Column)
	}
	switch status {
	case vm.StatusTimeout:
		d.Code, d.ErrorClass = DiagSandboxLimit, "SandboxLimitError"
		d.Message = "timeoutMs: " + e.Message
		if d.Hint == "" {
			d.Hint = "Do less per run (fewer calls, Promise.all for independent ones), or ask for a higher timeoutMs within the server's limit."
		}
	case vm.StatusLimitExceeded:
		d.Code, d.ErrorClass = DiagSandboxLimit, "SandboxLimitError"
		name := e.Limit
		if k, ok := limitNames[name]; ok {
			name = k
		}
		d.Message = name + ": " + e.Message
		if d.Hint == "" {
			d.Hint = "Ask for less (filters, pagination, fewer calls) or split the work across runs."
			if e.Retryable {
				d.Hint = "The server is busy; retry the same request shortly."
			}
		}
	case vm.StatusToolError:
		d.Code, d.ErrorClass = DiagUncaught, e.Name
		if d.ErrorClass == "" {
			d.ErrorClass = "ToolCallError"
		}
		d.Message = fmt.Sprintf("uncaught %s from %s: %s: %s", d.ErrorClass, e.ToolName, e.Code, e.Message)
		if d.Hint == "" {
			d.Hint = "Catch the error with try/catch, or fix the call."
		}
	case vm.StatusIllegalAccess:
		d.Code = DiagIllegalAccess
		if d.Hint == "" {
			d.Hint = "Scripts cannot create code from strings or reach the host; write the code directly."
		}
	case vm.StatusSyntaxError:
		d.Code = DiagSyntaxError
	default:
		d.Code = DiagUncaught
		if isCodeModeClass(e.Name) {
			d.ErrorClass = e.Name
		}
		if e.Name != "" {
			d.Message = e.Name + ": " + e.Message
		}
		if e.Name == "InternalError" {
			d.Code = DiagInternal
		}
		if d.Hint == "" {
			d.Hint = "Fix the error at this location, or catch it with try/catch."
		}
	}
	return d
}

// isCodeModeClass reports whether name is one of @codemode/errors' classes.
func isCodeModeClass(name string) bool {
	switch name {
	case "CodemodeError", "SchemaValidationError", "ToolNotFoundError", "ServerNotFoundError", "ToolCallError",
		"AuthenticationError", "SandboxLimitError":
		return true
	}
	return false
}
