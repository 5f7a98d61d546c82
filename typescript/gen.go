package typescript

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Limits that keep generation bounded whatever the schema. They are
// generous for real tool schemas: a declaration near maxOutput would already
// crowd a model's context.
const (
	maxSchemaBytes  = 1 << 20   // size of one schema document
	maxJSONDepth    = 256       // JSON nesting of one schema document
	maxDepth        = 32        // schema nesting within one type expression
	maxSteps        = 20000     // schemas and literal values visited per declaration
	maxOutput       = 256 << 10 // bytes of declarations per tool
	maxDocLen       = 2048      // bytes of one description
	maxInline       = 160       // bytes of one inline comment or tag value
	maxExamples     = 3         // example values shown per schema
	maxIndexUnion   = 120       // bytes of an index signature type widened by a union
	maxAlternatives = 1000      // union members an intersection may multiply out to
)

// prec orders type expressions by how loosely they bind, to decide where
// parentheses are needed.
type prec uint8

const (
	precPrimary      prec = iota // keywords, names, literals, objects, arrays, tuples
	precPrefix                   // negative number literals: -1[] would not parse as intended
	precIntersection             // a & b
	precUnion                    // a | b
)

// tsType is a rendered type expression.
type tsType struct {
	text string
	prec prec
	// unknown is set when the type admits every value, so that dropping it
	// from an intersection loses nothing but its comment.
	unknown bool
	// alts counts the alternatives TypeScript sees when it distributes an
	// intersection over unions, minus one so that the zero value means one.
	alts int
	// members are the alternatives of a union, so that a union of unions
	// is flattened; nil for other types and for a union with a comment.
	members []tsType
}

func (t tsType) alternatives() int { return t.alts + 1 }

func unknownType() tsType { return tsType{text: "unknown", unknown: true} }

func primary(text string) tsType { return tsType{text: text} }

// withNote appends a comment explaining what t does not express.
func withNote(t tsType, notes ...string) tsType {
	if len(notes) == 0 {
		return t
	}
	t.text += " /* " + inlineText(strings.Join(notes, "; "), maxInline) + " */"
	t.members = nil
	return t
}

// bareText returns a type's text without its trailing comment, and whether
// it had one. It tells types apart that differ only in a comment.
func bareText(text string) (string, bool) {
	if strings.HasSuffix(text, " */") {
		if i := strings.LastIndex(text, " /* "); i > 0 {
			return text[:i], true
		}
	}
	return text, false
}

// unknownBecause is unknown with a comment saying why.
func unknownBecause(format string, args ...any) tsType {
	return withNote(unknownType(), fmt.Sprintf(format, args...))
}

// position tells what a schema is rendered for, which decides where its
// documentation goes.
type position uint8

const (
	// posNested: array items, tuple elements, allOf members and other
	// places with no declaration to carry a JSDoc block; integer and format
	// become a trailing comment.
	posNested position = iota
	// posDecl: a property or a type alias; the caller writes the JSDoc.
	posDecl
	// posMember: a member of anyOf or oneOf, whose title and description
	// often tell the alternatives apart, so they join the trailing comment.
	posMember
)

// ctx is the rendering context of one schema.
type ctx struct {
	depth  int // schema nesting within the current type expression
	indent int // indentation level of the line the expression starts on
	// guarded is set where TypeScript resolves a reference lazily, so that
	// a reference back to the alias being rendered is legal recursion; a
	// reference elsewhere is resolved with the alias, and a cycle of those
	// is a circular alias (error TS2456).
	guarded bool
	// lazy is set while the path from the alias consists of unions,
	// intersections, array elements and required tuple elements only:
	// there, TypeScript defers array and tuple types that contain a
	// reference, so their elements are guarded. Optional and rest tuple
	// elements break the path (their array and tuple types are resolved
	// eagerly, as in "type A = number | [string, ...[A][]]").
	lazy bool
	pos  position
}

// aliasCtx is the context of the type of a type alias.
func aliasCtx() ctx { return ctx{pos: posDecl, lazy: true} }

