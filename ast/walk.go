package ast

import (
	"fmt"
	"math/big"
	"strings"

	js "github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"

	"github.com/codecall-go/codecall/presets"
)

// maxSyntaxDepth bounds how deeply the walker descends into the syntax
// tree. Brackets are bounded by the pre-scan, but goja builds a chain of
// operators (a + b + c ...) or of else-ifs as a tree as deep as the chain is
// long, and the compiler recurses into it; realistic plans stay far below.
const maxSyntaxDepth = 1000

// maxViolations bounds a report. Past it, IllegalError.Omitted counts the
// rest.
const maxViolations = 100

// ruleSet is Rules prepared for one validation.
type ruleSet struct {
	// banned holds the identifiers refused on top of bannedIdentifiers
	// (configured ones, console, RegExp), with how to do without them.
	banned     map[string]string
	allowLoops bool
	regex      presets.RegexMode
	maxNesting int
	preset     string
	codeMode   bool // Rules.CodeMode: codeModeGlobals are allowed
}

func newRuleSet(r Rules) *ruleSet {
	rs := &ruleSet{
		banned:     make(map[string]string, len(r.BannedIdentifiers)+2),
		allowLoops: r.AllowLoops,
		regex:      r.Regex,
		maxNesting: r.MaxNestingDepth,
		preset:     string(r.Preset),
		codeMode:   r.CodeMode,
	}
	if rs.maxNesting <= 0 {
		rs.maxNesting = defaultMaxNesting
	}
	for _, name := range r.BannedIdentifiers {
		if _, always := bannedIdentifiers[name]; !always && name != "" {
			rs.banned[name] = "it is banned by this server's configuration; do without it"
		}
	}
	if !r.AllowConsole {
		rs.banned["console"] = "console is not available " + rs.in() + "; return what you want to see in the result, or use mcpLog"
		if r.CodeMode {
			rs.banned["console"] = "console is not available " + rs.in() + "; put what you want to see in globalThis.__codemode_result__"
		}
	}
	switch rs.regex {
	case presets.RegexFull:
	case presets.RegexLiteral:
		rs.banned["RegExp"] = "the RegExp constructor is not available " + rs.in() + "; use a regular expression literal such as /ab+c/i"
	default:
		rs.banned["RegExp"] = "regular expressions are not available " + rs.in() + "; use String methods such as includes, startsWith, indexOf, split or replaceAll"
	}
	return rs
}

// by names the preset in "not allowed by ..." messages.
func (rs *ruleSet) by() string {
	if rs.preset != "" {
		return "by the " + rs.preset + " preset"
	}
	return "by this preset"
}

// in names the preset in "not available in ..." messages.
func (rs *ruleSet) in() string {
	if rs.preset != "" {
		return "in the " + rs.preset + " preset"
	}
	return "in this preset"
}

// walker checks a syntax tree against the rules, or only collects its
// literals (rules == nil) to compare them with the pre-scan's.
type walker struct {
	rules      *ruleSet
	lines      *lineIndex
	program    string // the wrapped program, for literal checks
	violations []Violation
	omitted    int
	literals   []literal
	// visit, when set, sees every node the walker reaches (tests).
	visit func(js.Node)

	depth        int      // current depth in the tree
	tooDeep      bool     // the tree was cut at maxSyntaxDepth
	tooDeepAt    file.Idx // where
	nest         int      // current nesting of blocks, literals, argument lists...
	nestReported bool     // the current excursion past maxNesting was reported
	regexLits    bool     // the plan has at least one regular expression literal
}

// Property contexts: an object literal defines keys, an object pattern
// reads them.
const (
	ctxDefault = iota
	ctxPattern
)

// add appends a violation, unless the report is full.
func (w *walker) add(v Violation) {
	if len(w.violations) >= maxViolations {
		w.omitted++
		return
	}
	w.violations = append(w.violations, v)
}

// report records a violation at idx. Its message says what is wrong, where
// ("(line L, column C)", so that the message stands on its own), and how to
// fix it (hint).
func (w *walker) report(kind Kind, idx file.Idx, hint, format string, args ...any) {
	if w.rules == nil {
		return
	}
	loc := w.lines.fromIdx(int(idx))
	msg := fmt.Sprintf(format, args...)
	w.add(Violation{Kind: kind, Message: fmt.Sprintf("%s (line %d, column %d); %s", msg, loc.Line, loc.Column, hint), Location: loc})
}

