package ast

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/dop251/goja/token"
)

// The pre-scan runs before goja's parser ever sees a script. goja's parser
// and compiler are recursive: deeply nested source overflows the Go stack,
// which is a fatal error that no recover() can catch, so nesting must be
// bounded before parsing. The pre-scan is a tokenizer that follows goja's
// lexer closely enough to tell code from the inside of strings, template
// literals, regular expressions and comments, and:
//
//   - measures bracket nesting ((, [, {, ${) against Rules.MaxNestingDepth;
//   - bounds chains of operators that goja parses by recursion without a
//     bracket in between (a => b => c, a ? b : c ? d : e, a = b = c, !!!x,
//     new new X, a ** b ** c, a < b < c), so that they too are refused
//     before parsing;
//   - bounds arrow functions nested inside arrow-function parameter lists,
//     because goja re-parses such a parameter list once per enclosing one
//     (exponential time);
//   - bounds the Go stack the parser can use, from the brackets it could see
//     (see stackBudget);
//   - records the non-code regions, so that Validate can first parse a
//     skeleton of the script in which those regions are blanked (see
//     buildSkeleton) and check that goja found exactly the same literals;
//   - finds the lexical tricks the AST no longer shows: escapes and
//     non-ASCII characters in identifiers, invisible characters in code and
//     BiDi controls anywhere;
//   - notes import/export and for-await, which goja cannot parse, so that
//     they are reported as what they are rather than as syntax errors.

// maxArrowParamNesting bounds how deeply arrow-function parameter lists may
// nest inside each other. goja parses a parenthesised group, sees the =>,
// and parses the group again as parameters, so the innermost of k nested
// groups is parsed 2^k times.
const maxArrowParamNesting = 3

// maxOperatorChain bounds the operators chained at one bracket level
// between two commas, semicolons or statement ends that goja's parser
// handles by recursion. Realistic code chains a handful; the syntax tree's
// own depth bound (maxSyntaxDepth) would refuse a long chain after
// parsing, this refuses it before.
const maxOperatorChain = 200

// maxLabels bounds the labels of a script. goja checks a new label against
// every enclosing one and records an error for each duplicate, so nested
// labels cost quadratic time and memory (a:a:a:... with 16,000 labels would
// record 128 million errors).
const maxLabels = 100

// Stack accounting. goja's parser uses at most about 2.3 KB of Go stack per
// opening bracket it descends into (measured: "(": 2114 B, "[": 2114 B,
// "{a:": 2329 B, "`${": 2290 B) and at most about 160 B per byte of any
// other construct (unary operators, assignments, arrows, ternaries, new,
// labels, statements). A Go stack may grow to 1 GB; growth doubles it, so
// 512 MiB is the largest stack that can exist. The budget keeps the worst
// case, every bracket of the script seen in one nest, at half of that, and
// the per-item figures are rounded up from the measurements. The pre-scan
// and the skeleton make that worst case unreachable; the budget holds even
// if they were wrong.
const (
	stackPerBracket = 2600
	stackPerByte    = 200
	stackBudget     = 256 << 20
)

type litKind uint8

// Kinds of literal tokens, in the order literals at the same offset sort.
const (
	litString litKind = iota
	litRegex
	litTemplate
	litChunk
)

// literal is a literal token as goja's parser must see it. Validate compares
// the literals of the scan with the ones goja's AST holds; a difference means
// the scan misread the script and Validate fails closed.
type literal struct {
	kind litKind
	// start is the offset in the wrapped program of the token (the quote,
	// slash or backtick). For a template chunk it is the offset goja
	// reports for the chunk: the offset just after its first character.
	start int
	// end is the offset in the wrapped program just after the string or
	// regex (flags included) or of the closing backtick of a template.
	end int
}

type regionKind uint8

const (
	regString   regionKind = iota // inside quotes, escapes kept valid
	regTemplate                   // template text between ` or } and ` or ${
	regRegex                      // between the slashes of a regex literal
	regComment                    // inside a comment
)

// region is a run of the script that is not code: the skeleton blanks it.
type region struct {
	kind       regionKind
	start, end int // byte offsets in the script
}

