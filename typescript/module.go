package typescript

import (
	"fmt"
	"strconv"
	"strings"
)

// maxModuleOutput bounds the bytes of type aliases one DeclareModule call
// writes for all its tools together; past it, a tool's schemas are
// rendered as unknown with a comment. The documentation and signature of
// every tool are always written.
const maxModuleOutput = 1 << 20

// Module describes one Code Mode server module to declare.
type Module struct {
	// Specifier is the module's import specifier, such as
	// "@codemode/servers/shop".
	Specifier string
	// ServerID is the server's normalized module path segment, such as
	// "shop"; ServerName is the name the server reports; ServerVersion is
	// its version, or "" when it states none. They are shown in the
	// module's comment.
	ServerID, ServerName, ServerVersion string
	// Tools are the module's tool exports, declared in the order given.
	Tools []ModuleTool
}

// ModuleTool is one tool of a Module: the function the module exports for
// it.
type ModuleTool struct {
	// Export is the identifier the module exports the tool's function
	// under, such as "get_order". The caller derives it from the tool name
	// and keeps it unique within the module. A JavaScript reserved word is
	// declared through an export clause ("export { f as enum }"), and a
	// string that is not an identifier at all as a string export name,
	// which TypeScript accepts from --module es2022 on.
	Export string
	// Function is the tool. Its Name is the canonical MCP tool name, which
	// the comment shows and the type names derive from (see TypeName).
	Function
}

// DeclareModule returns the TypeScript declaration of a Code Mode server
// module: one "declare module" block, named by m.Specifier, that exports an
// async function for each tool and the module's __meta__ object.
//
// Each function has a JSDoc block with the tool's description, the approval
// sentence when a person confirms each call, the canonical MCP tool name,
// a warning when part of a schema is not expressed by the types, and the
// tags @title, @remarks (the side-effect hints in short words, as Declare
// writes them) and @annotations (the hints as MCP names them, such as
// "readOnlyHint: true").
//
// The function's one parameter, input, follows the input schema (spec
// §5.3.1). A schema that declares no argument makes it optional and of type
// Record<string, never>, which accepts {} and nothing else: an absent,
// empty or true schema, one of annotations only, or an object schema with
// no properties, no required ones and no additionalProperties other than
// false, such as {"type": "object", "properties": {}}. Any other object
// schema that {} satisfies makes it optional and of the schema's type. Any
// other schema, whatever its root type, makes it required and of the
// schema's type.
//
// The function resolves to the type of the output schema, which is the
// result's structuredContent (spec §5.3.2). A tool without an output
// schema resolves to unknown, and its comment says how the result is
// unwrapped.
//
// The type aliases of a tool are declared inside the block after its
// function, named as Declare names them after TypeName of the canonical
// name; when two tools of the module share a name, the second's names get
// a numeric suffix. The block compiles with tsc --strict in a .d.ts file
// and in a .ts script.
//
// Like Declare, DeclareModule does not fail, and its output is bounded:
// each tool's aliases by the limits of Declare, and all of them together
// by a module-wide limit past which a tool's types are unknown with a
// comment. The result ends with a newline.
func DeclareModule(m Module) string {
	d := moduleDecl{
		exports: map[string]bool{},
		bases:   map[string]bool{},
		budget:  maxModuleOutput,
	}
	for _, t := range m.Tools {
		d.exports[t.Export] = true
	}
	var b strings.Builder
	b.WriteString(jsdoc(moduleDoc(m), 0))
	fmt.Fprintf(&b, "declare module %s {\n", quote(m.Specifier))
	for _, t := range m.Tools {
		b.WriteString(d.tool(t))
	}
	b.WriteString(indent(metaDecl))
	b.WriteString("}\n")
	return b.String()
}

// metaDecl declares a module's __meta__ export (spec §5.2).
const metaDecl = `/** This module's server, and the canonical MCP name and export name of each of its tools. */
export const __meta__: {
  readonly serverId: string;
  readonly serverName: string;
  readonly serverVersion?: string;
  readonly tools: ReadonlyArray<{ readonly toolName: string; readonly exportName: string; readonly description?: string }>;
};
`

// moduleDoc returns the comment on a module block: which server it binds.
func moduleDoc(m Module) []string {
	var s strings.Builder
	s.WriteString("Tools of the MCP server")
	if name := inlineText(m.ServerName, maxInline); name != "" {
		s.WriteString(" " + name)
	}
	var ids []string
	if m.ServerID != "" {
		ids = append(ids, "serverId "+inlineText(quote(truncate(m.ServerID, maxInline)), maxInline+8))
	}
	if m.ServerVersion != "" {
		ids = append(ids, "version "+inlineText(m.ServerVersion, maxInline))
	}
	if len(ids) > 0 {
		s.WriteString(" (" + strings.Join(ids, ", ") + ")")
	}
	s.WriteString(".")
	return []string{s.String()}
}

