package vm

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
	"golang.org/x/text/cases"
	"golang.org/x/text/language"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// The text built-ins whose output can outgrow their input many times over
// (normalize, the case mappings, encodeURI, encodeURIComponent, escape),
// whose work grows faster than their input (localeCompare's collation,
// goja's search for a long needle in a non-ASCII string, quadratic when
// the needle's bytes match at odd offsets), or that loop over a string
// natively (its iterator) are guarded here. Each converts its arguments
// once, bounds what it will produce or do before the native step, and
// hands the converted primitives to the original, or does the work itself
// in steps that are checkpoints.

// Expansion factors, in UTF-16 code units of output per unit of input.
const (
	// maxCaseExpansion: a full case mapping turns one unit into at most
	// three (U+0390 upper-cases to three code points; ß to SS).
	maxCaseExpansion = 3
	// maxURIExpansion: encodeURI writes a BMP character above U+07FF as
	// three %XX escapes.
	maxURIExpansion = 9
	// maxEscapeExpansion: escape writes a unit above U+00FF as %uXXXX.
	maxEscapeExpansion = 6
	// maxSearchWork is how many unit comparisons a string search may cost
	// in goja's own code (needle length times the positions it can start
	// at) before the sandbox searches itself, in linear time.
	maxSearchWork = 1 << 24
	// textChunk is how many bytes a guard transforms between checkpoints.
	textChunk = 32 << 10
)

// guardText installs the text guards on String.prototype and the global
// functions.
func (r *run) guardText() {
	sp := r.in.stringProto
	r.replaceData(sp, "normalize", r.newFunction("normalize", 0, r.stringNormalize))
	for _, m := range []struct {
		name  string
		upper bool
	}{{"toUpperCase", true}, {"toLocaleUpperCase", true}, {"toLowerCase", false}, {"toLocaleLowerCase", false}} {
		r.wrap(sp, m.name, r.caseMapping("String.prototype."+m.name, m.upper))
	}
	r.wrap(sp, "localeCompare", r.localeCompare)
	r.wrap(object(r.std, "Number"), "parseFloat", r.parseFloat)
	r.wrap(sp, "indexOf", r.stringIndexOf)
	r.wrap(sp, "includes", r.stringIncludes)
	r.wrap(sp, "lastIndexOf", r.stringLastIndexOf)

	// The string iterator's next is the step of every native loop over a
	// string's characters (spread, Array.from, new Set, Promise.all...):
	// make it a checkpoint, as the array iterator's is.
	iter := native(sp.GetSymbol(goja.SymIterator))(goja.FunctionCall{This: r.rt.ToValue("")}).(*goja.Object)
	r.wrap(iter.Prototype(), "next", func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			r.checkpoint()
			return orig(call)
		}
	})

}

// guardGlobalFunctions guards the global functions encodeURI,
// encodeURIComponent, escape and parseFloat, when the plan first names one
// of them. goja's global object keeps its originals.
func (r *run) guardGlobalFunctions() {
	for _, g := range []struct {
		name  string
		guard func(nativeFunc) nativeFunc
	}{
		{"encodeURI", r.uriEncoder("encodeURI", uriReserved)},
		{"encodeURIComponent", r.uriEncoder("encodeURIComponent", "")},
		{"escape", r.escapeGuard},
		{"parseFloat", r.parseFloat},
	} {
		r.setGlobal(g.name, r.newFunction(g.name, 1, g.guard(native(r.std.Get(g.name)))))
	}
}

// parseFloatDirect is the longest string parseFloat is left to goja's
// original for, which finds the number with a regular expression at about
// 65 ns a character (a second for a string at balanced's string cap).
const parseFloatDirect = 4 << 10