// frame is an open bracket.
type frame struct {
	kind byte // '(', '[', '{', or '$' for a template substitution
	open int  // offset of the bracket
	// block: for '{', the brace opens a statement block or function body,
	// so a '/' after its '}' starts a regular expression.
	block bool
	// keyword: for '(', it follows if, while, for or with, so a '/' after
	// its ')' starts a regular expression.
	keyword bool
	// forHead: for '(', it follows for (an 'of' directly inside is the
	// keyword).
	forHead bool
	// tmplOpen: for '$', the offset of the template's opening backtick.
	tmplOpen int
	// arrowInner is the deepest nesting of arrow parameter lists inside.
	arrowInner int
	// chain counts recursive operators and statement keywords since the
	// last comma, semicolon or statement end at this level.
	chain int
	// ternary counts the ?s waiting for their : at this level.
	ternary int
	// caseOpen: a case or default waits for its : at this level.
	caseOpen bool
}

// scanProblem is a reason to stop before parsing: what is wrong and how to
// fix it; Validate puts the location between the two.
type scanProblem struct {
	off       int
	syntax    bool // a syntax error rather than a broken rule
	kind      Kind
	what, fix string
}

// lexicalIssue is a KindUnicode finding: what is wrong, and how to fix it.
type lexicalIssue struct {
	off       int
	what, fix string
}

// scanResult is what the pre-scan learned about a script.
type scanResult struct {
	regions  []region
	literals []literal
	// lexical are KindUnicode findings: valid JavaScript that the rules
	// refuse. At most maxViolations are kept; lexicalOmitted counts the
	// rest, so that a script of a million BiDi characters costs no more
	// than one of a hundred.
	lexical        []lexicalIssue
	lexicalOmitted int
	// imports and forAwaits are offsets of import/export keywords and of
	// the await of for-await, which goja cannot parse.
	imports   []int
	forAwaits []int
	// invisibleInCode says that code holds an invisible character goja
	// cannot parse (a BiDi control, a zero-width space): lexical holds the
	// violation, and parsing would only fail on it.
	invisibleInCode bool
	// problem, when set, stops validation before parsing.
	problem *scanProblem
}

type scanner struct {
	src      string
	lines    *lineIndex
	i        int
	maxDepth int
	stack    []frame
	res      scanResult

	// State after the previous token.
	regexOK    bool   // a '/' starts a regular expression
	braceBlock bool   // a '{' opens a block rather than an object literal
	prevIdent  string // the previous token's text if it was an identifier
	prevDot    bool   // the previous token was '.' or '?.'
	// pendingArrow is set after a ')': the group was an arrow-function
	// parameter list if the next token is '=>'.
	pendingArrow     bool
	pendingArrowIn   int
	pendingArrowOpen int

	brackets int   // brackets outside strings, comments and regexes
	top      frame // the level outside any bracket: the function body
	labels   int
}

// cur returns the innermost open level.
func (s *scanner) cur() *frame {
	if n := len(s.stack); n > 0 {
		return &s.stack[n-1]
	}
	return &s.top
}

// chainOp counts an operator or statement keyword goja parses by
// recursion.
func (s *scanner) chainOp(off int) {
	c := &s.cur().chain
	*c++
	if *c > maxOperatorChain {
		s.fail(off, false, KindTooDeep, "split it into several statements, or use braces and semicolons",
			"more than %d operators or statements (=>, ?:, =, !, new, await, **, <, if, else, do, labels ...) are chained here without a comma, semicolon or bracket between them",
			maxOperatorChain)
	}
}

// chainEnd ends the current chain.
func (s *scanner) chainEnd() { s.cur().chain = 0 }

// Keyword properties, in one table so that an identifier costs one lookup.
const (
	// kwRegex: a '/' after the keyword starts a regular expression,
	// because an expression must follow.
	kwRegex uint8 = 1 << iota
	// kwBlock: a '{' after the keyword opens a block.
	kwBlock
	// kwChain: goja parses the keyword by recursion: an operator, or a
	// statement whose body need not be a block.
	kwChain
	// kwCase: the keyword waits for a ':' that is not a label's.
	kwCase
)

