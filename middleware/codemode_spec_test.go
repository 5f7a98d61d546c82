package middleware_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
)

// TestCodeModeSpec is the conformance suite of the Code Mode surface
// against the Code Mode specification (../shared/specs/code-mode-spec.md).
// Each subtest checks one requirement, named by its section, through a
// real MCP client calling codemode.run on a server wrapped with
// surfaces [codemode]; the first segment of every name is the isolation
// the scripts ran in. docs/code-mode.md maps every MUST and SHOULD of the
// specification to these names. A subset runs again with a client of
// protocol 2026-07-28 (segment "2026-07-28").
func TestCodeModeSpec(t *testing.T) {
	for _, iso := range []presets.Isolation{presets.IsolationInProcess, presets.IsolationProcess} {
		t.Run(string(iso), func(t *testing.T) {
			h := newSpecHost(t, iso)
			for _, c := range specCases {
				t.Run(c.name, func(t *testing.T) { c.run(t, h) })
			}
			modern := *h
			modern.c = mcptest.Connect(t, h.srv, mcptest.Modern())
			for _, c := range specCases {
				if slices.Contains(modernSmoke, c.name) {
					t.Run("2026-07-28/"+c.name, func(t *testing.T) { c.run(t, &modern) })
				}
			}
		})
	}
}

// modernSmoke are the cases run again over protocol 2026-07-28.
var modernSmoke = []string{
	"2/tools_list_is_exactly_codemode.run",
	"3.3/answer_has_logs_result_diagnostics_and_toolTrace",
	"3.3.4/uncaught_exception_keeps_logs_and_completed_calls",
	"5.3.2/structuredContent_wins_over_content",
	"7.2/fields_of_SchemaValidationError",
	"10/two_server_modules_in_one_script",
}

// The secret-looking and the plain value a call's input carries in the
// trace test, and the marker its output carries: none may show in the
// trace.
const (
	traceSecretInput = "sk_live_Zq81TracePass7731"
	tracePlainInput  = "INPUT-MARKER-6120"
	traceOutput      = "OUTPUT-MARKER-4418"
)

// Base64 payloads of the image and audio tools.
var (
	imageData = base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n not really a png"))
	audioData = base64.StdEncoding.EncodeToString([]byte("RIFF....WAVEfmt not really audio"))
)

// specHost is a server wrapped with the Code Mode surface, with a client,
// and what its tools observed.
type specHost struct {
	iso     presets.Isolation
	srv     *server.MCPServer
	cc      *middleware.CodeCall
	c       *client.Client
	probe   *specProbe
	servers *fakeServers
	audit   *mcptest.Buffer
	// limits are the server's own limits, as the config sets them.
	limits presets.Limits
}

// specProbe is what the tools of a spec host tell the test: a slow call
// started or saw its context cancelled, a gated call is waiting, and the
// barrier of concurrent calls.
type specProbe struct {
	sleepStarted   chan struct{}
	sleepCancelled chan struct{}
	gateEntered    chan struct{}
	gateRelease    chan struct{}

	mu       sync.Mutex
	arrivals int
	together chan struct{}
}

// signal tells the test something happened; a signal nobody waits for
// is dropped once the channel is full.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// resetBarrier readies the barrier for two calls.
func (p *specProbe) resetBarrier() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.arrivals, p.together = 0, make(chan struct{})
}

// fakeServers stands for the servers behind the catalog (meta.Servers):
// it records what Ensure is asked and refuses the apps marked down.
type fakeServers struct {
	mu      sync.Mutex
	ensured []string
	down    map[string]bool
}

func (f *fakeServers) Ensure(ctx context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ensured = append(f.ensured, id)
	if f.down[id] {
		return errors.New("connection refused by " + id)
	}
	return nil
}

func (f *fakeServers) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.ensured
	f.ensured = nil
	return out
}

// specToolsByServer are the canonical names of the tools each server
// module of a spec host must export, by module path.
var specToolsByServer = map[string][]string{
	"data": {"data.annotated", "data.array_root", "data.audio", "data.bare_object", "data.barrier", "data.destroy", "data.fail",
		"data.gate", "data.hostile", "data.image", "data.image_text", "data.json_text", "data.locked", "data.no_args", "data.no_examples",
		"data.plain_text", "data.rich", "data.schema_examples", "data.secret", "data.sleep", "data.structured", "data.two_blocks", "data.with_examples"},
	"calc":          {"calc.add"},
	"names":         {"names.123tool", "names.a-b", "names.a_b", "names.café", "names.class", "names.delete", "names.get.item"},
	"my-app":        {"app1.whoami"},
	"my-app--2":     {"app2.whoami"},
	"weird-name-v2": {"weird.ping"},
	"flaky":         {"flaky.ping"},
}

// richSchema exercises the schema features §6.2 lists.
const richSchema = `{"type":"object","properties":{
	"color":{"enum":["red","green"]},
	"kind":{"const":"fixed"},
	"either":{"oneOf":[{"type":"string"},{"type":"number"}]},
	"any":{"anyOf":[{"type":"boolean"},{"type":"integer"}]},
	"maybe":{"type":"string","nullable":true},
	"node":{"$ref":"#/$defs/node"},
	"extra":{"type":"object","additionalProperties":{"type":"number"}},
	"pat":{"type":"object","patternProperties":{"^x-":{"type":"string"}}},
	"pair":{"type":"array","items":[{"type":"string"},{"type":"number"}]},
	"weird":{"not":{"type":"string"}}},
	"$defs":{"node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`

// newSpecServer builds the server the suite wraps: tools with every kind
// of result, schema, name and annotation the specification talks about.
func newSpecServer(t *testing.T, p *specProbe) *server.MCPServer {
	t.Helper()
	srv := server.NewMCPServer("spec", "1.2.3", server.WithToolCapabilities(true), server.WithInputSchemaValidation())
	ro := readOnlyOpts
	add := func(tool mcp.Tool, h server.ToolHandlerFunc) { srv.AddTool(tool, h) }
	text := func(s string) server.ToolHandlerFunc {
		return func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(s), nil
		}
	}
	raw := func(name, desc, schema string) mcp.Tool {
		tl := mcp.NewToolWithRawSchema(name, desc, json.RawMessage(schema))
		tl.Annotations = mcp.ToolAnnotation{ReadOnlyHint: mcp.ToBoolPtr(true), DestructiveHint: mcp.ToBoolPtr(false),
			IdempotentHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false)}
		return tl
	}

	// Results (§5.3.2).
	add(mcp.NewTool("data.structured", append(ro(), mcp.WithDescription("Look an item up by id. Returns it as structured content."),
		mcp.WithString("id", mcp.Required()),
		mcp.WithRawOutputSchema(json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"kind":{"type":"string"}}}`)))...),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"id": req.GetArguments()["id"], "kind": "structured"}, "the text that is ignored"), nil
		})
	add(mcp.NewTool("data.plain_text", append(ro(), mcp.WithDescription("Return a single text block."))...), text("just words"))
	add(mcp.NewTool("data.json_text", append(ro(), mcp.WithDescription("Return a single text block that looks like JSON."))...),
		text(`{"kind":"json text","n":[1,2,3]}`))
	add(mcp.NewTool("data.two_blocks", append(ro(), mcp.WithDescription("Return two text blocks."))...),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("a"), mcp.NewTextContent("b")}}, nil
		})
	add(mcp.NewTool("data.image", append(ro(), mcp.WithDescription("Return an image."))...),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent(imageData, "image/png")}}, nil
		})
	add(mcp.NewTool("data.audio", append(ro(), mcp.WithDescription("Return audio."))...),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewAudioContent(audioData, "audio/wav")}}, nil
		})
	add(mcp.NewTool("data.image_text", append(ro(), mcp.WithDescription("Return a caption and an image."))...),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultImage("a caption", imageData, "image/png"), nil
		})
	add(mcp.NewTool("data.fail", append(ro(), mcp.WithDescription("Always fails."))...),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("the warehouse is closed"), nil
		})
	// A call refused for credentials, answered as the gateway answers an
	// upstream's 401: the code as data under codecall/error.
	add(mcp.NewTool("data.locked", append(ro(), mcp.WithDescription("Refuses the credentials."))...),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res := mcp.NewToolResultError(`UNAUTHENTICATED: upstream "data" refused the gateway's credentials`)
			res.Meta = mcp.NewMetaFromMap(map[string]any{toolerr.MetaKey: map[string]any{"code": "UNAUTHENTICATED", "retryable": false,
				"hint": "The operator must fix the credentials."}})
			return res, nil
		})
	add(mcp.NewTool("data.hostile", append(ro(), mcp.WithDescription("Return an object with a __proto__ key."))...),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res := mcp.NewToolResultText("hostile")
			res.RawStructuredContent = json.RawMessage(`{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"ok":1}`)
			return res, nil
		})
	add(mcp.NewTool("data.secret", append(ro(), mcp.WithDescription("Take a token and a note."), mcp.WithString("token"), mcp.WithString("note"))...),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"echo": traceOutput}, traceOutput), nil
		})

	// Inputs (§5.3.1, §7.2).
	add(mcp.NewTool("data.no_args", append(ro(), mcp.WithDescription("Take no arguments."))...),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"args": len(req.GetArguments())}, "no args"), nil
		})
	add(raw("data.bare_object", "Take an object without properties.", `{"type":"object"}`), text("bare"))
	add(raw("data.array_root", "Take an array of strings.", `{"type":"array","items":{"type":"string"}}`), text("array"))
	add(raw("data.rich", "Take every kind of schema.", richSchema), text("rich"))
	add(catalog.SetMeta(mcp.NewTool("data.with_examples", append(ro(), mcp.WithDescription("Order a quantity."),
		mcp.WithNumber("qty", mcp.Required()))...), catalog.Meta{Examples: []catalog.Example{{Description: "three", Input: map[string]any{"qty": 3}}}}),
		text("ordered"))
	add(raw("data.schema_examples", "Order a quantity, with examples in the schema.",
		`{"type":"object","properties":{"qty":{"type":"integer"}},"required":["qty"],"examples":[{"qty":12}]}`), text("ordered"))
	add(mcp.NewTool("data.no_examples", append(ro(), mcp.WithDescription("Name a count."),
		mcp.WithString("name", mcp.Required()), mcp.WithNumber("count", mcp.Required()))...), text("named"))

	// Annotations (§6.3).
	add(mcp.NewTool("data.annotated", mcp.WithDescription("A tool with stated hints."), mcp.WithTitleAnnotation("Annotated tool"),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(true)), text("annotated"))
	add(mcp.NewTool("data.destroy", mcp.WithDescription("Destroy everything."), mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(true), mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			t.Error("data.destroy ran")
			return mcp.NewToolResultText("destroyed"), nil
		})

	// Timing: a slow tool, a tool that waits for the test, and a barrier
	// two concurrent calls pass together (§7.4, §8, §10.1).
	add(mcp.NewTool("data.sleep", append(ro(), mcp.WithDescription("Sleep."), mcp.WithNumber("ms", mcp.Required()))...),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			signal(p.sleepStarted)
			select {
			case <-time.After(time.Duration(req.GetFloat("ms", 0)) * time.Millisecond):
				return mcp.NewToolResultText("slept"), nil
			case <-ctx.Done():
				signal(p.sleepCancelled)
				return nil, ctx.Err()
			}
		})
	add(mcp.NewTool("data.gate", append(ro(), mcp.WithDescription("Wait until the test opens the gate."))...),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			signal(p.gateEntered)
			select {
			case <-p.gateRelease:
				return mcp.NewToolResultText("passed"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	add(mcp.NewTool("data.barrier", append(ro(), mcp.WithDescription("Return together when two calls are in flight at once."))...),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			p.mu.Lock()
			p.arrivals++
			if p.arrivals == 2 {
				close(p.together)
			}
			together := p.together
			p.mu.Unlock()
			select {
			case <-together:
				return mcp.NewToolResultText("together"), nil
			case <-time.After(time.Minute):
				return mcp.NewToolResultText("alone"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})

	// A second server (§10).
	add(mcp.NewTool("calc.add", append(ro(), mcp.WithDescription("Add two numbers."), mcp.WithNumber("a", mcp.Required()),
		mcp.WithNumber("b", mcp.Required()))...),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"sum": req.GetFloat("a", 0) + req.GetFloat("b", 0)}, "sum"), nil
		})

	// Names that need mapping (§6.1): each tool answers with its name.
	echoName := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(req.Params.Name), nil
	}
	for _, name := range specToolsByServer["names"] {
		add(mcp.NewTool(name, append(ro(), mcp.WithDescription("Answer with the tool's name."))...), echoName)
	}

	// Servers whose ids need normalising (§5.0.1): "my-app" and "My App"
	// both normalise to my-app; the one already clean keeps it.
	for _, s := range []struct{ tool, app, desc string }{{"app1.whoami", "my-app", "Say which app this is."},
		{"app2.whoami", "My App", "Say which app this is."}, {"weird.ping", "--Weird..NAME_v2--", "Ping the server with the odd name."}} {
		add(catalog.SetMeta(mcp.NewTool(s.tool, append(ro(), mcp.WithDescription(s.desc))...), catalog.Meta{AppID: s.app}), text(s.app))
	}

	// A server that is down (§3.2.3): the fake Servers refuses to start
	// it, and its tool fails as a gateway's does for an unreachable
	// upstream.
	add(mcp.NewTool("flaky.ping", append(ro(), mcp.WithDescription("Ping a server that is down."))...),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError(`upstream "flaky" is unavailable`), nil
		})
	return srv
}

