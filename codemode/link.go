package codemode

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	sast "github.com/grafana/sobek/ast"
	"github.com/grafana/sobek/parser"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/internal/editdist"
)

// ModulesName is the reserved name of the binding the prelude of a linked
// module reads its imports from: module i of Linked.Imports is
// __codemode_modules__[i]. The host defines it where the plan runs; a
// module may not mention it.
const ModulesName = "__codemode_modules__"

// The codes of a LinkError, as Code Mode's diagnostics name them.
const (
	CodeSyntaxError   = "SYNTAX_ERROR"
	CodeImportFailure = "IMPORT_FAILURE"
)

// Resolver says what a module specifier names at link time: the export
// names of the module, or ok false for a specifier that does not resolve.
// Link passes specifiers as written, decoded from their string literals
// and never normalised: "./x", "/x", "node:fs" and
// "@codemode/servers/../x" are for the Resolver to refuse. Link asks about
// each distinct specifier once.
type Resolver interface {
	Exports(specifier string) (exports []string, ok bool)
}

// Linked is a module linked into a plan body.
type Linked struct {
	// Stripped.JavaScript is the body of an async function; its Mappings
	// lead back to byte offsets of the module.
	ast.Stripped
	// Imports are the resolved specifiers, each once, in the order they
	// first appear in the module (imports, bare imports and re-exports
	// alike): the prelude reads module i as __codemode_modules__[i], and
	// the host provides every one of them.
	Imports []string
}

// LinkError is a module that cannot be linked.
type LinkError struct {
	// Code is CodeSyntaxError or CodeImportFailure.
	Code string
	// Message says what is wrong, and where: "(line N, column M)".
	Message string
	// Hint is one corrective action.
	Hint string
	// Specifier is the specifier concerned, for an import failure: "" for
	// a syntax error, for import.meta, and for an import() whose argument
	// is not a string literal.
	Specifier string
	// Offset is the byte offset in the module source.
	Offset int
	// Line and Column are 1-based; Column counts code points. Lines end at
	// LF, CR, CRLF, U+2028 and U+2029.
	Line, Column int
}

// Error returns the message and the hint.
func (e *LinkError) Error() string {
	if e.Hint == "" {
		return e.Message
	}
	return e.Message + "; " + e.Hint
}

// errLinkFailed is what Link returns when linking panics: a failure of
// the linker, which says nothing of the module.
var errLinkFailed = errors.New("codemode: the module could not be linked")

// Hints.
const (
	hintSyntax   = "correct the code at that position; it runs as an ES module, with static import and export and top-level await"
	hintReturn   = "a module cannot return; set globalThis.__codemode_result__ = value instead"
	hintReserved = "rename it: " + ModulesName + " is reserved for the host"
	hintResolve  = `only @codemode/* modules can be imported; call listServers() from "@codemode/discovery" to see the server modules`
	hintStatic   = `use a static import * as name from "@codemode/servers/<id>" at the top of the module`
	hintImport   = `write import * as name from "module"; or import { a, b as c } from "module";`
	hintExport   = `write export { a, b as c }; export * from "module"; or export before a declaration`
	hintASCII    = "write names in ASCII letters, digits, _ and $, without escapes"
	hintBiDi     = "remove it"
)