func (c ctx) nested(pos position) ctx {
	c.depth++
	c.pos = pos
	return c
}

// member is the context of an object property or index signature, whose
// type TypeScript always resolves lazily.
func (c ctx) member(pos position) ctx {
	c = c.nested(pos)
	c.indent++
	c.guarded = true
	return c
}

// element is the context of an array element or a required tuple element.
func (c ctx) element() ctx {
	c = c.nested(posNested)
	c.guarded = c.guarded || c.lazy
	return c
}

// spread is the context of an optional or rest tuple element.
func (c ctx) spread() ctx {
	c = c.nested(posNested)
	c.lazy = false
	return c
}

// document is one parsed schema and what its local references resolve to.
type document struct {
	root *node
	id   string // the root's $id, so that absolute references to it resolve locally
}

// alias is a named type alias emitted for a referenced schema.
type alias struct {
	name   string
	doc    *document
	target *node
}

// edge is an unguarded reference from the alias rendering from to the
// alias for to, identified by their schemas.
type edge struct{ from, to *node }

// generator renders schemas. It is used for one call of Declare or TypeOf
// and holds no state beyond it.
type generator struct {
	base   string // type name prefix of the tool; empty when inlining
	inline bool   // TypeOf: expand references in place instead of naming them

	doc    *document
	cur    *alias         // alias being rendered, when naming
	stack  map[*node]bool // references being expanded, when inlining
	queue  []*alias       // aliases in the order they were first referenced
	byNode map[*node]*alias
	names  map[string]bool
	edges  map[edge]bool // unguarded references seen
	broken map[edge]bool // unguarded references that close a cycle; rendered as unknown

	steps     int
	size      int // bytes of literal and documentation text produced
	exhausted bool

	// widened holds the documents some part of which the types do not
	// express: where the type is unknown or wider than the schema, with a
	// comment saying why.
	widened map[*document]bool
}

func newGenerator(base string, inline bool, broken map[edge]bool) *generator {
	return &generator{
		base:    base,
		inline:  inline,
		stack:   map[*node]bool{},
		byNode:  map[*node]*alias{},
		names:   map[string]bool{},
		edges:   map[edge]bool{},
		broken:  broken,
		widened: map[*document]bool{},
	}
}

// widen records that the schema being rendered says something its type
// does not.
func (g *generator) widen() {
	if g.doc != nil {
		g.widened[g.doc] = true
	}
}

// unknownBecause is unknownBecause for a part of the schema being
// rendered, which it records as widened.
func (g *generator) unknownBecause(format string, args ...any) tsType {
	g.widen()
	return unknownBecause(format, args...)
}

// spend accounts for one unit of work and n bytes of text, and reports
// whether the budget still allows rendering.
func (g *generator) spend(n int) bool {
	g.steps++
	g.size += n
	if g.steps > maxSteps || g.size > maxOutput {
		g.exhausted = true
	}
	return !g.exhausted
}

