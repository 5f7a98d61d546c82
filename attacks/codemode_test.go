package attacks

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/vm"
)

// The Code Mode surface. Every case of the suite also runs through
// codemode.run, in both modes, under the subtest "codemode": a plan is
// turned into a module by asModule, and the Code Mode cases (module set)
// are modules already. An answer is read as a response (readCodeMode), so
// that the expectations and checks of codecall.execute apply to it through
// codeModeWant; the cases whose outcome differs there for a reason of the
// surface (Code Mode allows globalThis, Proxy and Reflect; its bindings are
// not callTool) say so in codeModeOverrides, and the few that cannot run
// there are in codeModeSkips.

// surface is the meta-tool a case is sent to.
type surface string

const (
	viaExecute  surface = "execute"
	viaCodeMode surface = "codemode"

	// runTool is Code Mode's one tool.
	runTool = "codemode.run"
	// testModule is the module of the test server's tools: the catalog's
	// app of test.echo and its siblings is "test".
	testModule = "@codemode/servers/test"
)

// testExports maps the test tools a plan may call to their exports in
// testModule (codemode.ExportNames of their local names). test.secret is
// excluded, so the module has no export for it.
var testExports = map[string]string{
	"test.echo": "echo", "test.sleep": "sleep", "test.fail": "fail", "test.big": "big",
	"test.deep": "deep", "test.json": "json", "test.count": "count", "test.charge": "charge",
}