// Link links the ES module source into the body of an async function,
// checking its static imports against r.
//
// The module is parsed with sobek's module parser; a syntax error is a
// LinkError of CodeSyntaxError, located. The text __codemode_modules__ may
// not appear anywhere in source (see ModulesName). Every import
// declaration's specifier must resolve through r, and every name it
// imports must be an export of that module; a default import imports the
// export named "default", which Code Mode's modules do not have. The
// specifiers of export ... from must resolve too, with the names they
// re-export. A dynamic import() or import.meta anywhere is refused. Only
// the first error, in source order, is reported.
//
// The JavaScript is the module with:
//
//   - a prelude at offset 0, on the first line, binding every import:
//     `const ns = __codemode_modules__[i];` for import * as ns, and
//     `const {name: local, "a-b": c} = __codemode_modules__[i];` for named
//     and default imports (nothing for a bare import "x");
//   - every import declaration, and every export { ... } and export ...
//     from, replaced by a ';' and spaces, keeping every line terminator;
//   - the keyword export before a declaration, and export default before
//     a named function or class, replaced the same way;
//   - export default before an expression, or before an anonymous function
//     or class, replaced by `;0,` and spaces, so that the value is
//     evaluated once, as an expression, in its place; after an anonymous
//     function or class a ';' is inserted, which ends the statement where
//     the declaration ended.
//
// The ';' in place of each removed declaration keeps the statements around
// it apart as they were (without it, `f()` followed by an import on its
// own line and then `(x)` would become a call of f()'s result). Every line
// keeps its number, and every byte of the module outside the changed
// regions its line and column. Mappings tie the start of every piece of
// the JavaScript to the module: each import's prelude to its declaration,
// each changed region to its start, each copied region to itself.
//
// Import and export declarations are read more strictly than sobek's
// parser reads them, token by token: their names must be ASCII, without
// escapes (package ast refuses other identifiers anyway), and an import
// may not bind a reserved word or the same name twice. A BiDi control
// character in a removed declaration is refused, since package ast, which
// refuses one anywhere, would not see it.
//
// Link does not validate the JavaScript: package ast does, and refuses
// what this does not look at (eval, loops under a preset that forbids
// them, non-ASCII identifiers...). Since nothing imports the linked
// module, its exports are not checked: neither the names an export { ... }
// lists against its declarations, nor exported names for duplicates.
// Top-level await and this are left as they are.
//
// Precondition: sobek's parser recurses, and a stack overflow is a fatal
// error no recover() catches. The caller must bound the size and nesting
// of source before calling Link, as package ast bounds a plan before goja
// parses it. Any other failure inside Link is recovered: an error that is
// not a *LinkError is a failure of the linker, not of the module.
func Link(source string, r Resolver) (linked *Linked, err error) {
	defer func() {
		if recover() != nil {
			linked, err = nil, errLinkFailed
		}
	}()
	l := &linker{src: source, r: r, lines: newLineIndex(source), resolved: map[string]*resolution{}, index: map[string]int{}, locals: map[string]bool{}}
	out, lerr := l.link()
	if lerr != nil {
		return nil, lerr
	}
	return out, nil
}

// linker is the state of one Link.
type linker struct {
	src   string
	r     Resolver
	lines *lineIndex

	resolved map[string]*resolution // by specifier
	index    map[string]int         // specifier → index in imports
	imports  []string
	locals   map[string]bool // names bound by imports

	prelude []piece // in source order
	edits   []piece // replacements of the source, in source order
}

// resolution is what the Resolver said of a specifier.
type resolution struct {
	ok      bool
	exports []string
	set     map[string]bool
}

// piece is text of the JavaScript. In the prelude, from is the offset of
// the import it binds; in edits, text replaces the source's [from, to).
type piece struct {
	from, to int
	text     string
}

