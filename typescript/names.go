package typescript

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxReadableName bounds the readable part of a type name derived from a
// tool name; longer names are shortened and disambiguated by a hash.
const maxReadableName = 64

// TypeName returns the identifier that prefixes every type declared for the
// tool name: Declare names the tool's types TypeName(name)+"Input",
// TypeName(name)+"Output" and TypeName(name)+"$"+definition.
//
// Distinct tool names give distinct type names, so the declarations of any
// set of tools can share one file. Names made of lower-case snake_case words
// separated by dots map to a readable form with no hash: "create_invoice"
// becomes "CreateInvoice" and "billing.create_invoice" becomes
// "Billing_CreateInvoice" (the dot becomes an underscore, and since every
// word starts with a capital letter the mapping can be reversed). Any other
// name, for example "get-weather" or "fs/readFile", gets a readable
// approximation followed by an underscore and eight hex digits of a 32-bit
// FNV-1a hash of the exact name, e.g. "GetWeather_9c1a2b3d". Such a suffix
// begins with a digit or a lower-case letter, which the readable form never
// produces after an underscore, so the two families cannot collide; two
// hashed names collide only if both their approximations and their hashes
// agree.
//
// The result contains only ASCII letters, digits and underscores, never
// starts with a digit, and never contains "$", which Declare reserves for
// separating the prefix from a definition name.
func TypeName(tool string) string {
	if name, ok := snakeTypeName(tool); ok {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(tool))
	return fmt.Sprintf("%s_%08x", readableTypeName(tool), h.Sum32())
}

// snakeTypeName converts names such as "billing.create_invoice": dot
// separated parts, each of underscore separated words that start with a
// lower-case ASCII letter followed by lower-case letters and digits.
func snakeTypeName(tool string) (string, bool) {
	if tool == "" || len(tool) > maxReadableName {
		return "", false
	}
	var b strings.Builder
	for i, part := range strings.Split(tool, ".") {
		if i > 0 {
			b.WriteByte('_')
		}
		for _, word := range strings.Split(part, "_") {
			if word == "" || word[0] < 'a' || word[0] > 'z' {
				return "", false
			}
			for j := 1; j < len(word); j++ {
				if c := word[j]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
					return "", false
				}
			}
			b.WriteByte(word[0] - 'a' + 'A')
			b.WriteString(word[1:])
		}
	}
	return b.String(), true
}

// readableTypeName approximates tool as PascalCase: runs of ASCII letters
// and digits, each with its first letter capitalised, joined together.
func readableTypeName(tool string) string {
	var b strings.Builder
	upper := true
	for i := 0; i < len(tool) && b.Len() < maxReadableName; i++ {
		c := tool[i]
		switch {
		case c >= 'a' && c <= 'z':
			if upper {
				c = c - 'a' + 'A'
			}
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			upper = true
			continue
		}
		upper = false
		b.WriteByte(c)
	}
	s := b.String()
	if s == "" || s[0] <= '9' {
		s = "Tool" + s
	}
	return s
}

// defName turns the name of a definition, or a JSON pointer, into the part
// of a type alias name that follows the "$" separator.
func defName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < maxReadableName; i++ {
		c := s[i]
		if isIdentByte(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$'
}

// isIdent reports whether s can be written as a property name without
// quotes. Only ASCII identifiers qualify; reserved words are allowed as
// property names in TypeScript, so they need no quotes either.
func isIdent(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return true
}

// isIdentifierName reports whether s is an ECMAScript IdentifierName: a
// name that may follow "as" in an export clause or "." in a member access,
// reserved words included. Escape sequences are not accepted.
func isIdentifierName(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for i, r := range s {
		if r == '$' || r == '_' || idStart(r) || i > 0 && (r == '\u200c' || r == '\u200d' || idContinue(r)) {
			continue
		}
		return false
	}
	return true
}

// idStart approximates Unicode's ID_Start property, which Go's unicode
// package does not provide as a table.
func idStart(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}
	return (unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_ID_Start, r)) &&
		!unicode.Is(unicode.Pattern_Syntax, r) && !unicode.Is(unicode.Pattern_White_Space, r)
}