func (w *walker) ident(name string, idx file.Idx) {
	if w.rules == nil {
		return
	}
	hint, ok := bannedIdentifiers[name]
	if ok && w.rules.codeMode {
		switch {
		case codeModeGlobals[name]:
			ok = false
		case hint == hintModule:
			hint = hintModuleCodeMode
		case strings.HasPrefix(hint, hintHost):
			hint = hintHostCodeMode + strings.TrimPrefix(hint, hintHost)
		}
	}
	if !ok {
		hint, ok = w.rules.banned[name]
	}
	if ok {
		w.report(KindBannedIdentifier, idx, hint, "%q is not allowed", name)
	}
}

// member checks a property read by name.
func (w *walker) member(name string, idx file.Idx) bool {
	if w.rules == nil {
		return false
	}
	if hint, ok := bannedMembers[name]; ok {
		w.report(KindBannedMember, idx, hint, "the property %q cannot be used", name)
		return true
	}
	return false
}

// key checks a property defined by an object literal or a class.
func (w *walker) key(name string, idx file.Idx) {
	if w.rules != nil && bannedKeys[name] {
		w.report(KindBannedMember, idx, bannedMembers[name], "the property name %q cannot be defined", name)
	}
}

// literalKey returns the value of a key or member expression that is a
// string literal or a template literal without substitutions.
func literalKey(e js.Expression) (string, file.Idx, bool) {
	switch k := e.(type) {
	case *js.StringLiteral:
		return k.Value.String(), k.Idx, true
	case *js.TemplateLiteral:
		if k.Tag == nil && len(k.Expressions) == 0 && len(k.Elements) == 1 && k.Elements[0].Valid {
			return k.Elements[0].Parsed.String(), k.OpenQuote, true
		}
	}
	return "", 0, false
}

// enter opens a nesting level at idx; leave closes it.
func (w *walker) enter(idx file.Idx) {
	w.nest++
	if w.rules != nil && w.nest > w.rules.maxNesting && !w.nestReported {
		w.nestReported = true
		w.report(KindTooDeep, idx, "move inner parts into named functions or const values",
			"the code is nested %d levels deep here, more than the %d allowed", w.nest, w.rules.maxNesting)
	}
}

func (w *walker) leave() {
	w.nest--
	if w.rules != nil && w.nest <= w.rules.maxNesting {
		w.nestReported = false
	}
}

func (w *walker) loop(kind string, idx file.Idx) {
	if w.rules != nil && !w.rules.allowLoops {
		w.report(KindLoop, idx, "use Array methods such as map, filter, reduce and forEach, or Promise.all over an array of tool calls",
			"%s loops are not allowed %s", kind, w.rules.by())
	}
}

// body walks the body of an if, loop, with or label: a statement that is
// not a block is a nesting level of its own.
func (w *walker) body(s js.Statement) {
	if _, ok := s.(*js.BlockStatement); ok || s == nil {
		w.node(s, ctxDefault)
		return
	}
	w.enter(s.Idx0())
	w.node(s, ctxDefault)
	w.leave()
}

func (w *walker) exprs(list []js.Expression) {
	for _, e := range list {
		if e != nil {
			w.node(e, ctxDefault)
		}
	}
}

func (w *walker) stmts(list []js.Statement) {
	for _, s := range list {
		if s != nil {
			w.node(s, ctxDefault)
		}
	}
}

// args walks an argument list, one nesting level.
func (w *walker) args(idx file.Idx, list []js.Expression) {
	w.enter(idx)
	w.exprs(list)
	w.leave()
}