func (l *linker) link() (*Linked, *LinkError) {
	src := l.src
	if !utf8.ValidString(src) {
		off := 0
		for off < len(src) {
			r, n := utf8.DecodeRuneInString(src[off:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			off += n
		}
		return nil, l.fail(CodeSyntaxError, off, "", "rewrite the code as UTF-8 text", "the module is not valid UTF-8")
	}
	if i := strings.Index(src, ModulesName); i >= 0 {
		return nil, l.fail(CodeSyntaxError, i, "", hintReserved, "the name %s is reserved", ModulesName)
	}
	prog, err := parser.ParseFile(nil, "module.js", src, 0, parser.IsModule, parser.WithDisableSourceMaps)
	if err != nil {
		return nil, l.syntaxError(err)
	}

	// The first problem in source order: in a declaration, or in the tree.
	var first *LinkError
	for _, st := range prog.Body {
		switch d := st.(type) {
		case *sast.ImportDeclaration:
			first = l.importDeclaration(int(d.Idx) - 1)
		case *sast.ExportDeclaration:
			first = l.exportDeclaration(d)
		}
		if first != nil {
			break
		}
	}
	if p, ok := findProblems(prog, src); ok && (first == nil || p.off < first.Offset) {
		switch p.what {
		case dynamicImport:
			first = l.fail(CodeImportFailure, p.off, p.specifier, hintStatic, "import() is not available: modules are linked before the code runs")
		case importMeta:
			first = l.fail(CodeImportFailure, p.off, "", hintStatic, "import.meta is not available")
		default:
			first = l.fail(CodeSyntaxError, p.off, "", hintReserved, "the name %s is reserved", ModulesName)
		}
	}
	if first != nil {
		return nil, first
	}
	if strings.HasPrefix(src, "#!") {
		// A hashbang comment, which a function body cannot start with,
		// becomes a line comment of the same length.
		l.edits = append([]piece{{from: 0, to: 2, text: "//"}}, l.edits...)
	}
	return l.assemble(), nil
}

// syntaxError turns the parser's first error into a LinkError.
func (l *linker) syntaxError(err error) *LinkError {
	var list parser.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		return l.fail(CodeSyntaxError, 0, "", hintSyntax, "%s", err.Error())
	}
	e := list[0]
	off := l.lines.offset(e.Position.Line, e.Position.Column)
	hint := hintSyntax
	if e.Message == "Illegal return statement" {
		hint = hintReturn
	}
	return l.fail(CodeSyntaxError, off, "", hint, "%s", e.Message)
}

// fail returns a LinkError at byte offset off, its message located.
func (l *linker) fail(code string, off int, specifier, hint, format string, args ...any) *LinkError {
	off = max(0, min(off, len(l.src)))
	line, col := l.lines.at(off)
	return &LinkError{
		Code:      code,
		Message:   fmt.Sprintf(format, args...) + fmt.Sprintf(" (line %d, column %d)", line, col),
		Hint:      hint,
		Specifier: specifier,
		Offset:    off,
		Line:      line,
		Column:    col,
	}
}

// unexpected is a syntax error at token t of a declaration.
func (l *linker) unexpected(t token, decl, hint string) *LinkError {
	switch t.kind {
	case tokEOF:
		return l.fail(CodeSyntaxError, t.start, "", hint, "the %s declaration is incomplete", decl)
	case tokBad:
		r, _ := utf8.DecodeRuneInString(t.text(l.src))
		if r == '\\' {
			return l.fail(CodeSyntaxError, t.start, "", hintASCII, "escapes are not allowed in the names of an %s declaration", decl)
		}
		return l.fail(CodeSyntaxError, t.start, "", hintASCII, "the character U+%04X is not allowed in an %s declaration", r, decl)
	}
	return l.fail(CodeSyntaxError, t.start, "", hint, "unexpected %s in the %s declaration", quoteToken(t.text(l.src)), decl)
}

// quoteToken quotes a token for a message, cut if long.
func quoteToken(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "..."
	}
	return fmt.Sprintf("%q", s)
}

// namedImport is one name an import declaration binds.
type namedImport struct {
	name     string // the export, decoded
	nameTok  token
	local    string
	localTok token
}