var keywords = map[string]uint8{
	"return": kwRegex, "throw": kwRegex, "case": kwRegex | kwCase, "extends": kwRegex,
	"typeof": kwRegex | kwChain, "instanceof": kwRegex | kwChain, "in": kwRegex | kwChain, "new": kwRegex | kwChain,
	"delete": kwRegex | kwChain, "void": kwRegex | kwChain, "yield": kwRegex | kwChain, "await": kwRegex | kwChain,
	"do": kwRegex | kwBlock | kwChain, "else": kwRegex | kwBlock | kwChain,
	"try": kwBlock, "finally": kwBlock,
	"if": kwChain, "for": kwChain, "while": kwChain, "with": kwChain,
	"default": kwCase,
}

// prescan scans script with bracket nesting limited to maxDepth.
func prescan(script string, lines *lineIndex, maxDepth int) *scanResult {
	s := &scanner{src: script, lines: lines, maxDepth: maxDepth, regexOK: true, braceBlock: true}
	s.top.block = true
	s.run()
	if s.res.problem == nil {
		s.checkStack()
	}
	return &s.res
}

func (s *scanner) fail(off int, syntax bool, kind Kind, fix, format string, args ...any) {
	if s.res.problem == nil {
		s.res.problem = &scanProblem{off: off, syntax: syntax, kind: kind, what: fmt.Sprintf(format, args...), fix: fix}
	}
}

func (s *scanner) lexical(off int, fix, format string, args ...any) {
	if len(s.res.lexical) >= maxViolations {
		s.res.lexicalOmitted++
		return
	}
	s.res.lexical = append(s.res.lexical, lexicalIssue{off: off, what: fmt.Sprintf(format, args...), fix: fix})
}

// prog converts a script offset to an offset in the wrapped program.
func prog(off int) int { return off + len(wrapPrefix) }

// token records the state after a token. regexOK and braceBlock say what a
// following '/' and '{' mean.
func (s *scanner) token(regexOK, braceBlock bool, ident string, dot bool) {
	s.regexOK, s.braceBlock, s.prevIdent, s.prevDot = regexOK, braceBlock, ident, dot
}

// startToken resolves a pending arrow-parameter check; isArrow says whether
// the token about to be recorded is '=>'.
func (s *scanner) startToken(isArrow bool) {
	if !s.pendingArrow {
		return
	}
	s.pendingArrow = false
	level := s.pendingArrowIn
	if isArrow {
		level++
		if level > maxArrowParamNesting {
			s.fail(s.pendingArrowOpen, false, KindTooDeep, "define the inner functions first, with const",
				"arrow functions are nested %d deep inside arrow-function parameter lists (default values or destructuring), more than the %d allowed",
				level, maxArrowParamNesting)
		}
	}
	if n := len(s.stack); n > 0 && level > s.stack[n-1].arrowInner {
		s.stack[n-1].arrowInner = level
	}
}

func (s *scanner) run() {
	src := s.src
	for s.i < len(src) && s.res.problem == nil {
		c := src[s.i]
		switch {
		case c == '\n' || c == '\r':
			s.lineBreak()
			s.i++
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			s.i++
		case c >= utf8.RuneSelf:
			s.nonASCII()
		case isASCIIIdentStart(c) || c == '\\':
			s.identifier()
		case '0' <= c && c <= '9' || c == '.' && s.i+1 < len(src) && '0' <= src[s.i+1] && src[s.i+1] <= '9':
			s.number()
		case c == '\'' || c == '"':
			s.startToken(false)
			s.str(c)
			s.token(false, false, "", false)
		case c == '`':
			s.startToken(false)
			s.i++
			s.templateText(s.i-1, s.i)
		case c == '/' && s.i+1 < len(src) && src[s.i+1] == '/':
			s.lineComment()
		case c == '/' && s.i+1 < len(src) && src[s.i+1] == '*':
			s.blockComment()
		case c == '/' && s.regexOK:
			s.startToken(false)
			s.regex()
		case c == '#':
			// A private name: #x is a value.
			s.startToken(false)
			s.i++
			start := s.i
			s.identChars()
			if s.i == start {
				s.fail(start-1, true, "", "remove it", "unexpected character '#'")
			}
			s.token(false, false, "", false)
		case c == '(' || c == '[' || c == '{':
			s.open(c)
		case c == ')' || c == ']' || c == '}':
			s.close(c)
		default:
			s.punctuator()
		}
	}
	if s.res.problem != nil {
		return
	}
	s.startToken(false)
	if n := len(s.stack); n > 0 {
		f := s.stack[n-1]
		if f.kind == '$' {
			s.fail(f.tmplOpen, true, "", "close the ${ with }", "a ${ of this template literal is never closed")
		} else {
			s.fail(f.open, true, "", fmt.Sprintf("add the matching %q", string(closerOf[f.kind])), "%q is never closed", string(f.kind))
		}
	}
}

