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
//
// When src was made from another script (a TypeScript plan with its types
// stripped), origin maps every offset back, and every Location the index
// gives is in that script: the violations, syntax errors and run-time
// positions of a stripped plan all pass through at.
type lineIndex struct {
	src    string
	starts []int   // byte offset of the first byte of each line
	origin *origin // nil when src is the script as sent
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

// at returns the location of byte offset off of src, in the script as
// sent. Offsets past the end are the position just after the last
// character.
func (x *lineIndex) at(off int) Location {
	if off < 0 {
		off = 0
	}
	if off > len(x.src) {
		off = len(x.src)
	}
	if x.origin != nil {
		return x.origin.at(off)
	}
	return x.local(off)
}

// local returns the location of byte offset off (0 <= off <= len(src)) in
// src itself.
func (x *lineIndex) local(off int) Location {
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
	start, end := x.starts[line-1], x.lineEnd(line)
	off := max(start, min(start+column-1, end))
	// A column inside a multi-byte character counts as that character.
	for off > start && off < len(x.src) && !utf8.RuneStart(x.src[off]) {
		off--
	}
	return x.at(off)
}

// lineEnd returns the offset of the line break that ends line (1-based),
// or the end of src for the last line.
func (x *lineIndex) lineEnd(line int) int {
	if line >= len(x.starts) {
		return len(x.src)
	}
	end := x.starts[line]
	switch {
	case end >= 2 && x.src[end-2] == '\r' && x.src[end-1] == '\n':
		return end - 2
	case x.src[end-1] == '\n' || x.src[end-1] == '\r':
		return end - 1
	}
	return end - 3 // U+2028 or U+2029
}

// offset converts a location of src (1-based line, 1-based column in code
// points) to a byte offset of src, clamped to the line and to src.
func (x *lineIndex) offset(loc Location) int {
	if loc.Line < 1 {
		return 0
	}
	if loc.Line > len(x.starts) {
		return len(x.src)
	}
	off, end := x.starts[loc.Line-1], x.lineEnd(loc.Line)
	for n := 1; n < loc.Column && off < end; n++ {
		_, size := utf8.DecodeRuneInString(x.src[off:])
		off += size
	}
	return min(off, end)
}

// fromIdx converts a goja file.Idx (1-based byte offset into the wrapped
// program) to a location in the script.
func (x *lineIndex) fromIdx(idx int) Location {
	return x.at(idx - 1 - len(wrapPrefix))
}

// origin maps byte offsets of a stripped plan's JavaScript back to the
// script it was made from (see Stripped.Mappings).
type origin struct {
	script *lineIndex // the script as sent
	js     string
	maps   []Mapping // sorted by JavaScript offset, within both texts
}

// newOrigin checks and sorts a stripper's mappings: offsets outside either
// text are clamped, script offsets inside a character move to its start.
func newOrigin(script *lineIndex, js string, maps []Mapping) *origin {
	ms := make([]Mapping, 0, len(maps))
	for _, m := range maps {
		if m.JavaScript < 0 || m.JavaScript > len(js) {
			continue
		}
		m.Script = max(0, min(m.Script, len(script.src)))
		for m.Script > 0 && m.Script < len(script.src) && !utf8.RuneStart(script.src[m.Script]) {
			m.Script--
		}
		ms = append(ms, m)
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].JavaScript < ms[j].JavaScript })
	return &origin{script: script, js: js, maps: ms}
}

// at returns the location in the script of JavaScript offset off. An offset
// takes the script position of the nearest mapping at or before it, moved
// on by the distance from that mapping when the text in between is the same
// in both (inside an identifier the stripper kept as it was); an offset
// before the first mapping takes the first one's. The end of the JavaScript
// is the end of the script.
func (o *origin) at(off int) Location {
	if off >= len(o.js) || len(o.maps) == 0 {
		if off >= len(o.js) {
			return o.script.local(len(o.script.src))
		}
		return o.script.local(0)
	}
	i := sort.Search(len(o.maps), func(i int) bool { return o.maps[i].JavaScript > off }) - 1
	if i < 0 {
		return o.script.local(o.maps[0].Script)
	}
	m := o.maps[i]
	pos := m.Script
	if d := off - m.JavaScript; d > 0 && m.Script+d <= len(o.script.src) &&
		o.js[m.JavaScript:off] == o.script.src[m.Script:m.Script+d] {
		pos += d
	}
	return o.script.local(pos)
}
