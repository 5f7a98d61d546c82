package ast

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/dop251/goja"
	js "github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
)

const (
	// defaultMaxNesting applies when Rules.MaxNestingDepth is not set.
	defaultMaxNesting = 64
	// maxAbsoluteScriptBytes caps a script whatever the Rules say: the
	// parser's stack bound (see stackBudget) and the time to validate grow
	// with the size.
	maxAbsoluteScriptBytes = 4 << 20
)

// Validate parses script as the body of an async function, checks every
// rule, and compiles the same syntax tree.
//
// The program it compiles is
//
//	(async function(){<script>
//	})
//
// so running Checked.Program in a runtime evaluates to the plan's async
// function; calling it with no arguments returns a Promise of the plan's
// result. Top-level await and return work, and so does the style
// `async function main(){...}; return main();`. The program is compiled in
// strict mode: `this` is undefined in plain function calls, so no global
// object leaks through a sloppy `this`. The prefix holds no line break, so
// line numbers of the program are those of the script and only columns of
// line 1 are shifted; Checked.Locate undoes the shift.
//
// Before anything is parsed, the script's size, line count, bracket
// nesting and a few more bounds are checked (see prescan): deeply nested
// source would overflow the Go stack in goja's parser, which is fatal.
//
// Errors: *SyntaxError when the script does not parse (located in the
// user's script), *IllegalError listing every violation with its location,
// or a plain error for an internal failure (a panic in goja's compiler or
// here), which refuses the script rather than take the caller down.
func Validate(script string, r Rules) (c *Checked, err error) {
	defer recoverValidation(&c, &err)
	if err := precheck(script, r); err != nil {
		return nil, err
	}
	v := &validation{script: script, rules: r, lines: newLineIndex(script)}
	return v.run()
}

// recoverValidation turns a panic in goja or here into an error that
// refuses the script rather than take the caller down. The error reaches
// the client, so it says what to do and carries nothing of the panic (a
// Go runtime message, a value's internals).
func recoverValidation(c **Checked, err *error) {
	if x := recover(); x != nil {
		*c, *err = nil, errValidatorFailed
	}
}

// errValidatorFailed refuses a script the validator could not finish.
var errValidatorFailed = errors.New("the plan could not be validated: the validator failed on it; simplify or rewrite the script")

// precheck refuses a script over the byte limit or not valid UTF-8, before
// anything else looks at it.
func precheck(script string, r Rules) error {
	if err := checkSize(script, r.MaxScriptBytes); err != nil {
		return err
	}
	if off := invalidUTF8(script); off >= 0 {
		loc := newLineIndex(script[:off]).at(off)
		return &SyntaxError{
			Message:  fmt.Sprintf("the script is not valid UTF-8 (line %d, column %d)", loc.Line, loc.Column),
			Location: loc,
		}
	}
	return nil
}

// validation holds the state of one Validate call.
type validation struct {
	script         string
	rules          Rules
	lines          *lineIndex
	scan           *scanResult
	lexical        []Violation
	lexicalOmitted int
	// parseFailed says that the pre-scan passed and goja's parser then
	// refused the script: the one failure a TypeScript plan meets.
	parseFailed bool
}

func (v *validation) run() (*Checked, error) {
	if err := v.bound(); err != nil {
		return nil, err
	}
	return v.parseAndCheck()
}

// bound checks what must hold before any parser reads the script: its
// line count, and the pre-scan's bounds on nesting and shapes a parser
// recurses on. It also collects the lexical violations.
func (v *validation) bound() error {
	r := v.rules
	var gate []Violation
	if r.MaxScriptLines > 0 && v.lines.lines() > r.MaxScriptLines {
		gate = append(gate, Violation{
			Kind: KindTooManyLines,
			Message: fmt.Sprintf("the script has %d lines, more than the %d allowed (line %d, column 1); shorten it, or split the work into several runs",
				v.lines.lines(), r.MaxScriptLines, r.MaxScriptLines+1),
			Location: Location{Line: r.MaxScriptLines + 1, Column: 1},
		})
	}

	maxNesting := r.MaxNestingDepth
	if maxNesting <= 0 {
		maxNesting = defaultMaxNesting
	}
	v.scan = prescan(v.script, v.lines, maxNesting)
	v.collectLexical()
	if p := v.scan.problem; p != nil {
		loc := v.lines.at(p.off)
		msg := fmt.Sprintf("%s (line %d, column %d); %s", p.what, loc.Line, loc.Column, p.fix)
		if p.syntax && len(gate) == 0 {
			return &SyntaxError{Message: msg, Location: loc}
		}
		if !p.syntax {
			gate = append(gate, Violation{Kind: p.kind, Message: msg, Location: loc})
		}
	}
	if len(gate) > 0 || v.scan.invisibleInCode {
		return illegal(append(gate, v.lexical...), v.lexicalOmitted)
	}
	return nil
}

