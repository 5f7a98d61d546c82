package meta

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/presets"
)

type handlers struct {
	env Env
}

// Tools returns the meta-tools a config registers, with their handlers.
// codecall.invoke is present only when directCalls.enabled is set.
//
// They are registered with an input schema that accepts any arguments,
// and tools/list shows their real schemas (Listed): the handlers check
// their arguments themselves and answer every mistake with a code, the
// field and the allowed arguments, which a server's own input validation
// would otherwise pre-empt with its terser wording.
func Tools(cfg *presets.Config, env Env) []server.ServerTool {
	h := &handlers{env: env}
	n := NamesFor(cfg)
	var tools []server.ServerTool
	if cfg.Offers(presets.SurfaceCodeCall) {
		tools = append(tools,
			server.ServerTool{Tool: newTool(n.Search, "Search tools", acceptAnything, true), Handler: h.search},
			server.ServerTool{Tool: newTool(n.Describe, "Describe tools", acceptAnything, true), Handler: h.describe},
			server.ServerTool{Tool: newTool(n.Execute, "Execute a plan", acceptAnything, false), Handler: h.execute})
		if cfg.DirectCalls.Enabled {
			tools = append(tools, server.ServerTool{Tool: newTool(n.Invoke, "Invoke a tool", acceptAnything, false), Handler: h.invoke})
		}
	}
	if cfg.Offers(presets.SurfaceCodeMode) {
		tools = append(tools, server.ServerTool{Tool: newTool(n.Run, "Run code", acceptAnything, false), Handler: h.run})
	}
	return tools
}

// acceptAnything is the registered input schema of the meta-tools.
var acceptAnything = json.RawMessage(`{}`)

// Listed returns the meta-tools as tools/list shows them for the given
// state: real input schemas, and descriptions that name the apps, the
// limits and an example built from the live catalog, so they are computed
// whenever the catalog or the config changes.
func Listed(st *State) map[string]mcp.Tool {
	n := NamesFor(st.Config)
	out := map[string]mcp.Tool{}
	if st.Config.Offers(presets.SurfaceCodeCall) {
		d := descriptions(st)
		out[n.Search] = newTool(n.Search, "Search tools", searchSchema(st.Config), true)
		out[n.Describe] = newTool(n.Describe, "Describe tools", describeSchema, true)
		out[n.Execute] = newTool(n.Execute, "Execute a plan", executeSchema, false)
		if st.Config.DirectCalls.Enabled {
			out[n.Invoke] = newTool(n.Invoke, "Invoke a tool", invokeSchema, false)
		}
		for name, t := range out {
			t.Description = d[name]
			out[name] = t
		}
	}
	if st.Config.Offers(presets.SurfaceCodeMode) {
		out[n.Run] = codeModeTool(st)
	}
	return out
}

// descriptions returns each meta-tool's description for the given state.
// They teach what a model needs for a first plan that works: the
// unwrapping rules, the error contract, approvals, the missing-return
// pitfall, and an example that names a real tool and its real fields.
func descriptions(st *State) map[string]string {
	n := NamesFor(st.Config)
	enabled := st.Catalog.Enabled()
	apps := st.Catalog.Apps()
	appList := strings.Join(apps, ", ")
	if len(apps) > 20 {
		appList = strings.Join(apps[:20], ", ") + fmt.Sprintf(" and %d more", len(apps)-20)
	}
	next := fmt.Sprintf("Then %s for types, %s to run a plan", n.Describe, n.Execute)
	if st.Config.DirectCalls.Enabled {
		next += fmt.Sprintf(", %s to call one tool", n.Invoke)
	}
	d := map[string]string{
		n.Search: fmt.Sprintf("Find tools for a task among %d tools (apps: %s). "+
			"Describe the task in plain words; returns names, short descriptions, appIds, scores (0-1) and requiresApproval. "+
			"Narrow with filter.appIds. %s.", len(enabled), appList, next),
		n.Describe: fmt.Sprintf("Get the definitions of tools found with %s: TypeScript declarations of input and output "+
			"(format \"ts\", the default), JSON Schemas (\"json\") or both; annotations, examples and requiresApproval. "+
			"At most %d per call; unknown names are listed in notFound.",
			n.Search, st.Config.Describe.MaxDefinitions),
	}
	d[n.Execute] = executeDescription(st)
	if st.Config.DirectCalls.Enabled {
		d[n.Invoke] = fmt.Sprintf("Call one tool found with %s: {tool, input}. Returns the tool's own result. "+
			"A failure returns {status: \"tool_error\", error: {toolName, code, message, hint, retryable, toolInput}, runId}; "+
			"APPROVAL_DENIED and APPROVAL_EXPIRED are final, do not retry.", n.Search)
	}
	return d
}

