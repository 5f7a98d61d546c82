package attacks

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/internal/proccpu"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

const (
	// executeTool is the meta-tool under attack.
	executeTool = "codecall.execute"
	// marker is what a payload returns, logs or sends to a tool when the
	// wall it attacks gave way. Scripts never spell it in one piece outside
	// the payload (they write 'PW'+'NED' inside code that must not run), so
	// it can only appear in a response if forbidden code ran.
	marker = "PWNED"
	// envChildCase names the case a child process runs (see runIsolated).
	envChildCase = "CODECALLTEST_ATTACK_CASE"
	// envChildMode names the isolation the child process runs it under.
	envChildMode = "CODECALLTEST_ATTACK_MODE"
	// envChildSurface names the meta-tool the child process sends it to.
	envChildSurface = "CODECALLTEST_ATTACK_SURFACE"

	// callTimeout bounds one codecall.execute round trip from the client.
	callTimeout = 60 * time.Second
	// settleTimeout bounds the wait for goroutines and heap to come back.
	settleTimeout = 10 * time.Second
	// goroutineSlack is how many goroutines above the baseline are
	// tolerated after a case (timers and the runtime's own helpers).
	goroutineSlack = 2
	// heapSlack is how far above the baseline the live heap may stay after
	// a memory bomb and a GC.
	heapSlack = 64 << 20
	// defaultTimeout replaces every preset's run timeout unless a case sets
	// its own: cases that must finish do so far sooner (even under the race
	// detector on a loaded machine), and a case that hangs by mistake costs
	// five seconds instead of ten.
	defaultTimeout = 5 * time.Second
	// raceCompleteTimeout is the run timeout, under the race detector, of
	// the cases that must complete (see config).
	raceCompleteTimeout = 30 * time.Second
	// shortTimeout is the run timeout of cases that are expected to end by
	// the deadline (infinite loops, stalls).
	shortTimeout = 500 * time.Millisecond
)

// category groups the cases by the wall they attack.
type category string

const (
	catConstructor category = "constructor-chain"
	catPollution   category = "prototype-pollution"
	catGlobals     category = "global-tampering"
	catCoercion    category = "coercion"
	catProxy       category = "proxy"
	catJSON        category = "json-reviver"
	catLoops       category = "infinite-loops"
	catMemory      category = "memory-bombs"
	catDeep        category = "deep-nesting"
	catRegex       category = "redos"
	catOutput      category = "output-floods"
	catToolFlood   category = "tool-call-floods"
	catUnicode     category = "unicode"
	catSanity      category = "sanity"
	catWeb         category = "web-globals"
	catTimers      category = "timers"

	// The Code Mode surface's own (codemode_cases_test.go).
	catCMImports    category = "codemode-imports"
	catCMNamespaces category = "codemode-namespaces"
	catCMResult     category = "codemode-result"
	catCMTimers     category = "codemode-timers"
	catCMReflection category = "codemode-reflection"
	catCMPollution  category = "codemode-pollution"
)

// minCases is the least number of cases each category must have.
var minCases = map[category]int{
	catConstructor: 25, catPollution: 20, catGlobals: 10, catCoercion: 15, catProxy: 8,
	catJSON: 6, catLoops: 12, catMemory: 12, catDeep: 8, catRegex: 6, catOutput: 8,
	catToolFlood: 6, catUnicode: 10, catSanity: 5, catWeb: 20, catTimers: 10,
	catCMImports: 30, catCMNamespaces: 20, catCMResult: 15, catCMTimers: 8, catCMReflection: 15, catCMPollution: 6,
}

// minTotal is the least number of cases of the whole suite.
const minTotal = 150

// want is the exact outcome a case expects. Empty fields are not checked,
// except that error must be absent when status is ok.
type want struct {
	status vm.Status
	kind   string // error.kind
	limit  string // error.limit
	code   string // error.code
	name   string // error.name
	tool   string // error.toolName
	result string // the result as JSON, compared by value
}

