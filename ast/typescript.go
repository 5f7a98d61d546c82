package ast

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// TypeStripper turns a plan written in TypeScript into JavaScript. Package
// ast/tsstrip provides the one CodeCall uses. Package ast does not import
// it, so that a program that only ever validates JavaScript (the sandbox
// worker, which is sent Checked.Source) does not link a TypeScript parser.
//
// ValidateTypeScript calls StripTypes only for a script that did not parse
// as JavaScript, and only after it has bounded what a parser can find in
// it (see ValidateTypeScript). StripTypes may be called from any goroutine.
type TypeStripper interface {
	// StripTypes returns the JavaScript of script, which is the body of an
	// async function written in TypeScript: the same statements, without
	// their types, as the body of an async function still. A script that is
	// not valid TypeScript is reported as a *StripError; any other error
	// refuses the script.
	StripTypes(script string) (*Stripped, error)
}

// Stripped is a TypeScript plan with its types stripped.
type Stripped struct {
	// JavaScript is the plan's body in JavaScript.
	JavaScript string
	// Mappings tie positions of JavaScript to the positions of the script
	// they were made from, in any order. A position without a mapping of
	// its own takes the nearest one before it.
	Mappings []Mapping
}

// Mapping ties a byte offset of Stripped.JavaScript to a byte offset of
// the TypeScript script.
type Mapping struct {
	JavaScript int
	Script     int
}

// StripError is a TypeStripper's report that it could not strip a script.
type StripError struct {
	// Message says what is wrong, without a location.
	Message string
	// Offset is the byte offset in the script of a syntax error, or -1 when
	// the stripper refused the script as a whole (too large to read
	// safely, say).
	Offset int
}

// Error returns the message.
func (e *StripError) Error() string { return e.Message }

// Bounds on a script handed to a TypeScript parser. A parser made for
// trusted input may cost more than linear time on some shapes of input;
// these are the ones found in esbuild, bounded far above what a plan
// writes:
//
//   - maxTypeScriptNesting: brackets and arrow functions nested in each
//     other (esbuild renames a name shadowed in k nested scopes in time
//     that grows with k cubed: 1,600 nested arrows take seconds);
//   - maxTypeScriptAngles: '<' in code (each may open type arguments, and
//     esbuild looks ahead to find out: 4,700 of them take over a second);
//   - maxTypeScriptBangs: '!' in code (esbuild simplifies nested negations
//     in time that grows with their number squared).
const (
	maxTypeScriptNesting = 48
	maxTypeScriptAngles  = 1000
	maxTypeScriptBangs   = 1000
)

// ValidateTypeScript validates a plan written in JavaScript or TypeScript.
//
// The script is validated as JavaScript first, exactly as Validate does,
// so a JavaScript plan costs what it costs with Validate and means what it
// means in JavaScript (f<T>(x) alone is two comparisons). Only when goja's
// parser refuses it is it read as TypeScript: ts strips its types, and the
// JavaScript it returns goes through every check of Validate and is
// compiled. When both readings fail, the error reported is the one further
// into the script: a TypeScript plan fails as JavaScript at its first type
// annotation, so a later TypeScript error is the real one.
//
// What ts sees is bounded first. The script met Rules' limits as sent, and
// the pre-scan passed over all of it; the script is read as TypeScript only
// if the pre-scan's view of it holds for TypeScript too (every regular
// expression stands where TypeScript also reads an expression, and no
// HTML-like comment, which a TypeScript parser skips, hides code), and if
// it nests brackets and arrow functions at most 48 deep and has at most
// 1,000 '<' and 1,000 '!' in its code: shapes of input on which a parser
// made for trusted input takes more than linear time. Otherwise goja's
// error stands, saying why the script was not read as TypeScript.
//
// The JavaScript is held to every rule except the byte and line limits,
// which the script as sent met (stripping types may make it longer; see
// Checked.SourceRules). The rules that look at characters also look at the
// script as sent: a BiDi control character in a comment that stripping
// removes is still refused. Every location reported, in errors and by the
// Checked, is in the script as sent.
//
// A nil ts makes ValidateTypeScript Validate. Errors are those of Validate.
func ValidateTypeScript(script string, r Rules, ts TypeStripper) (*Checked, error) {
	c, err := Validate(script, r)
	if err == nil || ts == nil {
		return c, err
	}
	return validateTypeScript(script, r, ts, err)
}