// executeDescription is codecall.execute's description: the plan language,
// the globals, how results and errors reach the plan, and the preset's
// limits.
func executeDescription(st *State) string {
	l := st.Config.VM
	var b strings.Builder
	b.WriteString("Run a plan that calls many tools and returns only what matters. The plan is JavaScript or TypeScript, " +
		"the body of an async function: use await, and end with return (without return the result is null). Example: ")
	b.WriteString(examplePlan(st))
	b.WriteString("\ncallTool(name, input) resolves to the tool's result, unwrapped: its structuredContent, else its text parsed as JSON, else the text. " +
		"A failed call rejects with a ToolError {toolName, code, message, hint, retryable}; with callTool(name, input, {throwOnError: false}) " +
		"it resolves to {ok: true, data} or {ok: false, error} instead. Codes: NOT_FOUND, VALIDATION (fix the input), ACCESS_DENIED, " +
		"APPROVAL_REQUIRED, APPROVAL_DENIED (a person said no: final, do not retry), APPROVAL_EXPIRED (nobody approved in time: do not retry), EXECUTION, TIMEOUT, LIMIT; retry only when retryable is true. " +
		"Tools with requiresApproval ask a person before each call.\n")
	b.WriteString("Also: searchTools(query, {appIds, tags, topK}) and describeTools(names) find and read tools inside the plan; getTool(name); " +
		"codecallContext (the context argument); ")
	if l.AllowConsole {
		b.WriteString("console.log; ")
	}
	b.WriteString("mcpLog(level, message); mcpNotify(event, payload); URL, URLSearchParams, TextEncoder, TextDecoder, structuredClone, setTimeout. ")
	loops := "no loops (use map, filter, reduce)"
	if l.AllowLoops {
		loops = "loops allowed"
	}
	fmt.Fprintf(&b, "Promise.all runs up to %d calls at once.\nLimits (%s preset): %s, %d tool calls, %s; no eval, Function, import or require. "+
		"Returns {status, result | error, logs, toolTrace, warnings, metrics, runId}; status is ok, syntax_error, illegal_access, "+
		"runtime_error, tool_error, timeout or limit_exceeded.",
		l.MaxConcurrency, st.Config.Preset, l.Timeout, l.MaxToolCalls, loops)
	if st.PythonEnabled() {
		b.WriteString(pythonDescription(st))
	}
	return b.String()
}

// examplePlan is a one-line plan calling a real tool of the catalog with
// its real required fields, so the example a model copies works. It
// prefers a read-only tool that needs no approval, then one with an
// example input, then one with exactly one required field (the example
// shows an argument without growing long), then the shortest name.
func examplePlan(st *State) string {
	best := exampleTool(st)
	if best == nil {
		return "const r = await callTool('app.tool_name', {field: 'value'}); return r;"
	}
	return fmt.Sprintf("const r = await callTool(%s, %s); return r;", jsString(best.Name), exampleInput(best))
}

// exampleTool is the tool the examples call: a read-only tool that needs
// no approval, preferring one with an example input, then one with exactly
// one required field, then the shortest name; nil in an empty catalog.
func exampleTool(st *State) *catalog.Tool {
	var best *catalog.Tool
	bestScore := -1
	for _, t := range st.Catalog.Enabled() {
		if _, err := st.Gate.Authorize(context.Background(), st.Catalog, policy.Request{Tool: t.Name, Via: policy.ViaExecute}); err != nil {
			continue
		}
		score := 0
		if t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint && !t.RequiresApproval {
			score += 1000
		}
		if len(t.Examples) > 0 {
			score += 500
		}
		score += max(0, 100-len(t.Name))
		// Reading the schema is the costly part at thousands of tools:
		// only a tool it could make the best is read.
		if score+250 > bestScore && len(requiredFields(t)) == 1 {
			score += 250
		}
		if score > bestScore {
			best, bestScore = t, score
		}
	}
	return best
}

func requiredFields(t *catalog.Tool) []string {
	var schema struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(t.InputSchema, &schema)
	return schema.Required
}