// newSpecHost wraps a spec server with the Code Mode surface in one
// isolation mode, skipping the test when worker processes cannot start
// here.
func newSpecHost(t *testing.T, iso presets.Isolation, opts ...middleware.Option) *specHost {
	t.Helper()
	p := &specProbe{sleepStarted: make(chan struct{}, 16), sleepCancelled: make(chan struct{}, 16),
		gateEntered: make(chan struct{}, 16), gateRelease: make(chan struct{})}
	p.resetBarrier()
	srv := newSpecServer(t, p)
	cfg := presets.Default()
	cfg.VM.Isolation = iso
	cfg.Surfaces = []presets.Surface{presets.SurfaceCodeMode}
	// A loaded machine must not turn a slow run into a timeout: the runs
	// that test timeouts lower timeoutMs themselves.
	cfg.VM.Timeout = 2 * time.Minute
	fs := &fakeServers{down: map[string]bool{"flaky": true}}
	h := &specHost{iso: iso, srv: srv, probe: p, servers: fs, audit: &mcptest.Buffer{}, limits: cfg.VM}
	all := append([]middleware.Option{middleware.WithConfig(cfg), middleware.WithoutReload(), middleware.WithServers(fs),
		middleware.WithAuditHandler(slog.NewJSONHandler(h.audit, nil)),
		middleware.WithLogger(slog.New(slog.NewTextHandler(discard{}, nil)))}, opts...)
	cc, err := middleware.Wrap(srv, all...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	if iso == presets.IsolationProcess && cc.Isolation().Effective != presets.IsolationProcess {
		t.Skipf("worker processes cannot start here (%s); the suite ran in process only", cc.Isolation().Fallback)
	}
	h.cc = cc
	h.c = mcptest.Connect(t, srv)
	return h
}

// presetHost wraps a spec server with the Code Mode surface under another
// preset, in one isolation mode.
func presetHost(t *testing.T, iso presets.Isolation, name presets.Name) *specHost {
	t.Helper()
	cfg := presetConfig(name)
	cfg.VM.Isolation = iso
	cfg.VM.Timeout = 2 * time.Minute
	cfg.Surfaces = []presets.Surface{presets.SurfaceCodeMode}
	h := newSpecHost(t, iso, middleware.WithConfig(cfg))
	h.limits = cfg.VM
	return h
}

// cmAnswer is a codemode.run answer, decoded.
type cmAnswer struct {
	isError bool
	text    string
	fields  map[string]json.RawMessage

	Logs        []cmLog          `json:"logs"`
	Result      json.RawMessage  `json:"result"`
	Diagnostics []cmDiag         `json:"diagnostics"`
	ToolTrace   []map[string]any `json:"toolTrace"`
}

type cmLog struct {
	Level   string      `json:"level"`
	Message string      `json:"message"`
	TimeMs  json.Number `json:"timeMs"`
}

type cmDiag struct {
	Severity   string `json:"severity"`
	Code       string `json:"code"`
	Message    string `json:"message"`
	Hint       string `json:"hint"`
	Path       string `json:"path"`
	ErrorClass string `json:"errorClass"`
}

// run calls codemode.run with args. A JSON-RPC error fails the test: every
// request gets an answer (§3.3.4).
func (h *specHost) run(t *testing.T, args map[string]any) *cmAnswer {
	t.Helper()
	return h.runCtx(t, context.Background(), args)
}

func (h *specHost) runCtx(t *testing.T, ctx context.Context, args map[string]any) *cmAnswer {
	t.Helper()
	a, err := callRun(ctx, h.c, args)
	if err != nil {
		t.Fatalf("codemode.run: %v", err)
	}
	return a
}

// callRun calls codemode.run and decodes its answer.
func callRun(ctx context.Context, c *client.Client, args map[string]any) (*cmAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "codemode.run", args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return nil, err
	}
	if len(res.Content) != 1 {
		return nil, fmt.Errorf("the answer has %d content blocks, want 1", len(res.Content))
	}
	tc, ok := mcp.AsTextContent(res.Content[0])
	if !ok {
		return nil, fmt.Errorf("the answer is not text: %#v", res.Content[0])
	}
	a := &cmAnswer{isError: res.IsError, text: tc.Text}
	if err := json.Unmarshal([]byte(tc.Text), &a.fields); err != nil {
		return nil, fmt.Errorf("the answer is not a JSON object: %v\n%s", err, tc.Text)
	}
	dec := json.NewDecoder(strings.NewReader(tc.Text))
	dec.UseNumber()
	if err := dec.Decode(a); err != nil {
		return nil, fmt.Errorf("the answer does not have the specified shape: %v\n%s", err, tc.Text)
	}
	return a, nil
}

// code runs a script with no other argument.
func (h *specHost) code(t *testing.T, code string) *cmAnswer {
	t.Helper()
	return h.run(t, map[string]any{"code": code})
}

// diag returns the first diagnostic with code, nil when there is none.
func (a *cmAnswer) diag(code string) *cmDiag {
	for i := range a.Diagnostics {
		if a.Diagnostics[i].Code == code {
			return &a.Diagnostics[i]
		}
	}
	return nil
}

// errors are the diagnostics of severity error.
func (a *cmAnswer) errors() []cmDiag {
	var out []cmDiag
	for _, d := range a.Diagnostics {
		if d.Severity == "error" {
			out = append(out, d)
		}
	}
	return out
}

// ok requires a run that ended without an error diagnostic and decodes its
// result into v (when v is not nil).
func (a *cmAnswer) ok(t *testing.T, v any) {
	t.Helper()
	if a.isError || len(a.errors()) > 0 {
		t.Fatalf("the run failed: %s", a.text)
	}
	if v != nil {
		if err := json.Unmarshal(a.Result, v); err != nil {
			t.Fatalf("result %s: %v", a.Result, err)
		}
	}
}

// failed requires a run that failed with a diagnostic of code, as
// §3.3.4 says a failure is answered: not isError, result null, a
// diagnostic with a hint. It returns the diagnostic.
func (a *cmAnswer) failed(t *testing.T, code string) *cmDiag {
	t.Helper()
	if a.isError {
		t.Errorf("a failed script must not make the call an error (isError): %s", a.text)
	}
	if string(a.Result) != "null" {
		t.Errorf("result %s, want null after a failure", a.Result)
	}
	d := a.diag(code)
	if d == nil {
		t.Fatalf("no %s diagnostic: %s", code, a.text)
	}
	if d.Severity != "error" || d.Message == "" || d.Hint == "" {
		t.Errorf("the %s diagnostic needs severity error, a message and a hint: %+v", code, *d)
	}
	return d
}

// result runs code, requires it to succeed and returns its result as JSON
// text, compact.
func (h *specHost) result(t *testing.T, code string) string {
	t.Helper()
	a := h.code(t, code)
	a.ok(t, nil)
	var b bytes.Buffer
	if err := json.Compact(&b, a.Result); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// expect runs code and requires its result to be want, a JSON text (the
// same JSON value: object keys in any order).
func (h *specHost) expect(t *testing.T, code, want string) {
	t.Helper()
	got := h.result(t, code)
	var g, w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want %s: %v", want, err)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil || !reflect.DeepEqual(g, w) {
		t.Errorf("result\n %s\nwant\n %s", got, want)
	}
}

// prompt returns the Code Mode system prompt (the MCP prompt "codemode").
func (h *specHost) prompt(t *testing.T) string {
	t.Helper()
	res, err := h.c.GetPrompt(context.Background(), mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "codemode"}})
	if err != nil {
		t.Fatalf("prompts/get codemode: %v", err)
	}
	var b strings.Builder
	for _, m := range res.Messages {
		if tc, ok := mcp.AsTextContent(m.Content); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// listed returns tools/list.
func (h *specHost) listed(t *testing.T) []mcp.Tool {
	t.Helper()
	res, err := h.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// description returns codemode.run's description in tools/list.
func (h *specHost) description(t *testing.T) string {
	t.Helper()
	for _, tl := range h.listed(t) {
		if tl.Name == "codemode.run" {
			return tl.Description
		}
	}
	t.Fatal("tools/list has no codemode.run")
	return ""
}

// declaration reads the resource codemode://types/<id>.d.ts.
func (h *specHost) declaration(t *testing.T, id string) string {
	t.Helper()
	res, err := h.c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "codemode://types/" + id + ".d.ts"}})
	if err != nil {
		t.Fatalf("resources/read %s: %v", id, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("resources/read %s: %d contents", id, len(res.Contents))
	}
	tc, ok := res.Contents[0].(mcp.TextResourceContents)
	if !ok {
		t.Fatalf("resources/read %s: not text: %#v", id, res.Contents[0])
	}
	return tc.Text
}

// mustContain fails for each want that text lacks.
func mustContain(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("the %s does not say %q", what, w)
		}
	}
}

// wait waits for a signal on ch; a minute is far beyond any cause the
// tests wait for, so not receiving is a failure, never a timing.
func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatalf("%s did not happen", what)
	}
}

// drain empties the probe's signal channels of what earlier cases left.
func (p *specProbe) drain() {
	for _, ch := range []chan struct{}{p.sleepStarted, p.sleepCancelled, p.gateEntered} {
		for len(ch) > 0 {
			<-ch
		}
	}
}

type specCase struct {
	name string
	run  func(t *testing.T, h *specHost)
}

// semver matches a semantic version (semver.org, 2.0.0).
var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

// integer reports whether a JSON number is an integer literal.
func integer(n json.Number) bool {
	_, err := n.Int64()
	return err == nil
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// exportsOf lists the exports a server module must have: its tools' export
// names (from __meta__) and __meta__.
func exportsOf(t *testing.T, h *specHost, path string) (meta map[string]string, keys []string) {
	t.Helper()
	var out struct {
		Keys []string `json:"keys"`
		Meta struct {
			Tools []struct{ ToolName, ExportName string }
		} `json:"meta"`
	}
	a := h.code(t, fmt.Sprintf(`import * as s from "@codemode/servers/%s";
globalThis.__codemode_result__ = {keys: Object.keys(s), meta: s.__meta__};`, path))
	a.ok(t, &out)
	meta = map[string]string{}
	for _, tl := range out.Meta.Tools {
		meta[tl.ToolName] = tl.ExportName
	}
	return meta, out.Keys
}

// auditEvents returns the audit events of one script, by its SHA-256.
func (h *specHost) auditEvents(script string) []map[string]any {
	sum := sha256.Sum256([]byte(script))
	digest := hex.EncodeToString(sum[:])
	var out []map[string]any
	for _, line := range strings.Split(h.audit.String(), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) == nil && e["scriptSha256"] == digest {
			out = append(out, e)
		}
	}
	return out
}