// validateTypeScript is ValidateTypeScript for a script that failed as
// JavaScript with the error asJavaScript; a function of its own so that the
// JavaScript path allocates nothing more than Validate does.
func validateTypeScript(script string, r Rules, ts TypeStripper, asJavaScript error) (c *Checked, err error) {
	var jsErr *SyntaxError
	if !errors.As(asJavaScript, &jsErr) || precheck(script, r) != nil {
		return nil, asJavaScript
	}
	defer recoverValidation(&c, &err)
	// The same validation again, keeping its state this time: keeping it
	// the first time would cost every JavaScript plan an allocation.
	v := &validation{script: script, rules: r, lines: newLineIndex(script)}
	if _, err := v.run(); !v.parseFailed || !errors.As(err, &jsErr) {
		return nil, asJavaScript
	}
	if why := typeScriptGate(script, v.scan, v.lines); why != "" {
		return nil, notTypeScript(jsErr, why)
	}
	stripped, err := ts.StripTypes(script)
	if err != nil {
		var se *StripError
		if !errors.As(err, &se) || se.Offset < 0 {
			return nil, notTypeScript(jsErr, err.Error())
		}
		return nil, v.typeScriptError(jsErr, se)
	}
	return v.validateStripped(stripped)
}

// notTypeScript is the JavaScript syntax error of a script that was not
// read as TypeScript, saying why.
func notTypeScript(jsErr *SyntaxError, why string) *SyntaxError {
	return &SyntaxError{Message: jsErr.Message + "; the script was not read as TypeScript either: " + why, Location: jsErr.Location}
}

// typeScriptError chooses between goja's error and the stripper's: the one
// further into the script, goja's on a tie. An import or export on the
// line of the TypeScript error is the reason for it, and is reported as
// the violation it is.
func (v *validation) typeScriptError(jsErr *SyntaxError, se *StripError) error {
	off := max(0, min(se.Offset, len(v.script)))
	loc := v.lines.at(off)
	if !after(loc, jsErr.Location) {
		return jsErr
	}
	for _, o := range v.scan.imports {
		if o <= off && v.lines.at(o).Line == loc.Line {
			return v.importViolations()
		}
	}
	return &SyntaxError{
		Message:  fmt.Sprintf("%s (line %d, column %d), reading the script as TypeScript", se.Message, loc.Line, loc.Column),
		Location: loc,
	}
}

func after(a, b Location) bool {
	return a.Line > b.Line || a.Line == b.Line && a.Column > b.Column
}

// validateStripped validates the JavaScript a TypeScript plan was stripped
// to, with locations in the script as sent (v is the validation of that
// script as JavaScript).
func (v *validation) validateStripped(st *Stripped) (*Checked, error) {
	js := st.JavaScript
	if len(js) > maxAbsoluteScriptBytes {
		return nil, &IllegalError{Violations: []Violation{{Kind: KindScriptTooLarge, Location: Location{Line: 1, Column: 1},
			Message: fmt.Sprintf("with its types stripped, the script is %d bytes of JavaScript, more than the %d allowed (line 1, column 1); shorten it, or split the work into several runs",
				len(js), maxAbsoluteScriptBytes)}}}
	}
	if !utf8.ValidString(js) {
		return nil, errors.New("ast: the TypeScript stripper returned invalid UTF-8")
	}
	lines := newLineIndex(js)
	lines.origin = newOrigin(v.lines, js, st.Mappings)
	rules := v.rules
	rules.MaxScriptBytes, rules.MaxScriptLines = 0, 0
	sv := &validation{script: js, rules: rules, lines: lines}
	c, err := sv.run()

	// The script's own characters: stripping removes comments, and
	// escapes what it keeps.
	if len(v.lexical) == 0 {
		return c, err
	}
	var ill *IllegalError
	switch {
	case err == nil:
		return nil, illegal(v.lexical, v.lexicalOmitted)
	case errors.As(err, &ill):
		seen := make(map[Location]bool, len(v.lexical))
		for _, l := range v.lexical {
			seen[l.Location] = true
		}
		vs := append([]Violation(nil), v.lexical...)
		for _, x := range ill.Violations {
			if x.Kind != KindUnicode || !seen[x.Location] {
				vs = append(vs, x)
			}
		}
		return nil, illegal(vs, ill.Omitted+v.lexicalOmitted)
	}
	return nil, err
}

