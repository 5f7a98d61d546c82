package meta

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/typescript"
	"github.com/codecall-go/codecall/vm"
)

// The Code Mode surface's MCP features besides codemode.run.
const (
	// CodeModePrompt is the prompt that holds the Code Mode system prompt:
	// the restrictions, limits, capabilities and unwrapping rules a host
	// publishes (§3.2.1, §3.2.3, §3.2.4, §3.5, §5.3.2).
	CodeModePrompt = "codemode"
	// TypesTemplate is the resource template of the per-server TypeScript
	// declarations (§4.4).
	TypesTemplate = "codemode://types/{serverId}.d.ts"
	typesPrefix   = "codemode://types/"
)

// codeModeSchema is codemode.run's input schema as tools/list shows it.
var codeModeSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"code":{"type":"string","description":"JavaScript source: an ES module (import/export, top-level await). Set globalThis.__codemode_result__ to the value to return."},` +
	`"limits":{"type":"object","description":"Lower the server's limits for this run: timeoutMs, maxMemoryBytes, maxLogBytes, maxToolCalls (integers). Other keys are ignored.",` +
	`"properties":{"timeoutMs":{"type":"integer","minimum":1},"maxMemoryBytes":{"type":"integer","minimum":1},"maxLogBytes":{"type":"integer","minimum":1},"maxToolCalls":{"type":"integer","minimum":1}}},` +
	`"requestedCapabilities":{"type":"array","items":{"type":"string"},"description":"Server ids the script will import; unavailable ones are reported before the run."}},` +
	`"required":["code"]}`)

// codeModeTool is codemode.run as tools/list shows it, for a state.
func codeModeTool(st *State) mcp.Tool {
	t := newTool(presets.CodeModeRun, "Run code", codeModeSchema, false)
	t.Description = codeModeDescription(st)
	return t
}

// docComment matches a JSDoc block and the indentation before it.
var docComment = regexp.MustCompile(`(?s)[ \t]*/\*\*.*?\*/\n`)

// compactDeclarations are the discovery and errors declarations without
// their doc comments, for the tool description, whose size is bounded.
func compactDeclarations() string {
	text := docComment.ReplaceAllString(typescript.DiscoveryModule+typescript.ErrorsModule, "")
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) != "" {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// maxListedServers bounds the server modules the description names; the
// rest are one listServers() away.
const maxListedServers = 40

// codeModeDescription teaches codemode.run: the script's form, the
// modules it can import (with their tool counts), the discovery and
// errors declarations, the unwrapping rules and the limits. Its size is
// bounded whatever the catalog.
func codeModeDescription(st *State) string {
	var b strings.Builder
	b.WriteString("Run JavaScript that calls many tools and returns only what matters. The code is an ES module: import tools from " +
		"\"@codemode/servers/<serverId>\" (one async function per tool, plus __meta__), await at top level, and set " +
		"globalThis.__codemode_result__ = value to return it (otherwise the result is null). Example:\n")
	b.WriteString(codeModeExample(st))
	b.WriteString("\nA tool function takes one object (or nothing) and resolves to the tool's structuredContent, else its single text block " +
		"as a string, else the whole MCP result (images and audio as base64). A failed call throws a catchable ToolCallError " +
		"(AuthenticationError for credentials), a bad input SchemaValidationError {path, expected, received, example}; limits end the run " +
		"with SandboxLimitError. Promise.all runs calls concurrently. The answer is {logs, result, diagnostics, toolTrace}; every failure " +
		"is a diagnostic with a hint.\n")
	if mods := st.CodeMode; mods != nil {
		fmt.Fprintf(&b, "Server modules (%d):", len(mods.Servers()))
		for i, s := range mods.Servers() {
			if i == maxListedServers {
				fmt.Fprintf(&b, " and %d more (listServers())", len(mods.Servers())-maxListedServers)
				break
			}
			fmt.Fprintf(&b, " %s (%d)", s.Path, len(s.Tools))
			if i < len(mods.Servers())-1 && i < maxListedServers-1 {
				b.WriteByte(',')
			}
		}
		b.WriteString(". Typed declarations: resource codemode://types/<serverId>.d.ts, or getTool(serverId, name) / searchTools(query, {detail: \"full\"}).\n")
	}
	l := st.Config.VM
	fmt.Fprintf(&b, "Limits (lower them with limits): timeoutMs %d, maxToolCalls %d, maxMemoryBytes %d, maxLogBytes %d. ",
		l.Timeout.Milliseconds(), l.MaxToolCalls, l.MemoryBytes, l.MaxLogBytes)
	b.WriteString("Restrictions and deviations: the prompt \"codemode\".\n")
	b.WriteString(compactDeclarations())
	return b.String()
}

// codeModeExample is an example script built from the live catalog: the
// tool the CodeCall surface's example uses, imported from its module.
func codeModeExample(st *State) string {
	t := exampleTool(st)
	mods := st.CodeMode
	if t == nil || mods == nil {
		return `import { listServers } from "@codemode/discovery";` + "\nglobalThis.__codemode_result__ = await listServers();"
	}
	mt, ok := mods.tool(t.Name)
	if !ok {
		return `import { listServers } from "@codemode/discovery";` + "\nglobalThis.__codemode_result__ = await listServers();"
	}
	alias := strings.ReplaceAll(mt.server.Path, "-", "_")
	if !isIdentifier(alias) || alias == mt.export {
		alias = "server"
	}
	return fmt.Sprintf("import * as %s from %q;\nglobalThis.__codemode_result__ = await %s.%s(%s);",
		alias, mt.server.Specifier(), alias, mt.export, exampleInput(t))
}

// codeModePrompt is the system prompt a Code Mode host publishes (the MCP
// prompt "codemode"): what differs from the specification, the limits,
// the capability identifiers and the unwrapping rules.
func codeModePrompt(st *State) string {
	l := st.Config.VM
	var b strings.Builder
	b.WriteString("# Code Mode\n\nUse the tool codemode.run to run JavaScript that orchestrates MCP tools. Each run starts in a fresh sandbox.\n\n")
	b.WriteString("## The script\n\n- It is an ES module: `import`/`export` and top-level `await`. Only `@codemode/*` modules can be imported, with static " +
		"`import` declarations: `@codemode/discovery`, `@codemode/errors` and `@codemode/servers/<serverId>`. `import()` and any other " +
		"specifier fail with IMPORT_FAILURE.\n- Return a value by assigning `globalThis.__codemode_result__`; it must be JSON-serializable. " +
		"Unset, the result is null.\n- `console.log`, `console.debug`, `console.warn` and `console.error` are captured in `logs` " +
		"(primitives as String(value), objects as JSON); aggregate and summarise before logging.\n")
	fmt.Fprintf(&b, "- Specification version: %s.\n\n", vm.SpecVersion)
	b.WriteString("## Restrictions and deviations\n\n")
	b.WriteString("- `BigInt` and `BigInt64Array`/`BigUint64Array` are not provided: BigInt arithmetic allocates without bound in one step " +
		"that no limit can interrupt. Use Number, or strings for large integers.\n")
	b.WriteString("- `eval`, `Function` from strings, `fetch`, `XMLHttpRequest`, `WebSocket`, `setInterval`, `process` and `require` are " +
		"not available; reaching for code generation ends the run.\n")
	fmt.Fprintf(&b, "- The script is checked before it runs, and refused where it names the identifiers %s, or the properties %s "+
		"(reading or calling them, or defining them as keys); BigInt literals such as `1n` are refused too. Use Object.getPrototypeOf and "+
		"rest parameters instead.\n", codeList(ast.CodeModeBannedIdentifiers()), codeList(ast.BannedMembers()))
	b.WriteString("- Also provided beyond the list: `structuredClone`, `console.info` (logged at level log), `AggregateError`, the URI functions.\n")
	b.WriteString("- Import bindings are constants bound before the first statement runs, copies of the exports rather than live " +
		"bindings (the exports never change): assigning to one throws TypeError, as in any module.\n")
	b.WriteString("- Exports of the script are evaluated and ignored: nothing imports it.\n")
	b.WriteString("- A tool takes an object (MCP sends arguments as a JSON object); a tool whose schema is not an object cannot be called " +
		"and rejects with SchemaValidationError.\n")
	b.WriteString("- Identifiers: export names map each tool name to ASCII letters, digits, `_` and `$` (other characters become `_`); " +
		"`__meta__` lists the mapping.\n")
	if !l.AllowLoops {
		fmt.Fprintf(&b, "- Loops (`for`, `while`, `do`) are refused by this server's %s preset; use array methods (map, filter, reduce) and Promise.all.\n", st.Config.Preset)
	}
	if !l.AllowConsole {
		b.WriteString("- `console` is refused by this server's preset: put what you need in the result.\n")
	}
	if l.Regex != presets.RegexFull {
		b.WriteString("- Regular expressions are limited by this server's preset (literals that run in linear time only, or none).\n")
	}
	b.WriteString("- Discovery requests count toward maxToolCalls.\n\n")
	fmt.Fprintf(&b, "## Limits\n\nSupported keys of `limits` (each can only lower the server's value; higher values are clamped, "+
		"unknown keys ignored): `timeoutMs` (%d), `maxMemoryBytes` (%d), `maxLogBytes` (%d), `maxToolCalls` (%d). "+
		"At most %d tool calls run at once.", l.Timeout.Milliseconds(), l.MemoryBytes, l.MaxLogBytes, l.MaxToolCalls, l.MaxConcurrency)
	if l.MaxScriptBytes > 0 && l.MaxScriptLines > 0 {
		fmt.Fprintf(&b, " A script has at most %d bytes and %d lines.", l.MaxScriptBytes, l.MaxScriptLines)
	}
	b.WriteString("\n\n")
	b.WriteString("## Capabilities\n\n`requestedCapabilities` takes server ids (the `serverId` of listServers(), which is the module path " +
		"segment)")
	if mods := st.CodeMode; mods != nil {
		fmt.Fprintf(&b, ": %s", mods.modulePathsOf(200))
	}
	b.WriteString(". A requested server that is unavailable is reported in diagnostics before the run; calling it throws ToolCallError, " +
		"importing an unknown one fails with IMPORT_FAILURE (ServerNotFoundError).\n\n")
	b.WriteString("## Results of tool calls (unwrapping, in order)\n\n1. `structuredContent` when present (the content is ignored).\n" +
		"2. A single text block: its text, as a string (parse it yourself if it is JSON).\n" +
		"3. A result with image or audio blocks: the whole MCP result object, binary data as base64 strings.\n" +
		"4. Anything else: the whole MCP result object.\n\n")
	b.WriteString("## Errors (`@codemode/errors`)\n\nEvery error has `hint`, one corrective action, and `code`. ToolCallError (code, " +
		"retryable; APPROVAL_DENIED and APPROVAL_EXPIRED are final: do not retry), AuthenticationError, SchemaValidationError (path as a JSON Pointer, expected, received, " +
		"example), ToolNotFoundError, ServerNotFoundError, SandboxLimitError (limit). A failed call never aborts the script unless it " +
		"is uncaught; limits end it.\n\n")
	b.WriteString("## Declarations\n\n```ts\n" + typescript.DiscoveryModule + typescript.ErrorsModule + "```\n\n" +
		"Per-server declarations: resources `codemode://types/<serverId>.d.ts`.\n")
	return b.String()
}

// codeList renders names as a list of code spans: `a`, `b` and `c`.
func codeList(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "`" + n + "`"
	}
	if len(quoted) < 2 {
		return strings.Join(quoted, "")
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " and " + quoted[len(quoted)-1]
}

// CodeModeFeatures are the Code Mode surface's prompt and resource
// template; their handlers answer from the state current when they are
// called.
func CodeModeFeatures(env Env) (server.ServerPrompt, server.ServerResourceTemplate) {
	prompt := server.ServerPrompt{
		Prompt: mcp.NewPrompt(CodeModePrompt, mcp.WithPromptDescription(
			"The Code Mode system prompt: how codemode.run scripts are written, this server's restrictions, limits, capabilities and unwrapping rules.")),
		Handler: func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			st, release := env.Acquire(ctx)
			defer release()
			if !st.Config.Offers(presets.SurfaceCodeMode) {
				return nil, fmt.Errorf("this server does not offer the Code Mode surface")
			}
			return mcp.NewGetPromptResult("Code Mode", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(codeModePrompt(st))),
			}), nil
		},
	}
	tmpl := server.ServerResourceTemplate{
		Template: mcp.NewResourceTemplate(TypesTemplate, "Code Mode server declarations",
			mcp.WithTemplateDescription("TypeScript declarations of one @codemode/servers/<serverId> module, named by its export identifiers."),
			mcp.WithTemplateMIMEType("application/typescript")),
		Handler: func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			st, release := env.Acquire(ctx)
			defer release()
			id, ok := strings.CutPrefix(req.Params.URI, typesPrefix)
			id, ok2 := strings.CutSuffix(id, ".d.ts")
			if !ok || !ok2 || st.CodeMode == nil {
				return nil, fmt.Errorf("no such resource %q; Code Mode declarations are codemode://types/<serverId>.d.ts", req.Params.URI)
			}
			s, found := st.CodeMode.Server(id)
			if !found {
				return nil, fmt.Errorf("no connected server has the id %q (connected: %s)", id, st.CodeMode.modulePathsOf(20))
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/typescript", Text: s.Declaration()}}, nil
		},
	}
	return prompt, tmpl
}