// attackCase is one hostile (or, for sanity, legitimate) plan.
type attackCase struct {
	name string
	cat  category
	// preset is the preset under test; empty means secure, the default.
	preset presets.Name
	script string
	// allowed is sent as allowedTools when not nil.
	allowed []string
	// context is sent as context when not nil.
	context map[string]any
	// args, when set, is the whole argument object instead of
	// script/allowedTools/context (for a Code Mode case, instead of
	// {code: script}).
	args map[string]any
	// limits adjusts the preset's limits after the harness's own defaults.
	limits func(*presets.Limits)
	want   want
	// orWant, when set, is a second outcome as good as want: for a plan
	// that reaches two walls at about the same moment (a growing heap and
	// the deadline), which one answers first depends on the machine's
	// load, and either contains it. Its status must differ from want's.
	orWant want
	// check runs after the outcome matched.
	check func(t *testing.T, h *host, r *response)
	// bypass cases attack the gate: test.count must not have run either.
	bypass bool
	// isolate runs the case in a child process, so a case that kills its
	// process fails alone instead of taking the suite with it.
	isolate bool
	// trivial, when set, is what the harness's trivial plan (`return 1+1`,
	// run before and after the case) must come to instead of ok 2: for a
	// configuration that refuses every plan.
	trivial *want
	// module marks a Code Mode case: script is an ES module, sent as it is
	// to codemode.run only, and want is its outcome there (see
	// codemode_test.go for how an answer reads as a response).
	module bool
}

func (c attackCase) id() string { return string(c.cat) + "/" + c.name }

// surface is the meta-tool the case is sent to.
func (c attackCase) surface() surface {
	if c.module {
		return viaCodeMode
	}
	return viaExecute
}

func (c attackCase) presetName() presets.Name {
	if c.preset == "" {
		return presets.Secure
	}
	return c.preset
}

func (c attackCase) arguments() map[string]any {
	if c.args != nil {
		return c.args
	}
	a := map[string]any{"script": c.script}
	if c.allowed != nil {
		a["allowedTools"] = c.allowed
	}
	if c.context != nil {
		a["context"] = c.context
	}
	return a
}

// response is codecall.execute's answer as the client saw it.
// Its fields mirror vm.Result, the contract of the JSON.
type response struct {
	Status    vm.Status       `json:"status"`
	Result    json.RawMessage `json:"result"`
	Error     *vm.ErrorInfo   `json:"error"`
	Logs      []vm.LogEntry   `json:"logs"`
	ToolTrace []vm.TraceEntry `json:"toolTrace"`
	Metrics   vm.Metrics      `json:"metrics"`
	Warnings  []vm.Warning    `json:"warnings"`
	RunID     string          `json:"runId"`

	raw     string         // the text block
	isError bool           // the tool result's isError
	fields  map[string]any // the text block decoded generically

	// codeMode marks a codemode.run answer read as a response (see
	// readCodeMode): its diagnostics carry no error kind but an import
	// failure's.
	codeMode bool
	// diagnostics are a codemode.run answer's.
	diagnostics []diagnostic
	// cpu is the CPU time this process spent while the request ran (see
	// prompt): in process, the plan's work and the server's.
	cpu time.Duration
}

// host is one wrapped server with its client.
type host struct {
	t   *testing.T
	srv *server.MCPServer
	cc  *middleware.CodeCall
	c   *client.Client

	poolSize int // of the worker pool, in process mode

	countCalls  atomic.Int64
	secretCalls atomic.Int64
	vaultCalls  atomic.Int64 // vault.open, excluded like test.secret
	chargeCalls atomic.Int64 // test.charge, which needs an approval nobody gives
	echoCalls   atomic.Int64
	sleepers    atomic.Int64
	maxSleepers atomic.Int64 // most test.sleep handlers running at once

	mu         sync.Mutex
	toolInputs []string // the raw JSON arguments of every test tool call
	notes      mcptest.Notifications
}

func readOnly() []mcp.ToolOption {
	return []mcp.ToolOption{
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false),
	}
}

// deepJSON is n nested empty arrays.
func deepJSON(n int) string {
	return strings.Repeat("[", n) + strings.Repeat("]", n)
}