// importDeclaration reads, checks and rewrites the import declaration at
// byte offset start.
func (l *linker) importDeclaration(start int) *LinkError {
	src := l.src
	lx := &lexer{src: src, i: start}
	if kw := lx.next(); !kw.is(src, "import") {
		return l.unexpected(kw, "import", hintImport)
	}
	var (
		named   []namedImport
		ns      token
		hasNS   bool
		hasDef  bool
		defTok  token
		specTok token
	)
	t := lx.next()
	if t.kind == tokString {
		specTok = t
	} else {
		if t.kind == tokIdent {
			if err := l.binding(t); err != nil {
				return err
			}
			hasDef, defTok = true, t
			t = lx.next()
			if t.is(src, ",") {
				if t = lx.next(); !t.is(src, "*") && !t.is(src, "{") {
					return l.unexpected(t, "import", hintImport)
				}
			}
		}
		switch {
		case t.is(src, "*"):
			if as := lx.next(); !as.is(src, "as") {
				return l.unexpected(as, "import", hintImport)
			}
			ns = lx.next()
			if err := l.binding(ns); err != nil {
				return err
			}
			hasNS = true
			t = lx.next()
		case t.is(src, "{"):
			for {
				if t = lx.next(); t.is(src, "}") {
					break
				}
				if t.kind != tokIdent && t.kind != tokString {
					return l.unexpected(t, "import", hintImport)
				}
				n := namedImport{nameTok: t, localTok: t, name: l.name(t)}
				if t = lx.next(); t.is(src, "as") {
					n.localTok, t = lx.next(), lx.next()
				} else if n.nameTok.kind == tokString {
					return l.fail(CodeSyntaxError, n.nameTok.start, "", `give it a name with as: import { "a-b" as ab } from "module";`,
						"the export %s needs a local name", n.nameTok.text(src))
				}
				if err := l.binding(n.localTok); err != nil {
					return err
				}
				n.local = n.localTok.text(src)
				named = append(named, n)
				if t.is(src, "}") {
					break
				}
				if !t.is(src, ",") {
					return l.unexpected(t, "import", hintImport)
				}
			}
			t = lx.next()
		case !hasDef:
			return l.unexpected(t, "import", hintImport)
		}
		if !t.is(src, "from") {
			return l.unexpected(t, "import", hintImport)
		}
		if specTok = lx.next(); specTok.kind != tokString {
			return l.unexpected(specTok, "import", hintImport)
		}
	}
	end, err := l.declarationEnd(lx, specTok, "import", hintImport)
	if err != nil {
		return err
	}

	spec := l.name(specTok)
	res, err := l.resolve(specTok, spec)
	if err != nil {
		return err
	}
	if hasDef && !res.set["default"] {
		local := defTok.text(src)
		return l.fail(CodeImportFailure, defTok.start, spec,
			fmt.Sprintf("use import * as %s from %q or import { name } from %q", local, spec, spec),
			"%q has no default export", spec)
	}
	for _, n := range named {
		if !res.set[n.name] {
			return l.missingExport(res, spec, n.name, n.nameTok.start)
		}
	}
	// The bindings.
	for _, b := range []struct {
		ok  bool
		tok token
	}{{hasDef, defTok}, {hasNS, ns}} {
		if b.ok {
			if err := l.bind(b.tok); err != nil {
				return err
			}
		}
	}
	for _, n := range named {
		if err := l.bind(n.localTok); err != nil {
			return err
		}
	}
	if err := l.checkRemoved(start, end); err != nil {
		return err
	}

	module := fmt.Sprintf("%s[%d]", ModulesName, l.index[spec])
	var p strings.Builder
	if hasNS {
		fmt.Fprintf(&p, "const %s = %s;", ns.text(src), module)
	}
	if hasDef || len(named) > 0 {
		p.WriteString("const {")
		sep := ""
		if hasDef {
			fmt.Fprintf(&p, "default: %s", defTok.text(src))
			sep = ", "
		}
		for _, n := range named {
			fmt.Fprintf(&p, "%s%s: %s", sep, propertyKey(n.name), n.local)
			sep = ", "
		}
		fmt.Fprintf(&p, "} = %s;", module)
	}
	if p.Len() > 0 {
		l.prelude = append(l.prelude, piece{from: start, text: p.String()})
	}
	l.edits = append(l.edits, piece{from: start, to: end, text: blank(src, start, end)})
	return nil
}