// typeScriptGate checks that a TypeScript parser will see what the
// pre-scan saw, and that it nests little enough (see ValidateTypeScript).
// It returns why the script may not be read as TypeScript, or "".
//
// The pre-scan lexes JavaScript. TypeScript lexes strings, templates and
// comments the same way, and differs on two points: whether a '/' starts a
// regular expression, and HTML-like comments (<!-- and --> at the start of
// a line), which a TypeScript parser skips and the pre-scan reads as code.
// Where the pre-scan saw a regular expression, TypeScript may see a
// division (after x! or a closing type argument list), and then reads as
// code what the pre-scan skipped: each regular expression must stand where
// TypeScript too can only read an expression.
func typeScriptGate(script string, scan *scanResult, lines *lineIndex) string {
	if scan == nil || scan.problem != nil {
		return "the pre-scan did not finish"
	}
	g := gate{src: script, prev: tokStart}
	spans := literalSpans(script, scan.regions)
	k := 0
	for i := 0; i < len(script); {
		if k < len(spans) && i >= spans[k].from {
			sp := spans[k]
			k++
			switch sp.kind {
			case regRegex:
				if g.prev != tokStart && g.prev != tokParen {
					loc := lines.at(sp.from)
					return fmt.Sprintf("the regular expression at line %d, column %d could be a division in TypeScript; put it in parentheses or give it a name with const",
						loc.Line, loc.Column)
				}
				g.prev = tokValue
			case regString, regTemplate:
				g.prev = tokValue
			}
			i = max(i, sp.to)
			continue
		}
		next, off := g.token(i)
		if off >= 0 {
			loc := lines.at(off)
			return fmt.Sprintf("an HTML-like comment (<!-- or -->) is at line %d, column %d", loc.Line, loc.Column)
		}
		switch {
		case g.nestMax > maxTypeScriptNesting:
			loc := lines.at(i)
			return fmt.Sprintf("brackets and arrow functions nest more than %d deep at line %d, column %d; give inner functions names with const",
				maxTypeScriptNesting, loc.Line, loc.Column)
		case g.angles > maxTypeScriptAngles:
			return fmt.Sprintf("its code has more than %d '<' (comparisons and type arguments)", maxTypeScriptAngles)
		case g.bangs > maxTypeScriptBangs:
			return fmt.Sprintf("its code has more than %d '!'", maxTypeScriptBangs)
		}
		i = next
	}
	return ""
}

// span is a literal or comment of the script with its delimiters (for a
// template, the text between them).
type span struct {
	kind     regionKind
	from, to int
}

// literalSpans widens the pre-scan's regions to their delimiters: the
// quotes of a string, the slashes of a regular expression, // or /* and */
// of a comment. A template's backticks, ${ and } stay code.
func literalSpans(src string, regions []region) []span {
	out := make([]span, 0, len(regions))
	for _, rg := range regions {
		sp := span{kind: rg.kind, from: rg.start, to: rg.end}
		switch rg.kind {
		case regString, regRegex:
			sp.from, sp.to = rg.start-1, rg.end+1
		case regComment:
			sp.from = rg.start - 2
			if src[sp.from+1] == '*' {
				sp.to = rg.end + 2
			}
		}
		sp.from, sp.to = max(0, sp.from), min(len(src), sp.to)
		out = append(out, sp)
	}
	return out
}

// gateTok classifies the previous token for the regular expression check.
type gateTok uint8

const (
	// tokStart: TypeScript, like JavaScript, reads an expression next (the
	// start of the script, an operator, an opening bracket, a comma,
	// return...).
	tokStart gateTok = iota
	// tokValue: a value ended (an identifier, a literal, a closing ] or },
	// a non-null !); a '/' after it may be a division in TypeScript.
	tokValue
	// tokParen: a closing parenthesis; the pre-scan reads a regular
	// expression after one only when it closes the head of if, for, while
	// or with, where TypeScript does too.
	tokParen
)