// addTools registers the test tools on srv.
func (h *host) addTools(srv *server.MCPServer) {
	tool := func(name, desc string, opts ...mcp.ToolOption) mcp.Tool {
		o := append([]mcp.ToolOption{mcp.WithDescription(desc)}, readOnly()...)
		return mcp.NewTool(name, append(o, opts...)...)
	}
	record := func(req mcp.CallToolRequest) map[string]any {
		args := req.GetArguments()
		b, _ := json.Marshal(req.Params.Arguments)
		h.mu.Lock()
		h.toolInputs = append(h.toolInputs, string(b))
		h.mu.Unlock()
		return args
	}
	num := func(args map[string]any, key string, def float64) float64 {
		if v, ok := args[key].(float64); ok {
			return v
		}
		return def
	}

	srv.AddTool(tool("test.echo", "Return the input unchanged as structured content."),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			h.echoCalls.Add(1)
			args := record(req)
			if args == nil {
				args = map[string]any{}
			}
			b, _ := json.Marshal(args)
			return mcp.NewToolResultStructured(args, string(b)), nil
		})
	srv.AddTool(tool("test.sleep", "Sleep for ms milliseconds, or until the call is cancelled.", mcp.WithNumber("ms", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := record(req)
			n := h.sleepers.Add(1)
			defer h.sleepers.Add(-1)
			for m := h.maxSleepers.Load(); n > m && !h.maxSleepers.CompareAndSwap(m, n); m = h.maxSleepers.Load() {
			}
			ms := num(args, "ms", 0)
			select {
			case <-time.After(time.Duration(ms * float64(time.Millisecond))):
				out := map[string]any{"slept": ms}
				return mcp.NewToolResultStructured(out, fmt.Sprintf(`{"slept":%v}`, ms)), nil
			case <-ctx.Done():
				return mcp.NewToolResultError("test.sleep: cancelled: " + ctx.Err().Error()), nil
			}
		})
	srv.AddTool(tool("test.fail", "Always fail with a tool error.", mcp.WithString("reason")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := record(req)
			reason, _ := args["reason"].(string)
			return mcp.NewToolResultError("test.fail: " + reason), nil
		})
	srv.AddTool(tool("test.big", "Return about kb KiB of JSON (default 512).", mcp.WithNumber("kb")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := record(req)
			kb := int(num(args, "kb", 512))
			item := strings.Repeat("b", 1000)
			items := make([]string, kb)
			for i := range items {
				items[i] = item
			}
			out := map[string]any{"items": items}
			b, _ := json.Marshal(out)
			return mcp.NewToolResultStructured(out, string(b)), nil
		})
	srv.AddTool(tool("test.deep", "Return depth nested JSON arrays as text (default 100000).", mcp.WithNumber("depth")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := record(req)
			return mcp.NewToolResultText(deepJSON(int(num(args, "depth", 100000)))), nil
		})
	srv.AddTool(tool("test.json", "Return text as a single text block.", mcp.WithString("text", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := record(req)
			text, _ := args["text"].(string)
			return mcp.NewToolResultText(text), nil
		})
	srv.AddTool(tool("test.count", "Count calls."),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			record(req)
			n := h.countCalls.Add(1)
			return mcp.NewToolResultStructured(map[string]any{"count": n}, fmt.Sprintf(`{"count":%d}`, n)), nil
		})
	srv.AddTool(tool("test.secret", "Excluded by the configuration: must never run."),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			record(req)
			h.secretCalls.Add(1)
			return mcp.NewToolResultStructured(map[string]any{"secret": "s3cr3t"}, `{"secret":"s3cr3t"}`), nil
		})
	// The only tool of app vault, excluded: Code Mode has no module for it.
	srv.AddTool(tool("vault.open", "Excluded by the configuration, with its whole app: must never run."),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			record(req)
			h.vaultCalls.Add(1)
			return mcp.NewToolResultText("opened"), nil
		})
	// Offered, but every call needs a person's approval, which no client
	// of the suite gives.
	srv.AddTool(catalog.SetMeta(tool("test.charge", "Needs approval: must never run without it."), catalog.Meta{RequiresApproval: catalog.Bool(true)}),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			record(req)
			h.chargeCalls.Add(1)
			return mcp.NewToolResultText("charged"), nil
		})
}

// modes are the isolations every case runs under: each wall must hold in
// the server's process and in a sandboxed worker process alike.
var modes = []presets.Isolation{presets.IsolationInProcess, presets.IsolationProcess}