// schema renders the type of schema n.
func (g *generator) schema(n *node, c ctx) tsType {
	if !g.spend(0) {
		return g.unknownBecause("schema too large")
	}
	if c.depth > maxDepth {
		return g.unknownBecause("nested deeper than %d levels", maxDepth)
	}
	switch {
	case n.kind == kindBool && n.bool:
		return unknownType()
	case n.kind == kindBool:
		return primary("never")
	case n.kind != kindObject:
		return g.unknownBecause("invalid schema: a schema must be an object or a boolean")
	}

	var parts []tsType // all of them apply: an intersection
	var notes []string
	if ref := n.get("$ref"); ref != nil {
		parts = append(parts, g.ref(ref, c))
	}
	literal := false
	if v := n.get("const"); v != nil {
		parts = append(parts, g.literal(v, 0))
		literal = true
	} else if v := n.get("enum"); v != nil {
		parts = append(parts, g.enum(v))
		literal = true
	} else if t, ok := g.typed(n, c); ok {
		parts = append(parts, t)
	}
	if all := n.get("allOf"); all != nil {
		if all.kind != kindArray {
			notes = append(notes, "allOf is not an array")
		}
		for _, m := range all.items {
			parts = append(parts, g.schema(m, c.nested(posNested)))
		}
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		alts := n.get(kw)
		if alts == nil {
			continue
		}
		if alts.kind != kindArray {
			notes = append(notes, kw+" is not an array")
			continue
		}
		ms := make([]tsType, 0, len(alts.items))
		for _, m := range alts.items {
			ms = append(ms, g.schema(m, c.nested(posMember)))
		}
		parts = append(parts, union(ms))
	}
	t, omitted := intersection(parts)
	if omitted {
		g.widen()
	}
	if n.get("nullable").isTrue() && !literal && !t.unknown {
		t = union([]tsType{t, primary("null")})
	}

	// What JSON Schema can say but a TypeScript type cannot; the type is
	// left wider than the schema and the comment says so.
	if n.get("not") != nil {
		notes = append(notes, "not: negation is not expressed")
	}
	if n.get("if") != nil {
		notes = append(notes, "if/then/else is not expressed")
	}
	for _, kw := range []string{"dependentSchemas", "dependentRequired", "dependencies"} {
		if n.get(kw) != nil {
			notes = append(notes, kw+" is not expressed")
		}
	}
	for _, kw := range []string{"$dynamicRef", "$recursiveRef"} {
		if n.get(kw) != nil {
			notes = append(notes, kw+" is not supported")
		}
	}
	if len(notes) > 0 {
		g.widen()
	}
	if c.pos != posDecl {
		notes = append(notes, inlineDoc(n, c.pos == posMember)...)
	}
	return withNote(t, notes...)
}

// typed renders the "type" keyword, or the type implied by object and array
// keywords when it is absent. It reports false when n constrains neither.
func (g *generator) typed(n *node, c ctx) (tsType, bool) {
	var names []string
	switch tn := n.get("type"); {
	case tn == nil:
		if hasAny(n, "properties", "additionalProperties", "patternProperties", "required") {
			names = append(names, "object")
		}
		if hasAny(n, "items", "prefixItems", "additionalItems") {
			names = append(names, "array")
		}
		if len(names) == 0 {
			return tsType{}, false
		}
	case tn.kind == kindString:
		names = []string{tn.text}
	case tn.kind == kindArray:
		for _, it := range tn.items {
			s, ok := it.str()
			if !ok {
				return g.unknownBecause("invalid type keyword"), true
			}
			names = append(names, s)
		}
	default:
		return g.unknownBecause("invalid type keyword"), true
	}
	ts := make([]tsType, 0, len(names))
	for _, name := range names {
		switch name {
		case "string", "number", "boolean", "null":
			ts = append(ts, primary(name))
		case "integer":
			ts = append(ts, primary("number"))
		case "object":
			ts = append(ts, g.object(n, c))
		case "array":
			ts = append(ts, g.array(n, c))
		default:
			ts = append(ts, g.unknownBecause("unsupported type %s", quote(name)))
		}
	}
	return union(ts), true
}

func hasAny(n *node, keys ...string) bool {
	for _, k := range keys {
		if n.get(k) != nil {
			return true
		}
	}
	return false
}

