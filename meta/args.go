package meta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/toolerr"
)

// argSpec is what a meta-tool accepts: its argument names, the names
// allowed inside its object arguments, and a one-line usage that every
// argument error carries as its hint. The handlers check arguments
// themselves, whatever the server's own input validation does: mcp-go's
// validation words its refusals with Go values (&{Missing:[script]}), so
// the meta-tools are registered with a schema it accepts anything under
// and tools/list shows the real one (see Listed).
type argSpec struct {
	names  []string
	nested map[string][]string
	usage  string
}

var (
	searchArgs = argSpec{
		names:  []string{"query", "topK", "filter"},
		nested: map[string][]string{"filter": {"appIds", "tags", "sources", "includeOpenApi", "includeInline"}},
		usage:  "{query: string, topK?: integer, filter?: {appIds?: string[], tags?: string[], sources?: string[]}}",
	}
	describeArgs = argSpec{
		names: []string{"tools", "max", "format"},
		usage: `{tools: string[] (exact names from search), max?: integer, format?: "ts" | "json" | "both"}`,
	}
	executeArgs = argSpec{
		names:  []string{"script", "language", "allowedTools", "context", "output"},
		nested: map[string][]string{"output": {"format"}},
		usage: `{script: string (the body of an async function; Python module code with language "python"), ` +
			`language?: "javascript" | "typescript" | "python", allowedTools?: string[], context?: object, output?: {format?: "json" | "compact" | "toon"}}`,
	}
	invokeArgs = argSpec{
		names: []string{"tool", "input"},
		usage: "{tool: string (an exact name from search), input?: object}",
	}
)

// invalid is the result of a request whose arguments are wrong: isError,
// with {error: {code: VALIDATION, message, field, hint}}.
func (s argSpec) invalid(field, msg string) *mcp.CallToolResult {
	return result(errorResult{ErrorBody{Code: toolerr.Validation, Message: msg, Field: field, Hint: "Arguments: " + s.usage}}, true)
}

// decode decodes a tool call's arguments into dst. It refuses unknown
// arguments (naming the allowed ones) and wrong types, and returns the
// offending field and a message a model can act on.
func (s argSpec) decode(args any, dst any) (field, msg string, ok bool) {
	if args == nil {
		args = map[string]any{}
	}
	if m, isMap := args.(map[string]any); isMap {
		if f, msg := unknownKey(m, s.names, ""); f != "" {
			return f, msg, false
		}
		for key, allowed := range s.nested {
			if sub, isMap := m[key].(map[string]any); isMap {
				if f, msg := unknownKey(sub, allowed, key+"."); f != "" {
					return f, msg, false
				}
			}
		}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return "", "arguments cannot be read as JSON: " + err.Error(), false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			f := te.Field
			return f, fmt.Sprintf("%s must be %s, not %s", orArgs(f), jsonKind(te.Type.String()), te.Value), false
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			// Only reachable through an object nested deeper than nested
			// lists; name what is known.
			f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return f, fmt.Sprintf("unknown argument %q", f), false
		default:
			return "", "arguments are malformed: " + err.Error(), false
		}
	}
	return "", "", true
}

// unknownKey returns the first key of m (in sorted order, so the answer is
// stable) that allowed does not list, and the message naming the allowed
// keys.
func unknownKey(m map[string]any, allowed []string, prefix string) (field, msg string) {
	var unknown []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return "", ""
	}
	slices.Sort(unknown)
	where := "argument"
	if prefix != "" {
		where = "field in " + strings.TrimSuffix(prefix, ".")
	}
	return prefix + unknown[0], fmt.Sprintf("unknown %s %q; allowed: %s", where, unknown[0], strings.Join(allowed, ", "))
}

func orArgs(f string) string {
	if f == "" {
		return "arguments"
	}
	return f
}

func jsonKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "meta."), strings.HasPrefix(goType, "*meta."):
		return "an object"
	case strings.Contains(goType, "int"):
		return "an integer"
	case strings.Contains(goType, "float"):
		return "a number"
	case goType == "bool" || goType == "*bool":
		return "a boolean"
	case goType == "string":
		return "a string"
	}
	return goType
}