// config is the configuration a case runs under: the preset's limits with
// the mode's isolation, the harness's default timeout, and the case's own
// adjustments.
func config(c attackCase, mode presets.Isolation, via surface) presets.Config {
	cfg := presets.Default()
	cfg.Preset = c.presetName()
	limits, ok := presets.LimitsFor(cfg.Preset)
	if !ok {
		panic("unknown preset " + string(cfg.Preset))
	}
	cfg.VM = limits
	cfg.VM.Isolation = mode
	cfg.Sandbox.Command = workerCommand
	cfg.VM.Timeout = defaultTimeout
	cfg.Exclude = []string{"test.secret", "vault.open"}
	if via == viaCodeMode {
		cfg.Surfaces = []presets.Surface{presets.SurfaceCodeCall, presets.SurfaceCodeMode}
	}
	if c.limits != nil {
		c.limits(&cfg.VM)
	}
	if raceEnabled && c.want.status != vm.StatusTimeout && c.orWant.status != vm.StatusTimeout && cfg.VM.Timeout < raceCompleteTimeout {
		// A case that must end at another wall than the clock (its
		// result, a memory or element cap) proves that wall; the race
		// detector slows the built-ins tenfold, and a loaded machine
		// more, so the clock must not come first. The answer's cause
		// stays the assertion: a quadratic search or an unbounded
		// allocation would still run past this deadline by hours.
		cfg.VM.Timeout = raceCompleteTimeout
	}
	return cfg
}

// newHost builds the server, wraps it and connects a client. It skips the
// test when the server has no codecall.execute yet.
func newHost(t *testing.T, cfg presets.Config) *host {
	t.Helper()
	h := &host{t: t, poolSize: cfg.Sandbox.PoolSize}
	h.srv = server.NewMCPServer("attack", "1.0.0", server.WithToolCapabilities(true), server.WithInputSchemaValidation())
	h.addTools(h.srv)
	cc, err := middleware.Wrap(h.srv, middleware.WithConfig(cfg), middleware.WithLogger(quietLogger))
	if err != nil {
		if cfg.VM.Isolation == presets.IsolationProcess && strings.Contains(err.Error(), "cannot start one") {
			t.Skipf("sandboxed worker processes are not available on this host: %v", err)
		}
		t.Fatalf("Wrap: %v", err)
	}
	if cfg.VM.Isolation == presets.IsolationProcess {
		if iso := cc.Isolation(); iso.Effective != presets.IsolationProcess {
			t.Skipf("sandboxed worker processes are not available on this host: %s", iso.Fallback)
		}
	}
	h.cc = cc
	t.Cleanup(func() { _ = cc.Close() })

	h.c = mcptest.Connect(t, h.srv, mcptest.Modern(), mcptest.Record(&h.notes))
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	list, err := h.c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	if !slices.ContainsFunc(list.Tools, func(tl mcp.Tool) bool { return tl.Name == executeTool }) {
		t.Skipf("%s is not registered by middleware.Wrap yet; nothing to attack", executeTool)
	}
	if slices.Contains(cfg.Surfaces, presets.SurfaceCodeMode) && !slices.ContainsFunc(list.Tools, func(tl mcp.Tool) bool { return tl.Name == runTool }) {
		t.Fatalf("the Code Mode surface is on and %s is not listed", runTool)
	}
	return h
}

// execute calls codecall.execute and decodes its answer, failing the test
// on anything that breaks the result contract itself.
func (h *host) execute(t *testing.T, args map[string]any) *response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = executeTool
	req.Params.Arguments = args
	res, err := h.c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("codecall.execute answered with a JSON-RPC error (never allowed): %v", err)
	}
	r := &response{isError: res.IsError}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			texts = append(texts, tc.Text)
		}
	}
	if len(texts) != 1 {
		t.Fatalf("want exactly one text block, got %d: %+v", len(texts), res.Content)
	}
	r.raw = texts[0]
	if err := json.Unmarshal([]byte(r.raw), r); err != nil {
		t.Fatalf("text block is not the result JSON: %v\n%s", err, clip(r.raw))
	}
	if err := json.Unmarshal([]byte(r.raw), &r.fields); err != nil {
		t.Fatalf("text block is not a JSON object: %v\n%s", err, clip(r.raw))
	}
	if res.StructuredContent == nil {
		t.Fatalf("no structuredContent; text: %s", clip(r.raw))
	}
	sb, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatalf("structuredContent does not encode: %v", err)
	}
	var structured any
	if err := json.Unmarshal(sb, &structured); err != nil {
		t.Fatalf("structuredContent does not decode: %v", err)
	}
	if !reflect.DeepEqual(structured, any(r.fields)) {
		t.Errorf("structuredContent and the text block differ:\nstructured: %s\ntext:       %s", clip(string(sb)), clip(r.raw))
	}
	if r.isError != (r.Status != vm.StatusOK) {
		t.Errorf("isError = %v with status %q", r.isError, r.Status)
	}
	if _, ok := r.fields["toolTrace"]; !ok {
		t.Errorf("no toolTrace in %s", clip(r.raw))
	}
	if _, ok := r.fields["metrics"]; !ok {
		t.Errorf("no metrics in %s", clip(r.raw))
	}
	if r.RunID == "" {
		t.Errorf("no runId in %s", clip(r.raw))
	}
	return r
}