// binding checks that t can be the name of an import binding.
func (l *linker) binding(t token) *LinkError {
	if t.kind != tokIdent {
		return l.unexpected(t, "import", hintImport)
	}
	if name := t.text(l.src); reservedWords[name] {
		return l.fail(CodeSyntaxError, t.start, "", "choose another name for it", "%s is a reserved word and cannot name an import", name)
	}
	return nil
}

// bind notes the binding t, which must be new.
func (l *linker) bind(t token) *LinkError {
	name := t.text(l.src)
	if l.locals[name] {
		return l.fail(CodeSyntaxError, t.start, "", "import it once, or give it another name with as", "%s is imported twice", name)
	}
	l.locals[name] = true
	return nil
}

// name returns the name a token of a declaration stands for: an
// identifier as written (the lexer allows no escapes in one), a string
// decoded.
func (l *linker) name(t token) string {
	s := t.text(l.src)
	if t.kind != tokString {
		return s
	}
	return decodeString(s)
}

// declarationEnd reads what ends a declaration whose last token is last:
// a ';', or a line terminator or the end of the module before the next
// token. It returns the offset after the declaration.
func (l *linker) declarationEnd(lx *lexer, last token, decl, hint string) (int, *LinkError) {
	next := lx.peek()
	switch {
	case next.is(l.src, ";"):
		lx.next()
		return next.end, nil
	case next.newline || next.kind == tokEOF:
		return last.end, nil
	}
	return 0, l.unexpected(next, decl, hint)
}

// resolve asks the Resolver about a specifier, once, and gives it an index
// when it resolves.
func (l *linker) resolve(t token, spec string) (*resolution, *LinkError) {
	res := l.resolved[spec]
	if res == nil {
		res = &resolution{}
		if l.r != nil {
			res.exports, res.ok = l.r.Exports(spec)
		}
		res.set = make(map[string]bool, len(res.exports))
		for _, e := range res.exports {
			res.set[e] = true
		}
		l.resolved[spec] = res
	}
	if !res.ok {
		return nil, l.fail(CodeImportFailure, t.start, spec, hintResolve, "cannot find module %q", spec)
	}
	if _, ok := l.index[spec]; !ok {
		l.index[spec] = len(l.imports)
		l.imports = append(l.imports, spec)
	}
	return res, nil
}

// missingExport is the error of a name a module does not export.
func (l *linker) missingExport(res *resolution, spec, name string, off int) *LinkError {
	near := closest(name, res.exports, 8)
	if len(near) == 0 {
		return l.fail(CodeImportFailure, off, spec, "import another module", "%q has no export named %q, and exports nothing", spec, name)
	}
	return l.fail(CodeImportFailure, off, spec,
		fmt.Sprintf("import one of its exports instead, such as %s", near[0]),
		"%q has no export named %q; its exports closest to it are %s", spec, name, strings.Join(near, ", "))
}