// parseAndCheck parses, walks and compiles a script bound has passed.
func (v *validation) parseAndCheck() (*Checked, error) {
	r := v.rules

	program := wrapPrefix + v.script + wrapSuffix
	skeleton := buildSkeleton(program, v.scan.regions)

	// Parse the skeleton first: every string, template text, regex and
	// comment is blanked in it, so whatever goja's parser makes of it,
	// including after a syntax error when its lexer may read the inside
	// of a literal as code, it only ever sees the brackets the pre-scan
	// counted.
	tree, err := parse(skeleton)
	if err != nil {
		return nil, v.syntaxError(err)
	}
	collect := &walker{lines: v.lines, program: skeleton}
	fn, ok := checkWrapper(tree, len(v.script))
	if !ok {
		return nil, v.wrapperError()
	}
	collect.walkPlan(tree, fn)
	if collect.tooDeep {
		// The literal comparison needs the whole tree; the script is
		// refused anyway.
		loc := v.lines.fromIdx(int(collect.tooDeepAt))
		msg := fmt.Sprintf(tooDeepSyntax, maxSyntaxDepth)
		return nil, illegal(append([]Violation{{Kind: KindTooDeep, Location: loc,
			Message: fmt.Sprintf("%s (line %d, column %d); %s", msg, loc.Line, loc.Column, tooDeepSyntaxFix)}}, v.lexical...), v.lexicalOmitted)
	}
	if off, ok := sameLiterals(v.scan.literals, collect.literals); !ok {
		loc := v.lines.at(off - len(wrapPrefix))
		return nil, &SyntaxError{
			Message: fmt.Sprintf("the script cannot be read unambiguously here (line %d, column %d): a '/' may be a division or start a regular expression; put regular expressions in parentheses and end statements with semicolons",
				loc.Line, loc.Column),
			Location: loc,
		}
	}

	// The skeleton parsed cleanly and goja found exactly the literals the
	// pre-scan found, so the script has the same structure: parse it.
	if skeleton != program {
		if tree, err = parse(program); err != nil {
			return nil, v.syntaxError(err)
		}
		if fn, ok = checkWrapper(tree, len(v.script)); !ok {
			return nil, v.wrapperError()
		}
	}

	w := &walker{rules: newRuleSet(r), lines: v.lines, program: program}
	w.walkPlan(tree, fn)
	if len(w.violations) > 0 || len(v.lexical) > 0 {
		return nil, illegal(append(w.violations, v.lexical...), w.omitted+v.lexicalOmitted)
	}

	prg, err := compile(tree)
	if err != nil {
		var se *goja.CompilerSyntaxError
		if errors.As(err, &se) {
			loc := v.lines.at(se.Offset - len(wrapPrefix))
			return nil, &SyntaxError{
				Message:  fmt.Sprintf("%s (line %d, column %d)", se.Message, loc.Line, loc.Column),
				Location: loc,
			}
		}
		return nil, err
	}
	return &Checked{Program: prg, lines: v.lines, noRegExpLiterals: !w.regexLits}, nil
}

// checkSize refuses a script over the byte limit before anything else
// looks at it.
func checkSize(script string, max int64) error {
	if max <= 0 || max > maxAbsoluteScriptBytes {
		max = maxAbsoluteScriptBytes
	}
	if int64(len(script)) <= max {
		return nil
	}
	off := int(max)
	for off > 0 && !utf8.RuneStart(script[off]) {
		off--
	}
	loc := newLineIndex(script[:off]).at(off)
	return &IllegalError{Violations: []Violation{{
		Kind: KindScriptTooLarge,
		Message: fmt.Sprintf("the script is %d bytes, more than the %d allowed; it goes over at line %d, column %d: shorten it, or split the work into several runs",
			len(script), max, loc.Line, loc.Column),
		Location: loc,
	}}}
}