// node checks one node and its children. The switch names every node type
// of goja/ast; anything else is refused, so that syntax a newer goja adds
// is not let through unchecked.
func (w *walker) node(n js.Node, ctx int) {
	if n == nil {
		return
	}
	if w.visit != nil {
		w.visit(n)
	}
	w.depth++
	if w.depth > maxSyntaxDepth {
		if !w.tooDeep {
			w.tooDeep, w.tooDeepAt = true, n.Idx0()
			w.report(KindTooDeep, w.tooDeepAt, tooDeepSyntaxFix, tooDeepSyntax, maxSyntaxDepth)
		}
		w.depth--
		return
	}

	switch n := n.(type) {
	// Programs and declarations.
	case *js.Program:
		w.stmts(n.Body)
		w.declarations(n.DeclarationList)
	case *js.VariableDeclaration:
		// Hoisting lists: their bindings are the ones of the var
		// statements and for heads, which the walk reaches there.
	case *js.Binding:
		w.node(n.Target, ctx)
		w.node(n.Initializer, ctxDefault)
	case *js.ParameterList:
		w.enter(n.Opening)
		for _, b := range n.List {
			if b != nil {
				w.node(b, ctxDefault)
			}
		}
		w.node(n.Rest, ctxDefault)
		w.leave()

	// Statements.
	case *js.BadStatement:
		w.unsupported(n.From)
	case *js.BlockStatement:
		w.enter(n.LeftBrace)
		w.stmts(n.List)
		w.leave()
	case *js.BranchStatement:
		if n.Label != nil {
			w.node(n.Label, ctxDefault)
		}
	case *js.CaseStatement:
		w.node(n.Test, ctxDefault)
		w.stmts(n.Consequent)
	case *js.CatchStatement:
		w.node(n.Parameter, ctxDefault)
		if n.Body != nil {
			w.node(n.Body, ctxDefault)
		}
	case *js.ClassDeclaration:
		if n.Class != nil {
			w.node(n.Class, ctxDefault)
		}
	case *js.DebuggerStatement:
		w.report(KindDebugger, n.Debugger, "remove it", "debugger statements are not allowed")
	case *js.DoWhileStatement:
		w.loop("do...while", n.Do)
		w.body(n.Body)
		w.node(n.Test, ctxDefault)
	case *js.EmptyStatement:
	case *js.ExpressionStatement:
		w.node(n.Expression, ctxDefault)
	case *js.ForInStatement:
		w.loop("for...in", n.For)
		w.node(n.Into, ctxDefault)
		w.node(n.Source, ctxDefault)
		w.body(n.Body)
	case *js.ForOfStatement:
		w.loop("for...of", n.For)
		w.node(n.Into, ctxDefault)
		w.node(n.Source, ctxDefault)
		w.body(n.Body)
	case *js.ForStatement:
		w.loop("for", n.For)
		w.node(n.Initializer, ctxDefault)
		w.node(n.Test, ctxDefault)
		w.node(n.Update, ctxDefault)
		w.body(n.Body)
	case *js.FunctionDeclaration:
		if n.Function != nil {
			w.node(n.Function, ctxDefault)
		}
	case *js.IfStatement:
		w.node(n.Test, ctxDefault)
		w.body(n.Consequent)
		if _, elseIf := n.Alternate.(*js.IfStatement); elseIf {
			// else if continues a chain rather than nesting.
			w.node(n.Alternate, ctxDefault)
		} else {
			w.body(n.Alternate)
		}
	case *js.LabelledStatement:
		if n.Label != nil {
			w.node(n.Label, ctxDefault)
		}
		w.body(n.Statement)
	case *js.LexicalDeclaration:
		w.bindings(n.List)
	case *js.ReturnStatement:
		w.node(n.Argument, ctxDefault)
	case *js.SwitchStatement:
		w.node(n.Discriminant, ctxDefault)
		w.enter(n.Switch)
		for _, c := range n.Body {
			if c != nil {
				w.node(c, ctxDefault)
			}
		}
		w.leave()
	case *js.ThrowStatement:
		w.node(n.Argument, ctxDefault)
	case *js.TryStatement:
		if n.Body != nil {
			w.node(n.Body, ctxDefault)
		}
		if n.Catch != nil {
			w.node(n.Catch, ctxDefault)
		}
		if n.Finally != nil {
			w.node(n.Finally, ctxDefault)
		}
	case *js.VariableStatement:
		w.bindings(n.List)
	case *js.WhileStatement:
		w.loop("while", n.While)
		w.node(n.Test, ctxDefault)
		w.body(n.Body)
	case *js.WithStatement:
		w.report(KindWith, n.With, "name the object and use its properties directly", "with statements are not allowed")
		w.node(n.Object, ctxDefault)
		w.body(n.Body)

	// Heads of for statements.
	case *js.ForLoopInitializerExpression:
		w.node(n.Expression, ctxDefault)
	case *js.ForLoopInitializerVarDeclList:
		w.bindings(n.List)
	case *js.ForLoopInitializerLexicalDecl:
		w.node(&n.LexicalDeclaration, ctxDefault)
	case *js.ForIntoVar:
		if n.Binding != nil {
			w.node(n.Binding, ctxDefault)
		}
	case *js.ForDeclaration:
		w.node(n.Target, ctxDefault)
	case *js.ForIntoExpression:
		w.node(n.Expression, ctxDefault)

	// Functions and classes.
	case *js.FunctionLiteral:
		if n.Name != nil {
			w.node(n.Name, ctxDefault)
		}
		if n.ParameterList != nil {
			w.node(n.ParameterList, ctxDefault)
		}
		if n.Body != nil {
			w.node(n.Body, ctxDefault)
		}
		w.declarations(n.DeclarationList)
	case *js.ArrowFunctionLiteral:
		if n.ParameterList != nil {
			w.node(n.ParameterList, ctxDefault)
		}
		w.node(n.Body, ctxDefault)
		w.declarations(n.DeclarationList)
	case *js.ExpressionBody:
		// An arrow function's expression body nests without braces.
		w.enter(n.Idx0())
		w.node(n.Expression, ctxDefault)
		w.leave()
	case *js.ClassLiteral:
		if n.Name != nil {
			w.node(n.Name, ctxDefault)
		}
		w.node(n.SuperClass, ctxDefault)
		w.enter(n.Class)
		for _, e := range n.Body {
			w.node(e, ctxDefault)
		}
		w.leave()
	case *js.FieldDefinition:
		w.classKey(n.Key, n.Computed, n.Static, js.PropertyKindValue)
		w.node(n.Initializer, ctxDefault)
	case *js.MethodDefinition:
		w.classKey(n.Key, n.Computed, n.Static, n.Kind)
		if n.Body != nil {
			w.node(n.Body, ctxDefault)
		}
	case *js.ClassStaticBlock:
		if n.Block != nil {
			w.node(n.Block, ctxDefault)
		}
		w.declarations(n.DeclarationList)

	// Expressions.
	case *js.ArrayLiteral:
		w.enter(n.LeftBracket)
		w.exprs(n.Value)
		w.leave()
	case *js.ArrayPattern:
		w.enter(n.LeftBracket)
		w.exprs(n.Elements)
		w.node(n.Rest, ctxDefault)
		w.leave()
	case *js.AssignExpression:
		w.node(n.Left, ctxDefault)
		w.node(n.Right, ctxDefault)
	case *js.AwaitExpression:
		w.node(n.Argument, ctxDefault)
	case *js.BadExpression:
		w.unsupported(n.From)
	case *js.BinaryExpression:
		w.node(n.Left, ctxDefault)
		w.node(n.Right, ctxDefault)
	case *js.BooleanLiteral:
	case *js.BracketExpression:
		w.node(n.Left, ctxDefault)
		if name, idx, ok := literalKey(n.Member); ok {
			w.member(name, idx)
		}
		w.enter(n.LeftBracket)
		w.node(n.Member, ctxDefault)
		w.leave()
	case *js.CallExpression:
		w.node(n.Callee, ctxDefault)
		w.args(n.LeftParenthesis, n.ArgumentList)
	case *js.ConditionalExpression:
		w.node(n.Test, ctxDefault)
		w.node(n.Consequent, ctxDefault)
		w.node(n.Alternate, ctxDefault)
	case *js.DotExpression:
		w.node(n.Left, ctxDefault)
		w.member(n.Identifier.Name.String(), n.Identifier.Idx)
	case *js.PrivateDotExpression:
		// #names are private to the plan's own classes.
		w.node(n.Left, ctxDefault)
		w.node(&n.Identifier, ctxDefault)
	case *js.Identifier:
		w.ident(n.Name.String(), n.Idx)
	case *js.PrivateIdentifier:
	case *js.MetaProperty:
		// new.target.
		if n.Meta != nil {
			w.node(n.Meta, ctxDefault)
		}
		if n.Property != nil {
			w.node(n.Property, ctxDefault)
		}
	case *js.NewExpression:
		w.node(n.Callee, ctxDefault)
		w.args(n.LeftParenthesis, n.ArgumentList)
	case *js.NullLiteral:
	case *js.NumberLiteral:
		// BigInt arithmetic allocates in one native step that no guard can
		// interrupt (1n << 10n**13n ends the process), and the runtime has no
		// BigInt global, so literals are the only way in.
		if _, big := n.Value.(*big.Int); big || strings.HasSuffix(n.Literal, "n") {
			w.report(KindBigInt, n.Idx, "use ordinary numbers", "BigInt literals are not allowed")
		}
	case *js.ObjectLiteral:
		w.enter(n.LeftBrace)
		for _, p := range n.Value {
			w.node(p, ctxDefault)
		}
		w.leave()
	case *js.ObjectPattern:
		w.enter(n.LeftBrace)
		for _, p := range n.Properties {
			w.node(p, ctxPattern)
		}
		w.node(n.Rest, ctxDefault)
		w.leave()
	case *js.Optional:
		w.node(n.Expression, ctxDefault)
	case *js.OptionalChain:
		w.node(n.Expression, ctxDefault)
	case *js.PropertyKeyed:
		w.propertyKey(n, ctx)
		w.node(n.Value, ctx)
	case *js.PropertyShort:
		name := n.Name.Name.String()
		if ctx == ctxPattern {
			// {x} = o reads o.x and binds x.
			if !w.member(name, n.Name.Idx) {
				w.ident(name, n.Name.Idx)
			}
		} else {
			w.ident(name, n.Name.Idx)
		}
		w.node(n.Initializer, ctxDefault)
	case *js.RegExpLiteral:
		w.regexLits = true
		w.regex(n)
	case *js.SequenceExpression:
		w.exprs(n.Sequence)
	case *js.SpreadElement:
		w.node(n.Expression, ctxDefault)
	case *js.StringLiteral:
		if w.rules == nil {
			w.stringLiteral(n)
		}
	case *js.SuperExpression:
	case *js.TemplateLiteral:
		w.node(n.Tag, ctxDefault)
		if w.rules == nil {
			w.literals = append(w.literals, literal{litTemplate, int(n.OpenQuote) - 1, int(n.CloseQuote) - 1})
		}
		for _, e := range n.Elements {
			if e != nil {
				w.node(e, ctxDefault)
			}
		}
		if len(n.Expressions) > 0 {
			w.enter(n.OpenQuote)
			w.exprs(n.Expressions)
			w.leave()
		}
	case *js.TemplateElement:
		if w.rules == nil {
			w.literals = append(w.literals, literal{litChunk, int(n.Idx) - 1, 0})
		}
	case *js.ThisExpression:
	case *js.UnaryExpression:
		w.node(n.Operand, ctxDefault)
	case *js.YieldExpression:
		w.node(n.Argument, ctxDefault)

	default:
		w.unsupported(n.Idx0())
	}
	w.depth--
}