// specCases are the requirements, in the order of the specification.
var specCases = []specCase{
	// §1.4 Sandbox lifetime.
	{"1.4/fresh_sandbox_per_run", func(t *testing.T, h *specHost) {
		h.expect(t, `globalThis.leftover = 41; var hoisted = 1; globalThis.__codemode_result__ = globalThis.leftover + hoisted;`, `42`)
		h.expect(t, `globalThis.__codemode_result__ = [typeof globalThis.leftover, typeof globalThis.hoisted];`, `["undefined","undefined"]`)
		// The result slot starts empty too.
		a := h.code(t, `const x = 1;`)
		a.ok(t, nil)
		if string(a.Result) != "null" {
			t.Errorf("a run that sets nothing returned %s: the previous run's result was carried over", a.Result)
		}
	}},

	// §2 Overview.
	{"2/tools_list_is_exactly_codemode.run", func(t *testing.T, h *specHost) {
		var names []string
		for _, tl := range h.listed(t) {
			names = append(names, tl.Name)
		}
		if !slices.Equal(names, []string{"codemode.run"}) {
			t.Errorf("tools/list shows %v, want exactly [codemode.run]", names)
		}
	}},
	{"2/both_surfaces_list_codemode.run_and_the_codecall_tools", func(t *testing.T, h *specHost) {
		both := newSpecHost(t, h.iso, middleware.WithSurfaces(presets.SurfaceCodeCall, presets.SurfaceCodeMode))
		var names []string
		for _, tl := range both.listed(t) {
			names = append(names, tl.Name)
		}
		for _, want := range []string{"codecall.search", "codecall.describe", "codecall.execute", "codemode.run"} {
			if !slices.Contains(names, want) {
				t.Errorf("tools/list shows %v, without %s", names, want)
			}
		}
		for _, n := range names {
			if n != "codemode.run" && !strings.HasPrefix(n, "codecall.") {
				t.Errorf("tools/list shows %s, which is neither surface's", n)
			}
		}
		both.expect(t, `import * as calc from "@codemode/servers/calc"; globalThis.__codemode_result__ = await calc.add({a: 1, b: 2});`, `{"sum":3}`)
	}},

	// §3.2 Request.
	{"3.2/request_with_every_field", func(t *testing.T, h *specHost) {
		a := h.run(t, map[string]any{"code": `globalThis.__codemode_result__ = "ran";`,
			"limits": map[string]any{"maxToolCalls": 5}, "requestedCapabilities": []any{"calc"}})
		a.ok(t, nil)
		if string(a.Result) != `"ran"` || len(a.Diagnostics) != 0 {
			t.Errorf("a request with code, limits and requestedCapabilities: %s", a.text)
		}
	}},
	{"3.2/unknown_argument_is_INVALID_ARGUMENT", func(t *testing.T, h *specHost) {
		a := h.run(t, map[string]any{"code": `globalThis.__codemode_result__ = 1;`, "timeout": 5})
		d := a.failed(t, "INVALID_ARGUMENT")
		if d.Path != "/timeout" || !strings.Contains(d.Message, "timeout") {
			t.Errorf("the diagnostic should point at /timeout: %+v", *d)
		}
	}},
	{"3.2/code_is_required", func(t *testing.T, h *specHost) {
		d := h.run(t, map[string]any{"limits": map[string]any{}}).failed(t, "INVALID_ARGUMENT")
		if d.Path != "/code" {
			t.Errorf("path %q, want /code", d.Path)
		}
	}},
	{"3.2/code_must_be_a_string", func(t *testing.T, h *specHost) {
		d := h.run(t, map[string]any{"code": 42}).failed(t, "INVALID_ARGUMENT")
		if d.Path != "/code" {
			t.Errorf("path %q, want /code", d.Path)
		}
	}},
	{"3.2/fields_have_their_types", func(t *testing.T, h *specHost) {
		for field, args := range map[string]map[string]any{
			"/requestedCapabilities": {"code": `1;`, "requestedCapabilities": "calc"},
			"/limits":                {"code": `1;`, "limits": 5},
		} {
			if d := h.run(t, args).failed(t, "INVALID_ARGUMENT"); !strings.HasPrefix(d.Path, field) {
				t.Errorf("path %q, want %s", d.Path, field)
			}
		}
	}},

	// §3.2.1 Language level.
	{"3.2.1/static_imports", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as data from "@codemode/servers/data";
import { add } from "@codemode/servers/calc";
import { structured as lookUp, __meta__ as dataMeta } from "@codemode/servers/data";
import { specVersion } from "@codemode/discovery";
import * as errors from "@codemode/errors";
globalThis.__codemode_result__ = [typeof data.structured, typeof add, lookUp === data.structured, dataMeta.serverId,
  typeof specVersion, typeof errors.ToolCallError];`, `["function","function",true,"data","string","function"]`)
	}},
	{"3.2.1/export_declarations", func(t *testing.T, h *specHost) {
		h.expect(t, `export const a = 1;
export function twice(x) { return 2 * x; }
export class Box { constructor(v) { this.v = v; } }
const b = 3;
export { b, b as c };
export default twice(a + b);
globalThis.__codemode_result__ = [a, twice(b), new Box(5).v];`, `[1,6,5]`)
	}},
	{"3.2.1/top_level_await", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as data from "@codemode/servers/data";
const wait = await new Promise(resolve => setTimeout(() => resolve("timer"), 1));
const item = await data.structured({id: "a"});
globalThis.__codemode_result__ = [wait, item.id];`, `["timer","a"]`)
	}},
	{"3.2.1/restrictions_documented_in_the_prompt", func(t *testing.T, h *specHost) {
		mustContain(t, "prompt", h.prompt(t), "ES module", "`import`/`export`", "top-level `await`", "Restrictions and deviations",
			"`import()`", "Loops (`for`, `while`, `do`) are refused", "Regular expressions are limited")
		// A restriction the prompt documents is what the run does.
		h.code(t, `import("@codemode/discovery");`).failed(t, "IMPORT_FAILURE")
		h.code(t, `[1].forEach(() => {}); for (let i = 0; i < 2; i++) {}`).failed(t, "ILLEGAL_ACCESS")
	}},

	{"3.2.1/refused_names_documented_in_the_prompt", func(t *testing.T, h *specHost) {
		prompt := h.prompt(t)
		for _, name := range append(ast.CodeModeBannedIdentifiers(), ast.BannedMembers()...) {
			mustContain(t, "prompt", prompt, "`"+name+"`")
		}
		mustContain(t, "prompt", prompt, "BigInt literals", fmt.Sprintf("A script has at most %d bytes and %d lines", h.limits.MaxScriptBytes, h.limits.MaxScriptLines))
		h.code(t, `globalThis.__codemode_result__ = Object.prototype;`).failed(t, "ILLEGAL_ACCESS")
		h.code(t, `const f = function () { return arguments.length; };`).failed(t, "ILLEGAL_ACCESS")
		h.code(t, "//"+strings.Repeat("x", int(h.limits.MaxScriptBytes))).failed(t, "ILLEGAL_ACCESS")
	}},
	{"3.2.1/preset_restrictions_documented_and_applied", func(t *testing.T, h *specHost) {
		locked := presetHost(t, h.iso, presets.LockedDown)
		prompt := locked.prompt(t)
		mustContain(t, "locked_down prompt", prompt, "`console` is refused by this server's preset", "Loops (`for`, `while`, `do`) are refused by this server's locked_down preset",
			"Regular expressions are limited")
		if d := locked.code(t, `console.log("x");`).failed(t, "ILLEGAL_ACCESS"); !strings.Contains(d.Hint, "__codemode_result__") {
			t.Errorf("hint %q", d.Hint)
		}
		balanced := presetHost(t, h.iso, presets.Balanced)
		prompt = balanced.prompt(t)
		for _, s := range []string{"Loops (", "`console` is refused", "Regular expressions are limited"} {
			if strings.Contains(prompt, s) {
				t.Errorf("the balanced prompt says %q, which does not apply to it", s)
			}
		}
		balanced.expect(t, `let n = 0; for (let i = 0; i < 3; i++) { n += i; }
globalThis.__codemode_result__ = [n, new RegExp("a+").test("caat")];`, `[3,true]`)
	}},
	{"3.2.1/import_bindings_and_exports_documented", func(t *testing.T, h *specHost) {
		mustContain(t, "prompt", h.prompt(t), "Import bindings are constants bound before the first statement runs",
			"Exports of the script are evaluated and ignored")
		// As in a module, an import binding cannot be assigned, and the
		// export stays what it was.
		h.expect(t, `import * as calc from "@codemode/servers/calc"; import { add } from "@codemode/servers/calc";
const attempt = (f) => { try { f(); return "allowed"; } catch (e) { return e.name; } };
globalThis.__codemode_result__ = [attempt(() => { add = () => "local"; }), attempt(() => { calc = {}; }), add === calc.add,
  (await add({a: 1, b: 1})).sum];`, `["TypeError","TypeError",true,2]`)
	}},

	// §3.2.2 Result value.
	{"3.2.2/result_global_is_defined", func(t *testing.T, h *specHost) {
		h.expect(t, `globalThis.__codemode_result__ = ["__codemode_result__" in globalThis,
  Object.getOwnPropertyDescriptor(globalThis, "__codemode_result__").writable];`, `[true,true]`)
	}},
	{"3.2.2/result_is_the_final_value", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as calc from "@codemode/servers/calc";
globalThis.__codemode_result__ = "first";
const {sum} = await calc.add({a: 2, b: 3});
globalThis.__codemode_result__ = {ok: true, sum, nested: [null, "s", 1.5, false]};`, `{"ok":true,"sum":5,"nested":[null,"s",1.5,false]}`)
	}},
	{"3.2.2/result_is_null_when_unset", func(t *testing.T, h *specHost) {
		a := h.code(t, `const x = 40 + 2; x;`)
		a.ok(t, nil)
		if string(a.Result) != "null" {
			t.Errorf("result %s, want null: a module's completion value is not its result", a.Result)
		}
	}},
	{"3.2.2/result_is_null_on_failure", func(t *testing.T, h *specHost) {
		h.code(t, `globalThis.__codemode_result__ = {partial: true}; throw new Error("after setting the result");`).failed(t, "UNCAUGHT_EXCEPTION")
	}},

	// §3.2.3 requestedCapabilities.
	{"3.2.3/requested_servers_are_ensured", func(t *testing.T, h *specHost) {
		h.servers.take()
		a := h.run(t, map[string]any{"code": `globalThis.__codemode_result__ = 1;`, "requestedCapabilities": []any{"calc", "my-app--2"}})
		a.ok(t, nil)
		if len(a.Diagnostics) != 0 {
			t.Errorf("available capabilities gave diagnostics: %s", a.text)
		}
		if got := h.servers.take(); !slices.Equal(got, []string{"calc", "My App"}) {
			t.Errorf("Ensure was asked for %v, want the apps of calc and my-app--2: [calc My App]", got)
		}
	}},
	{"3.2.3/unknown_capability_is_an_eager_warning", func(t *testing.T, h *specHost) {
		a := h.run(t, map[string]any{"code": `globalThis.__codemode_result__ = "ran";`, "requestedCapabilities": []any{"calc", "nope"}})
		a.ok(t, nil)
		d := a.diag("CAPABILITY_UNAVAILABLE")
		if d == nil || d.Severity != "warning" || d.Path != "/requestedCapabilities/1" || d.Hint == "" || !strings.Contains(d.Message, "nope") {
			t.Fatalf("want a warning CAPABILITY_UNAVAILABLE at /requestedCapabilities/1 with a hint: %s", a.text)
		}
		if string(a.Result) != `"ran"` {
			t.Errorf("the warning must not stop the run: %s", a.text)
		}
	}},
	{"3.2.3/unavailable_server_is_an_eager_warning", func(t *testing.T, h *specHost) {
		h.servers.take()
		a := h.run(t, map[string]any{"code": `globalThis.__codemode_result__ = "ran";`, "requestedCapabilities": []any{"flaky"}})
		a.ok(t, nil)
		d := a.diag("CAPABILITY_UNAVAILABLE")
		if d == nil || d.Severity != "warning" || !strings.Contains(d.Message, "connection refused") || d.Hint == "" {
			t.Fatalf("want a warning that flaky is unavailable, with the reason: %s", a.text)
		}
		if got := h.servers.take(); !slices.Equal(got, []string{"flaky"}) {
			t.Errorf("Ensure was asked for %v, want [flaky]", got)
		}
	}},
	{"3.2.3/using_an_unavailable_server_is_a_structured_error", func(t *testing.T, h *specHost) {
		a := h.run(t, map[string]any{"requestedCapabilities": []any{"flaky"}, "code": `import * as flaky from "@codemode/servers/flaky";
import { ToolCallError } from "@codemode/errors";
try { await flaky.ping(); globalThis.__codemode_result__ = "answered"; }
catch (e) { globalThis.__codemode_result__ = {toolCallError: e instanceof ToolCallError, name: e.name, serverId: e.serverId, hint: typeof e.hint}; }`})
		a.ok(t, nil)
		if got := string(a.Result); got != `{"toolCallError":true,"name":"ToolCallError","serverId":"flaky","hint":"string"}` {
			t.Errorf("calling the unavailable server: %s", got)
		}
	}},
	{"3.2.3/importing_an_unknown_capability_is_IMPORT_FAILURE", func(t *testing.T, h *specHost) {
		a := h.run(t, map[string]any{"requestedCapabilities": []any{"nope"},
			"code": `import * as nope from "@codemode/servers/nope"; globalThis.__codemode_result__ = 1;`})
		d := a.failed(t, "IMPORT_FAILURE")
		if d.ErrorClass != "ServerNotFoundError" || d.Path != "script.js:1:23" {
			t.Errorf("want errorClass ServerNotFoundError at script.js:1:23: %+v", *d)
		}
		if a.diag("CAPABILITY_UNAVAILABLE") == nil {
			t.Errorf("the eager warning is missing: %s", a.text)
		}
	}},
	{"3.2.3/capability_ids_documented_in_the_prompt", func(t *testing.T, h *specHost) {
		mustContain(t, "prompt", h.prompt(t), "`requestedCapabilities` takes server ids", "calc, data, flaky, my-app, my-app--2, names, weird-name-v2")
	}},

	// §3.2.4 limits.
	{"3.2.4/lower_maxToolCalls_applies", func(t *testing.T, h *specHost) {
		a := h.run(t, map[string]any{"limits": map[string]any{"maxToolCalls": 1}, "code": `import * as calc from "@codemode/servers/calc";
console.log("first", (await calc.add({a: 1, b: 1})).sum);
await calc.add({a: 2, b: 2});
globalThis.__codemode_result__ = "not reached";`})
		d := a.failed(t, "SANDBOX_LIMIT")
		if d.ErrorClass != "SandboxLimitError" || !strings.Contains(d.Message, "maxToolCalls") {
			t.Errorf("want SandboxLimitError naming maxToolCalls: %+v", *d)
		}
		if len(a.Logs) != 1 || a.Logs[0].Message != "first 2" || len(a.ToolTrace) != 1 {
			t.Errorf("the first call and its log must be kept: %s", a.text)
		}
	}},
	{"3.2.4/lower_maxMemoryBytes_applies", func(t *testing.T, h *specHost) {
		// About 30 MB, held: within the server's budget, past a lowered one.
		alloc := `import * as data from "@codemode/servers/data";
const held = Array.from({length: 300}, (_, i) => new Array(10000).fill(i));
`
		h.expect(t, alloc+`globalThis.__codemode_result__ = held.length;`, `300`)
		// Holding it, the run waits for a call that never ends: only the
		// memory limit can end it before the server's timeout.
		h.probe.drain()
		a := h.run(t, map[string]any{"limits": map[string]any{"maxMemoryBytes": 4 << 20},
			"code": alloc + `await data.sleep({ms: 600000}); globalThis.__codemode_result__ = held.length;`})
		d := a.failed(t, "SANDBOX_LIMIT")
		if d.ErrorClass != "SandboxLimitError" || !strings.Contains(d.Message, "maxMemoryBytes") {
			t.Errorf("want SandboxLimitError naming maxMemoryBytes: %+v", *d)
		}
	}},
	{"3.2.4/lower_timeoutMs_applies", func(t *testing.T, h *specHost) {
		h.probe.drain()
		a := h.run(t, map[string]any{"limits": map[string]any{"timeoutMs": 300}, "code": `import * as data from "@codemode/servers/data";
await data.sleep({ms: 600000});`})
		d := a.failed(t, "SANDBOX_LIMIT")
		if d.ErrorClass != "SandboxLimitError" || !strings.Contains(d.Message, "timeoutMs") {
			t.Errorf("want SandboxLimitError naming timeoutMs: %+v", *d)
		}
	}},
	{"3.2.4/lower_maxLogBytes_applies", func(t *testing.T, h *specHost) {
		a := h.run(t, map[string]any{"limits": map[string]any{"maxLogBytes": 300}, "code": `Array.from({length: 50}, (_, i) => console.log("line", i));`})
		a.ok(t, nil)
		if len(a.Logs) >= 50 || a.diag("LOGS_TRUNCATED") == nil {
			t.Errorf("maxLogBytes 300 kept %d of 50 lines: %s", len(a.Logs), a.text)
		}
	}},
	{"3.2.4/discovery_counts_toward_maxToolCalls", func(t *testing.T, h *specHost) {
		a := h.run(t, map[string]any{"limits": map[string]any{"maxToolCalls": 2}, "code": `import { listServers } from "@codemode/discovery";
import * as calc from "@codemode/servers/calc";
await listServers(); await calc.add({a: 1, b: 1}); await listServers();`})
		if d := a.failed(t, "SANDBOX_LIMIT"); !strings.Contains(d.Message, "maxToolCalls") {
			t.Errorf("diagnostic %+v", *d)
		}
		mustContain(t, "prompt", h.prompt(t), "Discovery requests count toward maxToolCalls")
	}},
	{"3.2.4/higher_limit_is_clamped_with_info", func(t *testing.T, h *specHost) {
		a := h.run(t, map[string]any{"limits": map[string]any{"maxToolCalls": 1e6, "timeoutMs": 1e9}, "code": `globalThis.__codemode_result__ = 1;`})
		a.ok(t, nil)
		var clamped []string
		for _, d := range a.Diagnostics {
			if d.Code == "LIMIT_CLAMPED" && d.Severity == "info" && d.Hint != "" {
				clamped = append(clamped, d.Path)
			}
		}
		sort.Strings(clamped)
		if !slices.Equal(clamped, []string{"/limits/maxToolCalls", "/limits/timeoutMs"}) || string(a.Result) != "1" {
			t.Errorf("want info LIMIT_CLAMPED for both keys and the run to go on: %s", a.text)
		}
		// Clamped, the server's limit applies: the call limit is not a million.
		a = h.run(t, map[string]any{"limits": map[string]any{"maxToolCalls": 1e6},
			"code": fmt.Sprintf(`import * as calc from "@codemode/servers/calc";
await Promise.all(Array.from({length: %d}, () => calc.add({a: 1, b: 1})));`, h.limits.MaxToolCalls+1)})
		if d := a.failed(t, "SANDBOX_LIMIT"); !strings.Contains(d.Message, "maxToolCalls") {
			t.Errorf("the clamped maxToolCalls did not stop the run: %+v", *d)
		}
	}},
	{"3.2.4/unknown_limit_keys_are_ignored_silently", func(t *testing.T, h *specHost) {
		a := h.run(t, map[string]any{"limits": map[string]any{"maxCpuMs": 5, "maxFoo": "bar", "nested": map[string]any{"x": 1}},
			"code": `globalThis.__codemode_result__ = "ran";`})
		a.ok(t, nil)
		if len(a.Diagnostics) != 0 || string(a.Result) != `"ran"` {
			t.Errorf("unknown limit keys must be ignored without a diagnostic: %s", a.text)
		}
	}},
	{"3.2.4/limit_keys_documented_in_the_prompt", func(t *testing.T, h *specHost) {
		l := h.limits
		mustContain(t, "prompt", h.prompt(t), "Supported keys of `limits`",
			fmt.Sprintf("`timeoutMs` (%d)", l.Timeout.Milliseconds()), fmt.Sprintf("`maxMemoryBytes` (%d)", l.MemoryBytes),
			fmt.Sprintf("`maxLogBytes` (%d)", l.MaxLogBytes), fmt.Sprintf("`maxToolCalls` (%d)", l.MaxToolCalls), "unknown keys ignored")
	}},

	// §3.3 Response.
	{"3.3/answer_has_logs_result_diagnostics_and_toolTrace", func(t *testing.T, h *specHost) {
		for _, args := range []map[string]any{
			{"code": `import * as calc from "@codemode/servers/calc"; console.log("hi"); globalThis.__codemode_result__ = await calc.add({a: 1, b: 2});`},
			{"code": `throw new Error("boom");`},
			{"code": `const x = ;`},
			{"code": 7},
		} {
			a := h.run(t, args)
			for _, k := range []string{"logs", "result", "diagnostics", "toolTrace"} {
				if _, ok := a.fields[k]; !ok {
					t.Errorf("%v: the answer has no %s: %s", args["code"], k, a.text)
				}
			}
			for _, k := range []string{"logs", "diagnostics", "toolTrace"} {
				if v := strings.TrimSpace(string(a.fields[k])); !strings.HasPrefix(v, "[") {
					t.Errorf("%v: %s is %s, want an array", args["code"], k, v)
				}
			}
			if a.isError {
				t.Errorf("%v: codemode.run answered isError: %s", args["code"], a.text)
			}
		}
	}},
	{"3.3/result_is_JSON", func(t *testing.T, h *specHost) {
		h.expect(t, `globalThis.__codemode_result__ = {d: new Date(0), u: undefined, m: new Map([[1, 2]]), n: [NaN, Infinity], s: "é\u0000"};`,
			`{"d":"1970-01-01T00:00:00.000Z","m":{},"n":[null,null],"s":"é\u0000"}`)
	}},

	// §3.3.1 logs.
	{"3.3.1/log_entry_fields", func(t *testing.T, h *specHost) {
		a := h.code(t, `console.log("a"); console.debug("b"); console.warn("c"); console.error("d"); await new Promise(r => setTimeout(r, 20)); console.log("e");`)
		a.ok(t, nil)
		var entries []map[string]json.RawMessage
		if err := json.Unmarshal(a.fields["logs"], &entries); err != nil {
			t.Fatal(err)
		}
		for i, e := range entries {
			if keys := sortedKeys(e); !slices.Equal(keys, []string{"level", "message", "timeMs"}) {
				t.Errorf("entry %d has fields %v, want level, message, timeMs", i, keys)
			}
		}
		var levels []string
		last := int64(-1)
		for _, l := range a.Logs {
			levels = append(levels, l.Level+":"+l.Message)
			if !integer(l.TimeMs) {
				t.Errorf("timeMs %s is not an integer", l.TimeMs)
				continue
			}
			ms, _ := l.TimeMs.Int64()
			if ms < 0 || ms < last {
				t.Errorf("timeMs %d: want milliseconds since the start, never decreasing", ms)
			}
			last = ms
		}
		if !slices.Equal(levels, []string{"log:a", "debug:b", "warn:c", "error:d", "log:e"}) {
			t.Errorf("logs %v", levels)
		}
		if first, _ := a.Logs[0].TimeMs.Int64(); last < first+20 {
			t.Errorf("timeMs must count from the sandbox's start: %d after a 20 ms timer, %d before it", last, first)
		}
	}},
	{"3.3.1/arguments_make_one_message", func(t *testing.T, h *specHost) {
		a := h.code(t, `console.log("a", "b", 3, {c: 4});`)
		a.ok(t, nil)
		if len(a.Logs) != 1 || a.Logs[0].Message != `a b 3 {"c":4}` {
			t.Errorf("logs %+v", a.Logs)
		}
	}},
	{"3.3.1/primitives_use_String", func(t *testing.T, h *specHost) {
		a := h.code(t, `console.log(1, 1.5, -0, 1e21, 2e-7, true, null, undefined, "s", NaN, -Infinity, Symbol("sym"), "");`)
		a.ok(t, nil)
		if len(a.Logs) != 1 || a.Logs[0].Message != `1 1.5 0 1e+21 2e-7 true null undefined s NaN -Infinity Symbol(sym) ` {
			t.Errorf("logs %+v", a.Logs)
		}
	}},
	{"3.3.1/objects_use_stable_JSON", func(t *testing.T, h *specHost) {
		a := h.code(t, `const o = {b: 1, a: [1, "x", null, {n: true}], u: undefined, d: new Date(0)};
console.log(o); console.log(o); console.log([1, [2]], {});`)
		a.ok(t, nil)
		want := `{"b":1,"a":[1,"x",null,{"n":true}],"d":"1970-01-01T00:00:00.000Z"}`
		if len(a.Logs) != 3 || a.Logs[0].Message != want || a.Logs[1].Message != want || a.Logs[2].Message != `[1,[2]] {}` {
			t.Errorf("logs %+v", a.Logs)
		}
	}},
	{"3.3.1/cyclic_object_is_Unserializable_Object", func(t *testing.T, h *specHost) {
		a := h.code(t, `const o = {name: "loop"}; o.self = o; const arr = [1]; arr.push(arr); console.log("cyclic:", o, arr); console.log("after");`)
		a.ok(t, nil)
		if len(a.Logs) != 2 || a.Logs[0].Message != "cyclic: [Unserializable Object] [Unserializable Object]" || a.Logs[1].Message != "after" {
			t.Errorf("logs %+v", a.Logs)
		}
	}},
	{"3.3.1/truncation_appends_a_final_warn_naming_maxLogBytes", func(t *testing.T, h *specHost) {
		a := h.run(t, map[string]any{"limits": map[string]any{"maxLogBytes": 400},
			"code": `Array.from({length: 40}, (_, i) => console.log("line number", i)); console.error("never kept"); globalThis.__codemode_result__ = "done";`})
		a.ok(t, nil)
		if len(a.Logs) < 2 {
			t.Fatalf("logs %+v", a.Logs)
		}
		final := a.Logs[len(a.Logs)-1]
		if final.Level != "warn" || !strings.Contains(final.Message, "truncated") || !strings.Contains(final.Message, "maxLogBytes is 400") {
			t.Errorf("the final entry must be a warn naming the truncation and maxLogBytes 400: %+v", final)
		}
		for _, l := range a.Logs[:len(a.Logs)-1] {
			if l.Level != "log" || !strings.HasPrefix(l.Message, "line number") {
				t.Errorf("an entry after the truncation: %+v", l)
			}
		}
		if string(a.Result) != `"done"` {
			t.Errorf("truncating the logs must not stop the script: %s", a.Result)
		}
	}},

	// §3.3.2 toolTrace.
	{"3.3.2/trace_entry_fields", func(t *testing.T, h *specHost) {
		a := h.code(t, `import * as data from "@codemode/servers/data";
import { get_item } from "@codemode/servers/names";
await data.structured({id: "x"});
await get_item();
try { await data.fail(); } catch {}
globalThis.__codemode_result__ = 1;`)
		a.ok(t, nil)
		var got []string
		for _, e := range a.ToolTrace {
			for k := range e {
				if !slices.Contains([]string{"serverId", "toolName", "durationMs", "ok", "error"}, k) {
					t.Errorf("trace entry field %q is not in the specification", k)
				}
			}
			d, isNum := e["durationMs"].(json.Number)
			if !isNum || !integer(d) {
				t.Errorf("durationMs %v is not an integer", e["durationMs"])
			}
			if _, ok := e["ok"].(bool); !ok {
				t.Errorf("ok %v is not a boolean", e["ok"])
			}
			errText, hasErr := e["error"].(string)
			if e["ok"] == false && (!hasErr || errText == "") || e["ok"] == true && hasErr {
				t.Errorf("error must summarise a failed call, and only a failed one: %v", e)
			}
			got = append(got, fmt.Sprintf("%v %v %v", e["serverId"], e["toolName"], e["ok"]))
		}
		want := []string{"data data.structured true", "names names.get.item true", "data data.fail false"}
		if !slices.Equal(got, want) {
			t.Errorf("trace %v, want %v (the canonical names)", got, want)
		}
	}},
	{"3.3.2/trace_has_no_inputs_or_outputs", func(t *testing.T, h *specHost) {
		a := h.code(t, `import * as data from "@codemode/servers/data";
const out = await data.secret({token: "`+traceSecretInput+`", note: "`+tracePlainInput+`"});
globalThis.__codemode_result__ = out.echo;`)
		a.ok(t, nil)
		if string(a.Result) != `"`+traceOutput+`"` || len(a.ToolTrace) != 1 {
			t.Fatalf("the call did not run: %s", a.text)
		}
		trace := string(a.fields["toolTrace"])
		for _, s := range []string{traceSecretInput, tracePlainInput, traceOutput, "token", "note", "echo", "input", "output"} {
			if strings.Contains(trace, s) {
				t.Errorf("the trace shows %q: %s", s, trace)
			}
		}
	}},

	// §3.3.3 diagnostics.
	{"3.3.3/diagnostic_fields", func(t *testing.T, h *specHost) {
		for _, args := range []map[string]any{
			{"code": "const a = 1;\nconst b = ;"},
			{"code": "import { nope } from \"@codemode/servers/data\";"},
			{"code": "const x = 1;\nnull.f();"},
			{"code": `1;`, "limits": map[string]any{"timeoutMs": 1e9, "maxToolCalls": "many"}, "requestedCapabilities": []any{"nope"}},
			{"code": `import * as data from "@codemode/servers/data"; await data.structured({id: 5});`},
		} {
			a := h.run(t, args)
			if len(a.Diagnostics) == 0 {
				t.Errorf("%v: no diagnostics: %s", args["code"], a.text)
			}
			var raw []map[string]any
			if err := json.Unmarshal(a.fields["diagnostics"], &raw); err != nil {
				t.Fatal(err)
			}
			for _, d := range raw {
				for k, v := range d {
					if _, isString := v.(string); !isString || !slices.Contains([]string{"severity", "code", "message", "hint", "path", "errorClass"}, k) {
						t.Errorf("diagnostic field %s = %v: want one of the specified string fields", k, v)
					}
				}
			}
			for _, d := range a.Diagnostics {
				if !slices.Contains([]string{"error", "warning", "info"}, d.Severity) || d.Code == "" || d.Message == "" {
					t.Errorf("%v: diagnostic %+v lacks a severity, code or message", args["code"], d)
				}
				if d.Code != strings.ToUpper(d.Code) || strings.Contains(d.Code, " ") {
					t.Errorf("code %q is not machine-readable", d.Code)
				}
			}
		}
		// Locations and JSON Pointers.
		if d := h.code(t, "const a = 1;\nconst b = ;").failed(t, "SYNTAX_ERROR"); d.Path != "script.js:2:11" {
			t.Errorf("syntax error path %q, want script.js:2:11", d.Path)
		}
		if d := h.code(t, "const x = null;\nx.f();").failed(t, "UNCAUGHT_EXCEPTION"); d.Path != "script.js:2:1" {
			t.Errorf("exception path %q, want script.js:2:1", d.Path)
		}
		a := h.run(t, map[string]any{"code": `1;`, "limits": map[string]any{"maxToolCalls": "many"}})
		if d := a.diag("LIMIT_IGNORED"); d == nil || d.Path != "/limits/maxToolCalls" || d.Severity != "warning" {
			t.Errorf("want a warning at /limits/maxToolCalls: %s", a.text)
		}
		a = h.code(t, `import * as data from "@codemode/servers/data"; await data.structured({id: 5});`)
		if d := a.failed(t, "UNCAUGHT_EXCEPTION"); d.ErrorClass != "SchemaValidationError" {
			t.Errorf("errorClass %q, want SchemaValidationError", d.ErrorClass)
		}
	}},

	// §3.3.4 Fatal script errors.
	{"3.3.4/syntax_error_is_not_a_call_error", func(t *testing.T, h *specHost) {
		a := h.code(t, `console.log("never runs"); const x = ;`)
		d := a.failed(t, "SYNTAX_ERROR")
		if d.Path != "script.js:1:38" || len(a.Logs) != 0 {
			t.Errorf("a syntax error at script.js:1:38 runs nothing: %s", a.text)
		}
	}},
	{"3.3.4/uncaught_exception_keeps_logs_and_completed_calls", func(t *testing.T, h *specHost) {
		a := h.code(t, `import * as calc from "@codemode/servers/calc";
console.log("before", 1);
const {sum} = await calc.add({a: 2, b: 2});
console.warn("sum", sum);
globalThis.__codemode_result__ = sum;
throw new TypeError("boom after " + sum);`)
		d := a.failed(t, "UNCAUGHT_EXCEPTION")
		if !strings.Contains(d.Message, "TypeError: boom after 4") || d.Path != "script.js:6:7" {
			t.Errorf("diagnostic %+v", *d)
		}
		if len(a.Logs) != 2 || a.Logs[0].Message != "before 1" || a.Logs[1].Message != "sum 4" {
			t.Errorf("the logs before the failure are lost: %+v", a.Logs)
		}
		if len(a.ToolTrace) != 1 || a.ToolTrace[0]["toolName"] != "calc.add" || a.ToolTrace[0]["ok"] != true {
			t.Errorf("the completed call is not in the trace: %v", a.ToolTrace)
		}
	}},
	{"3.3.4/uncaught_tool_error_keeps_logs_and_completed_calls", func(t *testing.T, h *specHost) {
		a := h.code(t, `import * as data from "@codemode/servers/data";
console.log("start");
await data.plain_text();
await data.fail();`)
		d := a.failed(t, "UNCAUGHT_EXCEPTION")
		if d.ErrorClass != "ToolCallError" || !strings.Contains(d.Message, "the warehouse is closed") {
			t.Errorf("diagnostic %+v", *d)
		}
		if len(a.Logs) != 1 || len(a.ToolTrace) != 2 || a.ToolTrace[1]["ok"] != false {
			t.Errorf("logs and trace: %s", a.text)
		}
	}},
	{"3.3.4/import_failure_is_not_a_call_error", func(t *testing.T, h *specHost) {
		for code, class := range map[string]string{
			`import * as x from "@codemode/servers/nope";`:      "ServerNotFoundError",
			`import { nope } from "@codemode/servers/data";`:    "",
			`import x from "./local.js";`:                       "",
			`import { nope } from "@codemode/discovery";`:       "",
			`import * as x from "@codemode/unknown";`:           "",
			`const m = await import("@codemode/servers/data");`: "",
		} {
			d := h.code(t, code).failed(t, "IMPORT_FAILURE")
			if d.ErrorClass != class || !strings.HasPrefix(d.Path, "script.js:1:") {
				t.Errorf("%s: %+v, want errorClass %q and a location", code, *d, class)
			}
		}
	}},
	{"3.3.4/limit_keeps_logs_and_completed_calls", func(t *testing.T, h *specHost) {
		h.probe.drain()
		a := h.run(t, map[string]any{"limits": map[string]any{"timeoutMs": 500}, "code": `import * as data from "@codemode/servers/data";
console.log("started");
await data.plain_text();
await data.sleep({ms: 600000});`})
		a.failed(t, "SANDBOX_LIMIT")
		if len(a.Logs) != 1 || a.Logs[0].Message != "started" {
			t.Errorf("logs %+v", a.Logs)
		}
		var done []string
		for _, e := range a.ToolTrace {
			if e["ok"] == true {
				done = append(done, fmt.Sprint(e["toolName"]))
			}
		}
		if !slices.Equal(done, []string{"data.plain_text"}) {
			t.Errorf("completed calls in the trace: %v", a.ToolTrace)
		}
	}},

	// §3.4 Isolation.
	{"3.4/no_network_API", func(t *testing.T, h *specHost) {
		h.expect(t, `const names = ["fetch", "XMLHttpRequest", "WebSocket", "EventSource", "navigator", "Request", "Response", "Headers", "importScripts"];
globalThis.__codemode_result__ = [names.filter(n => n in globalThis), typeof fetch, typeof XMLHttpRequest, typeof WebSocket];`,
			`[[],"undefined","undefined","undefined"]`)
	}},
	{"3.4/side_effects_only_through_tools", func(t *testing.T, h *specHost) {
		// Nothing in the global object reaches outside the sandbox: its
		// functions are the standard built-ins, the console and timers.
		got := h.result(t, `globalThis.__codemode_result__ = Object.getOwnPropertyNames(globalThis).filter(n => typeof globalThis[n] === "function" && !/^[A-Z]/.test(n)).sort();`)
		var names []string
		if err := json.Unmarshal([]byte(got), &names); err != nil {
			t.Fatal(err)
		}
		allowed := []string{"clearTimeout", "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent", "escape", "isFinite", "isNaN",
			"parseFloat", "parseInt", "setTimeout", "structuredClone", "unescape"}
		for _, n := range names {
			if !slices.Contains(allowed, n) {
				t.Errorf("the global function %s is not a standard built-in", n)
			}
		}
	}},

	// §3.5 Sandbox globals.
	{"3.5/standard_globals_present", func(t *testing.T, h *specHost) {
		names := []string{"JSON", "Math", "Date", "URL", "URLSearchParams", "Promise", "Map", "Set", "WeakMap", "WeakSet", "Symbol",
			"Proxy", "Reflect", "RegExp", "Error", "Array", "Object", "String", "Number", "Boolean", "parseInt", "parseFloat", "isNaN",
			"isFinite", "Infinity", "NaN",
			"TextEncoder", "TextDecoder",
			"ArrayBuffer", "DataView", "Uint8Array", "Int8Array", "Uint16Array", "Int16Array", "Uint32Array", "Int32Array",
			"Float32Array", "Float64Array",
			"setTimeout", "clearTimeout", "console"}
		var b strings.Builder
		b.WriteString("globalThis.__codemode_result__ = {")
		for _, n := range names {
			// The secure preset refuses the name RegExp (regular expression
			// literals only); the global is there.
			ref := n
			if n == "RegExp" {
				ref = "globalThis.RegExp"
			}
			fmt.Fprintf(&b, "%q: typeof %s, ", n, ref)
		}
		b.WriteString(`undefined: undefined === void 0 && "undefined" in globalThis, infinite: Infinity === 1 / 0, nan: Number.isNaN(NaN)};`)
		var got map[string]any
		h.code(t, b.String()).ok(t, &got)
		for _, n := range names {
			want := "function"
			switch n {
			case "JSON", "Math", "Reflect", "console":
				want = "object"
			case "Infinity", "NaN":
				want = "number"
			}
			if got[n] != want {
				t.Errorf("typeof %s is %v, want %s", n, got[n], want)
			}
		}
		for _, k := range []string{"undefined", "infinite", "nan"} {
			if got[k] != true {
				t.Errorf("%s: %v", k, got[k])
			}
		}
	}},
	{"3.5/standard_globals_work", func(t *testing.T, h *specHost) {
		h.expect(t, `const u = new URL("https://example.com/a?b=1"); u.searchParams.set("c", "2");