// parseFloat guards parseFloat and Number.parseFloat: a long string's
// numeric prefix is found by a scan and parsed as the original parses it.
func (r *run) parseFloat(orig nativeFunc) nativeFunc {
	return func(call goja.FunctionCall) goja.Value {
		s := r.toStr(call.Argument(0))
		str := s.String()
		if len(str) <= parseFloatDirect {
			return orig(goja.FunctionCall{This: call.This, Arguments: []goja.Value{s}})
		}
		r.checkpoint()
		// goja trims as its strings do: Go's white space for ASCII text,
		// ECMAScript's otherwise.
		if isASCII(str) {
			str = strings.TrimLeftFunc(str, unicode.IsSpace)
		} else {
			str = strings.TrimLeft(str, parser.WhitespaceChars)
		}
		switch p := decimalPrefix(str); p {
		case "", "+", "-":
			return goja.NaN()
		case "Infinity", "+Infinity":
			return goja.PositiveInf()
		case "-Infinity":
			return goja.NegativeInf()
		default:
			f, err := strconv.ParseFloat(p, 64)
			if ne, ok := err.(*strconv.NumError); err != nil && (!ok || ne.Err != strconv.ErrRange) {
				return goja.NaN()
			}
			return r.rt.ToValue(f)
		}
	}
}

// decimalPrefix is the longest prefix of s that goja's parseFloat
// recognises: [+-]?(Infinity|[0-9]*\.?[0-9]*([eE][+-]?[0-9]+)?).
func decimalPrefix(s string) string {
	digits := func(i int) int {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if strings.HasPrefix(s[i:], "Infinity") {
		return s[:i+len("Infinity")]
	}
	i = digits(i)
	if i < len(s) && s[i] == '.' {
		i = digits(i + 1)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if k := digits(j); k > j {
			i = k
		}
	}
	return s[:i]
}

// utf16Units counts the UTF-16 code units of UTF-8 text, byte by byte, so
// that chunk boundaries inside a character do not matter: a lead byte of
// one to three bytes is one unit, of four bytes two.
func utf16Units(b []byte) int64 {
	var n int64
	for _, c := range b {
		switch {
		case c < 0x80, c >= 0xC0 && c < 0xF0:
			n++
		case c >= 0xF0:
			n += 2
		}
	}
	return n
}

// stringNormalize replaces String.prototype.normalize. goja normalizes in
// one native step and NFKD expands a unit up to eighteen times (U+FDFA);
// this writes the normalized text segment by segment, counting it against
// the string cap and checking the stop flag as it goes.
func (r *run) stringNormalize(call goja.FunctionCall) goja.Value {
	const what = "String.prototype.normalize"
	s := r.thisString(call.This, what)
	form := "NFC"
	if f := call.Argument(0); !goja.IsUndefined(f) {
		form = r.toStr(f).String()
	}
	var f norm.Form
	switch form {
	case "NFC":
		f = norm.NFC
	case "NFD":
		f = norm.NFD
	case "NFKC":
		f = norm.NFKC
	case "NFKD":
		f = norm.NFKD
	default:
		r.throwRange("The normalization form should be one of NFC, NFD, NFKC, NFKD")
	}
	str := s.String()
	if isASCII(str) {
		return s
	}
	var it norm.Iter
	it.InitString(f, str)
	var b strings.Builder
	var units int64
	for i := 0; !it.Done(); i++ {
		if i%checkpointEvery == 0 {
			r.checkpoint()
		}
		seg := it.Next()
		units += utf16Units(seg)
		r.checkUnits(units, what)
		b.Write(seg)
	}
	return r.rt.ToValue(b.String())
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// caseMapping guards the case mappings: a string that could outgrow the
// string cap (three units per unit) is mapped once to count its result,
// in chunks that are checkpoints, before the original maps it.
func (r *run) caseMapping(what string, upper bool) func(nativeFunc) nativeFunc {
	return func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			s := r.thisString(call.This, what)
			if int64(s.Length()) > r.caps.stringUnits/maxCaseExpansion {
				caser := cases.Lower(language.Und)
				if upper {
					caser = cases.Upper(language.Und)
				}
				r.checkUnits(r.transformedUnits(s.String(), caser), what)
			}
			return orig(goja.FunctionCall{This: s})
		}
	}
}

// transformedUnits counts the UTF-16 units t makes of s, a chunk at a time,
// and stops (throwing) as soon as they pass the string cap.
func (r *run) transformedUnits(s string, t transform.Transformer) int64 {
	rd := transform.NewReader(strings.NewReader(s), t)
	buf := make([]byte, textChunk)
	var units int64
	for {
		r.checkpoint()
		n, err := rd.Read(buf)
		units += utf16Units(buf[:n])
		if units > r.caps.stringUnits || err == io.EOF {
			return units
		}
		if err != nil {
			// Not text the transformer can count: leave it to the original.
			return 0
		}
	}
}

