package render

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// compactEncoder writes one document in the Compact format; the package
// comment states its rules. It is used once.
type compactEncoder struct {
	b *strings.Builder
	// markers is how many "- " list markers the next line opens with, each
	// in place of one indentation unit: "- - a" is an item of an item.
	markers int
}

func writeCompact(b *strings.Builder, v *value) {
	e := &compactEncoder{b: b}
	e.writeBlock(v, 0)
}

// line starts a line at the given depth.
func (e *compactEncoder) line(depth int) {
	if e.b.Len() > 0 {
		e.b.WriteByte('\n')
	}
	for range depth - e.markers {
		e.b.WriteString("  ")
	}
	for range e.markers {
		e.b.WriteString("- ")
	}
	e.markers = 0
}

// writeBlock writes v starting on a new line at depth: an object as member
// lines, an array that is not inline as item lines, anything else on one
// line.
func (e *compactEncoder) writeBlock(v *value, depth int) {
	switch {
	case v.kind == kObject && len(v.members) > 0:
		for i := range v.members {
			e.writeMember(&v.members[i], depth)
		}
	case v.kind == kArray && !inline(v):
		for i := range v.items {
			e.markers++
			e.writeBlock(&v.items[i], depth+1)
		}
	default:
		e.line(depth)
		e.writeInline(v)
	}
}

// writeMember writes "key: value" at depth, or "key:" and the value's lines
// one level deeper.
func (e *compactEncoder) writeMember(m *member, depth int) {
	e.line(depth)
	if compactKeyQuoted(m.key) {
		writeQuoted(e.b, m.key, true)
	} else {
		e.b.WriteString(m.key)
	}
	e.b.WriteByte(':')
	v := &m.val
	if v.kind == kObject && len(v.members) > 0 || v.kind == kArray && !inline(v) {
		e.writeBlock(v, depth+1)
		return
	}
	e.b.WriteByte(' ')
	e.writeInline(v)
}

// inline reports whether an array fits on one line: empty, or two or more
// primitives. A single primitive is an item line, so that "tags: a" always
// means a string and never a one-element array.
func inline(v *value) bool {
	return len(v.items) == 0 || len(v.items) >= 2 && allPrimitive(v.items)
}

// writeInline writes a primitive, {} or [] for an empty object or array, or
// the items of an inline array separated by ", ".
func (e *compactEncoder) writeInline(v *value) {
	switch v.kind {
	case kNull:
		e.b.WriteString("null")
	case kFalse:
		e.b.WriteString("false")
	case kTrue:
		e.b.WriteString("true")
	case kNumber:
		e.b.WriteString(v.text)
	case kString:
		if compactQuoted(v.text) {
			writeQuoted(e.b, v.text, true)
		} else {
			e.b.WriteString(v.text)
		}
	case kObject:
		e.b.WriteString("{}")
	case kArray:
		if len(v.items) == 0 {
			e.b.WriteString("[]")
		}
		for i := range v.items {
			if i > 0 {
				e.b.WriteString(", ")
			}
			e.writeInline(&v.items[i])
		}
	}
}

// compactQuoted reports whether Compact quotes the string value s; the
// package comment gives the rule in words.
func compactQuoted(s string) bool {
	return compactKeyQuoted(s) ||
		strings.EqualFold(s, "true") || strings.EqualFold(s, "false") || strings.EqualFold(s, "null") ||
		compactNumberLike(s) || strings.Contains(s, ", ")
}

// compactKeyQuoted reports whether Compact quotes the key k: the first five
// rules of the package comment, which string values obey too.
func compactKeyQuoted(k string) bool {
	if k == "" || k[0] == '"' || k[0] == '[' || k[0] == '{' || k == "-" || strings.HasPrefix(k, "- ") ||
		strings.HasSuffix(k, ":") || strings.Contains(k, ": ") {
		return true
	}
	first, _ := utf8.DecodeRuneInString(k)
	last, _ := utf8.DecodeLastRuneInString(k)
	if unicode.IsSpace(first) || unicode.IsSpace(last) {
		return true
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c < 0x20 || c == 0x7f {
			return true
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(k[i:])
			if escapedRune(r) {
				return true
			}
			i += size - 1
		}
	}
	return false
}

// compactNumberLike reports whether s reads as a number:
// /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$/.
func compactNumberLike(s string) bool {
	i := 0
	if s[0] == '+' || s[0] == '-' {
		i++
	}
	j := digitsAt(s, i)
	whole := j > i
	if j < len(s) && s[j] == '.' {
		k := digitsAt(s, j+1)
		if !whole && k == j+1 {
			return false
		}
		j = k
	} else if !whole {
		return false
	}
	return exponentAt(s, j) == len(s)
}
