package meta

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/presets"
)

type handlers struct {
	env Env
}

// Tools returns the meta-tools a config registers, with their handlers.
// codecall.invoke is present only when directCalls.enabled is set.
func Tools(cfg *presets.Config, env Env) []server.ServerTool {
	h := &handlers{env: env}
	n := NamesFor(cfg)
	tools := []server.ServerTool{
		{Tool: newTool(n.Search, "Search tools", searchSchema(cfg), true), Handler: h.search},
		{Tool: newTool(n.Describe, "Describe tools", describeSchema, true), Handler: h.describe},
		{Tool: newTool(n.Execute, "Execute a plan", executeSchema, false), Handler: h.execute},
	}
	if cfg.DirectCalls.Enabled {
		tools = append(tools, server.ServerTool{Tool: newTool(n.Invoke, "Invoke a tool", invokeSchema, false), Handler: h.invoke})
	}
	return tools
}

// Descriptions returns each registered meta-tool's description for the
// given state. They name the apps and the tool count, so they are computed
// from the live catalog whenever tools/list is answered.
func Descriptions(st *State) map[string]string {
	n := NamesFor(st.Config)
	enabled := st.Catalog.Enabled()
	apps := st.Catalog.Apps()
	appList := strings.Join(apps, ", ")
	if len(apps) > 20 {
		appList = strings.Join(apps[:20], ", ") + fmt.Sprintf(" and %d more", len(apps)-20)
	}
	next := fmt.Sprintf("Then call %s for schemas and %s to run a plan", n.Describe, n.Execute)
	if st.Config.DirectCalls.Enabled {
		next += fmt.Sprintf(" and %s to call one", n.Invoke)
	}
	d := map[string]string{
		n.Search: fmt.Sprintf("Find the right tool for a task among %d tools (apps: %s). "+
			"Describe the task in plain words; returns tool names, short descriptions, appIds and relevance scores (0-1). "+
			"Narrow with filter.appIds. %s.", len(enabled), appList, next),
		n.Describe: fmt.Sprintf("Get the full definitions of tools found with %s: description, JSON input/output schemas, "+
			"annotations, examples and a TypeScript declaration. At most %d per call; unknown names are listed in notFound.",
			n.Search, st.Config.Describe.MaxDefinitions),
	}
	l := st.Config.VM
	loops := "no loops (use map/filter/reduce)"
	if l.AllowLoops {
		loops = "loops allowed"
	}
	d[n.Execute] = fmt.Sprintf("Run a JavaScript plan that calls tools and returns only what matters. "+
		"The script is the body of an async function: use await and return. TypeScript is accepted (types are stripped). "+
		"Globals: callTool(name, input, {throwOnError}) -> Promise of the tool's result, getTool(name), codecallContext, "+
		"console.log, mcpLog(level, msg), mcpNotify(event, payload). Promise.all runs calls in parallel (up to %d). "+
		"Limits (%s preset): %s timeout, %d tool calls, %s; no eval/Function/require. "+
		"Returns {status, result | error, logs, toolTrace, metrics, runId}; status is ok, syntax_error, illegal_access, "+
		"runtime_error, tool_error, timeout or limit_exceeded.",
		l.MaxConcurrency, st.Config.Preset, l.Timeout, l.MaxToolCalls, loops)
	if st.Config.DirectCalls.Enabled {
		d[n.Invoke] = fmt.Sprintf("Call one tool found with %s directly: {tool, input}. Returns the tool's own result; "+
			"a failure returns {status: \"tool_error\", error: {toolName, code, message}}.", n.Search)
	}
	return d
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
	`"max":{"type":"integer","description":"Describe at most this many (at least 1)"}},` +
	`"required":["tools"],"additionalProperties":false}`)

var executeSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"script":{"type":"string","description":"Body of an async function, e.g. const c = await callTool('crm.get_contact', {id: 'c1'}); return c.email;"},` +
	`"allowedTools":{"type":"array","items":{"type":"string"},"description":"Restrict callTool to these tool names or globs"},` +
	`"context":{"type":"object","description":"Data for the plan, readable as codecallContext"}},` +
	`"required":["script"],"additionalProperties":false}`)

var invokeSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"tool":{"type":"string","description":"Exact tool name from search results"},` +
	`"input":{"type":"object","description":"The tool's arguments, matching its input schema"}},` +
	`"required":["tool"],"additionalProperties":false}`)