// lineBreak ends an operator chain where a statement may end: after a
// value, not after an operator that needs an operand.
func (s *scanner) lineBreak() {
	if !s.regexOK {
		s.chainEnd()
	}
}

func isASCIIIdentStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '$' || c == '_'
}

func isASCIIIdentPart(c byte) bool {
	return isASCIIIdentStart(c) || '0' <= c && c <= '9'
}

// isIDRune reports whether goja's lexer treats a non-ASCII rune as part of
// an identifier.
func isIDRune(r rune) bool {
	return r == '\u200C' || r == '\u200D' ||
		(unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_ID_Start, r) ||
			unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Nd, r) ||
			unicode.Is(unicode.Pc, r) || unicode.Is(unicode.Other_ID_Continue, r)) &&
			!unicode.Is(unicode.Pattern_Syntax, r) && !unicode.Is(unicode.Pattern_White_Space, r)
}

// isBiDi reports whether r is a bidirectional control character, which can
// make source text display in an order different from the one it runs in.
func isBiDi(r rune) bool {
	return r >= '\u202A' && r <= '\u202E' || r >= '\u2066' && r <= '\u2069' ||
		r == '\u200E' || r == '\u200F' || r == '\u061C'
}

// nonASCII handles a non-ASCII character in code.
func (s *scanner) nonASCII() {
	r, size := utf8.DecodeRuneInString(s.src[s.i:])
	switch {
	case r == '\u2028' || r == '\u2029':
		s.lineBreak()
		s.i += size
	case r == '\uFEFF' || unicode.IsSpace(r):
		if r == '\uFEFF' {
			s.lexical(s.i, "remove it", "the invisible character U+FEFF (ZERO WIDTH NO-BREAK SPACE) is in code")
		}
		s.i += size
	case isIDRune(r):
		s.identifier()
	case unicode.Is(unicode.Cf, r):
		// goja rejects the character. It is a rule's violation, so the
		// scan goes on to find the others; Validate then reports them
		// without parsing. BiDi controls are reported by checkBiDi.
		if !isBiDi(r) {
			s.lexical(s.i, "remove it", "the invisible character U+%04X is in code", r)
		}
		s.res.invisibleInCode = true
		s.i += size
	default:
		s.fail(s.i, true, "", "write code with ASCII quotes, operators and spaces",
			"the character %q (U+%04X) cannot be used in code", r, r)
	}
}