const (
	tooDeepSyntax    = "the code is nested more than %d levels deep in its syntax (for example a very long chain of operators or else-ifs)"
	tooDeepSyntaxFix = "split it into several statements"
)

func (w *walker) unsupported(idx file.Idx) {
	w.report(KindUnsupportedSyntax, idx, "rewrite it with common JavaScript syntax", "this syntax is not supported")
}

func (w *walker) bindings(list []*js.Binding) {
	for _, b := range list {
		if b != nil {
			w.node(b, ctxDefault)
		}
	}
}

// declarations visits hoisting lists without descending: see
// *js.VariableDeclaration.
func (w *walker) declarations(list []*js.VariableDeclaration) {
	for _, d := range list {
		if d != nil {
			w.node(d, ctxDefault)
		}
	}
}

// propertyKey checks the key of a property of an object literal (a
// definition) or of an object pattern (a read), and walks a computed key.
func (w *walker) propertyKey(p *js.PropertyKeyed, ctx int) {
	// A plain key is a string or number literal (an identifier key
	// arrives as a string literal), a computed one any expression.
	w.node(p.Key, ctxDefault)
	name, idx, ok := literalKey(p.Key)
	if !ok {
		return
	}
	if ctx == ctxPattern {
		w.member(name, idx)
	} else {
		w.key(name, idx)
	}
}

