package meta

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

// Plan languages codecall.execute takes (ExecuteInput.Language).
const (
	LanguageJavaScript = "javascript"
	LanguageTypeScript = "typescript"
	LanguagePython     = "python"
)

// PythonRunner runs Python plans, always in a sandboxed worker process
// (package sandbox's Pool made WithPython): CPython never runs in the
// server's process. host answers the plan's calls as for JavaScript, so
// every call goes through the same gate. The runner compiles the plan
// itself; a syntax error comes back as syntax_error with its location.
type PythonRunner interface {
	RunPython(ctx context.Context, source string, host vm.Host, opts vm.Options) *vm.Result
}

// PythonEnabled reports whether the server takes Python plans: the config
// lists python in vm.languages and a Python worker pool runs them.
func (st *State) PythonEnabled() bool {
	return st.Python != nil && slices.Contains(st.Config.VM.Languages, LanguagePython)
}

// checkLanguage validates ExecuteInput.Language; it returns the language
// ("" is javascript) or a message for a refusal.
func (st *State) checkLanguage(lang string) (string, string) {
	switch lang {
	case "", LanguageJavaScript, LanguageTypeScript:
		return LanguageJavaScript, ""
	case LanguagePython:
		if st.PythonEnabled() {
			return LanguagePython, ""
		}
		if !slices.Contains(st.Config.VM.Languages, LanguagePython) {
			return "", "Python plans are off on this server: vm.languages does not list python; write the plan in JavaScript " +
				"(or ask the operator to add python to vm.languages, with vm.isolation: process)"
		}
		why := st.PythonOff
		if why == "" {
			why = "no Python worker pool is running"
		}
		return "", "Python plans are listed in vm.languages but cannot run on this server: " + why + "; write the plan in JavaScript"
	}
	return "", ""
}

// checkPythonSize holds a Python plan to the preset's script size limits;
// the interpreter in the worker checks its syntax.
func checkPythonSize(src string, l presets.Limits) *vm.ErrorInfo {
	if l.MaxScriptBytes > 0 && int64(len(src)) > l.MaxScriptBytes {
		return &vm.ErrorInfo{Kind: string(ast.KindScriptTooLarge),
			Message: fmt.Sprintf("the plan is %d bytes, over this preset's maxScriptBytes (%d)", len(src), l.MaxScriptBytes)}
	}
	if n := strings.Count(src, "\n") + 1; l.MaxScriptLines > 0 && n > l.MaxScriptLines {
		return &vm.ErrorInfo{Kind: string(ast.KindTooManyLines),
			Message: fmt.Sprintf("the plan has %d lines, over this preset's maxScriptLines (%d)", n, l.MaxScriptLines)}
	}
	return nil
}

// catalogEntry is one tool of a Python plan's catalog discovery.
type catalogEntry struct {
	Name        string `json:"name"`
	AppID       string `json:"appId"`
	Description string `json:"description,omitempty"`
}

// maxCatalogDescription cuts each description of the catalog listing:
// the listing names tools; query_tool_docs reads them in full.
const maxCatalogDescription = 200

// discoverCatalog lists the tools the plan may call (the gate's access
// rules and the plan's allowedTools), for a Python plan's mcp_<alias>
// proxies and its list_servers and list_tools.
func (p *planHost) discoverCatalog(ctx context.Context) (json.RawMessage, error) {
	out := []catalogEntry{}
	for _, t := range p.st.Catalog.Enabled() {
		if _, err := p.st.Gate.Access(ctx, p.st.Catalog, policy.Call{Tool: t.Name, Via: policy.ViaExecute, Allowed: p.allowed}); err != nil {
			continue
		}
		d := t.Description
		if len(d) > maxCatalogDescription {
			d = strings.ToValidUTF8(d[:maxCatalogDescription], "") + "…"
		}
		out = append(out, catalogEntry{Name: t.Name, AppID: t.AppID, Description: d})
	}
	return json.Marshal(out)
}

// pythonDescription teaches the Python form of a plan, when Python is on.
func pythonDescription(st *State) string {
	tool := exampleTool(st)
	app, short, input := "crm", "find_contacts", `query="ada"`
	if tool != nil {
		app = tool.AppID
		short = strings.TrimPrefix(tool.Name, tool.AppID+".")
		// One argument, the first by name, so the description is the
		// same on every listing.
		values := exampleValues(tool)
		keys := slices.Sorted(maps.Keys(values))
		input = ""
		if len(keys) > 0 {
			b, _ := json.Marshal(values[keys[0]])
			input = fmt.Sprintf("%s=%s", pyIdent(keys[0]), pyLiteral(string(b)))
		}
	}
	return fmt.Sprintf("\nPython plans: set language: \"python\". The plan is Python 3 module code with top-level await; "+
		"set the variable result (JSON-serialisable) to return. Example: r = await mcp_%s.%s(%s); result = r. "+
		"await call_tool(name, input_dict) calls any tool; mcp_<app>.<tool>(**input) is the same call (names with non-alphanumerics as _); "+
		"asyncio.gather runs calls at once. A failed call raises ToolError (.code, .message, .hint, .retryable). "+
		"Discovery: await list_servers(), list_tools(server), search_tool_docs(query, limit), query_tool_docs(server, tool), "+
		"describe_server(name), capability_summary(); codecall_context. print and logging go to logs. "+
		"Same limits and statuses; no network, no subprocesses, no files but /tmp.",
		pyIdent(app), pyIdent(short), input)
}

// pyIdent is a name as a Python plan's proxies spell it.
func pyIdent(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else if r >= 'A' && r <= 'Z' {
			b.WriteRune(r + 'a' - 'A')
		} else {
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out != "" && out[0] >= '0' && out[0] <= '9' {
		out = "_" + out
	}
	return out
}

// pyLiteral turns a JSON scalar into a Python literal.
func pyLiteral(j string) string {
	switch j {
	case "true":
		return "True"
	case "false":
		return "False"
	case "null":
		return "None"
	}
	return j
}
