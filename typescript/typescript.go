// Package typescript renders TypeScript declarations of tools from their
// JSON Schemas, so that a model writing JavaScript plans can read what
// each tool accepts and returns: as a callTool overload (Declare), or as
// the exported function of a Code Mode server module (DeclareModule).
//
// Declare renders one tool as a callTool overload with the tool name as a
// string literal type, plus type aliases for its input, its output and the
// schemas its $refs point to:
//
//	/**
//	 * Create an invoice for a customer.
//	 * Requires approval: a person confirms each call; a denial is final.
//	 * @remarks non-destructive, not idempotent
//	 */
//	declare function callTool(name: "billing.create_invoice", input: Billing_CreateInvoiceInput): Promise<Billing_CreateInvoiceOutput>;
//	type Billing_CreateInvoiceInput = {
//	  /** Customer id */
//	  customerId: string;
//	  amount: number;
//	  currency?: "EUR" | "USD";
//	};
//	type Billing_CreateInvoiceOutput = { id: string };
//
// Every type name starts with TypeName of the tool, so the declarations of
// many tools can be concatenated into one file, which compiles with
// tsc --strict as a .ts or a .d.ts file. Definitions under $defs or
// definitions, and any other schema a $ref points to, become type aliases
// named after the tool and the definition, such as
// Billing_CreateInvoice$Line; recursive references stay recursive.
//
// DeclareModule renders the tools of one MCP server as a Code Mode module:
// one block, declare module "@codemode/servers/<id>" { ... }, with an async
// function per tool, the tool's type aliases, and the module's __meta__:
//
//	/**
//	 * Fetch one order.
//	 * Canonical MCP tool: shop.get_order
//	 * @remarks read-only
//	 * @annotations readOnlyHint: true
//	 */
//	export function get_order(input: Shop_GetOrderInput): Promise<Shop_GetOrderOutput>;
//
// The input is optional where the schema declares no argument or accepts
// {}, and the function resolves to the output schema's type, or to unknown
// with a sentence on how the result is unwrapped. DiscoveryModule and
// ErrorsModule declare the two fixed modules of Code Mode,
// "@codemode/discovery" and "@codemode/errors"; all three compile together.
//
// Descriptions become JSDoc comments, and JSDoc tags show what the type does
// not: @integer, @format, bounds such as @minimum and @maxLength, @pattern,
// @default, @example and @deprecated. The tool's own comment tells a model
// what calling it does before it calls: a tool that needs a person's
// approval says so in a sentence, its title becomes @title, and its
// side-effect hints (MCP's annotations) become one @remarks line of short
// words such as "read-only" or "destructive, idempotent"; DeclareModule adds
// an @annotations line naming the hints as MCP does, such as
// "readOnlyHint: true". Nothing is written for what the tool does not
// state. Where no declaration can carry a JSDoc comment, as for the items
// of an array, integer and format go in a trailing /* */ comment.
//
// The types follow the schemas as closely as TypeScript allows. Where a
// schema says something a type cannot (not, if/then/else, references to
// other documents), the type is left wider than the schema and a comment
// says what is missing; it is never narrower. DeclareModule also warns in
// the tool's comment when its input or output type leaves something out.
// Rendering is bounded in time and size whatever the schema: past the
// limits a schema is rendered as unknown with a comment.
package typescript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidSchema is returned by TypeOf for a schema that is not valid
// JSON.
var ErrInvalidSchema = errors.New("typescript: invalid schema")

// ErrTooLarge is returned by TypeOf for a schema whose document or rendered
// type exceeds the package's size or nesting limits.
var ErrTooLarge = errors.New("typescript: schema too large")

// Function describes one tool to declare.
type Function struct {
	// Name is the tool name callTool takes, such as "billing.create_invoice";
	// in a ModuleTool, the canonical MCP tool name. Any string is allowed.
	Name string
	// Title and Description document the tool.
	Title, Description string
	// InputSchema is the JSON Schema of the tool's arguments. When it is
	// empty or JSON null, Declare types the input Record<string, unknown>
	// and DeclareModule makes it optional (see DeclareModule).
	InputSchema json.RawMessage
	// OutputSchema is the JSON Schema of the tool's result. When it is
	// empty or JSON null the output is unknown.
	OutputSchema json.RawMessage
	// Effects are the tool's side-effect hints, shown in a @remarks line
	// and, by DeclareModule, an @annotations line.
	Effects Effects
	// RequiresApproval is set when a person confirms each call before it
	// runs; the comment then says so, and that a denial is final.
	RequiresApproval bool
}