// quietLogger keeps the pools' start-up lines out of the test output.
var quietLogger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))

// clip shortens s for a failure message.
func clip(s string) string {
	const max = 1500
	if len(s) <= max {
		return s
	}
	return s[:max] + fmt.Sprintf("... (%d bytes in all)", len(s))
}

// checkWant compares a response with what the case expects.
func checkWant(t *testing.T, w want, r *response) {
	t.Helper()
	if r.Status != w.status {
		t.Errorf("status = %q, want %q\nresponse: %s", r.Status, w.status, clip(r.raw))
		return
	}
	e := r.Error
	if w.status == vm.StatusOK {
		if e != nil {
			t.Errorf("status ok with an error: %s", clip(r.raw))
		}
		if w.result != "" {
			checkJSON(t, "result", r.Result, w.result)
		}
		return
	}
	if e == nil {
		t.Errorf("status %q without an error object: %s", r.Status, clip(r.raw))
		return
	}
	if e.Message == "" {
		t.Errorf("error without a message: %s", clip(r.raw))
	}
	for _, f := range []struct{ field, got, want string }{
		{"kind", e.Kind, w.kind}, {"limit", e.Limit, w.limit}, {"code", e.Code, w.code},
		{"name", e.Name, w.name}, {"toolName", e.ToolName, w.tool},
	} {
		if f.want != "" && f.got != f.want {
			t.Errorf("error.%s = %q, want %q\nresponse: %s", f.field, f.got, f.want, clip(r.raw))
		}
	}
	switch w.status {
	case vm.StatusRuntimeError:
		if e.Source != "script" {
			t.Errorf("runtime_error with source %q, want \"script\"", e.Source)
		}
	case vm.StatusToolError:
		if e.Source != "tool" || e.ToolName == "" {
			t.Errorf("tool_error with source %q and toolName %q", e.Source, e.ToolName)
		}
	case vm.StatusIllegalAccess:
		if e.Kind == "" && !r.codeMode {
			t.Errorf("illegal_access without a kind: %s", clip(r.raw))
		}
	case vm.StatusLimitExceeded:
		if e.Limit == "" {
			t.Errorf("limit_exceeded without a limit: %s", clip(r.raw))
		}
	}
}

// checkJSON compares got with the JSON text want by value.
func checkJSON(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("%s is not JSON: %v: %s", what, err, clip(string(got)))
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expected %s %q: %v", what, want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s = %s, want %s", what, clip(string(got)), want)
	}
}

// resultOf decodes an ok result.
func resultOf(t *testing.T, r *response) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(r.Result, &v); err != nil {
		t.Fatalf("result is not JSON: %v: %s", err, clip(string(r.Result)))
	}
	return v
}

// hasWarning reports whether the response carries a warning whose type or
// message contains s.
func hasWarning(r *response, s string) bool {
	for _, w := range r.Warnings {
		if strings.Contains(w.Type, s) || strings.Contains(w.Message, s) {
			return true
		}
	}
	return false
}

// inputs returns the raw arguments every test tool received so far.
func (h *host) inputs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.toolInputs)
}

// notificationCount returns how many notifications of a method prefix
// the client received.
func (h *host) notificationCount(prefix string) int {
	n := 0
	for _, x := range h.notes.All() {
		if strings.HasPrefix(x.Method, prefix) {
			n++
		}
	}
	return n
}

func (h *host) notificationText() string {
	b, _ := json.Marshal(h.notes.All())
	return string(b)
}