// localeCompare caps the strings String.prototype.localeCompare collates:
// goja decomposes both (NFD) and collates them in one native step, at
// about a quarter of a microsecond and 75 bytes per character.
func (r *run) localeCompare(orig nativeFunc) nativeFunc {
	const what = "String.prototype.localeCompare"
	return func(call goja.FunctionCall) goja.Value {
		s := r.thisString(call.This, what)
		that := r.toStr(call.Argument(0))
		if n := int64(s.Length()) + int64(that.Length()); n > r.caps.collateUnits {
			r.throwRange(fmt.Sprintf("%s: strings of %d characters together exceed the sandbox limit of %d; compare shorter strings, or use < and > for an ordering by code units", what, n, r.caps.collateUnits))
		}
		return orig(goja.FunctionCall{This: s, Arguments: []goja.Value{that}})
	}
}

// uriReserved are the characters encodeURI leaves alone on top of
// encodeURIComponent's.
const uriReserved = ";/?:@&=+$,#"

// uriEncoder guards encodeURI and encodeURIComponent: the length of the
// result (three characters per UTF-8 byte of a character that is
// escaped) is counted before the original builds it.
func (r *run) uriEncoder(what, keep string) func(nativeFunc) nativeFunc {
	unescaped := func(c uint16) bool {
		return c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("-_.!~*'()"+keep, byte(c)) >= 0)
	}
	return func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			s := r.toStr(call.Argument(0))
			n := s.Length()
			if int64(n) > r.caps.stringUnits/maxURIExpansion {
				var units int64
				for i := 0; i < n; i++ {
					if i%textChunk == 0 {
						r.checkpoint()
						r.checkUnits(units, what)
					}
					switch c := s.CharAt(i); {
					case unescaped(c):
						units++
					case c < 0x80:
						units += 3
					case c < 0x800:
						units += 6
					case c >= 0xD800 && c < 0xDC00 && i+1 < n && s.CharAt(i+1) >= 0xDC00 && s.CharAt(i+1) < 0xE000:
						units += 12
						i++
					default:
						units += 9 // a lone surrogate is the original's URIError
					}
				}
				r.checkUnits(units, what)
			}
			return orig(goja.FunctionCall{This: call.This, Arguments: []goja.Value{s}})
		}
	}
}

// escapeGuard guards escape, whose result is up to six times its input.
func (r *run) escapeGuard(orig nativeFunc) nativeFunc {
	const what = "escape"
	return func(call goja.FunctionCall) goja.Value {
		s := r.toStr(call.Argument(0))
		n := s.Length()
		if int64(n) > r.caps.stringUnits/maxEscapeExpansion {
			var units int64
			for i := 0; i < n; i++ {
				if i%textChunk == 0 {
					r.checkpoint()
					r.checkUnits(units, what)
				}
				switch c := s.CharAt(i); {
				case c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("@*_+-./", byte(c)) >= 0):
					units++
				case c <= 0xFF:
					units += 3
				default:
					units += 6
				}
			}
			r.checkUnits(units, what)
		}
		return orig(goja.FunctionCall{This: call.This, Arguments: []goja.Value{s}})
	}
}

// searchIsCostly reports whether goja's search for a needle of m units in
// a string of n could cost more than maxSearchWork comparisons.
func searchIsCostly(n, m int) bool {
	return m > 0 && n > m && int64(m)*int64(n-m) > maxSearchWork
}

// stringIndexOf guards String.prototype.indexOf: a costly search runs in
// the sandbox's own linear-time search.
func (r *run) stringIndexOf(orig nativeFunc) nativeFunc {
	const what = "String.prototype.indexOf"
	return func(call goja.FunctionCall) goja.Value {
		s := r.thisString(call.This, what)
		sub := r.toStr(call.Argument(0))
		start := min(max(toIntegerOrInfinity(call.Argument(1)), 0), int64(s.Length()))
		if searchIsCostly(s.Length()-int(start), sub.Length()) {
			return r.rt.ToValue(r.indexFrom(s, sub, int(start)))
		}
		return orig(goja.FunctionCall{This: s, Arguments: []goja.Value{sub, r.rt.ToValue(start)}})
	}
}