// object renders an object type with one member per property, in schema
// order, and an index signature for additionalProperties and
// patternProperties.
func (g *generator) object(n *node, c ctx) tsType {
	props := n.get("properties")
	if props != nil && props.kind != kindObject {
		props = nil
	}
	required := map[string]bool{}
	var requiredOrder []string
	if r := n.get("required"); r != nil {
		for _, it := range r.items {
			if s, ok := it.str(); ok && !required[s] {
				required[s] = true
				requiredOrder = append(requiredOrder, s)
			}
		}
	}
	addl := n.get("additionalProperties")
	pad := strings.Repeat("  ", c.indent+1)

	var lines []string
	var memberTypes []tsType
	optional := false
	member := func(key string, doc []string, t tsType, opt bool) {
		if !g.spend(len(key)) {
			return
		}
		q := ""
		if opt {
			q = "?"
			optional = true
		}
		lines = append(lines, jsdoc(doc, c.indent+1)+pad+propName(key)+q+": "+t.text+";")
		memberTypes = append(memberTypes, t)
	}
	if props != nil {
		for _, key := range props.keys {
			ps := props.vals[key]
			member(key, g.docOf(ps), g.schema(ps, c.member(posDecl)), !required[key])
		}
	}
	for _, key := range requiredOrder {
		if props != nil && props.vals[key] != nil {
			continue
		}
		// Required but not described: present with whatever value the
		// additional properties allow.
		t := unknownType()
		if addl != nil && addl.kind == kindObject {
			t = g.schema(addl, c.member(posNested))
		}
		member(key, nil, t, false)
	}

	// The index signature, when other keys are allowed.
	var index []tsType
	open := addl.isTrue()
	if addl != nil && addl.kind == kindObject {
		index = append(index, g.schema(addl, c.member(posNested)))
	}
	var patterns []string
	if pp := n.get("patternProperties"); pp != nil && pp.kind == kindObject {
		for _, p := range pp.keys {
			patterns = append(patterns, p)
			index = append(index, g.schema(pp.vals[p], c.member(posNested)))
		}
	}
	if open {
		index = append(index, unknownType())
	}
	if len(index) > 0 {
		it := union(index)
		if len(lines) == 0 && it.text == "unknown" && len(patterns) == 0 {
			return primary("Record<string, unknown>")
		}
		if len(lines) > 0 && !it.unknown {
			var wide bool
			if it, wide = indexCompatible(it, memberTypes, optional); wide {
				g.widen()
			}
		}
		var doc []string
		for _, p := range patterns {
			doc = append(doc, "Property names matching "+inlineText(quote(p), maxInline))
		}
		lines = append(lines, jsdoc(doc, c.indent+1)+pad+"[key: string]: "+it.text+";")
	}
	if len(lines) == 1 && !strings.Contains(lines[0], "\n") {
		return primary("{ " + strings.TrimSuffix(strings.TrimSpace(lines[0]), ";") + " }")
	}
	if len(lines) == 0 {
		if addl.isFalse() {
			return primary("Record<string, never>")
		}
		return primary("Record<string, unknown>")
	}
	return primary("{\n" + strings.Join(lines, "\n") + "\n" + strings.Repeat("  ", c.indent) + "}")
}

// indexCompatible widens an index signature type so that every named
// property's type is assignable to it, as TypeScript requires. A short union
// keeps the information; a long one would repeat whole property types, so
// the index type becomes unknown instead, with a comment, and unknown
// reports it.
func indexCompatible(it tsType, members []tsType, optional bool) (t tsType, unknown bool) {
	all := append([]tsType{it}, members...)
	if optional {
		all = append(all, primary("undefined"))
	}
	u := union(all)
	if u.unknown || len(u.text) > maxIndexUnion || strings.Contains(u.text, "\n") {
		return withNote(unknownType(), "other properties: "+it.text), true
	}
	return u, false
}

// array renders arrays and tuples.
func (g *generator) array(n *node, c ctx) tsType {
	items := n.get("items")
	var tuple []*node
	var rest *node
	switch prefix := n.get("prefixItems"); {
	case prefix != nil && prefix.kind == kindArray:
		tuple, rest = prefix.items, items
	case items != nil && items.kind == kindArray:
		tuple, rest = items.items, n.get("additionalItems")
	default:
		if items.isFalse() {
			return primary("[]")
		}
		if items == nil {
			return primary("unknown[]")
		}
		return arrayOf(g.schema(items, c.element()))
	}

	minItems, _ := n.get("minItems").nonNegInt()
	maxItems, hasMax := n.get("maxItems").nonNegInt()
	elems := make([]string, 0, len(tuple)+1)
	for i, s := range tuple {
		if hasMax && i >= maxItems {
			break
		}
		if i >= minItems {
			// An element the array may end before. A union followed by
			// "?" does not parse, so it gets parentheses.
			elems = append(elems, parens(g.schema(s, c.spread()), precPrefix)+"?")
		} else {
			elems = append(elems, g.schema(s, c.element()).text)
		}
	}
	switch {
	case rest.isFalse(), hasMax && maxItems <= len(tuple):
	case rest == nil || rest.isTrue():
		elems = append(elems, "...unknown[]")
	default:
		elems = append(elems, "..."+arrayOf(g.schema(rest, c.spread())).text)
	}
	return primary("[" + strings.Join(elems, ", ") + "]")
}

