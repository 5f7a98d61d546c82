package presets

import (
	"fmt"
	"strconv"
	"strings"
)

// Problem is one thing wrong with a configuration.
type Problem struct {
	// Source is where the offending value came from: the file name given to
	// Load, "env NAME" for an environment variable, or "" for a Config built
	// in Go or YAML given to Parse.
	Source string
	// Line is the 1-based line in the file, or 0 when unknown.
	Line int
	// Key is the full key path, such as vm.timeout or
	// tools["billing.*"].appId; "" when the problem is not about one key
	// (a YAML syntax error, an environment variable naming no key).
	Key string
	// Message says what is wrong and, where it helps, what is allowed.
	Message string
}

// String formats the problem as "source:line: key: message", leaving out
// the parts that are unknown.
func (p Problem) String() string {
	var b strings.Builder
	switch {
	case p.Source != "" && p.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", p.Source, p.Line)
	case p.Source != "":
		b.WriteString(p.Source + ": ")
	case p.Line > 0:
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Key != "" {
		b.WriteString(p.Key + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// ValidationError is every problem found in a configuration. Load, Parse and
// Config.Validate return it (as *ValidationError) so that an operator can fix
// a file in one go rather than one error per attempt.
type ValidationError struct {
	Problems []Problem
}

// Error prints the problems one per line.
func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return "invalid configuration: " + e.Problems[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "invalid configuration (%d problems):", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  " + p.String())
	}
	return b.String()
}

// segKind says how a path segment is written.
type segKind uint8

const (
	segField segKind = iota // a struct key: .name
	segKey                  // a map key chosen by the user: ["name"]
	segIndex                // a list index: [i]
)

type seg struct {
	name string
	kind segKind
}

// keyPath is the location of a value in the configuration. It keeps field
// names apart from user-chosen map keys because tool globs contain dots and
// must be printed quoted.
type keyPath []seg

// with returns a copy of p extended by one segment; copying keeps sibling
// paths built from the same parent independent.
func (p keyPath) with(s seg) keyPath {
	out := make(keyPath, len(p), len(p)+1)
	copy(out, p)
	return append(out, s)
}

func (p keyPath) field(name string) keyPath { return p.with(seg{name, segField}) }
func (p keyPath) key(name string) keyPath   { return p.with(seg{name, segKey}) }
func (p keyPath) index(i int) keyPath       { return p.with(seg{strconv.Itoa(i), segIndex}) }

// String renders the path for people: vm.timeout, tools["a.*"].tags[0].
func (p keyPath) String() string {
	var b strings.Builder
	for i, s := range p {
		switch s.kind {
		case segField:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.name)
		case segKey:
			b.WriteString("[" + strconv.Quote(s.name) + "]")
		case segIndex:
			b.WriteString("[" + s.name + "]")
		}
	}
	return b.String()
}

// lookup is the path as a map key shared with the YAML line index, which
// sees only names, not kinds.
func (p keyPath) lookup() string {
	names := make([]string, len(p))
	for i, s := range p {
		names[i] = s.name
	}
	return strings.Join(names, "\x00")
}

// issue is a problem before it is told where its value came from.
type issue struct {
	path   keyPath
	msg    string
	source string // set when the issue is tied to a source, not a key
}

func newIssue(p keyPath, format string, args ...any) issue {
	return issue{path: p, msg: fmt.Sprintf(format, args...)}
}

// validationError turns issues into a *ValidationError, or nil for none.
func validationError(problems []Problem) error {
	if len(problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: problems}
}