// exprKeywords are the keywords after which TypeScript, like JavaScript,
// reads an expression. void is not one: in a type it is the void type.
var exprKeywords = map[string]bool{
	"return": true, "throw": true, "case": true, "do": true, "else": true, "typeof": true, "instanceof": true,
	"in": true, "new": true, "delete": true, "yield": true, "await": true, "extends": true,
}

// gate is the state of typeScriptGate's walk over code.
type gate struct {
	src  string
	prev gateTok
	// arrow: the previous token was =>.
	arrow bool
	// levels are the open brackets; top is the level outside any.
	levels        []gateLevel
	top           gateLevel
	nest, nestMax int // brackets and open arrows, as deep as they went
	angles, bangs int // '<' and '!' in code
}

// gateLevel is an open bracket.
type gateLevel struct {
	// arrows counts the arrow functions opened at this level since its
	// last comma or semicolon, whose bodies may still be open: an
	// expression body ends only at a comma, a semicolon or a closing
	// bracket of an enclosing level.
	arrows int
	// body: the bracket is the { of an arrow function's block body, which
	// ends the arrow.
	body bool
}

// cur returns the innermost level.
func (g *gate) cur() *gateLevel {
	if n := len(g.levels); n > 0 {
		return &g.levels[n-1]
	}
	return &g.top
}

// token reads the code token at i and returns the offset after it; off is
// the offset of an HTML-like comment, or -1.
func (g *gate) token(i int) (next, off int) {
	src := g.src
	c := src[i]
	switch {
	case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
		return i + 1, -1
	case c >= utf8.RuneSelf:
		r, size := utf8.DecodeRuneInString(src[i:])
		if unicode.IsSpace(r) || r == '\uFEFF' {
			return i + size, -1
		}
	}
	arrow := g.arrow
	g.arrow = false
	switch {
	case c >= utf8.RuneSelf || isASCIIIdentPart(c) || c == '\\':
		return g.word(i), -1
	case c == '(' || c == '[' || c == '{':
		g.levels = append(g.levels, gateLevel{body: c == '{' && arrow})
		g.nest++
		g.nestMax = max(g.nestMax, g.nest)
		g.prev = tokStart
	case c == ')' || c == ']' || c == '}':
		if n := len(g.levels); n > 0 {
			l := g.levels[n-1]
			g.levels = g.levels[:n-1]
			g.nest -= 1 + l.arrows
			if p := g.cur(); l.body && p.arrows > 0 {
				p.arrows--
				g.nest--
			}
		}
		g.prev = tokValue
		if c == ')' {
			g.prev = tokParen
		}
	case c == '=' && i+1 < len(src) && src[i+1] == '>':
		g.cur().arrows++
		g.nest++
		g.nestMax = max(g.nestMax, g.nest)
		g.prev, g.arrow = tokStart, true
		return i + 2, -1
	case c == ',' || c == ';':
		l := g.cur()
		g.nest -= l.arrows
		l.arrows = 0
		g.prev = tokStart
	case c == '<' && hasPrefix(src[i:], "<!--"), c == '-' && hasPrefix(src[i:], "-->"):
		return i + 1, i
	case c == '<':
		g.angles++
		g.prev = tokStart
	case c == '!':
		// A prefix ! after an operator; a non-null ! after a value.
		g.bangs++
		if g.prev != tokStart {
			g.prev = tokValue
		}
	case c == '.' || c == '>' || c == '#' || c == '@':
		g.prev = tokValue
	default:
		g.prev = tokStart
	}
	return i + 1, -1
}

// word reads an identifier, keyword or number at i.
func (g *gate) word(i int) int {
	start := i
	for i < len(g.src) {
		c := g.src[i]
		if c < utf8.RuneSelf {
			if !isASCIIIdentPart(c) && c != '\\' {
				break
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(g.src[i:])
		if unicode.IsSpace(r) || r == '\uFEFF' {
			break
		}
		i += size
	}
	if exprKeywords[g.src[start:i]] {
		g.prev = tokStart
	} else {
		g.prev = tokValue
	}
	return i
}