// identChars consumes identifier characters (ASCII, escapes, non-ASCII
// identifier characters) and reports what it saw.
func (s *scanner) identChars() (escape, nonASCII int) {
	escape, nonASCII = -1, -1
	src := s.src
	for s.i < len(src) {
		c := src[s.i]
		switch {
		case isASCIIIdentPart(c):
			s.i++
		case c == '\\':
			// goja reads \uXXXX or \u{X...} here and rejects anything else.
			if escape < 0 {
				escape = s.i
			}
			s.i++
			if s.i < len(src) && src[s.i] == 'u' {
				s.i++
				if s.i < len(src) && src[s.i] == '{' {
					s.i++
					for s.i < len(src) && isHex(src[s.i]) {
						s.i++
					}
					if s.i < len(src) && src[s.i] == '}' {
						s.i++
					}
				} else {
					for k := 0; k < 4 && s.i < len(src) && isHex(src[s.i]); k++ {
						s.i++
					}
				}
			}
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(src[s.i:])
			if !isIDRune(r) {
				return
			}
			if nonASCII < 0 {
				nonASCII = s.i
			}
			s.i += size
		default:
			return
		}
	}
	return
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func (s *scanner) identifier() {
	start := s.i
	escape, nonASCII := s.identChars()
	text := s.src[start:s.i]
	s.checkIdentifier(start, text, escape, nonASCII)
	s.startToken(false)
	dot := s.prevDot
	switch {
	case dot:
		// A property name after . or ?. is not a keyword.
		s.token(false, false, "", false)
		return
	case text == "import" || text == "export":
		s.res.imports = append(s.res.imports, start)
	case text == "await" && s.prevIdent == "for":
		s.res.forAwaits = append(s.res.forAwaits, start)
	}
	kw := keywords[text]
	if kw&kwChain != 0 {
		s.chainOp(start)
	}
	if kw&kwCase != 0 {
		s.cur().caseOpen = true
	}
	regexOK := kw&kwRegex != 0
	if text == "of" {
		if n := len(s.stack); n > 0 && s.stack[n-1].forHead {
			regexOK = true
		}
	}
	// After an identifier a '{' opens a class body; after return or
	// another expression keyword it opens an object literal.
	braceBlock := kw&kwBlock != 0 || !regexOK
	s.token(regexOK, braceBlock, text, false)
}

// checkIdentifier reports escapes and non-ASCII characters in an
// identifier. goja resolves escapes, so \u0065val would reach the AST as
// eval; and non-ASCII letters allow names that look like others (a Cyrillic
// е in еval) or hide characters (ZERO WIDTH JOINER). Identifiers must be
// plain ASCII; non-ASCII text belongs in strings.
func (s *scanner) checkIdentifier(start int, text string, escape, nonASCII int) {
	if escape >= 0 {
		s.lexical(escape, "write identifiers with plain ASCII letters, digits, _ and $", "the identifier %q contains an escape sequence", text)
		return
	}
	if nonASCII >= 0 {
		r, _ := utf8.DecodeRuneInString(s.src[nonASCII:])
		s.lexical(nonASCII, "identifiers must use ASCII letters, digits, _ and $ (non-ASCII text belongs in strings)",
			"the identifier %q contains the non-ASCII character %q (U+%04X)", text, r, r)
	}
}

func (s *scanner) number() {
	s.startToken(false)
	src := s.src
	for s.i < len(src) && (isASCIIIdentPart(src[s.i]) || src[s.i] == '.') {
		s.i++
	}
	s.token(false, false, "", false)
}

// str scans a string literal like goja's scanString: it ends at the
// matching quote; a backslash escapes the next character, and a backslash
// before a line break continues the string on the next line. A string that
// reaches a raw line break or the end is unterminated: a syntax error if
// the scan read the script right, a misreading otherwise, so the scan stops
// either way rather than blank what may be code.
func (s *scanner) str(quote byte) {
	src := s.src
	start := s.i
	s.i++
	for s.i < len(src) {
		c := src[s.i]
		switch {
		case c == quote:
			s.res.regions = append(s.res.regions, region{regString, start + 1, s.i})
			s.i++
			s.res.literals = append(s.res.literals, literal{litString, prog(start), prog(s.i)})
			return
		case c == '\n' || c == '\r':
			s.i = len(src)
		case c == '\\':
			s.i++
			s.skipEscaped()
		default:
			s.i++
		}
	}
	s.fail(start, true, "", fmt.Sprintf("add the closing %c, or use a template literal (`...`) for text over several lines", quote),
		"the string is never closed on its line")
}

// skipEscaped skips the character after a backslash in a string or
// template; CRLF counts as one line break.
func (s *scanner) skipEscaped() {
	src := s.src
	if s.i >= len(src) {
		return
	}
	if src[s.i] == '\r' && s.i+1 < len(src) && src[s.i+1] == '\n' {
		s.i += 2
		return
	}
	_, size := utf8.DecodeRuneInString(src[s.i:])
	s.i += size
}

// templateText scans template text from s.i up to the closing backtick or
// to a ${, which opens a substitution. open is the offset of the template's
// opening backtick.
func (s *scanner) templateText(open, start int) {
	src := s.src
	s.res.literals = append(s.res.literals, literal{litChunk, s.chunkKey(start), 0})
	for s.i < len(src) {
		c := src[s.i]
		switch {
		case c == '`':
			s.res.regions = append(s.res.regions, region{regTemplate, start, s.i})
			s.res.literals = append(s.res.literals, literal{litTemplate, prog(open), prog(s.i)})
			s.i++
			s.token(false, false, "", false)
			return
		case c == '$' && s.i+1 < len(src) && src[s.i+1] == '{':
			s.res.regions = append(s.res.regions, region{regTemplate, start, s.i})
			s.i += 2
			s.push(frame{kind: '$', open: s.i - 2, tmplOpen: open})
			s.token(true, false, "", false)
			return
		case c == '\\':
			s.i++
			s.skipEscaped()
		default:
			s.i++
		}
	}
	s.res.regions = append(s.res.regions, region{regTemplate, start, s.i})
	s.fail(open, true, "", "add the closing backtick", "the template literal is never closed")
}

// chunkKey is the offset goja reports for template text starting at start:
// it records the offset after the first character of the chunk.
func (s *scanner) chunkKey(start int) int {
	if start >= len(s.src) {
		// The chunk starts at the end of the script, so its first
		// character is the wrapper's line break.
		return prog(start) + 1
	}
	_, size := utf8.DecodeRuneInString(s.src[start:])
	return prog(start) + size
}

func isLineTerminator(src string, i int) (bool, int) {
	switch c := src[i]; {
	case c == '\n' || c == '\r':
		return true, 1
	case c == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && (src[i+2] == 0xA8 || src[i+2] == 0xA9):
		return true, 3
	}
	return false, 0
}

func (s *scanner) lineComment() {
	start := s.i + 2
	s.i = start
	for s.i < len(s.src) {
		if lt, _ := isLineTerminator(s.src, s.i); lt {
			break
		}
		s.i++
	}
	s.res.regions = append(s.res.regions, region{regComment, start, s.i})
}

func (s *scanner) blockComment() {
	open := s.i
	start := s.i + 2
	s.i = start
	for s.i+1 < len(s.src) {
		if s.src[s.i] == '*' && s.src[s.i+1] == '/' {
			s.res.regions = append(s.res.regions, region{regComment, start, s.i})
			s.i += 2
			return
		}
		s.i++
	}
	s.i = len(s.src)
	s.res.regions = append(s.res.regions, region{regComment, start, s.i})
	s.fail(open, true, "", "add */", "the comment is never closed")
}

// regex scans a regular expression literal like goja's scanString with '/'
// as the quote, then its flags like goja's parseRegExpLiteral. Inside a
// character class a '/' does not end the literal, and goja lets U+2028,
// U+2029 and an escaped line break through; a raw LF or CR always ends it.
func (s *scanner) regex() {
	src := s.src
	start := s.i
	s.i++
	inClass := false
	for s.i < len(src) {
		c := src[s.i]
		if c == '/' && !inClass {
			s.res.regions = append(s.res.regions, region{regRegex, start + 1, s.i})
			s.i++
			s.regexFlags(start)
			return
		}
		if c == '\n' || c == '\r' {
			break
		}
		if lt, _ := isLineTerminator(src, s.i); lt && !inClass {
			break
		}
		if c == '\\' {
			s.i++
			if s.i >= len(src) {
				break
			}
			if lt, size := isLineTerminator(src, s.i); lt {
				if !inClass {
					break
				}
				if src[s.i] == '\r' && s.i+1 < len(src) && src[s.i+1] == '\n' {
					size = 2
				}
				s.i += size
				continue
			}
			_, size := utf8.DecodeRuneInString(src[s.i:])
			s.i += size
			continue
		}
		if c == '[' && !inClass {
			inClass = true
		} else if c == ']' && inClass {
			inClass = false
		}
		_, size := utf8.DecodeRuneInString(src[s.i:])
		s.i += size
	}
	// Unterminated: see str.
	s.fail(start, true, "", "add the closing /; if the '/' is a division, put its operands in parentheses",
		"the regular expression is never closed on its line")
}

// regexFlags scans the flags after the closing slash: goja takes the next
// token as flags if it follows without white space and is an identifier
// rather than a keyword.
func (s *scanner) regexFlags(start int) {
	end := s.i
	if s.i < len(s.src) && (isASCIIIdentStart(s.src[s.i]) || s.src[s.i] == '\\' || s.src[s.i] >= utf8.RuneSelf) {
		r, _ := utf8.DecodeRuneInString(s.src[s.i:])
		if r < utf8.RuneSelf || isIDRune(r) {
			save := s.i
			escape, nonASCII := s.identChars()
			text := s.src[save:s.i]
			if tk, strict := token.IsKeyword(text); len(text) > 1 && tk != 0 && !(tk == token.KEYWORD && strict) {
				// A keyword such as in or instanceof: not flags.
				s.i = save
			} else {
				s.checkIdentifier(save, text, escape, nonASCII)
				end = s.i
			}
		}
	}
	s.res.literals = append(s.res.literals, literal{litRegex, prog(start), prog(end)})
	s.token(false, false, "", false)
}

func (s *scanner) push(f frame) {
	s.stack = append(s.stack, f)
	if len(s.stack) > s.maxDepth {
		s.fail(f.open, false, KindTooDeep, "split the code and give intermediate results names with const",
			"brackets are nested %d deep here, more than the %d allowed", len(s.stack), s.maxDepth)
	}
}

func (s *scanner) open(c byte) {
	s.startToken(false)
	f := frame{kind: c, open: s.i}
	switch c {
	case '(':
		switch s.prevIdent {
		case "if", "while", "for", "with":
			f.keyword = true
			f.forHead = s.prevIdent == "for"
		}
	case '{':
		f.block = s.braceBlock
	}
	s.brackets++
	s.i++
	s.push(f)
	// An object literal may follow ( and [ and an object literal's {; a
	// block may follow a block's {.
	s.token(true, c == '{' && f.block, "", false)
}

var closerOf = map[byte]byte{'(': ')', '[': ']', '{': '}', '$': '}'}

func (s *scanner) close(c byte) {
	s.startToken(false)
	n := len(s.stack)
	if n == 0 {
		s.fail(s.i, true, "", "remove it; the script is the body of a function and cannot close it", "unexpected %q: nothing is open here", string(c))
		return
	}
	f := s.stack[n-1]
	if closerOf[f.kind] != c {
		opened := string(f.kind)
		if f.kind == '$' {
			opened = "${"
		}
		at := s.lines.at(f.open)
		s.fail(s.i, true, "", fmt.Sprintf("close the %q first", opened),
			"unexpected %q: the %q opened at line %d, column %d is still open", string(c), opened, at.Line, at.Column)
		return
	}
	s.stack = s.stack[:n-1]
	if n > 1 && f.arrowInner > s.stack[n-2].arrowInner {
		s.stack[n-2].arrowInner = f.arrowInner
	}
	s.brackets++
	s.i++
	switch f.kind {
	case '$':
		s.templateText(f.tmplOpen, s.i)
	case '(':
		s.token(f.keyword, true, "", false)
		s.pendingArrow, s.pendingArrowIn, s.pendingArrowOpen = true, f.arrowInner, f.open
	case '[':
		s.token(false, false, "", false)
	case '{':
		if f.block {
			// A block ends a statement.
			s.chainEnd()
		}
		s.token(f.block, true, "", false)
	}
}

// punctuator scans an operator or other punctuation the way goja's lexer
// splits them, which matters for => and for ++/--, after which a '/' is a
// division.
func (s *scanner) punctuator() {
	src := s.src
	rest := src[s.i:]
	n := 1
	regexOK := true
	switch {
	case len(rest) >= 2 && rest[0] == '=' && rest[1] == '>':
		s.startToken(true)
		s.chainOp(s.i)
		s.i += 2
		// An arrow body: a block or an expression.
		s.token(true, true, "", false)
		return
	case hasPrefix(rest, "?."):
		if len(rest) < 3 || rest[2] < '0' || rest[2] > '9' {
			s.startToken(false)
			s.i += 2
			s.token(false, false, "", true)
			return
		}
	case hasPrefix(rest, "..."):
		n = 3
	case hasPrefix(rest, "++") || hasPrefix(rest, "--"):
		// Postfix in valid code before a '/': a division follows.
		n, regexOK = 2, false
	case rest[0] == '.':
		s.startToken(false)
		s.i++
		s.token(false, false, "", true)
		return
	default:
		n = opLen(rest)
	}
	if n == 1 && !isPunct(rest[0]) {
		s.fail(s.i, true, "", "remove it", "unexpected character %q", rest[0])
		return
	}
	s.startToken(false)
	op := rest[:n]
	if isRecursiveOp(op, s.regexOK) {
		s.chainOp(s.i)
	} else if op == "," || op == ";" {
		s.chainEnd()
	}
	if op == "?" {
		s.cur().ternary++
	}
	var braceBlock bool
	switch op {
	case ";":
		braceBlock = true
	case ":":
		braceBlock = s.colon()
	}
	s.i += n
	s.token(regexOK, braceBlock, "", false)
}

// colon classifies a ':' and says whether a '{' after it opens a block:
// after a label or a case clause it does; after the ? of a conditional or
// a property name it opens an object literal. It also counts labels.
func (s *scanner) colon() bool {
	f := s.cur()
	switch {
	case f.ternary > 0:
		f.ternary--
		return false
	case f.caseOpen:
		f.caseOpen = false
		return true
	case f.block && s.prevIdent != "":
		s.labels++
		if s.labels > maxLabels {
			s.fail(s.i, false, KindTooDeep, "use functions and return instead of labelled statements",
				"the script has more than %d labels", maxLabels)
		}
		s.chainOp(s.i)
		return true
	}
	return false
}

// isPunct reports whether goja's lexer reads c as (the start of) a
// punctuator; any other ASCII character in code is a syntax error, checked
// here so that a script of them does not make goja record an error for
// each.
func isPunct(c byte) bool {
	switch c {
	case '+', '-', '*', '/', '%', '^', '<', '>', '=', '!', '&', '|', '~', '?', ':', '.', ',', ';':
		return true
	}
	return false
}

// isRecursiveOp reports whether goja's parser handles op by recursion:
// assignments, the conditional operator, exponentiation, relational
// operators and prefix operators. prefix says whether an operand is
// expected, which makes + - ++ -- prefix operators.
func isRecursiveOp(op string, prefix bool) bool {
	switch op {
	case "?", "**", "<", ">", "<=", ">=", "!", "~":
		return true
	case "+", "-", "++", "--":
		return prefix
	case "==", "!=", "===", "!==":
		return false
	}
	return op[len(op)-1] == '=' // = and compound assignments
}

// opLen returns the length of the operator at the start of rest, split
// the way goja's lexer splits it (its switch2/3/4/6 helpers); =>, ?., ...,
// ++ and -- are handled by the caller.
func opLen(rest string) int {
	at := func(i int, c byte) bool { return i < len(rest) && rest[i] == c }
	switch rest[0] {
	case '*':
		if at(1, '*') {
			if at(2, '=') {
				return 3 // **=
			}
			return 2 // **
		}
	case '<', '&', '|', '?':
		if at(1, rest[0]) {
			if at(2, '=') {
				return 3 // <<= &&= ||= ??=
			}
			return 2 // << && || ??
		}
	case '>':
		if at(1, '>') {
			if at(2, '>') {
				if at(3, '=') {
					return 4 // >>>=
				}
				return 3 // >>>
			}
			if at(2, '=') {
				return 3 // >>=
			}
			return 2 // >>
		}
	case '=', '!':
		if at(1, '=') {
			if at(2, '=') {
				return 3 // === !==
			}
			return 2 // == !=
		}
		return 1
	}
	switch rest[0] {
	case '+', '-', '*', '/', '%', '^', '<', '>', '&', '|':
		if at(1, '=') {
			return 2 // += -= *= /= %= ^= <= >= &= |=
		}
	}
	return 1
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// checkStack bounds the Go stack goja's parser could need; see stackBudget.
func (s *scanner) checkStack() {
	need := int64(s.brackets)*stackPerBracket + int64(len(s.src)+len(wrapPrefix)+len(wrapSuffix))*stackPerByte
	if need > stackBudget {
		s.fail(0, false, KindScriptTooLarge, "make it shorter",
			"the script has %d brackets, too many to parse safely at its size (%d bytes)", s.brackets, len(s.src))
	}
}

// checkBiDi reports every bidirectional control character in the script,
// wherever it is: such characters make code display differently from how
// it runs ("Trojan Source").
func checkBiDi(script string, add func(off int, r rune)) {
	for i := 0; i < len(script); {
		c := script[i]
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(script[i:])
		if isBiDi(r) {
			add(i, r)
		}
		i += size
	}
}
