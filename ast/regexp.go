package ast

import (
	"regexp"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja/parser"
)

// The validator and the runtime must agree exactly on which patterns goja
// runs on Go's linear-time engine, so both use these two functions.

// PatternForCodeUnits rewrites characters outside the Basic Multilingual
// Plane as \uXXXX\uXXXX surrogate pairs, as goja does for patterns without
// the u flag (which match UTF-16 code units) before translating them.
func PatternForCodeUnits(p string) string {
	var sb strings.Builder
	pos := 0
	var prev rune
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		if r > 0xFFFF {
			sb.WriteString(p[pos:i])
			if prev == '\\' {
				sb.WriteByte('\\')
			}
			a, b := utf16.EncodeRune(r)
			sb.WriteString(`\u` + hex4(a) + `\u` + hex4(b))
			pos = i + size
		}
		i += size
		prev = r
	}
	if pos == 0 {
		return p
	}
	sb.WriteString(p[pos:])
	return sb.String()
}

func hex4(r rune) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[r>>12&15], digits[r>>8&15], digits[r>>4&15], digits[r&15]})
}

// CompileRE2 translates a JavaScript pattern as goja does
// (parser.TransformRegExp) and compiles it with Go's regexp. The errors
// are goja's parser.RegexpErrorIncompatible for syntax that needs
// backtracking, and regexp/syntax errors.
func CompileRE2(pattern string, ignoreCase, multiline, dotAll, unicode bool) (*regexp.Regexp, error) {
	re2, err := parser.TransformRegExp(pattern, dotAll, unicode)
	if err != nil {
		return nil, err
	}
	flags := ""
	if multiline {
		flags += "m"
	}
	if dotAll {
		flags += "s"
	}
	if ignoreCase {
		flags += "i"
	}
	if flags != "" {
		re2 = "(?" + flags + ":" + re2 + ")"
	}
	return regexp.Compile(re2)
}
