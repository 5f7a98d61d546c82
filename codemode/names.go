package codemode

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/codecall-go/codecall/ast"
)

// defaultModulePath is the path of a server whose id has no character
// left after normalisation (an empty id, or one made only of symbols).
const defaultModulePath = "server"

// MetaExport is the export every server module holds besides its tools:
// the module's metadata. ExportNames never gives it to a tool.
const MetaExport = "__meta__"

// ModulePath returns the module path segment of a server: the server is
// imported as "@codemode/servers/" + ModulePath(serverID).
//
// Every character is lowercased (with Unicode's simple per-character
// mapping), then every character outside [a-z0-9-] becomes '-', runs of
// '-' collapse to one, and leading and trailing '-' are stripped. The
// result matches ^[a-z0-9]+(-[a-z0-9]+)*$, or is "server" for an id that
// leaves nothing ("", "!!!", "日本"). Bytes that are not UTF-8 count as
// characters outside [a-z0-9-].
//
// Two ids may give the same path ("My.Server" and "my-server"); ModulePaths
// tells them apart.
func ModulePath(serverID string) string {
	var b strings.Builder
	b.Grow(len(serverID))
	dash := false // a '-' is pending: written only before a later [a-z0-9]
	for _, r := range serverID {
		r = unicode.ToLower(r)
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return defaultModulePath
	}
	return b.String()
}

// ModulePaths returns the module path of each server, in the order of
// serverIDs. The first id to give a path keeps it; every later id giving
// the same path gets that path followed by "--N", with the smallest N from
// 2 up whose result is neither the path of any id in the list nor given
// already. ModulePath never gives a path holding "--", so the suffixed
// paths cannot be any id's own path; the rule says so anyway, so that the
// result is collision-free by construction. Equal input gives equal
// output: the order of serverIDs is the only thing that decides which id
// keeps the plain path, so callers should pass the ids in a stable order
// (as configured, or sorted).
func ModulePaths(serverIDs []string) []string {
	clean := make([]string, len(serverIDs))
	for i, id := range serverIDs {
		clean[i] = ModulePath(id)
	}
	return disambiguate(clean, "--", nil)
}

// disambiguate gives each name of clean a unique one: the first occurrence
// of a name keeps it, later ones get sep+N with the smallest N from 2 up
// that is free. Every name of clean, and every name of reserved, is taken
// from the start, so a suffixed name never takes the plain name of a later
// element; an element whose own name is reserved gets a suffix.
func disambiguate(clean []string, sep string, reserved []string) []string {
	taken := make(map[string]bool, len(clean)+len(reserved))
	for _, n := range clean {
		taken[n] = true
	}
	kept := make(map[string]bool, len(clean))
	for _, n := range reserved {
		taken[n] = true
		kept[n] = true
	}
	out := make([]string, len(clean))
	for i, n := range clean {
		if !kept[n] {
			kept[n] = true
			out[i] = n
			continue
		}
		for k := 2; ; k++ {
			c := n + sep + strconv.Itoa(k)
			if !taken[c] {
				taken[c] = true
				out[i] = c
				break
			}
		}
	}
	return out
}

// reservedWords are the names a binding of a strict-mode module may not
// take: the reserved words listed by the Code Mode specification, and the
// ones strict mode adds (enum, the future reserved words, eval and
// arguments).
var reservedWords = map[string]bool{
	"break": true, "case": true, "class": true, "const": true, "continue": true, "debugger": true,
	"default": true, "delete": true, "do": true, "else": true, "export": true, "extends": true,
	"false": true, "finally": true, "for": true, "function": true, "if": true, "import": true,
	"in": true, "instanceof": true, "new": true, "null": true, "return": true, "super": true,
	"switch": true, "this": true, "throw": true, "true": true, "try": true, "typeof": true,
	"var": true, "void": true, "while": true, "with": true, "yield": true, "let": true,
	"static": true, "await": true,

	"enum": true, "implements": true, "interface": true, "package": true, "private": true,
	"protected": true, "public": true, "eval": true, "arguments": true,
}