// invalidUTF8 returns the offset of the first byte that is not valid UTF-8,
// or -1.
func invalidUTF8(s string) int {
	if utf8.ValidString(s) {
		return -1
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

func parse(src string) (*js.Program, error) {
	// Source maps stay off: goja would otherwise read the file a
	// //# sourceMappingURL= comment names.
	return parser.ParseFile(nil, fileName, src, 0, parser.WithDisableSourceMaps)
}

// compile compiles the checked tree in strict mode. goja's compiler reports
// syntax errors by panicking with *CompilerSyntaxError, which CompileAST
// recovers; any other panic is a compiler failure and is returned as an
// error rather than taking the caller down.
func compile(tree *js.Program) (prg *goja.Program, err error) {
	defer func() {
		if x := recover(); x != nil {
			prg, err = nil, fmt.Errorf("ast: compiling the plan failed: %v", x)
		}
	}()
	return goja.CompileAST(tree, true)
}

var bidiNames = map[rune]string{
	'\u202A': "LEFT-TO-RIGHT EMBEDDING", '\u202B': "RIGHT-TO-LEFT EMBEDDING", '\u202C': "POP DIRECTIONAL FORMATTING",
	'\u202D': "LEFT-TO-RIGHT OVERRIDE", '\u202E': "RIGHT-TO-LEFT OVERRIDE", '\u2066': "LEFT-TO-RIGHT ISOLATE",
	'\u2067': "RIGHT-TO-LEFT ISOLATE", '\u2068': "FIRST STRONG ISOLATE", '\u2069': "POP DIRECTIONAL ISOLATE",
	'\u200E': "LEFT-TO-RIGHT MARK", '\u200F': "RIGHT-TO-LEFT MARK", '\u061C': "ARABIC LETTER MARK",
}

// collectLexical turns the pre-scan's Unicode findings and every BiDi
// control character into violations.
func (v *validation) collectLexical() {
	v.lexicalOmitted = v.scan.lexicalOmitted
	add := func(off int, what, fix string) {
		if len(v.lexical) >= maxViolations {
			v.lexicalOmitted++
			return
		}
		loc := v.lines.at(off)
		v.lexical = append(v.lexical, Violation{
			Kind:     KindUnicode,
			Message:  fmt.Sprintf("%s (line %d, column %d); %s", what, loc.Line, loc.Column, fix),
			Location: loc,
		})
	}
	checkBiDi(v.script, func(off int, r rune) {
		add(off, fmt.Sprintf("the bidirectional control character U+%04X (%s) is in the script", r, bidiNames[r]),
			"remove it: it can make code display differently from how it runs")
	})
	for _, l := range v.scan.lexical {
		add(l.off, l.what, l.fix)
	}
}

// syntaxError turns goja's parse errors into a *SyntaxError located in the
// script, or into an *IllegalError when the first error is a construct the
// rules name (import, export, for await) or a character they refuse.
func (v *validation) syntaxError(err error) error {
	v.parseFailed = true
	var list parser.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		return &SyntaxError{Message: err.Error(), Location: Location{Line: 1, Column: 1}}
	}
	first := list[0]
	loc := v.lines.fromProgram(first.Position.Line, first.Position.Column)
	off := v.offsetOf(first.Position.Line, first.Position.Column)

	if slices.Contains(v.scan.imports, off) {
		return v.importViolations()
	}
	if slices.Contains(v.scan.forAwaits, off) {
		if !v.rules.AllowLoops {
			rs := newRuleSet(v.rules)
			return illegal(append([]Violation{{Kind: KindLoop, Location: loc, Message: fmt.Sprintf(
				"for await...of loops are not allowed %s (line %d, column %d); use Array methods such as map, or Promise.all over an array of tool calls",
				rs.by(), loc.Line, loc.Column)}}, v.lexical...), v.lexicalOmitted)
		}
		return &SyntaxError{Location: loc, Message: fmt.Sprintf(
			"for await...of is not supported (line %d, column %d); use a for...of loop with await in its body, or Promise.all", loc.Line, loc.Column)}
	}
	for _, l := range v.lexical {
		if l.Location == loc {
			return illegal(v.lexical, v.lexicalOmitted)
		}
	}
	what := first.Message
	if off < 0 || off >= len(v.script) {
		// goja stumbled on the wrapper's closing brace: the script
		// ended in the middle of something.
		what = "Unexpected end of input"
	}
	msg := fmt.Sprintf("%s (line %d, column %d)", what, loc.Line, loc.Column)
	if off >= 0 && off < len(v.script) && v.script[off] >= utf8.RuneSelf {
		r, _ := utf8.DecodeRuneInString(v.script[off:])
		msg += fmt.Sprintf("; the character %q (U+%04X) cannot be used there: write code with ASCII quotes, operators and spaces", r, r)
	}
	if len(list) > 1 {
		msg += fmt.Sprintf(" (and %d more errors)", len(list)-1)
	}
	return &SyntaxError{Message: msg, Location: loc}
}

// importViolations reports every import and export keyword the pre-scan
// found, which goja cannot parse, with the lexical violations.
func (v *validation) importViolations() *IllegalError {
	var vs []Violation
	for _, o := range v.scan.imports {
		l := v.lines.at(o)
		vs = append(vs, Violation{Kind: KindImport, Location: l, Message: fmt.Sprintf(
			"import and export are not allowed (line %d, column %d); plans cannot load modules: call tools with callTool", l.Line, l.Column)})
	}
	return illegal(append(vs, v.lexical...), v.lexicalOmitted)
}

// offsetOf converts a line and byte column of the program to an offset in
// the script, or -1 outside it.
func (v *validation) offsetOf(line, column int) int {
	if line < 1 || line > len(v.lines.starts) {
		return -1
	}
	if line == 1 {
		column -= len(wrapPrefix)
	}
	off := v.lines.starts[line-1] + column - 1
	if off < 0 || off > len(v.script) {
		return -1
	}
	return off
}

func (v *validation) wrapperError() error {
	loc := v.lines.at(len(v.script))
	return &SyntaxError{
		Message:  fmt.Sprintf("the script must be the body of one function: it cannot close the function it runs in (line %d, column %d)", loc.Line, loc.Column),
		Location: loc,
	}
}

// illegal builds an *IllegalError with the violations in source order,
// without duplicates, at most maxViolations of them.
func illegal(vs []Violation, omitted int) *IllegalError {
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := vs[i].Location, vs[j].Location
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	out := vs[:0]
	for i, x := range vs {
		if i > 0 && x == vs[i-1] {
			continue
		}
		out = append(out, x)
	}
	if len(out) > maxViolations {
		omitted += len(out) - maxViolations
		out = out[:maxViolations]
	}
	return &IllegalError{Violations: out, Omitted: omitted}
}

// buildSkeleton blanks the inside of every non-code region of the program
// (strings, template text, regular expressions, comments) without changing
// its length, its line breaks, or whether goja accepts it: escape
// sequences stay valid and delimiters stay in place. What remains inside
// are letters, digits, spaces, line breaks, non-ASCII characters and valid
// escapes, none of which can open a bracket or end a literal.
func buildSkeleton(program string, regions []region) string {
	var b []byte
	set := func(i int, c byte) {
		if b == nil {
			b = []byte(program)
		}
		b[i] = c
	}
	for _, rg := range regions {
		start, end := rg.start+len(wrapPrefix), rg.end+len(wrapPrefix)
		switch rg.kind {
		case regComment:
			for i := start; i < end; {
				if lt, size := isLineTerminator(program, i); lt {
					i += size
					continue
				}
				if program[i] != ' ' {
					set(i, ' ')
				}
				i++
			}
		case regRegex:
			for i := start; i < end; i++ {
				if !isAlnum(program[i]) {
					set(i, 'x')
				}
			}
		default:
			for i := start; i < end; {
				c := program[i]
				switch {
				case c == '\\':
					i = blankEscape(program, i, end, set)
				case c >= utf8.RuneSelf:
					_, size := utf8.DecodeRuneInString(program[i:])
					i += size
				case isAlnum(c) || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '_':
					i++
				default:
					set(i, 'x')
					i++
				}
			}
		}
	}
	if b == nil {
		return program
	}
	return string(b)
}

// blankEscape keeps the escape sequence at i of a string or template valid:
// \uXXXX, \u{...}, \xXX, \n, octal digits, escaped line breaks and escaped
// non-ASCII characters stay as they are; escaped punctuation becomes the
// identity escape \a. It returns the offset after the escape.
func blankEscape(p string, i, end int, set func(int, byte)) int {
	if i+1 >= end {
		return i + 1
	}
	d := p[i+1]
	switch {
	case d == 'u' && i+2 < end && p[i+2] == '{':
		j := i + 3
		for j < end && isHex(p[j]) {
			j++
		}
		if j < end && p[j] == '}' {
			j++
		}
		return j
	case isAlnum(d) || d == '\n':
		return i + 2
	case d == '\r':
		if i+2 < end && p[i+2] == '\n' {
			return i + 3
		}
		return i + 2
	case d >= utf8.RuneSelf:
		_, size := utf8.DecodeRuneInString(p[i+1:])
		return i + 1 + size
	}
	set(i+1, 'a')
	return i + 2
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// sameLiterals compares the literals of the pre-scan with the ones goja's
// tree holds. It returns the program offset of the first difference.
func sameLiterals(scanned, parsed []literal) (int, bool) {
	less := func(a, b literal) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return int(a.kind) - int(b.kind)
	}
	s := slices.Clone(scanned)
	slices.SortFunc(s, less)
	p := slices.Clone(parsed)
	slices.SortFunc(p, less)
	for i := 0; i < len(s) || i < len(p); i++ {
		switch {
		case i >= len(s):
			return p[i].start, false
		case i >= len(p):
			return s[i].start, false
		case s[i] != p[i]:
			return min(s[i].start, p[i].start), false
		}
	}
	return 0, true
}
