package presets

import (
	"errors"
	"fmt"

	"github.com/gobwas/glob"
)

// Glob is a compiled tool-name pattern, as used by include, exclude, the keys
// of tools and directCalls.allowedTools. It is compiled without separators,
// so `*` matches across dots: "billing.*" matches "billing.invoices.list".
// The syntax is gobwas/glob's: `*`, `?`, `[abc]`, `[!a-z]`, `{a,b}`, and `\`
// to quote. The zero Glob matches nothing.
type Glob struct {
	p *glob.Pattern
}

// CompileGlob compiles a pattern. An empty pattern is an error: it could only
// match a tool without a name, so it is always a mistake.
func CompileGlob(pattern string) (Glob, error) {
	if pattern == "" {
		return Glob{}, errors.New("empty glob pattern")
	}
	p, err := glob.Compile(pattern)
	if err != nil {
		return Glob{}, fmt.Errorf("invalid glob %q: %w", pattern, err)
	}
	return Glob{p: p}, nil
}

// Match reports whether name matches the pattern.
func (g Glob) Match(name string) bool {
	return g.p != nil && g.p.Match(name)
}

// String returns the pattern's source text.
func (g Glob) String() string {
	if g.p == nil {
		return ""
	}
	return g.p.String()
}

// Literal reports whether the pattern has no wildcards, so that it names
// exactly one tool. Callers give exact names precedence over globs.
func (g Glob) Literal() bool {
	return g.p != nil && glob.QuoteMeta(g.p.String()) == g.p.String()
}

// Globs is a list of patterns that matches a name when any of them does.
type Globs []Glob

// CompileGlobs compiles every pattern; the error names the index of each bad
// one and joins them all.
func CompileGlobs(patterns []string) (Globs, error) {
	out := make(Globs, 0, len(patterns))
	var errs []error
	for i, pat := range patterns {
		g, err := CompileGlob(pat)
		if err != nil {
			errs = append(errs, fmt.Errorf("[%d]: %w", i, err))
			continue
		}
		out = append(out, g)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Match reports whether any pattern matches name; an empty list matches
// nothing.
func (gs Globs) Match(name string) bool {
	for _, g := range gs {
		if g.Match(name) {
			return true
		}
	}
	return false
}