// arrayOf is the array type of elem.
func arrayOf(elem tsType) tsType {
	return primary(parens(elem, precPrimary) + "[]")
}

// parens returns t's text, parenthesised when it binds more loosely than
// max allows.
func parens(t tsType, max prec) string {
	if t.prec > max {
		return "(" + t.text + ")"
	}
	return t.text
}

// union renders alternatives. The members of a union among them become
// alternatives of their own. Duplicates and never are dropped, and so is an
// alternative that differs from another only in lacking its comment; an
// unconstrained alternative makes the whole union unconstrained.
func union(ms []tsType) tsType {
	var flat []tsType
	for _, m := range ms {
		if len(m.members) > 0 {
			flat = append(flat, m.members...)
		} else {
			flat = append(flat, m)
		}
	}
	var out []tsType
	seen := map[string]bool{}
	commented := map[string]bool{}  // bare texts of alternatives with a comment
	uncommented := map[string]int{} // bare texts of alternatives without one → index in out
	for _, m := range flat {
		if m.text == "unknown" {
			return unknownType()
		}
		if m.text == "never" || seen[m.text] {
			continue
		}
		seen[m.text] = true
		bare, hasComment := bareText(m.text)
		switch {
		case !hasComment && commented[bare]:
			continue
		case !hasComment:
			uncommented[bare] = len(out)
		default:
			commented[bare] = true
			if i, ok := uncommented[bare]; ok {
				out[i] = m
				delete(uncommented, bare)
				continue
			}
		}
		out = append(out, m)
	}
	switch len(out) {
	case 0:
		return primary("never")
	case 1:
		return out[0]
	}
	u := tsType{prec: precUnion}
	texts := make([]string, len(out))
	n := 0
	for i, m := range out {
		texts[i] = m.text
		u.unknown = u.unknown || m.unknown
		n = min(n+m.alternatives(), maxAlternatives)
	}
	u.alts = n - 1
	u.text = strings.Join(texts, " | ")
	u.members = out
	return u
}

// intersection renders types that all apply. Bare unknown parts add
// nothing and are dropped; an unknown with a comment stays for the comment.
//
// TypeScript multiplies out an intersection of unions, and gives up on
// types with too many alternatives; past maxAlternatives the unions are
// left out, which widens the type, a comment says so, and omitted reports
// it.
func intersection(parts []tsType) (t tsType, omitted bool) {
	var out []tsType
	seen := map[string]bool{}
	n := 1
	for _, p := range parts {
		if p.text == "unknown" || seen[p.text] {
			continue
		}
		seen[p.text] = true
		out = append(out, p)
		n = min(n*p.alternatives(), maxAlternatives+1)
	}
	var note string
	if n > maxAlternatives {
		kept := out[:0]
		for _, p := range out {
			if p.alternatives() == 1 {
				kept = append(kept, p)
			}
		}
		out, n = kept, 1
		note = "alternatives of anyOf/oneOf/allOf omitted: too many combinations"
	}
	switch len(out) {
	case 0:
		t = unknownType()
	case 1:
		t = out[0]
	default:
		t = tsType{prec: precIntersection, unknown: true, alts: n - 1}
		texts := make([]string, len(out))
		for i, p := range out {
			texts[i] = parens(p, precIntersection)
			t.unknown = t.unknown && p.unknown
		}
		t.text = strings.Join(texts, " & ")
	}
	if note != "" {
		return withNote(t, note), true
	}
	return t, false
}