// exampleInput is a JavaScript object literal for a tool's input: the
// tool's first example when it has one, else its required fields with a
// value of the right type.
func exampleInput(t *catalog.Tool) string {
	in := exampleValues(t)
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v, err := json.Marshal(in[k])
		if err != nil || len(v) > 80 {
			v = []byte("...")
		}
		key := k
		if !isIdentifier(k) {
			key = jsString(k)
		}
		parts = append(parts, key+": "+jsValue(v))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// exampleValues is an input for a tool: its first example when it has
// one (in its metadata, else in its input schema's examples), else its
// required fields with a value of the right type.
func exampleValues(t *catalog.Tool) map[string]any {
	if len(t.Examples) > 0 && len(t.Examples[0].Input) > 0 {
		return t.Examples[0].Input
	}
	var schema struct {
		Examples   []any `json:"examples"`
		Properties map[string]struct {
			Type     any   `json:"type"`
			Enum     []any `json:"enum"`
			Examples []any `json:"examples"`
			Default  any   `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(t.InputSchema, &schema)
	if len(schema.Examples) > 0 {
		if ex, ok := schema.Examples[0].(map[string]any); ok && len(ex) > 0 {
			return ex
		}
	}
	in := map[string]any{}
	for _, f := range schema.Required {
		p := schema.Properties[f]
		switch {
		case len(p.Examples) > 0:
			in[f] = p.Examples[0]
		case len(p.Enum) > 0:
			in[f] = p.Enum[0]
		case p.Default != nil:
			in[f] = p.Default
		default:
			in[f] = zeroOf(p.Type)
		}
	}
	return in
}

func zeroOf(typ any) any {
	if list, ok := typ.([]any); ok && len(list) > 0 {
		typ = list[0]
	}
	switch typ {
	case "integer", "number":
		return 1
	case "boolean":
		return true
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	return "..."
}

// jsValue writes JSON with single-quoted strings, as plans are usually
// written; JSON is otherwise valid JavaScript.
func jsValue(v []byte) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return jsString(s)
	}
	return string(v)
}

func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`, "\u2028", `\u2028`, "\u2029", `\u2029`)
	return "'" + r.Replace(s) + "'"
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

func newTool(name, title string, schema json.RawMessage, readOnly bool) mcp.Tool {
	t := mcp.NewToolWithRawSchema(name, "", schema)
	t.Title = title
	t.Annotations = mcp.ToolAnnotation{
		ReadOnlyHint:    mcp.ToBoolPtr(readOnly),
		DestructiveHint: mcp.ToBoolPtr(!readOnly),
		IdempotentHint:  mcp.ToBoolPtr(readOnly),
		OpenWorldHint:   mcp.ToBoolPtr(!readOnly),
	}
	return t
}

// The schemas state ranges and allowed values in descriptions rather than as
// minimum/maximum/enum: a server with mcp-go's input validation on would
// otherwise answer a bad value with its own terse message before the
// handler's precise one (which names the field, the range and an example).
func searchSchema(cfg *presets.Config) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
		`"query":{"type":"string","description":"The task in plain words, e.g. \"refund a customer's last payment\""},`+
		`"topK":{"type":"integer","description":"Number of results, 1 to %d (default %d)"},`+
		`"filter":{"type":"object","properties":{`+
		`"appIds":{"type":"array","items":{"type":"string"}},`+
		`"tags":{"type":"array","items":{"type":"string"}},`+
		`"sources":{"type":"array","items":{"type":"string"},"description":"Any of inline, openapi, upstream"},`+
		`"includeOpenApi":{"type":"boolean"},"includeInline":{"type":"boolean"}},"additionalProperties":false}},`+
		`"required":["query"],"additionalProperties":false}`, cfg.Search.MaxTopK, cfg.Search.TopK))
}

var describeSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"tools":{"type":"array","items":{"type":"string"},"description":"Exact tool names from search results"},` +
	`"max":{"type":"integer","description":"Describe at most this many (at least 1)"},` +
	`"format":{"type":"string","description":"ts (default), json or both"}},` +
	`"required":["tools"],"additionalProperties":false}`)

var executeSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"script":{"type":"string","description":"The plan: the body of an async function, JavaScript or TypeScript, ending with return"},` +
	`"language":{"type":"string","enum":["javascript","typescript","python"],"description":"The plan's language (default javascript; python only where the server enables it)"},` +
	`"allowedTools":{"type":"array","items":{"type":"string"},"description":"Restrict callTool to these tool names or globs"},` +
	`"context":{"type":"object","description":"Data for the plan, readable as codecallContext"},` +
	`"output":{"type":"object","properties":{"format":{"type":"string","description":"Text of the answer: json (default), compact or toon"}},"additionalProperties":false}},` +
	`"required":["script"],"additionalProperties":false}`)

var invokeSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"tool":{"type":"string","description":"Exact tool name from search results"},` +
	`"input":{"type":"object","description":"The tool's arguments, matching its input schema"}},` +
	`"required":["tool"],"additionalProperties":false}`)