// Sentences of a module tool's comment.
const (
	// unwrapNote documents the result of a tool without an output schema
	// (spec §5.3.2).
	unwrapNote = "Resolves to the result's structuredContent if it has one, " +
		"else to a lone text block as a string, " +
		"else to the whole MCP result object (binary content base64-encoded)."
	// widenedNote warns that a type leaves out part of its schema; %s is
	// "input" or "output". widenedNote2 says it of both.
	widenedNote = "Warning: the %s type does not express all of its schema; " +
		"where it is unknown or wider, a comment says what is left out."
	widenedNote2 = "Warning: the input and output types do not express all of their schemas; " +
		"where they are unknown or wider, a comment says what is left out."
)

// moduleDecl holds what the tools of one module share.
type moduleDecl struct {
	exports map[string]bool // export names of the module's tools
	bases   map[string]bool // type name prefixes used so far
	locals  map[string]bool // local function names used so far
	budget  int             // bytes of type aliases still allowed
}

// tool renders the comment, signature and type aliases of one tool,
// indented to sit in the module block.
func (d *moduleDecl) tool(t ModuleTool) string {
	base := TypeName(t.Name)
	for i := 2; d.bases[base]; i++ {
		base = TypeName(t.Name) + "_" + strconv.Itoa(i)
	}
	d.bases[base] = true

	var roots []root
	inType, optional := "Record<string, never>", true
	inRoot, outRoot := -1, -1
	if r := newRoot(base+"Input", "input", t.InputSchema, unknownType()); !absent(t.InputSchema) && !emptyInput(r.doc) {
		inType, optional = r.name, r.doc != nil && optionalInput(r.doc)
		inRoot, roots = len(roots), append(roots, r)
	}
	outType := "unknown"
	if !absent(t.OutputSchema) {
		r := newRoot(base+"Output", "output", t.OutputSchema, unknownType())
		outType = r.name
		outRoot, roots = len(roots), append(roots, r)
	}
	text, widened := declarations(base, roots)
	text = indent(text)
	if len(text) > d.budget {
		for i := range roots {
			roots[i] = roots[i].without(fmt.Sprintf("not rendered: the module's declarations would exceed %d bytes", maxModuleOutput))
		}
		text, widened = declarations(base, roots)
		text = indent(text)
	}
	d.budget -= len(text)

	lines := docLines(t.Description)
	if t.RequiresApproval {
		lines = append(lines, approvalNote)
	}
	lines = append(lines, "Canonical MCP tool: "+canonicalName(t.Name))
	if outRoot < 0 {
		lines = append(lines, unwrapNote)
	}
	var wide []string
	if inRoot >= 0 && widened[inRoot] {
		wide = append(wide, "input")
	}
	if outRoot >= 0 && widened[outRoot] {
		wide = append(wide, "output")
	}
	switch len(wide) {
	case 1:
		lines = append(lines, fmt.Sprintf(widenedNote, wide[0]))
	case 2:
		lines = append(lines, widenedNote2)
	}
	if s := inlineText(t.Title, maxInline); s != "" {
		lines = append(lines, "@title "+s)
	}
	if s := t.Effects.remarks(); s != "" {
		lines = append(lines, "@remarks "+s)
	}
	if s := t.Effects.annotations(); s != "" {
		lines = append(lines, "@annotations "+s)
	}

	var b strings.Builder
	b.WriteString(jsdoc(lines, 0))
	q := ""
	if optional {
		q = "?"
	}
	sig := fmt.Sprintf("(input%s: %s): Promise<%s>;\n", q, inType, outType)
	if isBindingIdent(t.Export) {
		b.WriteString("export function " + t.Export + sig)
	} else {
		local := d.local(base + "$call")
		name := t.Export
		if !isIdentifierName(name) {
			name = quote(name)
		}
		b.WriteString("function " + local + sig)
		fmt.Fprintf(&b, "export { %s as %s };\n", local, name)
	}
	return indent(b.String()) + text
}

// local returns a name for a function that is exported under another
// name, unused by the module's exports and other local functions.
func (d *moduleDecl) local(name string) string {
	if d.locals == nil {
		d.locals = map[string]bool{}
	}
	full := name
	for i := 2; d.exports[full] || d.locals[full]; i++ {
		full = name + "_" + strconv.Itoa(i)
	}
	d.locals[full] = true
	return full
}