// modulePrelude is what asModule puts before a plan, on the plan's first
// line so that every line keeps its number: the test module and
// ToolNotFoundError imported under names no plan uses, and callTool
// defined over the exports. callTool keeps codecall.execute's shape: a
// name that is not a string throws a TypeError at once; a name without an
// export (an excluded tool, a meta-tool, a misspelling) rejects with a
// ToolNotFoundError, as the gate's NOT_FOUND would; {throwOnError: false}
// resolves to {ok, data} or {ok: false, error}. It reads nothing global
// when called, so a plan that tampers with the built-ins changes the shim
// no more than it changes callTool.
var modulePrelude = func() string {
	names := make([]string, 0, len(testExports))
	for n := range testExports {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString(`import * as $cm_test from "` + testModule + `"; import { ToolNotFoundError as $cm_NotFound } from "@codemode/errors"; `)
	b.WriteString(`const callTool = (($TypeError, $NotFound) => { `)
	b.WriteString(`const missing = async (name) => { throw new $NotFound('no export for the tool "' + name + '"') }; `)
	b.WriteString(`const settle = async (p) => { try { return {ok: true, data: await p} } catch (error) { return {ok: false, error} } }; `)
	b.WriteString(`return (name, input, opts) => { if (typeof name !== 'string') { throw new $TypeError('callTool: the tool name must be a string') } let f; switch (name) { `)
	for _, n := range names {
		fmt.Fprintf(&b, "case %q: f = $cm_test.%s; break; ", n, testExports[n])
	}
	b.WriteString(`} const p = f === undefined ? missing(name) : f(input); return opts !== undefined && opts !== null && opts.throwOnError === false ? settle(p) : p } })(TypeError, $cm_NotFound); `)
	b.WriteString(`globalThis.__codemode_result__ = await (async () => { `)
	return b.String()
}()

// moduleEpilogue closes what modulePrelude opened, on a line of its own so
// that a plan ending in a line comment cannot swallow it.
const moduleEpilogue = "\n})();"

// missingExport is how the shim's ToolNotFoundError names the tool.
const missingExport = `no export for the tool "`

// asModule turns a codecall.execute case into a codemode.run case: the
// plan wrapped in an async function whose value becomes
// __codemode_result__, its expectations mapped by codeModeWant unless
// codeModeOverrides says otherwise. It returns why the case does not run
// in Code Mode when codeModeSkips lists it.
func asModule(c attackCase) (attackCase, string) {
	if why, ok := codeModeSkips[c.id()]; ok {
		return c, "not run through codemode.run: " + why
	}
	if c.args != nil || c.context != nil || c.allowed != nil {
		// codemode.run has none of these arguments; such a case must be
		// listed in codeModeSkips (TestCodeModeTables checks it).
		return c, "not run through codemode.run: it sends codecall.execute's own arguments"
	}
	m := c
	m.module = true
	m.script = modulePrelude + c.script + moduleEpilogue
	m.want = codeModeWant(c.want)
	if c.orWant.status != "" {
		m.orWant = codeModeWant(c.orWant)
	}
	if c.trivial != nil {
		w := codeModeWant(*c.trivial)
		m.trivial = &w
	}
	if o, ok := codeModeOverrides[c.id()]; ok {
		if o.script != "" {
			m.script = modulePrelude + o.script + moduleEpilogue
		}
		if o.want != nil {
			m.want, m.orWant = *o.want, want{}
		}
		if o.check != nil || o.noCheck {
			m.check = o.check
		}
	}
	return m, ""
}

// toolClasses are the @codemode/errors classes of a failed call, by the
// gate's error code; a code not listed is a ToolCallError.
var toolClasses = map[string]string{
	"VALIDATION": "SchemaValidationError", "NOT_FOUND": "ToolNotFoundError", "SERVER_NOT_FOUND": "ServerNotFoundError",
	"UNAUTHENTICATED": "AuthenticationError",
	// Names the shim has no export for reject with ToolNotFoundError: in
	// Code Mode the only way to a tool is its export.
	"SELF_REFERENCE": "ToolNotFoundError", "ACCESS_DENIED": "ToolNotFoundError",
}

// codeModeWant maps a codecall.execute outcome to the codemode.run outcome
// of the same plan, as readCodeMode reads the answer:
//
//   - ok: no error diagnostic, the same result;
//   - illegal_access: an ILLEGAL_ACCESS (IMPORT_FAILURE for kind import)
//     diagnostic, whose kind the answer does not carry except for code
//     generation (its message says so);
//   - timeout and limit_exceeded: SANDBOX_LIMIT, with the limit's key;
//   - runtime_error: UNCAUGHT_EXCEPTION with the error's name;
//   - tool_error: UNCAUGHT_EXCEPTION with the class the code calls for,
//     the tool and the code (a code the shim answers, for a tool without an
//     export, is not the gate's: only the class and the tool are checked);
//   - syntax_error: SYNTAX_ERROR.
func codeModeWant(w want) want {
	switch w.status {
	case vm.StatusIllegalAccess:
		if w.kind != string(ast.KindImport) && w.kind != vm.KindCodeGeneration {
			w.kind = ""
		}
	case vm.StatusToolError:
		class, ok := toolClasses[w.code]
		if !ok {
			class = "ToolCallError"
		}
		w.name = class
		if ok && class == "ToolNotFoundError" {
			w.code = ""
		}
	}
	return w
}

// cmOverride is a Code Mode outcome that differs from what codeModeWant
// makes of the case's, for a reason of the surface its entry states.
type cmOverride struct {
	want *want
	// check replaces the case's check; noCheck drops it.
	check   func(t *testing.T, h *host, r *response)
	noCheck bool
	// script replaces the plan: the same attack with a CodeCall-only
	// global replaced by its Code Mode counterpart (a binding of the test
	// module, bound as $cm_test by the prelude, or its __meta__).
	script string
}

func wantPtr(w want) *want { return &w }

// diagnostic is one of a codemode.run answer's diagnostics.
type diagnostic struct {
	Severity   string `json:"severity"`
	Code       string `json:"code"`
	Message    string `json:"message"`
	Hint       string `json:"hint"`
	Path       string `json:"path"`
	ErrorClass string `json:"errorClass"`
}

// cmAnswer is codemode.run's answer.
type cmAnswer struct {
	Logs        []vm.LogEntry   `json:"logs"`
	Result      json.RawMessage `json:"result"`
	Diagnostics []diagnostic    `json:"diagnostics"`
	ToolTrace   []struct {
		ServerID   string `json:"serverId"`
		ToolName   string `json:"toolName"`
		DurationMs int64  `json:"durationMs"`
		OK         bool   `json:"ok"`
		Error      string `json:"error"`
	} `json:"toolTrace"`
	RunID string `json:"runId"`
}

// run calls codemode.run and reads its answer as a response, failing the
// test on anything that breaks the answer's contract: a JSON-RPC error,
// isError, a shape other than {logs, result, diagnostics, toolTrace,
// runId}, a diagnostic without severity, code or message, a result other
// than null beside an error.
func (h *host) run(t *testing.T, args map[string]any) *response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = runTool
	req.Params.Arguments = args
	start := time.Now()
	res, err := h.c.CallTool(ctx, req)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("%s answered with a JSON-RPC error (never allowed): %v", runTool, err)
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			texts = append(texts, tc.Text)
		}
	}
	if len(texts) != 1 {
		t.Fatalf("want exactly one text block, got %d: %+v", len(texts), res.Content)
	}
	raw := texts[0]
	if res.IsError {
		t.Errorf("%s answered with isError; a failed script is not a failed call: %s", runTool, clip(raw))
	}
	var fields map[string]any
	if err := json.Unmarshal([]byte(raw), &fields); err != nil {
		t.Fatalf("text block is not a JSON object: %v\n%s", err, clip(raw))
	}
	if res.StructuredContent == nil {
		t.Fatalf("no structuredContent; text: %s", clip(raw))
	}
	sb, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatalf("structuredContent does not encode: %v", err)
	}
	var structured any
	if err := json.Unmarshal(sb, &structured); err != nil {
		t.Fatalf("structuredContent does not decode: %v", err)
	}
	if !reflect.DeepEqual(structured, any(fields)) {
		t.Errorf("structuredContent and the text block differ:\nstructured: %s\ntext:       %s", clip(string(sb)), clip(raw))
	}
	for _, f := range []string{"logs", "result", "diagnostics", "toolTrace", "runId"} {
		if _, ok := fields[f]; !ok {
			t.Errorf("no %s in %s", f, clip(raw))
		}
	}
	if len(fields) != 5 {
		t.Errorf("the answer has fields beyond {logs, result, diagnostics, toolTrace, runId}: %s", clip(raw))
	}
	var a cmAnswer
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		t.Fatalf("the answer does not decode: %v\n%s", err, clip(raw))
	}
	for _, d := range a.Diagnostics {
		if !slices.Contains([]string{"error", "warning", "info"}, d.Severity) || d.Code == "" || d.Message == "" {
			t.Errorf("malformed diagnostic %+v", d)
		}
	}
	if a.RunID == "" {
		t.Errorf("no runId in %s", clip(raw))
	}
	r := readCodeMode(&a, elapsed)
	r.raw, r.fields = raw, fields
	if r.Status != vm.StatusOK && strings.TrimSpace(string(a.Result)) != "null" {
		t.Errorf("result %s beside an error diagnostic; it must be null", clip(string(a.Result)))
	}
	return r
}