// runCases runs every case of a table as a subtest: the plans through
// codecall.execute once per mode, then every case through codemode.run
// once per mode, under "codemode" (a plan turned into a module by
// asModule, a Code Mode case as it is), so that
// `go test ./attacks -run 'Test.*/codemode'` runs the Code Mode surface
// alone.
func runCases(t *testing.T, cases []attackCase) {
	var plans []attackCase
	for _, c := range cases {
		if !c.module {
			plans = append(plans, c)
		}
	}
	if len(plans) > 0 {
		for _, mode := range modes {
			t.Run(string(mode), func(t *testing.T) { runTable(t, plans, mode, viaExecute) })
		}
	}
	t.Run(string(viaCodeMode), func(t *testing.T) {
		for _, mode := range modes {
			table := cases
			if os.Getenv(envAttacksFull) == "" {
				// The plans' Code Mode versions attack the walls the plans
				// attack through codecall.execute, a second time; they run
				// with CODECALLTEST_ATTACKS_FULL=1 (.ci/run sets it), which
				// keeps the README's test command within its time. The
				// cases written as modules always run.
				table = nativeModules(cases)
			}
			t.Run(string(mode), func(t *testing.T) { runTable(t, table, mode, viaCodeMode) })
		}
	})
}

// envAttacksFull runs every plan's Code Mode version too, in both
// isolation modes; without it, only the cases written as modules run
// through codemode.run.
const envAttacksFull = "CODECALLTEST_ATTACKS_FULL"

// nativeModules are the cases written as Code Mode modules.
func nativeModules(cases []attackCase) []attackCase {
	var out []attackCase
	for _, c := range cases {
		if c.module {
			out = append(out, c)
		}
	}
	return out
}

// runTable runs the cases of a table through one surface in one mode.
func runTable(t *testing.T, cases []attackCase, mode presets.Isolation, via surface) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c, skip := forSurface(c, via)
			if skip != "" {
				t.Skip(skip)
			}
			if c.isolate && raceEnabled && mode == presets.IsolationProcess && os.Getenv(envAttacksFull) == "" {
				// The isolated cases are bombs: interpreter work in a worker
				// built without the race detector, whose wall is the vm's,
				// which the in-process run checks under the detector. The
				// run without it (.ci/run) takes them in both modes.
				t.Skip("a bomb in a worker process: under the race detector it runs in process only; CODECALLTEST_ATTACKS_FULL=1 runs it here too")
			}
			if c.isolate && os.Getenv(envChildCase) == "" {
				// Child processes share nothing with this one, so they
				// may run side by side (after the table's in-process
				// cases, whose goroutine and heap checks need quiet).
				t.Parallel()
				runIsolated(t, c, mode, via)
				return
			}
			runCase(t, c, mode)
		})
	}
}

// forSurface returns the case as it runs through via, or why it does not
// run there.
func forSurface(c attackCase, via surface) (attackCase, string) {
	if via == viaCodeMode && !c.module {
		return asModule(c)
	}
	return c, ""
}

