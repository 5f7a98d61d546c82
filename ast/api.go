// Package ast validates a plan before it runs: it parses the script with
// goja's parser, walks every node, enforces the preset's rules, and
// compiles the same tree, so what was checked is exactly what runs.
//
// # The program
//
// A plan is the body of an async function. Validate compiles
//
//	(async function(){<script>
//	})
//
// in strict mode; running Checked.Program evaluates to that function, and
// package vm calls it without arguments to get the plan's Promise. Line
// numbers are the script's; Checked.Locate maps goja's positions back.
//
// # TypeScript
//
// ValidateTypeScript accepts plans written in TypeScript too. It validates
// the script as JavaScript first, exactly as Validate does, and only when
// goja's parser refuses it hands it to a TypeStripper (package
// ast/tsstrip, with esbuild), after bounding what that parser can find in
// it. The JavaScript the stripper returns is validated and compiled like
// any script, through a line index that maps every position back through
// the stripper's mappings: locations stay those of the script as sent.
// Checked.Source is what was compiled, which is what a sandbox worker is
// sent and validates again. Package ast does not import ast/tsstrip, so a
// program that validates only JavaScript links no TypeScript parser.
//
// # Rules
//
// Every preset refuses:
//
//   - the identifiers listed by AlwaysBannedIdentifiers, as references and
//     as names of variables, functions, classes, parameters and labels, plus
//     Rules.BannedIdentifiers; a property name after a dot (o.process) is
//     not a reference and is allowed;
//   - reading, calling or destructuring the members listed by
//     BannedMembers, by dot or by a literal key (o["__proto__"],
//     o[`constructor`]), and defining constructor, prototype, __proto__
//     and the __define/__lookup accessors as object-literal or class keys
//     (a class's own constructor method is class syntax and is allowed;
//     caller, callee and arguments are ordinary data keys when defined);
//   - with, debugger, import and export in every form (import(),
//     import.meta), and syntax the walker does not know;
//   - escapes and non-ASCII characters in identifiers (\u0065val would
//     reach the tree as eval, and a Cyrillic е in еval looks like eval),
//     invisible characters in code, and BiDi control characters anywhere.
//
// What depends on the preset, with the presets' default limits (see
// presets.LimitsFor):
//
//	                 locked_down   secure              balanced   experimental
//	loops            refused       refused             allowed    allowed
//	console          refused       allowed             allowed    allowed
//	regex, RegExp    refused       RE2-safe literals   allowed    allowed
//	script bytes     16 KiB        64 KiB              128 KiB    256 KiB
//	script lines     500           2000                4000       8000
//	nesting depth    32            48                  64         96
//
// "Loops" are for, for-in, for-of, while and do-while, labelled or not
// (goja cannot parse for await, which is refused too). An RE2-safe literal
// is one goja runs on Go's linear-time engine: no lookaround,
// backreferences, sticky flag, or repeat count over 1000; the RegExp
// constructor is refused because its pattern is a string.
//
// Computed keys built at run time (o["constr" + "uctor"]) cannot be seen
// here: the runtime's hardening is the second wall, and must hold alone.
//
// # Before parsing
//
// goja's parser and compiler recurse, and overflowing the Go stack is a
// fatal error no recover() catches, so Validate bounds the script before
// goja sees it: size, lines, bracket nesting, chains of operators and
// statements that nest without brackets, labels, and arrow functions
// nested in parameter lists (which goja re-parses, in exponential time).
// It then parses a skeleton of the script with every literal and comment
// blanked and checks that goja found exactly the literals its own scan
// found, so that goja's error recovery cannot read hidden code inside a
// literal. See prescan and buildSkeleton.
package ast

import (
	"github.com/dop251/goja"

	"github.com/codecall-go/codecall/presets"
)

// Kind classifies a violation. The values are part of the public contract:
// codecall.execute reports them as error.kind of an illegal_access status.
type Kind string

// The violation kinds.
const (
	KindBannedIdentifier Kind = "banned_identifier" // eval, Function, require, process, a configured name...
	KindBannedMember     Kind = "banned_member"     // .constructor, .prototype, .__proto__, ["__proto__"], __defineGetter__...
	KindWith             Kind = "with_statement"
	KindImport           Kind = "import" // import / export / dynamic import()
	KindDebugger         Kind = "debugger"
	KindLoop             Kind = "loop"  // for, for-in, for-of, while, do-while when the preset forbids loops
	KindRegex            Kind = "regex" // regex literal or RegExp when the preset forbids it
	KindUnicode          Kind = "unicode"
	KindScriptTooLarge   Kind = "script_too_large"
	KindTooManyLines     Kind = "too_many_lines"
	KindTooDeep          Kind = "too_deeply_nested"
	// KindUnsupportedSyntax is syntax the validator does not know, refused
	// rather than let through unchecked.
	KindUnsupportedSyntax Kind = "unsupported_syntax"
	// KindBigInt is a BigInt literal: BigInt arithmetic allocates in single
	// native steps that no limit can interrupt.
	KindBigInt Kind = "bigint"
)

// Location is a position in the user's script, 1-based, in the script as
// sent (not in any wrapper CodeCall adds). Lines end at LF, CR, CRLF,
// U+2028 and U+2029, as in goja; Column counts Unicode characters (code
// points), not bytes.
type Location struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// Violation is one broken rule.
type Violation struct {
	Kind     Kind     `json:"kind"`
	Message  string   `json:"message"`
	Location Location `json:"location"`
}

