// Package ast validates a plan before it runs: it parses the script once
// with goja's parser, walks every node, enforces the preset's rules, and
// compiles the same tree, so what was checked is exactly what runs.
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
)

// Location is a position in the user's script, 1-based, in the script as
// sent (not in any wrapper CodeCall adds).
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

// IllegalError lists every violation of a script that parsed.
type IllegalError struct {
	Violations []Violation
}

func (e *IllegalError) Error() string {
	if len(e.Violations) == 0 {
		return "illegal script"
	}
	return e.Violations[0].Message
}

// Checked is a validated, compiled plan. Program is immutable and may be run
// by any number of runtimes.
type Checked struct {
	Program *goja.Program
}