// Effects are a tool's side-effect hints, as MCP's tool annotations state
// them (readOnlyHint, destructiveHint, idempotentHint, openWorldHint). A nil
// field was not stated and is not shown. A caller should leave out hints the
// tool's author did not state on purpose, such as the defaults an SDK fills
// in, so that the declaration does not present them as the author's word.
type Effects struct {
	ReadOnly, Destructive, Idempotent, OpenWorld *bool
}

// remarks returns the words of the @remarks line, "" when no hint says
// anything. Following MCP, destructive and idempotent describe writes, so a
// read-only tool shows neither; a closed world is the unremarkable case and
// is not shown either.
func (e Effects) remarks() string {
	var words []string
	is := func(p *bool, v bool) bool { return p != nil && *p == v }
	if is(e.ReadOnly, true) {
		words = append(words, "read-only")
	} else {
		switch {
		case is(e.Destructive, true):
			words = append(words, "destructive")
		case is(e.Destructive, false):
			words = append(words, "non-destructive")
		case is(e.ReadOnly, false):
			words = append(words, "writes")
		}
		switch {
		case is(e.Idempotent, true):
			words = append(words, "idempotent")
		case is(e.Idempotent, false):
			words = append(words, "not idempotent")
		}
	}
	if is(e.OpenWorld, true) {
		words = append(words, "open-world")
	}
	return strings.Join(words, ", ")
}

// approvalNote is the sentence that documents a tool marked
// RequiresApproval.
const approvalNote = "Requires approval: a person confirms each call; a denial is final."

// Declare returns the TypeScript declarations of f: a JSDoc block from its
// description, approval, title and effects; a callTool overload whose name parameter is
// the tool name as a string literal type; and the type aliases it uses,
// named TypeName(f.Name)+"Input", TypeName(f.Name)+"Output", and
// TypeName(f.Name)+"$"+name for each referenced definition.
//
// Declare does not fail: a schema that is not valid JSON, too large, or not
// understood is rendered as unknown, or with an unknown part, with a
// comment saying why. The result ends with a newline.
func Declare(f Function) string {
	base := TypeName(f.Name)
	in, out := base+"Input", base+"Output"
	roots := []root{newRoot(in, "input", f.InputSchema, primary("Record<string, unknown>"))}
	if absent(f.OutputSchema) {
		// No alias for a type that says nothing: the signature says unknown.
		out = "unknown"
	} else {
		roots = append(roots, newRoot(out, "output", f.OutputSchema, unknownType()))
	}
	var b strings.Builder
	b.WriteString(jsdoc(toolDoc(f), 0))
	fmt.Fprintf(&b, "declare function callTool(name: %s, input: %s): Promise<%s>;\n", quote(f.Name), in, out)
	text, _ := declarations(base, roots)
	b.WriteString(text)
	return b.String()
}

// TypeOf returns a TypeScript type expression for a JSON Schema. References
// within the schema are expanded in place, and a reference back into a
// schema being expanded becomes unknown with a comment; Declare names
// referenced schemas instead, which keeps recursive types. An empty schema
// or JSON null gives unknown.
//
// TypeOf fails with ErrInvalidSchema when the schema is not valid JSON and
// with ErrTooLarge when it exceeds the size or nesting limits. Constructs a
// type cannot express are not errors: they widen the type and add a
// comment.
func TypeOf(schema json.RawMessage) (string, error) {
	if absent(schema) {
		return "unknown", nil
	}
	n, err := parse(schema)
	if err != nil {
		return "", err
	}
	g := newGenerator("", true, nil)
	g.doc = newDocument(n)
	t := g.schema(n, ctx{pos: posNested})
	if g.exhausted || len(t.text) > maxOutput {
		return "", fmt.Errorf("%w: the type exceeds the rendering limits", ErrTooLarge)
	}
	return t.text, nil
}

func absent(schema json.RawMessage) bool {
	s := bytes.TrimSpace(schema)
	return len(s) == 0 || string(s) == "null"
}

func newDocument(n *node) *document {
	id, _ := n.get("$id").str()
	id, _, _ = strings.Cut(id, "#")
	return &document{root: n, id: id}
}

// toolDoc returns the JSDoc lines documenting the tool itself: the
// description and the approval sentence, which JSDoc reads as the summary,
// then the tags.
func toolDoc(f Function) []string {
	lines := docLines(f.Description)
	if f.RequiresApproval {
		lines = append(lines, approvalNote)
	}
	if t := inlineText(f.Title, maxInline); t != "" {
		lines = append(lines, "@title "+t)
	}
	if r := f.Effects.remarks(); r != "" {
		lines = append(lines, "@remarks "+r)
	}
	return lines
}

// root is the input or output schema of a tool, parsed, or the type to use
// in its place.
type root struct {
	name     string
	what     string
	doc      *document // nil when fallback is used
	fallback tsType
	// widened is set when fallback stands for a schema that could not be
	// used.
	widened bool
}