// annotations returns the stated hints as MCP names them, such as
// "readOnlyHint: true, openWorldHint: false", or "" when none is stated.
func (e Effects) annotations() string {
	var parts []string
	for _, h := range []struct {
		name string
		v    *bool
	}{
		{"readOnlyHint", e.ReadOnly},
		{"destructiveHint", e.Destructive},
		{"idempotentHint", e.Idempotent},
		{"openWorldHint", e.OpenWorld},
	} {
		if h.v != nil {
			parts = append(parts, h.name+": "+strconv.FormatBool(*h.v))
		}
	}
	return strings.Join(parts, ", ")
}

// canonicalName shows a tool name in a comment: as it is when it is made
// of the characters tool names usually are, quoted otherwise, so that
// spaces and odd characters stay visible.
func canonicalName(name string) string {
	plain := name != ""
	for i := 0; i < len(name) && plain; i++ {
		c := name[i]
		plain = isIdentByte(c) || c == '.' || c == '-' || c == '/' || c == ':'
	}
	if plain {
		return truncate(name, maxInline)
	}
	return inlineText(quote(truncate(name, maxInline)), maxInline+8)
}

// emptyInput reports whether a parsed input schema declares no argument:
// true, an object of annotations only, or an object schema without
// properties that requires nothing and allows no other properties than
// it has by default, such as {"type": "object", "properties": {}}. Spec
// §5.3.1 lets such a tool, like one without an input schema, be called
// with no argument or with {}.
func emptyInput(doc *document) bool {
	if doc == nil {
		return false
	}
	n := doc.root
	if n.isTrue() {
		return true
	}
	if n.kind != kindObject {
		return false
	}
	for _, k := range n.keys {
		v := n.vals[k]
		switch {
		case annotationKeywords[k]:
		case k == "type":
			if s, _ := v.str(); s != "object" {
				return false
			}
		case k == "properties":
			if v.kind != kindObject || len(v.keys) > 0 {
				return false
			}
		case k == "required":
			if v.kind != kindArray || len(v.items) > 0 {
				return false
			}
		case k == "additionalProperties":
			if !v.isFalse() {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// annotationKeywords are the keywords that document a schema or hold
// definitions without constraining the instance.
var annotationKeywords = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "$anchor": true,
	"$defs": true, "definitions": true,
	"title": true, "description": true, "examples": true, "example": true,
	"default": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// objectKeywords are the keywords an object schema may have and still
// accept {}, provided it requires nothing.
var objectKeywords = map[string]bool{
	"type": true, "properties": true, "additionalProperties": true,
	"patternProperties": true, "propertyNames": true, "maxProperties": true,
	"unevaluatedProperties": true, "required": true, "minProperties": true,
	"dependentRequired": true, "dependentSchemas": true, "dependencies": true,
	"nullable": true,
}

// maxRefHops bounds the chain of root $refs optionalInput follows.
const maxRefHops = 8

// optionalInput reports whether an input schema is an object schema that
// {} satisfies, so that the input can be left out. It follows a root that
// is only a $ref, and answers false whenever it is not sure.
func optionalInput(doc *document) bool {
	n := doc.root
	for range maxRefHops {
		if n.kind != kindObject {
			return false
		}
		ref := n.get("$ref")
		if ref == nil {
			break
		}
		for _, k := range n.keys {
			if k != "$ref" && !annotationKeywords[k] {
				return false
			}
		}
		s, ok := ref.str()
		if !ok || !strings.HasPrefix(s, "#") {
			return false
		}
		if n = resolve(doc.root, s[1:]); n == nil {
			return false
		}
	}
	if n.kind != kindObject || n.get("$ref") != nil {
		return false
	}
	object := false
	for _, k := range n.keys {
		switch {
		case annotationKeywords[k]:
		case !objectKeywords[k]:
			return false
		case k != "type" && k != "nullable":
			object = true
		}
	}
	switch t := n.get("type"); {
	case t == nil:
	case t.kind == kindString:
		object = t.text == "object"
	case t.kind == kindArray:
		object = false
		for _, it := range t.items {
			if s, _ := it.str(); s == "object" {
				object = true
			}
		}
	default:
		return false
	}
	if r := n.get("required"); r != nil && (r.kind != kindArray || len(r.items) > 0) {
		return false
	}
	if v := n.get("minProperties"); v != nil {
		if k, ok := v.nonNegInt(); !ok || k > 0 {
			return false
		}
	}
	return object
}

// indent indents every non-empty line of s by one level.
func indent(s string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	b.Grow(len(s) + 2*len(lines))
	for _, l := range lines {
		if l != "" && l != "\n" {
			b.WriteString("  ")
		}
		b.WriteString(l)
	}
	return b.String()
}