// exportDeclaration checks and rewrites an export declaration.
func (l *linker) exportDeclaration(d *sast.ExportDeclaration) *LinkError {
	src := l.src
	start := int(d.Idx) - 1
	lx := &lexer{src: src, i: start}
	kw := lx.next()
	if !kw.is(src, "export") {
		return l.unexpected(kw, "export", hintExport)
	}
	switch {
	case d.IsDefault:
		def := lx.next()
		if !def.is(src, "default") {
			return l.unexpected(def, "export", hintExport)
		}
		end := -1 // where an anonymous function or class ends
		switch {
		case d.HoistableDeclaration != nil:
			if f := d.HoistableDeclaration.FunctionDeclaration.Function; f.Name == nil || f.Name.Name == "default" {
				end = int(f.Idx1()) - 1
			}
		case d.ClassDeclaration != nil:
			if c := d.ClassDeclaration.Class; c.Name == nil {
				end = int(c.Idx1()) - 1
			}
		}
		kwText := ";     "
		if d.AssignExpression != nil || end >= 0 {
			kwText = ";0,   "
		}
		l.edits = append(l.edits,
			piece{from: kw.start, to: kw.end, text: kwText},
			piece{from: def.start, to: def.end, text: strings.Repeat(" ", def.end-def.start)})
		if end >= 0 {
			if end < def.end || end > len(src) {
				return l.fail(CodeSyntaxError, def.start, "", hintExport, "the default export cannot be read")
			}
			l.edits = append(l.edits, piece{from: end, to: end, text: ";"})
		}
		return nil
	case d.Variable != nil || d.LexicalDeclaration != nil || d.HoistableDeclaration != nil || d.ClassDeclaration != nil:
		l.edits = append(l.edits, piece{from: kw.start, to: kw.end, text: ";     "})
		return nil
	}

	// export * [as name] from "x";  export { a, b as c } [from "x"];
	var (
		specTok token
		from    bool
		names   []token // the names read from the module, for from
		last    token
	)
	switch t := lx.next(); {
	case t.is(src, "*"):
		t = lx.next()
		if t.is(src, "as") {
			if n := lx.next(); n.kind != tokIdent && n.kind != tokString {
				return l.unexpected(n, "export", hintExport)
			}
			t = lx.next()
		}
		if !t.is(src, "from") {
			return l.unexpected(t, "export", hintExport)
		}
		from = true
	case t.is(src, "{"):
		for {
			if t = lx.next(); t.is(src, "}") {
				break
			}
			if t.kind != tokIdent && t.kind != tokString {
				return l.unexpected(t, "export", hintExport)
			}
			names = append(names, t)
			if t = lx.next(); t.is(src, "as") {
				if n := lx.next(); n.kind != tokIdent && n.kind != tokString {
					return l.unexpected(n, "export", hintExport)
				}
				t = lx.next()
			}
			if t.is(src, "}") {
				break
			}
			if !t.is(src, ",") {
				return l.unexpected(t, "export", hintExport)
			}
		}
		last = t
		if lx.peek().is(src, "from") {
			lx.next()
			from = true
		} else {
			for _, n := range names {
				if n.kind == tokString {
					return l.fail(CodeSyntaxError, n.start, "", "export a declared name: export { name as "+n.text(src)+" };",
						"a string can name what another module exports, not a declaration of this one")
				}
			}
		}
	default:
		return l.unexpected(t, "export", hintExport)
	}
	if from {
		if specTok = lx.next(); specTok.kind != tokString {
			return l.unexpected(specTok, "export", hintExport)
		}
		last = specTok
	}
	end, err := l.declarationEnd(lx, last, "export", hintExport)
	if err != nil {
		return err
	}
	if from {
		spec := l.name(specTok)
		res, err := l.resolve(specTok, spec)
		if err != nil {
			return err
		}
		for _, n := range names {
			if name := l.name(n); !res.set[name] {
				return l.missingExport(res, spec, name, n.start)
			}
		}
	}
	if err := l.checkRemoved(start, end); err != nil {
		return err
	}
	l.edits = append(l.edits, piece{from: start, to: end, text: blank(src, start, end)})
	return nil
}

// checkRemoved refuses a BiDi control character in text Link removes
// (package ast refuses one anywhere in a plan, and would not see it).
func (l *linker) checkRemoved(from, to int) *LinkError {
	for i, r := range l.src[from:to] {
		if isBiDi(r) {
			return l.fail(CodeSyntaxError, from+i, "", hintBiDi, "the bidirectional control character U+%04X is in the module", r)
		}
	}
	return nil
}

// isBiDi reports whether r is a bidirectional control character, which can
// make text display in an order other than the one it runs in.
func isBiDi(r rune) bool {
	return r >= '\u202A' && r <= '\u202E' || r >= '\u2066' && r <= '\u2069' ||
		r == '\u200E' || r == '\u200F' || r == '\u061C'
}

