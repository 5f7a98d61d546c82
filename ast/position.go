package ast

import (
	"sort"
	"unicode/utf8"
)

// The program that runs is the script wrapped in an async function
// expression. The prefix holds no line break, so a line of the script keeps
// its number in the program and only columns of line 1 move, by
// len(wrapPrefix) bytes. The suffix starts with a line break so that a
// trailing // comment cannot swallow it.
const (
	wrapPrefix = "(async function(){"
	wrapSuffix = "\n})"
	// fileName names the program in goja's stack traces and errors.
	fileName = "plan.js"
)

// lineIndex maps byte offsets of a script to Locations. Lines end where
// goja's own positions say they end (LF, CR, CRLF, U+2028, U+2029), so that
// locations found here agree with the ones goja reports at run time.
// Columns count Unicode code points from 1.
type lineIndex struct {
	src    string
	starts []int // byte offset of the first byte of each line
}

func newLineIndex(src string) *lineIndex {
	starts := make([]int, 1, 16)
	for i := 0; i < len(src); {
		switch c := src[i]; {
		case c == '\n':
			i++
			starts = append(starts, i)
		case c == '\r':
			i++
			if i < len(src) && src[i] == '\n' {
				i++
			}
			starts = append(starts, i)
		case c == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && (src[i+2] == 0xA8 || src[i+2] == 0xA9):
			i += 3
			starts = append(starts, i)
		default:
			i++
		}
	}
	return &lineIndex{src: src, starts: starts}
}

// lines is the number of lines of the script; a final line break does not
// start a line of its own, so "a\n" has one line and "" has none.
func (x *lineIndex) lines() int {
	n := len(x.starts)
	if x.starts[n-1] == len(x.src) {
		n--
	}
	return n
}

// at returns the location of byte offset off of the script. Offsets past
// the end are the position just after the last character.
func (x *lineIndex) at(off int) Location {
	if off < 0 {
		off = 0
	}
	if off > len(x.src) {
		off = len(x.src)
	}
	line := sort.Search(len(x.starts), func(i int) bool { return x.starts[i] > off }) - 1
	return Location{Line: line + 1, Column: utf8.RuneCountInString(x.src[x.starts[line]:off]) + 1}
}

// fromProgram converts a line and a byte column of the wrapped program, as
// goja reports them, to a location in the script.
func (x *lineIndex) fromProgram(line, column int) Location {
	if line < 1 {
		return Location{Line: 1, Column: 1}
	}
	if line == 1 {
		column -= len(wrapPrefix)
		if column < 1 {
			return Location{Line: 1, Column: 1}
		}
	}
	if line > len(x.starts) {
		// The wrapper's closing line: report the end of the script.
		return x.at(len(x.src))
	}
	start := x.starts[line-1]
	end := len(x.src)
	if line < len(x.starts) {
		end = x.starts[line]
	}
	off := start + column - 1
	if off > end {
		off = end
	}
	// A column inside a multi-byte character counts as that character.
	for off > start && off < len(x.src) && !utf8.RuneStart(x.src[off]) {
		off--
	}
	return x.at(off)
}

// fromIdx converts a goja file.Idx (1-based byte offset into the wrapped
// program) to a location in the script.
func (x *lineIndex) fromIdx(idx int) Location {
	return x.at(idx - 1 - len(wrapPrefix))
}