// runCase runs one case in this process and checks that the host is
// unharmed afterwards. A Code Mode case (module) is sent to codemode.run,
// any other to codecall.execute.
func runCase(t *testing.T, c attackCase, mode presets.Isolation) {
	via := c.surface()
	h := newHost(t, config(c, mode, via))

	// Warm up, so lazily started goroutines and caches count in the
	// baseline.
	h.followUp(t, c, "warm-up")
	h.settlePool(t)
	baseG := runtime.NumGoroutine()
	var baseHeap uint64
	if c.cat == catMemory {
		baseHeap = liveHeap()
	}
	count0 := h.countCalls.Load()
	inputs0 := len(h.inputs())

	var r *response
	cpu0 := proccpu.Used()
	if c.module {
		args := c.args
		if args == nil {
			args = map[string]any{"code": c.script}
		}
		r = h.run(t, args)
	} else {
		r = h.execute(t, c.arguments())
	}
	r.cpu = proccpu.Used() - cpu0
	if c.orWant.status != "" && r.Status == c.orWant.status {
		checkWant(t, c.orWant, r)
	} else {
		checkWant(t, c.want, r)
	}
	if r.Status == vm.StatusTimeout {
		checkPromptTimeout(t, config(c, mode, via).VM.Timeout, r)
	}
	if strings.Contains(r.raw, marker) {
		t.Errorf("the marker %q is in the response: a payload ran\n%s", marker, clip(r.raw))
	}
	for _, in := range h.inputs()[inputs0:] {
		if strings.Contains(in, marker) {
			t.Errorf("a tool received the marker %q: a payload ran: %s", marker, clip(in))
		}
	}
	if strings.Contains(h.notificationText(), marker) {
		t.Errorf("a notification carries the marker %q: a payload ran", marker)
	}
	if n := h.secretCalls.Load(); n != 0 {
		t.Errorf("the excluded tool test.secret ran %d times", n)
	}
	if n := h.vaultCalls.Load(); n != 0 {
		t.Errorf("the excluded tool vault.open ran %d times", n)
	}
	if n := h.chargeCalls.Load(); n != 0 {
		t.Errorf("test.charge ran %d times without an approval", n)
	}
	if c.bypass {
		if n := h.countCalls.Load() - count0; n != 0 {
			t.Errorf("test.count ran %d times; the refused call must never reach the handler", n)
		}
	}
	if c.check != nil && !t.Failed() {
		c.check(t, h, r)
	}

	// The host is unharmed: it answers, its goroutines wind down, and a
	// memory bomb leaves no live heap behind.
	h.followUp(t, c, "after the case")
	h.settlePool(t)
	waitFor(t, "goroutines back to the baseline", func() (bool, string) {
		n := runtime.NumGoroutine()
		return n <= baseG+goroutineSlack, fmt.Sprintf("%d goroutines, baseline %d", n, baseG)
	}, func() string {
		buf := make([]byte, 1<<20)
		return string(buf[:runtime.Stack(buf, true)])
	})
	waitFor(t, "no test.sleep handler still running", func() (bool, string) {
		n := h.sleepers.Load()
		return n == 0, fmt.Sprintf("%d running", n)
	}, nil)
	if c.cat == catMemory {
		waitFor(t, "live heap back near the baseline", func() (bool, string) {
			n := liveHeap()
			return n <= baseHeap+heapSlack, fmt.Sprintf("live heap %d MiB, baseline %d MiB", n>>20, baseHeap>>20)
		}, nil)
	}
}

// settlePool waits until the worker pool, in process mode, is back to its
// size: every worker of the case was reaped and replaced, but for the one
// its session's last clean run left parked for the session's next run.
func (h *host) settlePool(t *testing.T) {
	t.Helper()
	waitFor(t, "the worker pool back to its size", func() (bool, string) {
		iso := h.cc.Isolation()
		if iso.Pool == nil {
			return true, ""
		}
		return iso.Pool.Warm == h.poolSize && iso.Pool.Live == h.poolSize+iso.Pool.Parked && iso.Pool.Parked <= 1,
			fmt.Sprintf("%+v, size %d", *iso.Pool, h.poolSize)
	}, nil)
}

// checkPromptTimeout checks that a run that timed out ended soon after its
// deadline: a plan must not outlive its limits, and a native built-in that
// ignores goja's interrupt would let it.
func checkPromptTimeout(t *testing.T, timeout time.Duration, r *response) {
	t.Helper()
	slack := 2 * time.Second
	if raceEnabled {
		// The race detector slows goja's native steps tenfold and a loaded
		// machine more: there the status is the assertion, and a wide
		// slack only catches a step that ignores the deadline outright.
		// The suite's run without the race detector (.ci/run runs it in
		// full) holds every case to the narrow slack.
		slack = 15 * time.Second
	}
	// Something that ignored the deadline took both the time and the
	// CPU; a run that waited for a core on a loaded machine only the time.
	// In process isolation the CPU is the worker's, not counted here: the
	// server kills a worker a second past its deadline, which bounds it.
	if got := time.Duration(r.Metrics.DurationMs * float64(time.Millisecond)); got > timeout+slack && (r.cpu > timeout+slack || r.cpu == 0) {
		t.Errorf("the run timed out after %v (%v of CPU time), more than %v past its %v deadline: something it ran ignored the deadline", got, r.cpu, slack, timeout)
	}
}