// codeGenerationText is in the message of every refusal of code from a
// string at run time: the only illegal access whose kind an answer shows.
const codeGenerationText = "plans cannot create code at run time"

// limitKeys maps the keys SANDBOX_LIMIT diagnostics name back to the
// runtime's limits.
var limitKeys = map[string]string{"maxMemoryBytes": vm.LimitMemory}

// readCodeMode reads a codemode.run answer as a codecall.execute response:
// the first error diagnostic gives the status and the error, warnings the
// warnings, the trace the trace; durationMs is the round trip's, since the
// answer has none.
func readCodeMode(a *cmAnswer, elapsed time.Duration) *response {
	r := &response{codeMode: true, Status: vm.StatusOK, Result: a.Result, Logs: a.Logs, RunID: a.RunID, diagnostics: a.Diagnostics}
	r.ToolTrace = []vm.TraceEntry{}
	for _, e := range a.ToolTrace {
		r.ToolTrace = append(r.ToolTrace, vm.TraceEntry{ToolName: e.ToolName, DurationMs: float64(e.DurationMs), OK: e.OK, Error: e.Error})
	}
	r.Metrics = vm.Metrics{DurationMs: float64(elapsed) / float64(time.Millisecond), ToolCalls: len(a.ToolTrace)}
	var first *diagnostic
	for i, d := range a.Diagnostics {
		switch d.Severity {
		case "error":
			if first == nil {
				first = &a.Diagnostics[i]
			}
		case "warning":
			r.Warnings = append(r.Warnings, vm.Warning{Type: strings.ToLower(d.Code), Message: d.Message})
		}
	}
	if first == nil {
		return r
	}
	d := *first
	e := &vm.ErrorInfo{Message: d.Message, Hint: d.Hint}
	r.Error = e
	if rest, ok := strings.CutPrefix(d.Path, "script.js:"); ok {
		if l, c, ok := strings.Cut(rest, ":"); ok {
			line, _ := strconv.Atoi(l)
			col, _ := strconv.Atoi(c)
			e.Location = &vm.Location{Line: line, Column: col}
		}
	}
	switch d.Code {
	case "SYNTAX_ERROR":
		r.Status = vm.StatusSyntaxError
	case "IMPORT_FAILURE":
		r.Status, e.Kind = vm.StatusIllegalAccess, string(ast.KindImport)
	case "ILLEGAL_ACCESS":
		r.Status = vm.StatusIllegalAccess
		if strings.Contains(d.Message, codeGenerationText) {
			e.Kind = vm.KindCodeGeneration
		}
	case "SANDBOX_LIMIT":
		key, _, _ := strings.Cut(d.Message, ": ")
		if key == "timeoutMs" {
			r.Status = vm.StatusTimeout
			break
		}
		r.Status, e.Limit = vm.StatusLimitExceeded, key
		if l, ok := limitKeys[key]; ok {
			e.Limit = l
		}
	case "UNCAUGHT_EXCEPTION":
		if isToolClass(d.ErrorClass) {
			r.Status, e.Source, e.Name = vm.StatusToolError, "tool", d.ErrorClass
			if rest, ok := strings.CutPrefix(d.Message, "uncaught "+d.ErrorClass+" from "); ok {
				// "uncaught ToolCallError from test.fail: EXECUTION: ..."
				tool, rest, _ := strings.Cut(rest, ": ")
				code, _, _ := strings.Cut(rest, ": ")
				e.ToolName, e.Code = tool, code
			} else if _, rest, ok := strings.Cut(d.Message, missingExport); ok {
				// The shim's ToolNotFoundError.
				e.ToolName = rest[:max(strings.LastIndexByte(rest, '"'), 0)]
			}
			break
		}
		r.Status, e.Source = vm.StatusRuntimeError, "script"
		if name, _, ok := strings.Cut(d.Message, ": "); ok && !strings.ContainsAny(name, " \t\n") {
			e.Name = name
		}
	case "INTERNAL_ERROR":
		r.Status, e.Source, e.Name = vm.StatusRuntimeError, "script", "InternalError"
	default:
		r.Status = vm.Status(strings.ToLower(d.Code))
	}
	return r
}