// stringIncludes guards String.prototype.includes like indexOf.
func (r *run) stringIncludes(orig nativeFunc) nativeFunc {
	const what = "String.prototype.includes"
	return func(call goja.FunctionCall) goja.Value {
		s := r.thisString(call.This, what)
		if r.isRegExp(call.Argument(0)) {
			r.throwType("First argument to String.prototype.includes must not be a regular expression")
		}
		sub := r.toStr(call.Argument(0))
		start := min(max(toIntegerOrInfinity(call.Argument(1)), 0), int64(s.Length()))
		if searchIsCostly(s.Length()-int(start), sub.Length()) {
			return r.rt.ToValue(r.indexFrom(s, sub, int(start)) >= 0)
		}
		return orig(goja.FunctionCall{This: s, Arguments: []goja.Value{sub, r.rt.ToValue(start)}})
	}
}

// stringLastIndexOf guards String.prototype.lastIndexOf like indexOf.
func (r *run) stringLastIndexOf(orig nativeFunc) nativeFunc {
	const what = "String.prototype.lastIndexOf"
	return func(call goja.FunctionCall) goja.Value {
		s := r.thisString(call.This, what)
		sub := r.toStr(call.Argument(0))
		n := int64(s.Length())
		start := n
		if p := call.Argument(1).ToNumber(); !goja.IsNaN(p) {
			start = min(max(toIntegerOrInfinity(p), 0), n)
		}
		end := min(int(start)+sub.Length(), s.Length())
		if searchIsCostly(end, sub.Length()) {
			return r.rt.ToValue(r.lastIndexBefore(s, sub, int(start)))
		}
		return orig(goja.FunctionCall{This: s, Arguments: []goja.Value{sub, r.rt.ToValue(start)}})
	}
}

// units copies the code units of s from..to, checking the stop flag.
func (r *run) units(s goja.String, from, to int) []uint16 {
	u := make([]uint16, to-from)
	for i := range u {
		if i%textChunk == 0 {
			r.checkpoint()
		}
		u[i] = s.CharAt(from + i)
	}
	return u
}

// indexFrom is the first index at or after from where sub occurs in s, or
// -1: Knuth-Morris-Pratt over code units, linear in both lengths.
func (r *run) indexFrom(s, sub goja.String, from int) int {
	i := r.findUnits(r.units(s, from, s.Length()), r.units(sub, 0, sub.Length()))
	if i < 0 {
		return -1
	}
	return from + i
}

// lastIndexBefore is the last index at or before start where sub occurs
// in s, or -1: the first match of the reversed needle in the reversed
// prefix that can hold it.
func (r *run) lastIndexBefore(s, sub goja.String, start int) int {
	m := sub.Length()
	hay := r.units(s, 0, min(start+m, s.Length()))
	needle := r.units(sub, 0, m)
	slices.Reverse(hay)
	slices.Reverse(needle)
	i := r.findUnits(hay, needle)
	if i < 0 {
		return -1
	}
	return len(hay) - i - m
}

// findUnits is the first index of needle in hay, or -1 (needle is not
// empty).
func (r *run) findUnits(hay, needle []uint16) int {
	return r.matchUnits(hay, needle, func(int) bool { return false })
}

// matchUnits reports each non-overlapping match of needle in hay, left to
// right, to found, until found returns false; it returns the index of the
// match found stopped at, or -1. needle is not empty.
func (r *run) matchUnits(hay, needle []uint16, found func(int) bool) int {
	m := len(needle)
	fail := make([]int, m)
	for i, k := 1, 0; i < m; i++ {
		for k > 0 && needle[i] != needle[k] {
			k = fail[k-1]
		}
		if needle[i] == needle[k] {
			k++
		}
		fail[i] = k
	}
	k := 0
	for i, c := range hay {
		if i%textChunk == 0 {
			r.checkpoint()
		}
		for k > 0 && c != needle[k] {
			k = fail[k-1]
		}
		if c == needle[k] {
			k++
		}
		if k == m {
			at := i - m + 1
			if !found(at) {
				return at
			}
			k = 0 // the next match starts after this one
		}
	}
	return -1
}
