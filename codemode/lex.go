package codemode

import (
	"unicode"
	"unicode/utf8"
)

// Import and export declarations are read again here, token by token, from
// the offset sobek's parser gives for each. sobek's module parser is
// lenient with them (it accepts `import {a} "x"` and `import {a as if}`),
// and its tree keeps neither where a declaration ends nor where its names
// stand; the declarations hold only identifiers, strings and a few
// punctuators, so a small lexer reads them exactly.

// tokKind classifies a token of a declaration.
type tokKind uint8

const (
	tokEOF    tokKind = iota
	tokIdent          // an ASCII identifier name (reserved words included)
	tokString         // a string literal, quotes included
	tokPunct          // any other ASCII character, alone
	// tokBad is a character a declaration may not hold here: a non-ASCII
	// character in code or an escape in a name. Code Mode's names are
	// ASCII, and package ast refuses the rest in identifiers.
	tokBad
)

// token is a token of a declaration: src[start:end].
type token struct {
	kind       tokKind
	start, end int
	// newline: a line terminator stands between the previous token and
	// this one (in white space or in a comment).
	newline bool
}

// lexer reads the tokens of src from i on.
type lexer struct {
	src string
	i   int
}

func (t token) text(src string) string { return src[t.start:t.end] }

// is reports whether t is the identifier word or the punctuator word.
func (t token) is(src, word string) bool {
	return (t.kind == tokIdent || t.kind == tokPunct) && src[t.start:t.end] == word
}

// next returns the next token.
func (lx *lexer) next() token {
	newline := lx.skip()
	src, i := lx.src, lx.i
	t := token{start: i, newline: newline}
	switch {
	case i >= len(src):
		t.kind, t.end = tokEOF, i
	case src[i] == '"' || src[i] == '\'':
		t.kind, t.end = tokString, stringEnd(src, i)
	case isIdentPart(src[i]) && !(src[i] >= '0' && src[i] <= '9'):
		j := i + 1
		for j < len(src) && isIdentPart(src[j]) {
			j++
		}
		t.kind, t.end = tokIdent, j
		if j < len(src) && (src[j] == '\\' || src[j] >= utf8.RuneSelf && !isSpaceOrBreak(src, j)) {
			// The name goes on with an escape or a non-ASCII character.
			t.kind = tokBad
			_, n := utf8.DecodeRuneInString(src[j:])
			t.start, t.end = j, j+n
		}
	case src[i] >= utf8.RuneSelf || src[i] == '\\':
		_, n := utf8.DecodeRuneInString(src[i:])
		t.kind, t.end = tokBad, i+n
	default:
		t.kind, t.end = tokPunct, i+1
	}
	lx.i = t.end
	return t
}

// peek returns the next token without reading it.
func (lx *lexer) peek() token {
	i := lx.i
	t := lx.next()
	lx.i = i
	return t
}

// skip moves past white space and comments, and reports whether they held
// a line terminator.
func (lx *lexer) skip() (newline bool) {
	src := lx.src
	for lx.i < len(src) {
		i := lx.i
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			lx.i++
		case lineBreakLen(src, i) > 0:
			lx.i += lineBreakLen(src, i)
			newline = true
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			j := i + 2
			for j < len(src) && lineBreakLen(src, j) == 0 {
				j++
			}
			lx.i = j
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			j := i + 2
			for j < len(src) && !(src[j] == '*' && j+1 < len(src) && src[j+1] == '/') {
				if lineBreakLen(src, j) > 0 {
					newline = true
				}
				j++
			}
			lx.i = min(j+2, len(src))
		case c >= utf8.RuneSelf && isSpaceOrBreak(src, i):
			_, n := utf8.DecodeRuneInString(src[i:])
			lx.i += n
		default:
			return newline
		}
	}
	return newline
}

// isSpaceOrBreak reports whether the non-ASCII character at i is white
// space (a space separator: U+00A0, U+3000...) or U+2028 or U+2029. U+FEFF,
// white space to JavaScript, is not: package ast refuses it in code.
func isSpaceOrBreak(src string, i int) bool {
	r, _ := utf8.DecodeRuneInString(src[i:])
	return r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Zs, r)
}

// stringEnd returns the offset after the string literal whose quote is at
// i, or the end of its line if it has no closing quote (which sobek's
// parser has refused already).
func stringEnd(src string, i int) int {
	quote := src[i]
	for j := i + 1; j < len(src); {
		switch c := src[j]; {
		case c == quote:
			return j + 1
		case c == '\\' && j+1 < len(src):
			j++
			j += max(1, lineBreakLen(src, j))
		case c == '\n' || c == '\r':
			return j
		default:
			j++
		}
	}
	return len(src)
}