// followUp runs a trivial plan that must succeed (or come to c.trivial);
// for a Code Mode case, a trivial module too (first, so that a server
// that stopped serving Code Mode fails the case by that).
func (h *host) followUp(t *testing.T, c attackCase, when string) {
	t.Helper()
	if c.module {
		h.followUpModule(t, c, when)
		if c.trivial != nil {
			// A configuration that refuses every plan: the module's
			// refusal was checked.
			return
		}
	}
	r := h.execute(t, map[string]any{"script": "return 1+1"})
	if c.trivial != nil {
		if r.Status != c.trivial.status || r.Error == nil || r.Error.Kind != c.trivial.kind {
			t.Fatalf("%s: the trivial plan `return 1+1` did not come to %s/%s: %s", when, c.trivial.status, c.trivial.kind, clip(r.raw))
		}
		return
	}
	if r.Status != vm.StatusOK || strings.TrimSpace(string(r.Result)) != "2" {
		t.Fatalf("%s: the trivial plan `return 1+1` did not return 2: %s", when, clip(r.raw))
	}
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// waitFor polls cond until it holds or settleTimeout passes.
func waitFor(t *testing.T, what string, cond func() (bool, string), dump func() string) {
	t.Helper()
	deadline := time.Now().Add(settleTimeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			msg := fmt.Sprintf("after %v, %s does not hold: %s", settleTimeout, what, state)
			if dump != nil {
				msg += "\n" + clip(dump())
			}
			t.Error(msg)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runIsolated runs a case in a child process of the test binary (see
// TestAttackChild). A plan that kills its process with an unrecoverable
// Go fatal error fails this case alone.
func runIsolated(t *testing.T, c attackCase, mode presets.Isolation, via surface) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestAttackChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), envChildCase+"="+c.id(), envChildMode+"="+string(mode), envChildSurface+"="+string(via))
	out, err := cmd.CombinedOutput()
	text := string(out)
	switch {
	case strings.Contains(text, "--- SKIP: TestAttackChild"):
		t.Skip(lastLines(text, 5))
	case err != nil:
		why := "the case failed in the child process"
		if strings.Contains(text, "fatal error:") || strings.Contains(text, "SIGKILL") || strings.Contains(text, "signal: killed") {
			why = "THE PLAN KILLED THE HOST PROCESS"
		}
		t.Errorf("%s (%v); script:\n%s\nchild output (tail):\n%s", why, err, clip(c.script), lastLines(text, 60))
	case !strings.Contains(text, "--- PASS: TestAttackChild"):
		t.Errorf("the child process did not run the case:\n%s", lastLines(text, 30))
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestAttackChild runs the one case named by CODECALLTEST_ATTACK_CASE under
// the isolation named by CODECALLTEST_ATTACK_MODE, through the surface
// named by CODECALLTEST_ATTACK_SURFACE; it is the child process of
// runIsolated and does nothing otherwise.
func TestAttackChild(t *testing.T) {
	id := os.Getenv(envChildCase)
	if id == "" {
		return
	}
	for _, c := range allCases() {
		if c.id() == id {
			c, skip := forSurface(c, surface(os.Getenv(envChildSurface)))
			if skip != "" {
				t.Fatalf("case %s does not run through %s: %s", id, os.Getenv(envChildSurface), skip)
			}
			runCase(t, c, presets.Isolation(os.Getenv(envChildMode)))
			return
		}
	}
	t.Fatalf("no case %q", id)
}

// allCases is every table of the suite.
func allCases() []attackCase {
	var all []attackCase
	for _, cs := range [][]attackCase{
		constructorCases, pollutionCases, globalCases, coercionCases, proxyCases, jsonCases,
		loopCases, memoryCases, deepCases, regexCases, outputCases, toolFloodCases,
		unicodeCases, sanityCases, webCases, timerCases, webMemoryCases, builtinCases,
		importCases, namespaceCases, resultCases, cmTimerCases, reflectionCases, cmPollutionCases,
	} {
		all = append(all, cs...)
	}
	return all
}

// TestSuiteSize checks that every category has its share of cases and that
// case ids are unique (the child process finds its case by id).
func TestSuiteSize(t *testing.T) {
	all := allCases()
	if len(all) < minTotal {
		t.Errorf("%d cases, want at least %d", len(all), minTotal)
	}
	per := map[category]int{}
	seen := map[string]bool{}
	for _, c := range all {
		per[c.cat]++
		if seen[c.id()] {
			t.Errorf("duplicate case %s", c.id())
		}
		seen[c.id()] = true
		if c.want.status == "" {
			t.Errorf("case %s expects no status", c.id())
		}
	}
	for cat, n := range minCases {
		if per[cat] < n {
			t.Errorf("category %s has %d cases, want at least %d", cat, per[cat], n)
		}
	}
	for cat := range per {
		if _, ok := minCases[cat]; !ok {
			t.Errorf("category %s is not listed in minCases", cat)
		}
	}
	t.Logf("%d cases: %v", len(all), per)
}