// Rules are what a preset allows. RulesFor derives them from the limits.
type Rules struct {
	MaxScriptBytes  int64
	MaxScriptLines  int
	MaxNestingDepth int
	AllowLoops      bool
	Regex           presets.RegexMode
	AllowConsole    bool
	// BannedIdentifiers extend the always-banned set.
	BannedIdentifiers []string
	// Preset names the preset in messages ("not allowed by the secure
	// preset"); optional.
	Preset presets.Name
	// CodeMode marks a Code Mode module linked into a plan body (see
	// ValidateModule): globalThis, Proxy and Reflect, which every other
	// plan is refused, are allowed, because the Code Mode specification
	// gives them to every module.
	CodeMode bool
}

// RulesForPreset returns the rules of a named preset with its default
// limits, and whether the name is known.
func RulesForPreset(name presets.Name) (Rules, bool) {
	l, ok := presets.LimitsFor(name)
	if !ok {
		return Rules{}, false
	}
	r := RulesFor(l)
	r.Preset = name
	return r, true
}

// RulesFor returns the rules of a preset's limits.
func RulesFor(l presets.Limits) Rules {
	return Rules{
		MaxScriptBytes: l.MaxScriptBytes, MaxScriptLines: l.MaxScriptLines, MaxNestingDepth: l.MaxNestingDepth,
		AllowLoops: l.AllowLoops, Regex: l.Regex, AllowConsole: l.AllowConsole,
		BannedIdentifiers: l.BannedIdentifiers,
	}
}

// SyntaxError is a script that does not parse, located in the user's script.
type SyntaxError struct {
	Message  string
	Location Location
}

func (e *SyntaxError) Error() string { return e.Message }

// IllegalError lists every violation of a script, in source order. A
// script that cannot be parsed safely, because it breaks a limit checked
// before parsing (size, lines, nesting) or holds an invisible character in
// its code, lists those violations only, with the Unicode violations found
// before parsing.
type IllegalError struct {
	Violations []Violation
	// Omitted counts further violations left out of a long report.
	Omitted int
}

func (e *IllegalError) Error() string {
	if len(e.Violations) == 0 {
		return "illegal script"
	}
	return e.Violations[0].Message
}

// Checked is a validated, compiled plan. Program is immutable and may be run
// by any number of runtimes: running it evaluates to the plan's async
// function (see Validate).
//
// Program is compiled from Source, which is the script as sent for a
// JavaScript plan and the JavaScript made of it for a TypeScript plan (see
// ValidateTypeScript). Either way, every location a Checked reports is in
// the script as sent.
type Checked struct {
	Program *goja.Program

	// lines indexes Source; for a TypeScript plan it maps back to the
	// script as sent.
	lines *lineIndex
	// module is set for a Code Mode module: Source is the plan body it
	// was linked into (see ValidateModule).
	module bool
	// noRegExpLiterals is set by Validate when the walk found no regex
	// literal. It is a negative so that a Checked built by hand reports
	// literals, and the runtime hardens RegExp up front.
	noRegExpLiterals bool
}

// HasRegExpLiterals reports whether the plan's source may contain regular
// expression literals. A literal creates a RegExp without naming the
// global, so the runtime must harden RegExp before such a plan runs; for
// other plans it can do so on first use, which saves most of a trivial
// run's set-up.
func (c *Checked) HasRegExpLiterals() bool { return c == nil || !c.noRegExpLiterals }

// Locate maps a position in the compiled program, as goja reports it in
// stack frames and exceptions (1-based line, 1-based byte column), back to
// the user's script (1-based line, 1-based column counting characters).
// Positions in the wrapper map to the nearest position of the script: the
// start of line 1, or the end of the script.
func (c *Checked) Locate(line, column int) Location {
	if c == nil || c.lines == nil {
		return Location{Line: line, Column: column}
	}
	return c.lines.fromProgram(line, column)
}

// TypeScript reports whether the script was TypeScript: it did not parse as
// JavaScript, and Program was compiled from the JavaScript its types were
// stripped to.
func (c *Checked) TypeScript() bool { return c.transformed() && !c.module }

// Module reports whether the script was a Code Mode module, and Program
// was compiled from the plan body it was linked into (see ValidateModule).
func (c *Checked) Module() bool { return c.transformed() && c.module }

// transformed reports whether Program was compiled from JavaScript made of
// the script (types stripped, or a module linked) rather than the script.
func (c *Checked) transformed() bool { return c != nil && c.lines != nil && c.lines.origin != nil }

// Source is the JavaScript that Program was compiled from: the script as
// sent, or for a TypeScript plan the JavaScript made of it. Validating
// Source again, with the rules SourceRules gives, checks the same program;
// this is what a sandbox worker, which cannot read TypeScript, is sent. A
// Checked built by hand has no Source.
func (c *Checked) Source() string {
	if c == nil || c.lines == nil {
		return ""
	}
	return c.lines.src
}

// SourceRules returns the rules under which Source validates again, given
// the rules r the script was validated under: r for a JavaScript plan. For
// a TypeScript plan, the script as sent was held to r's byte and line
// limits, and the JavaScript made of it, which may be longer, is not: it is
// validated without them, every other rule unchanged.
func (c *Checked) SourceRules(r Rules) Rules {
	if c.Module() {
		r.CodeMode = true
	}
	if c.transformed() {
		r.MaxScriptBytes, r.MaxScriptLines = 0, 0
	}
	return r
}

// ScriptLocation maps a location in Source (1-based line, 1-based column
// counting characters), such as the location a sandbox worker reports for
// a run of Source, to the script as sent. For a JavaScript plan, whose
// Source is the script, it returns loc, moved inside the script if it lies
// outside. A Checked built by hand returns loc.
func (c *Checked) ScriptLocation(loc Location) Location {
	if c == nil || c.lines == nil {
		return loc
	}
	return c.lines.at(c.lines.offset(loc))
}