// idContinue approximates Unicode's ID_Continue property.
func idContinue(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return idStart(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc, unicode.Other_ID_Continue) &&
		!unicode.Is(unicode.Pattern_Syntax, r) && !unicode.Is(unicode.Pattern_White_Space, r)
}

// bindingReserved are the names that cannot name a function declared in
// module code, which is strict: ECMAScript's reserved words, those reserved
// in strict mode, and eval and arguments.
var bindingReserved = wordSet(`
	await break case catch class const continue debugger default delete do
	else enum export extends false finally for function if import in
	instanceof new null return super switch this throw true try typeof var
	void while with yield let static implements interface package private
	protected public eval arguments`)

// wordSet returns the set of the space-separated words of s.
func wordSet(s string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(s) {
		set[w] = true
	}
	return set
}

// isBindingIdent reports whether s can name a function declared in a
// module: an IdentifierName that is not reserved.
func isBindingIdent(s string) bool {
	return isIdentifierName(s) && !bindingReserved[s]
}

// propName renders an object key as a TypeScript property name.
func propName(s string) string {
	if isIdent(s) {
		return s
	}
	return quote(s)
}

// quote renders s as a double-quoted string literal. JSON string syntax is
// a subset of JavaScript's once U+2028 and U+2029 are escaped, which
// encoding/json does; invalid UTF-8 becomes U+FFFD.
func quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	return strings.TrimSuffix(b.String(), "\n")
}

// truncate shortens s to at most limit bytes plus an ellipsis, cutting on a
// rune boundary.
func truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	for limit > 0 && !utf8.RuneStart(s[limit]) {
		limit--
	}
	return s[:limit] + "…"
}

// commentText makes s safe inside a /* */ comment: valid UTF-8, no control
// characters other than newlines and tabs, and no "*/" that would end the
// comment early. Long texts are truncated to limit bytes.
func commentText(s string, limit int) string {
	s = truncate(strings.ToValidUTF8(s, "\uFFFD"), limit)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r' || r == '\u2028' || r == '\u2029':
			return '\n'
		case r < 0x20 || r == 0x7f:
			return ' '
		}
		return r
	}, s)
	return strings.ReplaceAll(s, "*/", "*\\/")
}

// inlineText is commentText on a single line.
func inlineText(s string, limit int) string {
	s = commentText(s, limit)
	s = strings.Join(strings.Fields(s), " ")
	return s
}

// jsdoc renders lines as a JSDoc block at the given indentation. A single
// line of text, or one line followed only by tags, is written on one line
// when it is short: declarations are read by models, and the block's frame
// costs tokens without saying anything.
func jsdoc(lines []string, indent int) string {
	if len(lines) == 0 {
		return ""
	}
	pad := strings.Repeat("  ", indent)
	if one, ok := oneLine(lines); ok {
		return pad + "/** " + one + " */\n"
	}
	var b strings.Builder
	b.WriteString(pad + "/**\n")
	for _, l := range lines {
		if l == "" {
			b.WriteString(pad + " *\n")
		} else {
			b.WriteString(pad + " * " + l + "\n")
		}
	}
	b.WriteString(pad + " */\n")
	return b.String()
}

// maxOneLineDoc is the longest JSDoc text written on one line.
const maxOneLineDoc = 160

func oneLine(lines []string) (string, bool) {
	if len(lines) == 1 {
		return lines[0], true
	}
	n := 0
	for i, l := range lines {
		if l == "" || i > 0 && !strings.HasPrefix(l, "@") {
			return "", false
		}
		n += len(l) + 1
	}
	if n > maxOneLineDoc {
		return "", false
	}
	return strings.Join(lines, " "), true
}

// docLines splits a description into the lines of a JSDoc block, dropping
// leading and trailing blank lines and trailing spaces.
func docLines(s string) []string {
	s = strings.TrimSpace(commentText(s, maxDocLen))
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return lines
}