func isToolClass(class string) bool {
	switch class {
	case "SchemaValidationError", "ToolNotFoundError", "ServerNotFoundError", "ToolCallError", "AuthenticationError":
		return true
	}
	return false
}

// trivialModule is Code Mode's trivial plan: it imports the test module
// and sets 2 as its result, calling no tool.
const trivialModule = `import * as t from "` + testModule + `"; globalThis.__codemode_result__ = 1 + 1;`

// followUpModule runs trivialModule, which must come to 2 without an
// error diagnostic (or to c.trivial).
func (h *host) followUpModule(t *testing.T, c attackCase, when string) {
	t.Helper()
	r := h.run(t, map[string]any{"code": trivialModule})
	if c.trivial != nil {
		if r.Status != c.trivial.status {
			t.Fatalf("%s: the trivial module did not come to %s: %s", when, c.trivial.status, clip(r.raw))
		}
		return
	}
	if r.Status != vm.StatusOK || strings.TrimSpace(string(r.Result)) != "2" {
		t.Fatalf("%s: the trivial module did not set 2 as its result: %s", when, clip(r.raw))
	}
}

// hasDiagnostic reports whether the answer has a diagnostic with this code
// whose message contains s.
func hasDiagnostic(r *response, code, s string) bool {
	for _, d := range r.diagnostics {
		if d.Code == code && strings.Contains(d.Message, s) {
			return true
		}
	}
	return false
}

// TestCodeModeTables checks the Code Mode tables: every entry names a case
// of the suite, no case is both skipped and overridden, and every case
// asModule cannot send is skipped with a reason.
func TestCodeModeTables(t *testing.T) {
	ids := map[string]attackCase{}
	for _, c := range allCases() {
		ids[c.id()] = c
	}
	for id, why := range codeModeSkips {
		c, ok := ids[id]
		switch {
		case !ok:
			t.Errorf("codeModeSkips lists %s, which is no case", id)
		case c.module:
			t.Errorf("codeModeSkips lists the Code Mode case %s", id)
		case why == "":
			t.Errorf("codeModeSkips gives no reason for %s", id)
		}
		if _, ok := codeModeOverrides[id]; ok {
			t.Errorf("%s is both skipped and overridden", id)
		}
	}
	for id := range codeModeOverrides {
		if c, ok := ids[id]; !ok || c.module {
			t.Errorf("codeModeOverrides lists %s, which is no codecall.execute case", id)
		}
	}
	skipped := 0
	for _, c := range allCases() {
		if c.module {
			continue
		}
		if _, ok := codeModeSkips[c.id()]; ok {
			skipped++
			continue
		}
		if c.args != nil || c.context != nil || c.allowed != nil {
			t.Errorf("%s sends codecall.execute's own arguments and is not in codeModeSkips", c.id())
		}
	}
	t.Logf("%d cases skipped in Code Mode", skipped)
}