// literal renders a JSON value as a literal type. Objects and arrays
// become object and tuple types of literals.
func (g *generator) literal(v *node, depth int) tsType {
	if !g.spend(len(v.text)) {
		return g.unknownBecause("schema too large")
	}
	if depth > maxDepth {
		return g.unknownBecause("value nested deeper than %d levels", maxDepth)
	}
	switch v.kind {
	case kindNull:
		return primary("null")
	case kindBool:
		return primary(strconv.FormatBool(v.bool))
	case kindNumber:
		if strings.HasPrefix(v.text, "-") {
			return tsType{text: v.text, prec: precPrefix}
		}
		return primary(v.text)
	case kindString:
		return primary(quote(v.text))
	case kindArray:
		elems := make([]string, len(v.items))
		for i, it := range v.items {
			elems[i] = g.literal(it, depth+1).text
		}
		return primary("[" + strings.Join(elems, ", ") + "]")
	default:
		if len(v.keys) == 0 {
			return primary("Record<string, never>")
		}
		members := make([]string, len(v.keys))
		for i, k := range v.keys {
			g.spend(len(k))
			members[i] = propName(k) + ": " + g.literal(v.vals[k], depth+1).text
		}
		return primary("{ " + strings.Join(members, "; ") + " }")
	}
}

// enum renders an enum as a union of literals.
func (g *generator) enum(v *node) tsType {
	if v.kind != kindArray {
		return g.unknownBecause("enum is not an array")
	}
	ms := make([]tsType, len(v.items))
	for i, it := range v.items {
		ms[i] = g.literal(it, 0)
	}
	return union(ms)
}

// ref renders a $ref: the name of an alias for the target, or the target
// itself when inlining. References that leave the document are not
// fetched.
func (g *generator) ref(r *node, c ctx) tsType {
	s, ok := r.str()
	if !ok {
		return g.unknownBecause("$ref is not a string")
	}
	shown := quote(truncate(s, maxInline))
	var frag string
	switch {
	case strings.HasPrefix(s, "#"):
		frag = s[1:]
	case g.doc.id != "" && s == g.doc.id:
	case g.doc.id != "" && strings.HasPrefix(s, g.doc.id+"#"):
		frag = s[len(g.doc.id)+1:]
	default:
		return g.unknownBecause("external $ref %s is not resolved", shown)
	}
	if u, err := url.PathUnescape(frag); err == nil {
		frag = u
	}
	if frag != "" && frag[0] != '/' {
		return g.unknownBecause("$ref to anchor %s is not supported", shown)
	}
	target := resolve(g.doc.root, frag)
	if target == nil {
		return g.unknownBecause("$ref %s does not resolve", shown)
	}
	if g.inline {
		if g.stack[target] {
			return g.unknownBecause("recursive $ref %s", shown)
		}
		g.stack[target] = true
		t := g.schema(target, c.nested(c.pos))
		delete(g.stack, target)
		return t
	}
	a := g.aliasFor(target, frag)
	if !c.guarded {
		e := edge{from: g.cur.target, to: target}
		g.edges[e] = true
		if g.broken[e] {
			return g.unknownBecause("circular $ref %s", shown)
		}
	}
	return primary(a.name)
}

// resolve follows a JSON pointer (RFC 6901) from root.
func resolve(root *node, pointer string) *node {
	if pointer == "" {
		return root
	}
	n := root
	for _, seg := range strings.Split(pointer[1:], "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		switch n.kind {
		case kindObject:
			n = n.vals[seg]
		case kindArray:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(n.items) || seg != strconv.Itoa(i) {
				return nil
			}
			n = n.items[i]
		default:
			return nil
		}
		if n == nil {
			return nil
		}
	}
	return n
}