func newRoot(name, what string, schema json.RawMessage, missing tsType) root {
	r := root{name: name, what: what, fallback: missing}
	if absent(schema) {
		return r
	}
	n, err := parse(schema)
	if err != nil {
		r.fallback = unknownBecause("%s schema not used: %s", what, strings.TrimPrefix(err.Error(), "typescript: "))
		r.widened = true
		return r
	}
	r.doc = newDocument(n)
	return r
}

// without returns r with its schema replaced by unknown and a comment
// giving the reason.
func (r root) without(reason string) root {
	r.doc = nil
	r.fallback = unknownBecause("%s schema %s", r.what, reason)
	r.widened = true
	return r
}

// declarations renders the type aliases of a tool. When they exceed the
// limits it drops the output schema, then the input schema, then both, so
// that one oversized schema does not hide the other. It also reports, for
// each root, whether its type leaves out part of its schema.
func declarations(base string, roots []root) (string, []bool) {
	for _, drop := range [][2]bool{{false, false}, {false, true}, {true, false}} {
		rs := make([]root, len(roots))
		for i, r := range roots {
			rs[i] = r
			if drop[i] && r.doc != nil {
				rs[i] = r.without("too large to render")
			}
		}
		if text, widened, ok := render(base, rs); ok {
			return text, widened
		}
	}
	var b strings.Builder
	widened := make([]bool, len(roots))
	for i, r := range roots {
		if r.doc != nil {
			r = r.without("too large to render")
		}
		widened[i] = r.widened
		fmt.Fprintf(&b, "type %s = %s;\n", r.name, r.fallback.text)
	}
	return b.String(), widened
}

// render renders the aliases in two passes when needed: the first finds
// references that make an alias circular, as in "type A = B | null; type
// B = A[] | A", which TypeScript rejects; the second renders those
// references as unknown.
func render(base string, roots []root) (string, []bool, bool) {
	text, edges, widened, ok := renderPass(base, roots, nil)
	if !ok {
		return "", nil, false
	}
	broken := cycles(edges)
	if len(broken) == 0 {
		return text, widened, true
	}
	text, _, widened, ok = renderPass(base, roots, broken)
	return text, widened, ok
}

func renderPass(base string, roots []root, broken map[edge]bool) (string, map[edge]bool, []bool, bool) {
	g := newGenerator(base, false, broken)
	for _, r := range roots {
		if r.doc != nil {
			g.register(&alias{name: r.name, doc: r.doc, target: r.doc.root})
		}
	}
	var b strings.Builder
	for _, r := range roots {
		if r.doc == nil {
			fmt.Fprintf(&b, "type %s = %s;\n", r.name, r.fallback.text)
			continue
		}
		g.emit(&b, g.byNode[r.doc.root])
	}
	for i := 0; i < len(g.queue) && !g.exhausted; i++ {
		g.emit(&b, g.queue[i])
	}
	if g.exhausted || b.Len() > maxOutput {
		return "", nil, nil, false
	}
	widened := make([]bool, len(roots))
	for i, r := range roots {
		widened[i] = r.widened || r.doc != nil && g.widened[r.doc]
	}
	return b.String(), g.edges, widened, true
}

// emit writes one type alias.
func (g *generator) emit(b *strings.Builder, a *alias) {
	g.doc, g.cur = a.doc, a
	t := g.schema(a.target, aliasCtx())
	b.WriteString(jsdoc(g.docOf(a.target), 0))
	fmt.Fprintf(b, "type %s = %s;\n", a.name, t.text)
	g.spend(0)
	if b.Len() > maxOutput {
		g.exhausted = true
	}
}

// cycles returns the unguarded references that lie on a cycle, found as the
// edges within one strongly connected component (Tarjan's algorithm).
func cycles(edges map[edge]bool) map[edge]bool {
	adj := map[*node][]*node{}
	for e := range edges {
		adj[e.from] = append(adj[e.from], e.to)
	}
	index := map[*node]int{}
	low := map[*node]int{}
	onStack := map[*node]bool{}
	comp := map[*node]int{}
	var stack []*node
	var connect func(v *node)
	connect = func(v *node) {
		index[v], low[v] = len(index), len(index)
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range adj[v] {
			if _, seen := index[w]; !seen {
				connect(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			id := len(comp)
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = id
				if w == v {
					break
				}
			}
		}
	}
	for v := range adj {
		if _, seen := index[v]; !seen {
			connect(v)
		}
	}
	broken := map[edge]bool{}
	for e := range edges {
		if comp[e.from] == comp[e.to] {
			broken[e] = true
		}
	}
	return broken
}
