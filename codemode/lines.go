package codemode

import (
	"sort"
	"unicode/utf8"
)

// lineIndex locates byte offsets of a module. Lines end at LF, CR, CRLF,
// U+2028 and U+2029, as in goja and sobek; columns count code points from
// 1.
type lineIndex struct {
	src    string
	starts []int // byte offset of the first byte of each line
}

func newLineIndex(src string) *lineIndex {
	starts := []int{0}
	for i := 0; i < len(src); {
		if n := lineBreakLen(src, i); n > 0 {
			i += n
			starts = append(starts, i)
			continue
		}
		i++
	}
	return &lineIndex{src: src, starts: starts}
}

// lineBreakLen returns the length of the line terminator at i, or 0.
func lineBreakLen(src string, i int) int {
	switch c := src[i]; {
	case c == '\n':
		return 1
	case c == '\r':
		if i+1 < len(src) && src[i+1] == '\n' {
			return 2
		}
		return 1
	case c == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && (src[i+2] == 0xA8 || src[i+2] == 0xA9):
		return 3
	}
	return 0
}

// at returns the 1-based line and column of byte offset off, clamped to
// the source; an offset inside a character counts as that character.
func (x *lineIndex) at(off int) (line, column int) {
	off = max(0, min(off, len(x.src)))
	for off > 0 && off < len(x.src) && !utf8.RuneStart(x.src[off]) {
		off--
	}
	l := sort.Search(len(x.starts), func(i int) bool { return x.starts[i] > off }) - 1
	return l + 1, utf8.RuneCountInString(x.src[x.starts[l]:off]) + 1
}

// offset converts a 1-based line and 1-based byte column, as sobek's
// parser reports them, to a byte offset, clamped to the line and to the
// source.
func (x *lineIndex) offset(line, byteColumn int) int {
	if line < 1 {
		return 0
	}
	if line > len(x.starts) {
		return len(x.src)
	}
	start, end := x.starts[line-1], len(x.src)
	if line < len(x.starts) {
		end = x.starts[line]
	}
	return max(start, min(start+byteColumn-1, end))
}