// classKey checks the name of a class member. A class's own constructor
// method is class syntax, not a property, and is allowed.
func (w *walker) classKey(key js.Expression, computed, static bool, kind js.PropertyKind) {
	w.node(key, ctxDefault)
	name, idx, ok := literalKey(key)
	if !ok {
		return
	}
	if name == "constructor" && !computed && !static && kind == js.PropertyKindMethod {
		return
	}
	w.key(name, idx)
}

// stringLiteral collects a string literal token for the comparison with
// the pre-scan. Keys written as identifiers also reach the tree as string
// literals; only the ones that start with a quote are string tokens.
func (w *walker) stringLiteral(n *js.StringLiteral) {
	off := int(n.Idx) - 1
	if off >= 0 && off < len(w.program) && (w.program[off] == '"' || w.program[off] == '\'') {
		w.literals = append(w.literals, literal{litString, off, off + len(n.Literal)})
	}
}

func (w *walker) regex(n *js.RegExpLiteral) {
	if w.rules == nil {
		// n.Literal may run past the flags (goja ends it at the token
		// after them), so the end is computed from pattern and flags.
		start := int(n.Idx) - 1
		w.literals = append(w.literals, literal{litRegex, start, start + len(n.Pattern) + 2 + len(n.Flags)})
		return
	}
	switch w.rules.regex {
	case presets.RegexFull:
	case presets.RegexLiteral:
		if reason, err := checkRE2(n.Pattern, n.Flags); err == errBacktracking {
			w.report(KindRegex, n.Idx,
				"rewrite it without lookahead, lookbehind, backreferences or the y flag, or use String methods",
				"the regular expression %s needs a backtracking engine (%s), which is not allowed %s", shorten("/"+n.Pattern+"/"+n.Flags, 40), reason, w.rules.by())
		}
	default:
		w.report(KindRegex, n.Idx,
			"use String methods such as includes, startsWith, indexOf, split or replaceAll",
			"regular expressions are not allowed %s", w.rules.by())
	}
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// checkWrapper verifies that the program is exactly the wrapper around the
// script: one async function expression whose body spans the whole script.
// The pre-scan already refuses a '}' that would close the wrapper; this is
// the same guarantee checked on the tree.
func checkWrapper(prg *js.Program, scriptLen int) (*js.FunctionLiteral, bool) {
	if prg == nil || len(prg.Body) != 1 {
		return nil, false
	}
	es, ok := prg.Body[0].(*js.ExpressionStatement)
	if !ok {
		return nil, false
	}
	fn, ok := es.Expression.(*js.FunctionLiteral)
	if !ok || !fn.Async || fn.Generator || fn.Name != nil || fn.Body == nil || fn.ParameterList == nil ||
		len(fn.ParameterList.List) != 0 || fn.ParameterList.Rest != nil {
		return nil, false
	}
	// file.Idx is 1-based.
	if int(fn.Body.LeftBrace) != len(wrapPrefix) || int(fn.Body.RightBrace) != len(wrapPrefix)+scriptLen+len(wrapSuffix)-1 {
		return nil, false
	}
	return fn, true
}

// walkPlan walks the statements of the plan's function. The wrapper itself
// is visited (for tests) but counts for neither depth nor nesting.
func (w *walker) walkPlan(prg *js.Program, fn *js.FunctionLiteral) {
	if w.visit != nil {
		w.visit(prg)
		w.visit(prg.Body[0])
		w.visit(fn)
		w.visit(fn.ParameterList)
		w.visit(fn.Body)
	}
	w.stmts(fn.Body.List)
	w.declarations(fn.DeclarationList)
}