// aliasFor returns the alias for a referenced schema, creating it on first
// use. Definitions under $defs or definitions are named after their key;
// other targets after their pointer.
func (g *generator) aliasFor(target *node, pointer string) *alias {
	if a := g.byNode[target]; a != nil {
		return a
	}
	var segs []string
	if pointer != "" {
		segs = strings.Split(pointer[1:], "/")
	}
	var name string
	if k := len(segs); k >= 2 && (segs[k-2] == "$defs" || segs[k-2] == "definitions") {
		name = strings.ReplaceAll(strings.ReplaceAll(segs[k-1], "~1", "/"), "~0", "~")
	} else {
		name = strings.Join(segs, "_")
	}
	base := g.base + "$" + defName(name)
	full := base
	for i := 2; g.names[full]; i++ {
		full = base + "_" + strconv.Itoa(i)
	}
	a := &alias{name: full, doc: g.doc, target: target}
	g.register(a)
	g.queue = append(g.queue, a)
	return a
}

func (g *generator) register(a *alias) {
	g.names[a.name] = true
	g.byNode[a.target] = a
}

// docOf returns the JSDoc lines for a schema in a declaration position: its
// description (or title) and tags for what the type does not show.
func (g *generator) docOf(n *node) []string {
	if n == nil || n.kind != kindObject {
		return nil
	}
	var lines []string
	text, _ := n.get("description").str()
	if text == "" {
		text, _ = n.get("title").str()
	}
	lines = append(lines, docLines(text)...)
	lines = append(lines, tags(n)...)
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	g.spend(size)
	return lines
}

// tags returns the JSDoc tags of a schema.
func tags(n *node) []string {
	var out []string
	if isInteger(n) {
		out = append(out, "@integer")
	}
	if f, ok := n.get("format").str(); ok {
		out = append(out, "@format "+inlineText(f, maxInline))
	}
	// Validation keywords the type alone would let a caller violate.
	for _, kw := range [...]string{
		"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf",
		"minLength", "maxLength", "pattern", "minItems", "maxItems",
		"minProperties", "maxProperties", "contentEncoding", "contentMediaType",
	} {
		if v := n.get(kw); v != nil {
			out = append(out, "@"+kw+" "+tagValue(v))
		}
	}
	if n.get("uniqueItems").isTrue() {
		out = append(out, "@uniqueItems")
	}
	if v := n.get("default"); v != nil {
		out = append(out, "@default "+inlineText(compactJSON(v, maxInline), maxInline+3))
	}
	var examples []*node
	if ex := n.get("examples"); ex != nil && ex.kind == kindArray {
		examples = ex.items
	}
	if ex := n.get("example"); ex != nil {
		examples = append(examples, ex)
	}
	for i, ex := range examples {
		if i == maxExamples {
			break
		}
		out = append(out, "@example "+inlineText(compactJSON(ex, maxInline), maxInline+3))
	}
	if n.get("deprecated").isTrue() {
		out = append(out, "@deprecated")
	}
	return out
}

// tagValue shows a keyword's value: strings as they are, anything else as
// JSON.
func tagValue(v *node) string {
	if s, ok := v.str(); ok {
		return inlineText(s, maxInline)
	}
	return inlineText(compactJSON(v, maxInline), maxInline+3)
}

// isInteger reports whether n's type is integer, alone or with null, which
// TypeScript's number does not distinguish.
func isInteger(n *node) bool {
	t := n.get("type")
	if s, ok := t.str(); ok {
		return s == "integer"
	}
	integer := false
	if t != nil && t.kind == kindArray {
		for _, it := range t.items {
			switch s, _ := it.str(); s {
			case "integer":
				integer = true
			case "number":
				return false
			}
		}
	}
	return integer
}

// inlineDoc returns the notes shown in a trailing comment for a schema in a
// nested position: integer and format, and for union members the title or
// description too.
func inlineDoc(n *node, member bool) []string {
	if n.kind != kindObject {
		return nil
	}
	var out []string
	if member {
		text, _ := n.get("description").str()
		if text == "" {
			text, _ = n.get("title").str()
		}
		if text = inlineText(text, maxInline); text != "" {
			out = append(out, text)
		}
	}
	if isInteger(n) {
		out = append(out, "integer")
	}
	if f, ok := n.get("format").str(); ok {
		out = append(out, "format: "+f)
	}
	return out
}