const bytes = new TextEncoder().encode("é");
const view = new DataView(new ArrayBuffer(8)); view.setFloat64(0, 1.5);
const wm = new WeakMap(); const key = {}; wm.set(key, 1);
const p = new Proxy({}, {get: (t, k) => "proxied " + String(k)});
const cleared = await new Promise(resolve => { const id = setTimeout(() => resolve("fired"), 5); clearTimeout(id); setTimeout(() => resolve("cleared"), 10); });
globalThis.__codemode_result__ = [u.toString(), new URLSearchParams("x=1&y=2").get("y"), [...bytes], new TextDecoder().decode(bytes),
  view.getFloat64(0), new Float32Array([0.5])[0], new Int16Array([-2])[0], wm.get(key), new WeakSet([key]).has(key),
  p.foo, Reflect.ownKeys({a: 1}), typeof Symbol.iterator, /a+/.test("caaat"), cleared];`,
			`["https://example.com/a?b=1&c=2","2",[195,169],"é",1.5,0.5,-2,1,true,"proxied foo",["a"],"symbol",true,"cleared"]`)
	}},
	{"3.5/BigInt_absent_and_documented", func(t *testing.T, h *specHost) {
		h.expect(t, `globalThis.__codemode_result__ = [typeof BigInt, "BigInt" in globalThis, typeof BigInt64Array];`, `["undefined",false,"undefined"]`)
		h.code(t, `globalThis.__codemode_result__ = 1n;`).failed(t, "ILLEGAL_ACCESS")
		mustContain(t, "prompt", h.prompt(t), "`BigInt` and `BigInt64Array`/`BigUint64Array` are not provided")
	}},
	{"3.5/setInterval_absent", func(t *testing.T, h *specHost) {
		h.expect(t, `globalThis.__codemode_result__ = ["setInterval" in globalThis, "clearInterval" in globalThis, "setImmediate" in globalThis];`, `[false,false,false]`)
		h.code(t, `setInterval(() => {}, 10);`).failed(t, "ILLEGAL_ACCESS")
	}},
	{"3.5/eval_with_a_string_fails", func(t *testing.T, h *specHost) {
		h.code(t, `globalThis.__codemode_result__ = eval("1 + 1");`).failed(t, "ILLEGAL_ACCESS")
		// Reached without naming it, it is not there at all.
		a := h.code(t, `const e = globalThis["ev" + "al"]; globalThis.__codemode_result__ = e("1 + 1");`)
		if string(a.Result) == "2" || len(a.errors()) == 0 {
			t.Errorf("eval ran a string: %s", a.text)
		}
		h.expect(t, `globalThis.__codemode_result__ = [typeof globalThis["ev" + "al"], "eval" in globalThis];`, `["undefined",true]`)
	}},
	{"3.5/Function_constructor_with_a_string_fails", func(t *testing.T, h *specHost) {
		h.code(t, `globalThis.__codemode_result__ = new Function("return 1")();`).failed(t, "ILLEGAL_ACCESS")
		for _, code := range []string{
			`const F = (() => {})["constr" + "uctor"]; globalThis.__codemode_result__ = F("return 2")();`,
			`const F = Object.getPrototypeOf(async () => {})["constr" + "uctor"]; globalThis.__codemode_result__ = await F("return 2")();`,
			`const F = Reflect.get(Object.getPrototypeOf(() => {}), "constr" + "uctor"); globalThis.__codemode_result__ = F("return 2")();`,
		} {
			a := h.code(t, code)
			if string(a.Result) == "2" || len(a.errors()) == 0 {
				t.Errorf("%s: the Function constructor ran a string: %s", code, a.text)
			}
		}
	}},
	{"3.5/process_require_and_Node_globals_absent", func(t *testing.T, h *specHost) {
		h.expect(t, `globalThis.__codemode_result__ = ["process", "require", "module", "exports", "Buffer", "global", "__dirname", "__filename"].filter(n => n in globalThis);`, `[]`)
		h.code(t, `globalThis.__codemode_result__ = typeof process;`).failed(t, "ILLEGAL_ACCESS")
		h.code(t, `const fs = require("fs");`).failed(t, "ILLEGAL_ACCESS")
	}},
	{"3.5/deviations_documented_in_the_prompt", func(t *testing.T, h *specHost) {
		mustContain(t, "prompt", h.prompt(t), "`BigInt`", "`eval`, `Function` from strings, `fetch`, `XMLHttpRequest`, `WebSocket`, `setInterval`, `process` and `require` are not available",
			"Also provided beyond the list: `structuredClone`, `console.info`")
		h.expect(t, `console.info("info"); globalThis.__codemode_result__ = [typeof structuredClone, typeof AggregateError, typeof encodeURIComponent];`,
			`["function","function","function"]`)
	}},

	// §4 Standard library.
	{"4/codemode_modules_are_importable", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as d from "@codemode/discovery"; import * as e from "@codemode/errors";
globalThis.__codemode_result__ = [Object.keys(d).length > 0, Object.keys(e).length > 0];`, `[true,true]`)
		h.code(t, `import * as x from "@codemode/other";`).failed(t, "IMPORT_FAILURE")
	}},

	// §4.1 @codemode/discovery.
	{"4.1/discovery_exports", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as d from "@codemode/discovery";
globalThis.__codemode_result__ = [Object.keys(d), typeof d.specVersion,
  ["listServers", "describeServer", "listTools", "getTool", "searchTools"].map(n => typeof d[n])];`,
			`[["describeServer","getTool","listServers","listTools","searchTools","specVersion"],"string",["function","function","function","function","function"]]`)
	}},
	{"4.1/discovery_functions_return_promises", func(t *testing.T, h *specHost) {
		h.expect(t, `import { listServers, describeServer, listTools, getTool, searchTools } from "@codemode/discovery";
const calls = [listServers(), describeServer("calc"), listTools("calc"), getTool("calc", "calc.add"), searchTools("add")];
const isPromise = calls.map(p => p instanceof Promise);
const [servers, desc, tools, tool, found] = await Promise.all(calls);
globalThis.__codemode_result__ = [isPromise, Array.isArray(servers), desc.serverId, tools.map(x => x.toolName), tool.exportName, typeof found.query];`,
			`[[true,true,true,true,true],true,"calc",["calc.add"],"add","string"]`)
	}},
	{"4.1/fields_depend_on_detail", func(t *testing.T, h *specHost) {
		h.expect(t, `import { listTools } from "@codemode/discovery";
const keys = async detail => Object.keys((await listTools("calc", detail && {detail}))[0]).sort();
globalThis.__codemode_result__ = [await keys("name"), await keys("description"), await keys(undefined)];`,
			`[["exportName","toolName"],["annotations","description","exportName","toolName"],["annotations","description","exportName","toolName"]]`)
	}},

	// §4.2 Core data types.
	{"4.2.1/ServerInfo", func(t *testing.T, h *specHost) {
		var servers []map[string]any
		h.code(t, `import { listServers } from "@codemode/discovery"; globalThis.__codemode_result__ = await listServers();`).ok(t, &servers)
		var ids []string
		for _, s := range servers {
			id, _ := s["serverId"].(string)
			name, _ := s["serverName"].(string)
			caps, _ := s["capabilities"].([]any)
			if id == "" || name == "" || len(caps) == 0 {
				t.Errorf("server %v needs serverId, serverName and capabilities", s)
			}
			ids = append(ids, id)
		}
		if want := sortedKeys(specToolsByServer); !slices.Equal(ids, want) {
			t.Errorf("servers %v, want %v", ids, want)
		}
	}},
	{"4.2.2/ServerDescription", func(t *testing.T, h *specHost) {
		var d map[string]any
		h.code(t, `import { describeServer } from "@codemode/discovery"; globalThis.__codemode_result__ = await describeServer("my-app--2");`).ok(t, &d)
		if d["serverId"] != "my-app--2" || d["serverName"] != "My App" || d["description"] == nil || d["capabilities"] == nil {
			t.Errorf("describeServer: %v", d)
		}
		if v, ok := d["version"]; ok {
			if _, isString := v.(string); !isString {
				t.Errorf("version %v is not a string", v)
			}
		}
	}},
	{"4.2.3/ToolSummary", func(t *testing.T, h *specHost) {
		h.expect(t, `import { listTools } from "@codemode/discovery";
const [t] = (await listTools("data")).filter(x => x.toolName === "data.annotated");
globalThis.__codemode_result__ = t;`,
			`{"toolName":"data.annotated","exportName":"annotated","description":"A tool with stated hints.",
  "annotations":{"title":"Annotated tool","readOnlyHint":true,"destructiveHint":false,"idempotentHint":false,"openWorldHint":true}}`)
	}},
	{"4.2.4/ToolDefinition", func(t *testing.T, h *specHost) {
		var d map[string]any
		h.code(t, `import { getTool } from "@codemode/discovery"; globalThis.__codemode_result__ = await getTool("data", "data.structured");`).ok(t, &d)
		in, _ := d["inputSchema"].(map[string]any)
		out, _ := d["outputSchema"].(map[string]any)
		if d["toolName"] != "data.structured" || d["exportName"] != "structured" || in["type"] != "object" || out["type"] != "object" ||
			d["description"] == nil || d["annotations"] == nil {
			t.Errorf("getTool: %v", d)
		}
		// By export name too.
		h.expect(t, `import { getTool } from "@codemode/discovery"; globalThis.__codemode_result__ = (await getTool("names", "delete_")).toolName;`, `"names.delete"`)
	}},
	{"4.2.5/SearchResults", func(t *testing.T, h *specHost) {
		var r struct {
			Query   string           `json:"query"`
			Results []map[string]any `json:"results"`
		}
		h.code(t, `import { searchTools } from "@codemode/discovery"; globalThis.__codemode_result__ = await searchTools("add two numbers");`).ok(t, &r)
		if r.Query != "add two numbers" || len(r.Results) == 0 {
			t.Fatalf("searchTools: %+v", r)
		}
		top := r.Results[0]
		if top["serverId"] != "calc" || top["toolName"] != "calc.add" || top["exportName"] != "add" || top["description"] == nil {
			t.Errorf("the best match: %v", top)
		}
		for _, res := range r.Results {
			if _, ok := res["serverId"].(string); !ok {
				t.Errorf("result without serverId: %v", res)
			}
		}
	}},
	{"4.2.6/listTools_detail_defaults_to_description", func(t *testing.T, h *specHost) {
		h.expect(t, `import { listTools } from "@codemode/discovery";
const [a, b] = [await listTools("calc"), await listTools("calc", {detail: "description"})];
globalThis.__codemode_result__ = JSON.stringify(a) === JSON.stringify(b) && a[0].description !== undefined && a[0].inputSchema === undefined;`, `true`)
	}},
	{"4.2.7/searchTools_options", func(t *testing.T, h *specHost) {
		h.expect(t, `import { searchTools } from "@codemode/discovery";
const all = await searchTools("whoami");
const one = await searchTools("whoami", {serverId: "my-app--2"});
const limited = await searchTools("the", {limit: 1});
const def = (await searchTools("add")).results[0];
globalThis.__codemode_result__ = [all.results.map(r => r.serverId).sort(), one.results.map(r => r.serverId), limited.results.length,
  Object.keys(def).sort()];`,
			`[["my-app","my-app--2"],["my-app--2"],1,["annotations","description","exportName","serverId","toolName"]]`)
	}},

	// §4.3 Detail levels.
	{"4.3/detail_name", func(t *testing.T, h *specHost) {
		h.expect(t, `import { listTools, searchTools } from "@codemode/discovery";
globalThis.__codemode_result__ = [(await listTools("calc", {detail: "name"}))[0], (await searchTools("add", {detail: "name", serverId: "calc"})).results[0]];`,
			`[{"toolName":"calc.add","exportName":"add"},{"serverId":"calc","toolName":"calc.add","exportName":"add"}]`)
	}},
	{"4.3/detail_description", func(t *testing.T, h *specHost) {
		h.expect(t, `import { listTools } from "@codemode/discovery";
globalThis.__codemode_result__ = (await listTools("calc", {detail: "description"}))[0];`,
			`{"toolName":"calc.add","exportName":"add","description":"Add two numbers.",
  "annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}}`)
	}},
	{"4.3/detail_full", func(t *testing.T, h *specHost) {
		h.expect(t, `import { listTools, searchTools } from "@codemode/discovery";
const [d] = (await listTools("data", {detail: "full"})).filter(t => t.toolName === "data.structured");
const hit = (await searchTools("look an item up", {detail: "full", serverId: "data", limit: 1})).results[0];
globalThis.__codemode_result__ = [Object.keys(d).sort(), d.inputSchema.required, d.outputSchema.type, hit.toolName, typeof hit.inputSchema];`,
			`[["annotations","declaration","description","exportName","inputSchema","outputSchema","toolName"],["id"],"object","data.structured","object"]`)
	}},
	{"4.3/unknown_detail_is_an_error", func(t *testing.T, h *specHost) {
		h.expect(t, `import { listTools } from "@codemode/discovery";
try { await listTools("calc", {detail: "everything"}); } catch (e) { globalThis.__codemode_result__ = [e.name, e.message.includes("detail")]; }`,
			`["TypeError",true]`)
	}},

	// §4.4 Type information.
	{"4.4/description_has_the_declarations_and_server_modules", func(t *testing.T, h *specHost) {
		desc := h.description(t)
		mustContain(t, "codemode.run description", desc, `declare module "@codemode/discovery"`, `declare module "@codemode/errors"`,
			"listServers(): Promise<ServerInfo[]>", "class SchemaValidationError extends CodemodeError", "codemode://types/<serverId>.d.ts")
		for path, tools := range specToolsByServer {
			mustContain(t, "codemode.run description", desc, fmt.Sprintf(" %s (%d)", path, len(tools)))
		}
	}},
	{"4.4/resource_declares_every_export", func(t *testing.T, h *specHost) {
		for path, tools := range specToolsByServer {
			decl := h.declaration(t, path)
			mustContain(t, path+" declaration", decl, fmt.Sprintf("declare module \"@codemode/servers/%s\" {", path), "export const __meta__:")
			meta, _ := exportsOf(t, h, path)
			for _, tool := range tools {
				exp := meta[tool]
				if !strings.Contains(decl, "export function "+exp+"(") && !strings.Contains(decl, " as "+exp+" };") {
					t.Errorf("the %s declaration does not export %s (%s)", path, exp, tool)
				}
				if !strings.Contains(decl, "Canonical MCP tool: "+tool) && !strings.Contains(decl, fmt.Sprintf("Canonical MCP tool: %q", tool)) {
					t.Errorf("the %s declaration does not name %s", path, tool)
				}
			}
		}
	}},
	{"4.4/resource_template_is_listed", func(t *testing.T, h *specHost) {
		res, err := h.c.ListResourceTemplates(context.Background(), mcp.ListResourceTemplatesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range res.ResourceTemplates {
			uris = append(uris, r.URITemplate.Raw())
		}
		if !slices.Contains(uris, "codemode://types/{serverId}.d.ts") {
			t.Errorf("resource templates %v", uris)
		}
		if _, err := h.c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "codemode://types/nope.d.ts"}}); err == nil {
			t.Error("reading the declaration of an unknown server succeeded")
		}
	}},

	// §4.5 @codemode/errors.
	{"4.5/errors_module", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as e from "@codemode/errors";
globalThis.__codemode_result__ = Object.keys(e).map(k => [k, typeof e[k], new e[k]("m").name]);`,
			`[["AuthenticationError","function","AuthenticationError"],["CodemodeError","function","CodemodeError"],
  ["SandboxLimitError","function","SandboxLimitError"],["SchemaValidationError","function","SchemaValidationError"],
  ["ServerNotFoundError","function","ServerNotFoundError"],["ToolCallError","function","ToolCallError"],
  ["ToolNotFoundError","function","ToolNotFoundError"]]`)
	}},

	// §5 Per-server modules.
	{"5/import_a_server_namespace", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as gdrive from "@codemode/servers/calc";
globalThis.__codemode_result__ = [gdrive[Symbol.toStringTag], Object.getPrototypeOf(gdrive), (await gdrive.add({a: 20, b: 22})).sum];`, `["Module",null,42]`)
	}},

	// §5.0.1 Module path mapping.
	{"5.0.1/lowercased_and_dashed", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as a from "@codemode/servers/my-app--2"; import * as w from "@codemode/servers/weird-name-v2";
globalThis.__codemode_result__ = [await a.app2_whoami(), await w.weird_ping()];`, `["My App","--Weird..NAME_v2--"]`)
		h.code(t, `import * as a from "@codemode/servers/My App";`).failed(t, "IMPORT_FAILURE")
	}},
	{"5.0.1/collision_gets_--2", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as first from "@codemode/servers/my-app"; import * as second from "@codemode/servers/my-app--2";
globalThis.__codemode_result__ = [Object.keys(first), await first.app1_whoami(), Object.keys(second), await second.app2_whoami()];`,
			`[["__meta__","app1_whoami"],"my-app",["__meta__","app2_whoami"],"My App"]`)
	}},
	{"5.0.1/path_in___meta__.serverId_and_discovery", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as first from "@codemode/servers/my-app"; import * as second from "@codemode/servers/my-app--2";
import * as weird from "@codemode/servers/weird-name-v2";
import { listServers, searchTools } from "@codemode/discovery";
const servers = (await listServers()).filter(s => s.serverName !== s.serverId).map(s => [s.serverId, s.serverName]);
const hits = (await searchTools("which app", {detail: "name"})).results.map(r => r.serverId).sort();
globalThis.__codemode_result__ = [first.__meta__.serverId, second.__meta__.serverId, weird.__meta__.serverId, servers, hits];`,
			`["my-app","my-app--2","weird-name-v2",[["my-app--2","My App"],["weird-name-v2","--Weird..NAME_v2--"]],["my-app","my-app--2"]]`)
	}},

	// §5.1 Exports.
	{"5.1/one_async_function_per_tool_and___meta__", func(t *testing.T, h *specHost) {
		for path, tools := range specToolsByServer {
			meta, keys := exportsOf(t, h, path)
			if got := sortedKeys(meta); !slices.Equal(got, tools) {
				t.Errorf("%s: __meta__ lists %v, want %v", path, got, tools)
			}
			want := []string{"__meta__"}
			for _, e := range meta {
				want = append(want, e)
			}
			sort.Strings(want)
			if !slices.Equal(keys, want) {
				t.Errorf("%s: exports %v, want %v", path, keys, want)
			}
		}
		h.expect(t, `import * as data from "@codemode/servers/data";
const fns = Object.keys(data).filter(k => k !== "__meta__");
const p = data.plain_text();
globalThis.__codemode_result__ = [fns.every(k => typeof data[k] === "function"), p instanceof Promise, await p];`, `[true,true,"just words"]`)
	}},

	// §5.2 __meta__.
	{"5.2/__meta___shape", func(t *testing.T, h *specHost) {
		var meta map[string]any
		h.code(t, `import { __meta__ } from "@codemode/servers/calc"; globalThis.__codemode_result__ = __meta__;`).ok(t, &meta)
		want := map[string]any{"serverId": "calc", "serverName": "calc",
			"tools": []any{map[string]any{"toolName": "calc.add", "exportName": "add", "description": "Add two numbers."}}}
		delete(meta, "serverVersion")
		if fmt.Sprint(meta) != fmt.Sprint(want) {
			t.Errorf("__meta__ %v, want %v", meta, want)
		}
	}},

	// §5.3 Call shape.
	{"5.3/await_server_dot_tool_with_input", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as server from "@codemode/servers/data";
globalThis.__codemode_result__ = await server.structured({id: "o-1"});`, `{"id":"o-1","kind":"structured"}`)
	}},

	// §5.3.1 Input.
	{"5.3.1/object_schema_takes_one_input", func(t *testing.T, h *specHost) {
		h.expect(t, `import { add } from "@codemode/servers/calc"; globalThis.__codemode_result__ = [add.length, (await add({a: 1, b: 2})).sum];`, `[1,3]`)
	}},
	{"5.3.1/empty_schema_takes_no_argument_or_an_empty_object", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as data from "@codemode/servers/data";
globalThis.__codemode_result__ = [await data.no_args(), await data.no_args({}), await data.bare_object(), await data.bare_object({}),
  await data.no_args(undefined), await data.no_args(null)];`,
			`[{"args":0},{"args":0},"bare","bare",{"args":0},{"args":0}]`)
	}},
	{"5.3.1/non_object_input_is_SchemaValidationError", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as data from "@codemode/servers/data"; import { SchemaValidationError } from "@codemode/errors";
const attempt = async (f) => { try { await f(); return "called"; } catch (e) {
  return [e instanceof SchemaValidationError, e.code, e.toolName, e.exportName, e.path, e.expected, e.received, typeof e.hint]; } };
globalThis.__codemode_result__ = [await attempt(() => data.structured("o-1")), await attempt(() => data.array_root(["a"])),
  await attempt(() => data.no_args(5))];`,
			`[[true,"VALIDATION","data.structured","structured","","object","a string","string"],
  [true,"VALIDATION","data.array_root","array_root","","object","an array","string"],
  [true,"VALIDATION","data.no_args","no_args","","object","a number","string"]]`)
		mustContain(t, "prompt", h.prompt(t), "a tool whose schema is not an object cannot be called and rejects with SchemaValidationError")
	}},

	// §5.3.2 Output.
	{"5.3.2/structuredContent_wins_over_content", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as data from "@codemode/servers/data";
globalThis.__codemode_result__ = [await data.structured({id: "x"}), await data.hostile().then(r => r.ok)];`, `[{"id":"x","kind":"structured"},1]`)
	}},
	{"5.3.2/single_text_is_a_string", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as data from "@codemode/servers/data"; globalThis.__codemode_result__ = await data.plain_text();`, `"just words"`)
	}},
	{"5.3.2/JSON-looking_text_stays_a_string", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as data from "@codemode/servers/data"; const r = await data.json_text();
globalThis.__codemode_result__ = [typeof r, r, JSON.parse(r).n];`, `["string","{\"kind\":\"json text\",\"n\":[1,2,3]}",[1,2,3]]`)
	}},
	{"5.3.2/image_is_the_full_result_with_base64", func(t *testing.T, h *specHost) {
		var r map[string]any
		h.code(t, `import * as data from "@codemode/servers/data"; globalThis.__codemode_result__ = await data.image();`).ok(t, &r)
		content, _ := r["content"].([]any)
		if len(content) != 1 {
			t.Fatalf("want the full result with its content: %v", r)
		}
		block, _ := content[0].(map[string]any)
		if block["type"] != "image" || block["data"] != imageData || block["mimeType"] != "image/png" {
			t.Errorf("image block %v, want its base64 data", block)
		}
	}},
	{"5.3.2/audio_is_the_full_result_with_base64", func(t *testing.T, h *specHost) {
		var r map[string]any
		h.code(t, `import * as data from "@codemode/servers/data"; globalThis.__codemode_result__ = await data.audio();`).ok(t, &r)
		content, _ := r["content"].([]any)
		block, _ := content[0].(map[string]any)
		if len(content) != 1 || block["type"] != "audio" || block["data"] != audioData || block["mimeType"] != "audio/wav" {
			t.Errorf("audio result %v, want the full result with base64 data", r)
		}
	}},
	{"5.3.2/text_and_image_is_the_full_result", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as data from "@codemode/servers/data"; const r = await data.image_text();
globalThis.__codemode_result__ = r.content.map(c => [c.type, c.text ?? c.data.length]);`, fmt.Sprintf(`[["text","a caption"],["image",%d]]`, len(imageData)))
	}},
	{"5.3.2/two_text_blocks_are_the_full_result", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as data from "@codemode/servers/data"; const r = await data.two_blocks();
globalThis.__codemode_result__ = r.content;`, `[{"type":"text","text":"a"},{"type":"text","text":"b"}]`)
	}},
	{"5.3.2/rules_documented_in_the_prompt", func(t *testing.T, h *specHost) {
		mustContain(t, "prompt", h.prompt(t), "Results of tool calls (unwrapping, in order)", "1. `structuredContent` when present (the content is ignored)",
			"2. A single text block: its text, as a string", "3. A result with image or audio blocks: the whole MCP result object, binary data as base64 strings",
			"4. Anything else: the whole MCP result object")
	}},

	// §6.1 Identifier mapping.
	{"6.1/illegal_characters_become_underscores", func(t *testing.T, h *specHost) {
		meta, _ := exportsOf(t, h, "names")
		if meta["names.get.item"] != "get_item" || meta["names.café"] != "caf_" {
			t.Errorf("exports %v", meta)
		}
	}},
	{"6.1/leading_digit_gets_an_underscore", func(t *testing.T, h *specHost) {
		if meta, _ := exportsOf(t, h, "names"); meta["names.123tool"] != "_123tool" {
			t.Errorf("exports %v", meta)
		}
	}},
	{"6.1/reserved_word_gets_an_underscore", func(t *testing.T, h *specHost) {
		if meta, _ := exportsOf(t, h, "names"); meta["names.delete"] != "delete_" || meta["names.class"] != "class_" {
			t.Errorf("exports %v", meta)
		}
	}},
	{"6.1/collisions_get___N_in_canonical_order", func(t *testing.T, h *specHost) {
		// "names.a-b" sorts before "names.a_b" ('-' < '_'): it keeps a_b.
		if meta, _ := exportsOf(t, h, "names"); meta["names.a-b"] != "a_b" || meta["names.a_b"] != "a_b__2" {
			t.Errorf("exports %v", meta)
		}
	}},
	{"6.1/mapping_in___meta___calls_the_canonical_tool", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as n from "@codemode/servers/names";
const calls = n.__meta__.tools.map(t => [t.exportName, t.toolName]);
globalThis.__codemode_result__ = await Promise.all(calls.map(async ([e, name]) => (await n[e]()) === name));`,
			`[true,true,true,true,true,true,true]`)
		h.expect(t, `import { delete_, class_, _123tool, a_b__2 } from "@codemode/servers/names";
globalThis.__codemode_result__ = [await delete_(), await class_(), await _123tool(), await a_b__2()];`,
			`["names.delete","names.class","names.123tool","names.a_b"]`)
	}},
	{"6.1/mapping_is_stable", func(t *testing.T, h *specHost) {
		first, _ := exportsOf(t, h, "names")
		second, _ := exportsOf(t, h, "names")
		if fmt.Sprint(first) != fmt.Sprint(second) {
			t.Errorf("the mapping changed between runs: %v, then %v", first, second)
		}
	}},

	// §6.2 Declarations (the schema features are covered in depth by
	// package typescript: TestDeclareModuleSchemaFeatures).
	{"6.2/declaration_of_a_rich_schema", func(t *testing.T, h *specHost) {
		mustContain(t, "data declaration", h.declaration(t, "data"),
			`color?: "red" | "green";`, `kind?: "fixed";`, `either?: string | number;`, `any?: boolean | number`, `maybe?: string | null;`,
			`node?: Data_Rich$node;`, `type Data_Rich$node = { children?: Data_Rich$node[] };`, `extra?: { [key: string]: number };`,
			`Property names matching "^x-"`, `pair?: [string?, number?, ...unknown[]];`,
			`weird?: unknown /* not: negation is not expressed */;`, "Warning: the input type does not express all of its schema",
			"export function structured(input: Data_StructuredInput): Promise<Data_StructuredOutput>;")
	}},

	// §6.3 Annotations.
	{"6.3/annotations_in_doc_comments", func(t *testing.T, h *specHost) {
		mustContain(t, "data declaration", h.declaration(t, "data"),
			"@title Annotated tool", "@annotations readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true",
			"@annotations readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false")
	}},
	{"6.3/annotations_in_ToolSummary_and_ToolDefinition", func(t *testing.T, h *specHost) {
		h.expect(t, `import { listTools, getTool, searchTools } from "@codemode/discovery";
const summary = (await listTools("data")).filter(t => t.toolName === "data.destroy")[0].annotations;
const def = (await getTool("data", "data.destroy")).annotations;
const hit = (await searchTools("destroy everything", {serverId: "data", limit: 1})).results[0].annotations;
globalThis.__codemode_result__ = [summary, def, hit];`,
			`[{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":false},
  {"readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":false},
  {"readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}]`)
	}},

	// §7.1 Error classes.
	{"7.1/classes_extend_CodemodeError", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as e from "@codemode/errors";
const names = ["SchemaValidationError", "ToolNotFoundError", "ServerNotFoundError", "ToolCallError", "AuthenticationError", "SandboxLimitError"];
globalThis.__codemode_result__ = [new e.CodemodeError("m") instanceof Error,
  names.map(n => new e[n]("m") instanceof e.CodemodeError), new e.AuthenticationError("m") instanceof e.ToolCallError,
  Object.getPrototypeOf(e.AuthenticationError) === e.ToolCallError, Object.getPrototypeOf(e.ToolCallError) === e.CodemodeError];`,
			`[true,[true,true,true,true,true,true],true,true,true]`)
	}},
	{"7.1/each_class_is_thrown_for_its_failure", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as data from "@codemode/servers/data";
import { describeServer, getTool } from "@codemode/discovery";
import * as e from "@codemode/errors";
const classOf = async (f) => { try { await f(); return "none"; } catch (x) {
  return Object.keys(e).filter(k => k !== "CodemodeError" && x instanceof e[k]).join("+"); } };
globalThis.__codemode_result__ = [await classOf(() => data.structured({id: 1})), await classOf(() => getTool("data", "nope")),
  await classOf(() => describeServer("nope")), await classOf(() => data.fail()), await classOf(() => data.locked())];`,
			`["SchemaValidationError","ToolNotFoundError","ServerNotFoundError","ToolCallError","AuthenticationError+ToolCallError"]`)
		a := h.run(t, map[string]any{"limits": map[string]any{"maxToolCalls": 1}, "code": `import * as data from "@codemode/servers/data";
await data.plain_text(); await data.plain_text();`})
		if d := a.failed(t, "SANDBOX_LIMIT"); d.ErrorClass != "SandboxLimitError" {
			t.Errorf("errorClass %q, want SandboxLimitError", d.ErrorClass)
		}
	}},

	// §7.2 Schema validation errors.
	{"7.2/fields_of_SchemaValidationError", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as data from "@codemode/servers/data";
try { await data.with_examples({qty: "three"}); } catch (e) {
  globalThis.__codemode_result__ = {name: e.name, toolName: e.toolName, exportName: e.exportName, serverId: e.serverId, path: e.path,
    expected: e.expected, received: e.received, example: e.example, hint: typeof e.hint}; }`,
			`{"name":"SchemaValidationError","toolName":"data.with_examples","exportName":"with_examples","serverId":"data","path":"/qty",
  "expected":"number","received":"string","example":{"qty":3},"hint":"string"}`)
	}},
	{"7.2/canonical_name_of_a_mapped_export", func(t *testing.T, h *specHost) {
		h.expect(t, `import { get_item } from "@codemode/servers/names";
try { await get_item(7); } catch (e) { globalThis.__codemode_result__ = [e.name, e.toolName, e.exportName]; }`,
			`["SchemaValidationError","names.get.item","get_item"]`)
	}},
	{"7.2/example_from_the_tool_examples", func(t *testing.T, h *specHost) {
		h.expect(t, `import { with_examples } from "@codemode/servers/data";
try { await with_examples({}); } catch (e) { globalThis.__codemode_result__ = [e.path, e.example]; }`, `["/qty",{"qty":3}]`)
	}},
	{"7.2/example_from_the_schema_examples", func(t *testing.T, h *specHost) {
		h.expect(t, `import { schema_examples } from "@codemode/servers/data";
try { await schema_examples({qty: 1.5}); } catch (e) { globalThis.__codemode_result__ = [e.name, e.path, e.example]; }`,
			`["SchemaValidationError","/qty",{"qty":12}]`)
	}},
	{"7.2/example_synthesised_without_examples", func(t *testing.T, h *specHost) {
		var got []any
		h.code(t, `import { no_examples } from "@codemode/servers/data";
try { await no_examples({name: "n"}); } catch (e) { globalThis.__codemode_result__ = [e.path, e.expected, e.received, e.example]; }`).ok(t, &got)
		if len(got) != 4 || got[0] != "/count" {
			t.Fatalf("error %v", got)
		}
		ex, _ := got[3].(map[string]any)
		if _, isString := ex["name"].(string); !isString || ex["count"] == nil {
			t.Errorf("the example %v should have the required name and count", got[3])
		}
	}},

	// §7.3 Error hints.
	{"7.3/every_error_has_a_hint", func(t *testing.T, h *specHost) {
		var hints map[string]string
		h.code(t, `import * as data from "@codemode/servers/data";
import { describeServer, getTool } from "@codemode/discovery";
import * as e from "@codemode/errors";
const hint = async (f) => { try { await f(); return ""; } catch (x) { return x instanceof e.CodemodeError ? x.hint : ""; } };
const made = Object.fromEntries(Object.keys(e).map(k => [k + " (new)", new e[k]("m").hint]));
globalThis.__codemode_result__ = {...made,
  SchemaValidationError: await hint(() => data.structured({})),
  SchemaValidationErrorNotAnObject: await hint(() => data.structured(1)),
  ToolNotFoundError: await hint(() => getTool("data", "nope")),
  ServerNotFoundError: await hint(() => describeServer("nope")),
  ToolCallError: await hint(() => data.fail())};`).ok(t, &hints)
		if len(hints) != 12 {
			t.Errorf("hints %v", hints)
		}
		for k, v := range hints {
			if strings.TrimSpace(v) == "" {
				t.Errorf("%s has no hint", k)
			}
		}
	}},
	{"7.3/diagnostics_of_failures_have_hints", func(t *testing.T, h *specHost) {
		for _, args := range []map[string]any{
			{"code": `const x = ;`},
			{"code": `throw new Error("x");`},
			{"code": `import * as x from "@codemode/servers/nope";`},
			{"code": `eval("1");`},
			{"code": `const r = require("fs");`},
			{"code": `globalThis.__codemode_result__ = process.env;`},
			{"code": `import * as d from "@codemode/servers/data"; await d.plain_text(); await d.plain_text();`, "limits": map[string]any{"maxToolCalls": 1}},
		} {
			for _, d := range h.run(t, args).errors() {
				if d.Hint == "" {
					t.Errorf("%v: diagnostic without a hint: %+v", args["code"], d)
				}
				for _, word := range []string{"callTool", "codecallContext", "mcpLog"} {
					if strings.Contains(d.Hint, word) {
						t.Errorf("%v: the hint names %q, which a Code Mode script does not have: %s", args["code"], word, d.Hint)
					}
				}
			}
		}
	}},

	// §7.4 Timeouts, partial results and cancellation.
	{"7.4/timeout_is_SandboxLimitError_and_keeps_logs", func(t *testing.T, h *specHost) {
		h.probe.drain()
		a := h.run(t, map[string]any{"limits": map[string]any{"timeoutMs": 500}, "code": `import * as data from "@codemode/servers/data";
console.log("before the slow call");
await data.sleep({ms: 600000});
console.log("never");`})
		d := a.failed(t, "SANDBOX_LIMIT")
		if d.ErrorClass != "SandboxLimitError" || !strings.Contains(d.Message, "timeoutMs") {
			t.Errorf("diagnostic %+v", *d)
		}
		if len(a.Logs) != 1 || a.Logs[0].Message != "before the slow call" {
			t.Errorf("logs %+v", a.Logs)
		}
		wait(t, h.probe.sleepCancelled, "cancelling the slow call when the run timed out")
	}},
	{"7.4/oversized_allocation_is_a_catchable_RangeError", func(t *testing.T, h *specHost) {
		// A deviation: one allocation past the budget is refused before it
		// is made, as a built-in's RangeError the script can catch.
		a := h.run(t, map[string]any{"limits": map[string]any{"maxMemoryBytes": 1 << 20}, "code": `let caught;
try { "x".repeat(4 << 20); } catch (e) { caught = [e.name, e.message.includes("sandbox limit")]; }
globalThis.__codemode_result__ = caught;`})
		a.ok(t, nil)
		if string(a.Result) != `["RangeError",true]` {
			t.Errorf("result %s", a.Result)
		}
	}},
	{"7.4/cancellation_cancels_the_call_and_ends_the_run", func(t *testing.T, h *specHost) {
		h.probe.drain()
		script := fmt.Sprintf(`import * as data from "@codemode/servers/data"; // %s %d
await data.sleep({ms: 600000});`, h.iso, time.Now().UnixNano())
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		type answered struct {
			a   *cmAnswer
			err error
		}
		done := make(chan answered, 1)
		go func() {
			a, err := callRun(ctx, h.c, map[string]any{"code": script})
			done <- answered{a, err}
		}()
		wait(t, h.probe.sleepStarted, "the slow call")
		cancel()
		wait(t, h.probe.sleepCancelled, "cancelling the in-flight tool call")
		select {
		case r := <-done:
			// The client stopped waiting; if an answer reaches it anyway, it
			// says the run was cancelled.
			if r.err == nil && (r.a.diag("CANCELLED") == nil || string(r.a.Result) != "null") {
				t.Errorf("the cancelled request was answered as if it ran: %s", r.a.text)
			}
		case <-time.After(time.Minute):
			t.Fatal("the cancelled request did not return")
		}
		// The run ended: its end is in the audit log.
		deadline := time.Now().Add(time.Minute)
		for {
			var ends []string
			for _, e := range h.auditEvents(script) {
				if e["msg"] == "execute.end" && e["via"] == "codemode" {
					ends = append(ends, fmt.Sprint(e["status"]))
				}
			}
			if len(ends) == 1 {
				if ends[0] == "ok" {
					t.Errorf("the cancelled run ended ok")
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the cancelled run never ended: %v", h.auditEvents(script))
			}
			time.Sleep(10 * time.Millisecond)
		}
		// And the sandbox is free for the next run.
		h.expect(t, `globalThis.__codemode_result__ = "next";`, `"next"`)
	}},

	// §8 Tool list changes.
	{"8/new_tool_visible_at_the_next_run", func(t *testing.T, h *specHost) {
		fresh := newSpecHost(t, h.iso)
		fresh.srv.AddTool(mcp.NewTool("calc.mul", append(readOnlyOpts(), mcp.WithNumber("a"), mcp.WithNumber("b"))...),
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultStructured(map[string]any{"product": req.GetFloat("a", 0) * req.GetFloat("b", 0)}, "product"), nil
			})
		fresh.expect(t, `import * as calc from "@codemode/servers/calc"; import { listTools } from "@codemode/discovery";
globalThis.__codemode_result__ = [calc.__meta__.tools.map(t => t.exportName), (await calc.mul({a: 6, b: 7})).product,
  (await listTools("calc", {detail: "name"})).map(t => t.exportName)];`, `[["add","mul"],42,["add","mul"]]`)
		mustContain(t, "codemode.run description", fresh.description(t), " calc (2)")
		mustContain(t, "calc declaration", fresh.declaration(t, "calc"), "export function mul(")
		fresh.srv.DeleteTools("calc.mul")
		fresh.code(t, `import { mul } from "@codemode/servers/calc";`).failed(t, "IMPORT_FAILURE")
	}},
	{"8/in-flight_run_keeps_its_modules", func(t *testing.T, h *specHost) {
		fresh := newSpecHost(t, h.iso)
		script := `import * as data from "@codemode/servers/data";
import { listTools, listServers } from "@codemode/discovery";
const view = async () => [data.__meta__.tools.length, Object.keys(data).length,
  (await listTools("data", {detail: "name"})).map(t => t.toolName).filter(n => n === "data.late"), (await listServers()).length];
const before = await view();
await data.gate();
globalThis.__codemode_result__ = {before, after: await view()};`
		done := make(chan *cmAnswer, 1)
		go func() {
			a, err := callRun(context.Background(), fresh.c, map[string]any{"code": script})
			if err != nil {
				t.Error(err)
			}
			done <- a
		}()
		wait(t, fresh.probe.gateEntered, "the in-flight run reaching the gate")
		fresh.srv.AddTool(catalog.SetMeta(mcp.NewTool("data.late", readOnlyOpts()...), catalog.Meta{}), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("late"), nil
		})
		fresh.srv.AddTool(mcp.NewTool("extra.ping", readOnlyOpts()...), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("pong"), nil
		})
		// The next run sees the new tools...
		fresh.expect(t, `import { late } from "@codemode/servers/data"; import { ping } from "@codemode/servers/extra";
globalThis.__codemode_result__ = [await late(), await ping()];`, `["late","pong"]`)
		// ...while the run in flight keeps the modules it started with.
		close(fresh.probe.gateRelease)
		var a *cmAnswer
		select {
		case a = <-done:
		case <-time.After(time.Minute):
			t.Fatal("the in-flight run did not end")
		}
		if a == nil {
			return
		}
		var out struct{ Before, After []any }
		a.ok(t, &out)
		if fmt.Sprint(out.Before) != fmt.Sprint(out.After) || len(out.Before) != 4 || fmt.Sprint(out.Before[2]) != "[]" {
			t.Errorf("the in-flight run's view changed: before %v, after %v", out.Before, out.After)
		}
		fresh.expect(t, `import * as data from "@codemode/servers/data"; import { listServers } from "@codemode/discovery";
globalThis.__codemode_result__ = [data.__meta__.tools.some(t => t.toolName === "data.late"), (await listServers()).some(s => s.serverId === "extra")];`,
			`[true,true]`)
	}},

	// §9 Logging conventions.
	{"9/console_log_debug_warn_error", func(t *testing.T, h *specHost) {
		a := h.code(t, `["log", "debug", "warn", "error"].forEach(m => console[m](m, "method"));`)
		a.ok(t, nil)
		var got []string
		for _, l := range a.Logs {
			got = append(got, l.Level+"="+l.Message)
		}
		if !slices.Equal(got, []string{"log=log method", "debug=debug method", "warn=warn method", "error=error method"}) {
			t.Errorf("logs %v", got)
		}
	}},
	{"9/truncation_is_signalled", func(t *testing.T, h *specHost) {
		a := h.run(t, map[string]any{"limits": map[string]any{"maxLogBytes": 200}, "code": `console.log("x".repeat(1000));`})
		a.ok(t, nil)
		if n := len(a.Logs); n == 0 || a.Logs[n-1].Level != "warn" || !strings.Contains(a.Logs[n-1].Message, "maxLogBytes") {
			t.Errorf("logs %+v", a.Logs)
		}
		if d := a.diag("LOGS_TRUNCATED"); d == nil || d.Severity != "warning" {
			t.Errorf("want a LOGS_TRUNCATED warning: %s", a.text)
		}
	}},
	{"9/summaries_encouraged", func(t *testing.T, h *specHost) {
		mustContain(t, "prompt", h.prompt(t), "aggregate and summarise before logging")
	}},

	// §10 Multi-server orchestration.
	{"10/two_server_modules_in_one_script", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as data from "@codemode/servers/data"; import * as calc from "@codemode/servers/calc";
const item = await data.structured({id: "abcd"});
const {sum} = await calc.add({a: item.id.length, b: 38});
globalThis.__codemode_result__ = {id: item.id, sum};`, `{"id":"abcd","sum":42}`)
	}},
	{"10/failed_call_is_a_catchable_ToolCallError", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as data from "@codemode/servers/data"; import * as calc from "@codemode/servers/calc";
import { ToolCallError, CodemodeError } from "@codemode/errors";
let caught;
try { await data.fail(); } catch (e) {
  caught = [e instanceof ToolCallError, e instanceof CodemodeError, e instanceof Error, e.name, e.message, e.serverId, e.toolName, e.exportName, e.code, e.retryable]; }
const settled = await Promise.allSettled([data.fail(), calc.add({a: 1, b: 1})]);
globalThis.__codemode_result__ = {caught, settled: settled.map(s => s.status), after: (await calc.add({a: 2, b: 2})).sum};`,
			`{"caught":[true,true,true,"ToolCallError","the warehouse is closed","data","data.fail","fail","EXECUTION",false],
  "settled":["rejected","fulfilled"],"after":4}`)
	}},
	{"10.1/Promise.all_runs_calls_concurrently", func(t *testing.T, h *specHost) {
		h.probe.resetBarrier()
		h.expect(t, `import * as data from "@codemode/servers/data"; import * as calc from "@codemode/servers/calc";
globalThis.__codemode_result__ = await Promise.all([data.barrier(), data.barrier(), calc.add({a: 1, b: 2}).then(r => r.sum)]);`,
			`["together","together",3]`)
	}},

	// §11 Security.
	{"11/module_namespaces_are_frozen", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as data from "@codemode/servers/data"; import * as disc from "@codemode/discovery"; import * as errs from "@codemode/errors";
const original = data.plain_text;
const attempt = (f) => { try { f(); return "allowed"; } catch (e) { return e.name; } };
const attempts = [
  attempt(() => { data.plain_text = () => "forged"; }),
  attempt(() => { data.extra = 1; }),
  attempt(() => { delete data.plain_text; }),
  attempt(() => Object.defineProperty(data, "plain_text", {value: () => "forged"})),
  attempt(() => Object.setPrototypeOf(data, {forged: true})),
  attempt(() => { data.__meta__.serverId = "forged"; }),
  attempt(() => { data.__meta__.tools.push({toolName: "forged"}); }),
  attempt(() => { data.__meta__.tools[0].exportName = "forged"; }),
  attempt(() => { disc.listServers = async () => []; }),
  attempt(() => { errs.ToolCallError = class {}; }),
  attempt(() => { errs.ToolCallError.forged = 1; }),
  attempt(() => { Object.getPrototypeOf(new errs.ToolCallError("m")).hint = "forged"; }),
  attempt(() => { data.plain_text.call = () => "forged"; }),
];
globalThis.__codemode_result__ = [attempts.every(a => a === "TypeError"), data.plain_text === original, await data.plain_text(),
  Object.isFrozen(data), Object.getPrototypeOf(data), data.__meta__.serverId, data.__meta__.tools.length,
  (await disc.listServers()).length > 0, new errs.ToolCallError("m").hint !== "forged", attempts];`,
			fmt.Sprintf(`[true,true,"just words",true,null,"data",%d,true,true,["TypeError","TypeError","TypeError","TypeError","TypeError","TypeError","TypeError","TypeError","TypeError","TypeError","TypeError","TypeError","TypeError"]]`,
				len(specToolsByServer["data"])))
	}},
	{"11/eval_and_new_Function_are_not_available", func(t *testing.T, h *specHost) {
		for _, code := range []string{`eval("globalThis.__codemode_result__ = 1");`, `new Function("globalThis.__codemode_result__ = 1")();`,
			`Function("return 1")();`} {
			h.code(t, code).failed(t, "ILLEGAL_ACCESS")
		}
	}},
	{"11/prototype_pollution_does_not_leak_into_the_next_run", func(t *testing.T, h *specHost) {
		// A run may change its own built-ins; that reaches neither the
		// inputs its calls send nor the next run.
		h.expect(t, `import * as data from "@codemode/servers/data";
const attempt = (f) => { try { f(); return "allowed"; } catch (e) { return e.name; } };
const attempts = [
  attempt(() => { Object.getPrototypeOf({}).polluted = "yes"; }),
  attempt(() => { Object.getPrototypeOf([]).polluted = "yes"; }),
  attempt(() => { Object["proto" + "type"].token = "leaked"; }),
  attempt(() => { JSON.parse = () => "forged"; }),
  attempt(() => { Math.random = () => 4; })];
globalThis.__codemode_result__ = [attempts.length, ({}).polluted, await data.no_args({})];`, `[5,"yes",{"args":0}]`)
		h.expect(t, `globalThis.__codemode_result__ = [({}).polluted, [].polluted, ({}).token, JSON.parse("[1]"), Math.random() < 1];`, `[null,null,null,[1],true]`)
	}},
	{"11/tool_results_are_untrusted", func(t *testing.T, h *specHost) {
		h.expect(t, `import * as data from "@codemode/servers/data";
const r = await data.hostile();
globalThis.__codemode_result__ = [({}).polluted === undefined, Object.getPrototypeOf(r) === Object.getPrototypeOf({}), Object.keys(r).sort(), r.ok];`,
			`[true,true,["__proto__","constructor","ok"],1]`)
	}},
	{"11/import_bindings_cannot_reach_other_tools", func(t *testing.T, h *specHost) {
		// A forged module entry or a name outside the module fails to link.
		h.code(t, `import { destroy_everything } from "@codemode/servers/data";`).failed(t, "IMPORT_FAILURE")
		h.code(t, `globalThis.__codemode_result__ = __codemode_modules__;`).failed(t, "SYNTAX_ERROR")
	}},

	// §12.1 Spec version.
	{"12.1/specVersion_is_semver", func(t *testing.T, h *specHost) {
		var v string
		h.code(t, `import { specVersion } from "@codemode/discovery"; globalThis.__codemode_result__ = specVersion;`).ok(t, &v)
		if !semver.MatchString(v) || !strings.HasPrefix(v, "1.") {
			t.Errorf("specVersion %q is not a semver 1.x version", v)
		}
		mustContain(t, "prompt", h.prompt(t), "Specification version: "+v)
	}},
}