// exportReserved are the names ExportName does not give: reservedWords,
// and the property names package ast refuses to read (constructor,
// prototype, __proto__, caller...), which a script could neither read as
// ns.name nor destructure.
var exportReserved = func() map[string]bool {
	m := make(map[string]bool, len(reservedWords)+16)
	for w := range reservedWords {
		m[w] = true
	}
	for _, w := range ast.BannedMembers() {
		m[w] = true
	}
	return m
}()

// ExportName returns the identifier a tool is exported as, made from the
// tool's name on its server:
//
//   - every character that is not an ASCII letter, an ASCII digit, '_' or
//     '$' becomes '_' (one '_' per character, however many bytes it takes);
//   - an empty name becomes "_";
//   - a name starting with a digit gets '_' prepended ("123tool" becomes
//     "_123tool");
//   - a reserved word gets '_' appended ("delete" becomes "delete_").
//
// The specification replaces "illegal identifier characters"; this host
// reads every non-ASCII character as one, because package ast refuses
// non-ASCII identifiers in plans: an export named with one could not be
// imported by name. The reserved words are those the specification lists,
// those a strict-mode module may not bind (enum, implements, interface,
// package, private, protected, public, eval, arguments), and the property
// names package ast refuses to read (constructor, prototype, __proto__,
// caller, callee and the legacy accessors), which a script could neither
// read as ns.name nor destructure.
//
// Different tools may get the same identifier; ExportNames tells them
// apart.
func ExportName(toolName string) string {
	var b strings.Builder
	b.Grow(len(toolName) + 2)
	for _, r := range toolName {
		if r < utf8.RuneSelf && isIdentPart(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	switch {
	case s == "":
		return "_"
	case s[0] >= '0' && s[0] <= '9':
		s = "_" + s
	}
	if exportReserved[s] {
		s += "_"
	}
	return s
}

// Tool names a tool of a server for ExportNames.
type Tool struct {
	// Canonical is the tool's canonical MCP name, unique among the tools
	// given to ExportNames (the name qualified by its server, say).
	Canonical string
	// Local is the tool's name on its server, which ExportName reads.
	Local string
}

// ExportNames returns the export identifier of every tool of one module,
// by canonical name.
//
// The tools are ordered by canonical name (byte order; equal canonical
// names by local name), and each gets ExportName(Local). The first tool in
// that order to get an identifier keeps it; every later one gets the
// identifier followed by "__N", with the smallest N from 2 up whose result
// is neither the plain identifier of any tool nor given already. MetaExport
// is taken from the start: a tool whose identifier is __meta__ gets
// "__meta____2". The result does not depend on the order of tools. A
// canonical name given twice keeps the identifier of its first tool in
// that order.
func ExportNames(tools []Tool) map[string]string {
	sorted := slices.Clone(tools)
	slices.SortStableFunc(sorted, func(a, b Tool) int {
		if c := strings.Compare(a.Canonical, b.Canonical); c != 0 {
			return c
		}
		return strings.Compare(a.Local, b.Local)
	})
	clean := make([]string, len(sorted))
	for i, t := range sorted {
		clean[i] = ExportName(t.Local)
	}
	names := disambiguate(clean, "__", []string{MetaExport})
	out := make(map[string]string, len(sorted))
	for i, t := range sorted {
		if _, ok := out[t.Canonical]; !ok {
			out[t.Canonical] = names[i]
		}
	}
	return out
}

// isIdentPart reports whether c may stand in an ASCII identifier.
func isIdentPart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$'
}

// isIdentifier reports whether s is an ASCII identifier name: an ASCII
// letter, '_' or '$', then ASCII letters, digits, '_' or '$'. Reserved
// words are identifier names.
func isIdentifier(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentPart(s[i]) {
			return false
		}
	}
	return true
}