// blank returns the text that replaces src[from:to]: a ';', then a space
// for every byte, except that line terminators stay.
func blank(src string, from, to int) string {
	b := make([]byte, 0, to-from)
	for i := from; i < to; {
		if n := lineBreakLen(src, i); n > 0 {
			b = append(b, src[i:i+n]...)
			i += n
			continue
		}
		if len(b) == 0 {
			b = append(b, ';')
		} else {
			b = append(b, ' ')
		}
		i++
	}
	return string(b)
}

// assemble writes the JavaScript: the prelude, then the module with the
// edits applied, with a mapping at the start of every piece.
func (l *linker) assemble() *Linked {
	var out strings.Builder
	var maps []ast.Mapping
	mark := func(script int) {
		js := out.Len()
		if n := len(maps); n > 0 && maps[n-1].JavaScript == js {
			maps[n-1].Script = script
			return
		}
		maps = append(maps, ast.Mapping{JavaScript: js, Script: script})
	}
	size := len(l.src) + len(l.edits)
	for _, p := range l.prelude {
		size += len(p.text)
	}
	out.Grow(size)
	for _, p := range l.prelude {
		mark(p.from)
		out.WriteString(p.text)
	}
	slices.SortStableFunc(l.edits, func(a, b piece) int { return a.from - b.from })
	pos := 0
	for _, e := range l.edits {
		if e.from > pos {
			mark(pos)
			out.WriteString(l.src[pos:e.from])
		}
		mark(e.from)
		out.WriteString(e.text)
		pos = e.to
	}
	if pos < len(l.src) || len(maps) == 0 {
		mark(pos)
		out.WriteString(l.src[pos:])
	}
	return &Linked{Stripped: ast.Stripped{JavaScript: out.String(), Mappings: maps}, Imports: l.imports}
}

// propertyKey writes name as the key of an object pattern: as it is if it
// is an ASCII identifier name, quoted otherwise.
func propertyKey(name string) string {
	if isIdentifier(name) {
		return name
	}
	return quoteJS(name)
}

// quoteJS returns a JavaScript string literal of s, in ASCII.
func quoteJS(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= 0x20 && r < 0x7F:
			b.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04X\u%04X`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&b, `\u%04X`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// decodeString returns the value of a string literal of the module, which
// sobek's parser has read already: a literal without escapes is its text,
// and sobek's parser decodes the others.
func decodeString(lit string) string {
	if len(lit) < 2 {
		return ""
	}
	if !strings.Contains(lit, `\`) {
		return lit[1 : len(lit)-1]
	}
	prog, err := parser.ParseFile(nil, "", "("+lit+")", 0, parser.WithDisableSourceMaps)
	if err != nil || len(prog.Body) != 1 {
		return lit
	}
	if st, ok := prog.Body[0].(*sast.ExpressionStatement); ok {
		if s, ok := st.Expression.(*sast.StringLiteral); ok {
			return s.Value.String()
		}
	}
	return lit
}

// closest returns up to n of exports, the closest to name first, ignoring
// case: those that hold name or that name holds, then by edit distance,
// then by name. Names are compared on their first 64 characters.
func closest(name string, exports []string, n int) []string {
	type scored struct {
		name string
		d    int
	}
	lower := strings.ToLower(name)
	target := []rune(lower)
	if len(target) > 64 {
		target = target[:64]
	}
	all := make([]scored, 0, len(exports))
	seen := make(map[string]bool, len(exports))
	for _, e := range exports {
		if seen[e] {
			continue
		}
		seen[e] = true
		le := strings.ToLower(e)
		r := []rune(le)
		if len(r) > 64 {
			r = r[:64]
		}
		d := editdist.Distance(string(target), string(r), 64)
		if lower == "" || !strings.Contains(le, lower) && !strings.Contains(lower, le) {
			d += 1 << 20 // after every name that holds the other
		}
		all = append(all, scored{e, d})
	}
	slices.SortFunc(all, func(a, b scored) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]string, 0, min(n, len(all)))
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.name)
	}
	return out
}
