package render

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// writeQuoted writes s in double quotes with backslash escapes for `"`, `\`,
// LF, CR and tab, and \u00XX for the other C0 controls. With allControls it
// also escapes DEL, the C1 controls and U+2028/U+2029 as \uXXXX, so that a
// quoted string shows no invisible or line-breaking character; TOON wants
// those literal (spec §7.1), Compact escapes them.
func writeQuoted(b *strings.Builder, s string, allControls bool) {
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && (c < 0x7f || !allControls) {
			i++
			continue
		}
		if c >= utf8.RuneSelf { // only with allControls
			r, size := utf8.DecodeRuneInString(s[i:])
			if !escapedRune(r) {
				i += size
				continue
			}
			b.WriteString(s[start:i])
			writeUnicodeEscape(b, r)
			i += size
			start = i
			continue
		}
		b.WriteString(s[start:i])
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			writeUnicodeEscape(b, rune(c))
		}
		i++
		start = i
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

// escapedRune reports whether Compact escapes the non-ASCII rune r inside
// quotes: a C1 control or a line or paragraph separator.
func escapedRune(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

func writeUnicodeEscape(b *strings.Builder, r rune) {
	b.WriteString(`\u`)
	b.WriteByte(hexDigits[r>>12&0xf])
	b.WriteByte(hexDigits[r>>8&0xf])
	b.WriteByte(hexDigits[r>>4&0xf])
	b.WriteByte(hexDigits[r&0xf])
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digitsAt returns the index after the run of ASCII digits at s[i:].
func digitsAt(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// exponentAt returns the index after an exponent e[+-]digits (e or E) at
// s[i:], or i if there is none.
func exponentAt(s string, i int) int {
	if i >= len(s) || (s[i] != 'e' && s[i] != 'E') {
		return i
	}
	j := i + 1
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	if k := digitsAt(s, j); k > j {
		return k
	}
	return i
}
