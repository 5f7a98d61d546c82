package whatwg

import (
	"strings"
	"unicode/utf8"
)

// Pair is one name-value pair of an application/x-www-form-urlencoded
// list.
type Pair struct{ Name, Value string }

// ParseForm is the application/x-www-form-urlencoded parser: pairs split
// on '&' and the first '=', '+' read as a space, percent-escapes decoded,
// bytes decoded as UTF-8 with replacement. max bounds the number of pairs
// read: ParseForm reports false when s holds more.
func ParseForm(s string, max int) ([]Pair, bool) {
	var out []Pair
	for seq := range strings.SplitSeq(s, "&") {
		if seq == "" {
			continue
		}
		if len(out) >= max {
			return nil, false
		}
		name, value, _ := strings.Cut(seq, "=")
		out = append(out, Pair{Name: formDecode(name), Value: formDecode(value)})
	}
	return out, true
}

func formDecode(s string) string {
	s = strings.ReplaceAll(s, "+", " ")
	if !strings.Contains(s, "%") && isASCII(s) {
		return s
	}
	return string(DecodeUTF8(nil, percentDecode(s)))
}

// SerializeForm is the application/x-www-form-urlencoded serialiser.
func SerializeForm(pairs []Pair) string {
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		formEncode(&b, p.Name)
		b.WriteByte('=')
		formEncode(&b, p.Value)
	}
	return b.String()
}

func formEncode(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ':
			b.WriteByte('+')
		case c >= 0x80 || formSet(rune(c)):
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
		default:
			b.WriteByte(c)
		}
	}
}

// CompareUTF16 orders two strings by their UTF-16 code units, as
// JavaScript compares strings (Go compares code points, which differs for
// characters above U+FFFF against U+E000-U+FFFF).
func CompareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := firstRune(a)
		rb, nb := firstRune(b)
		if ra != rb {
			ka, kb := utf16Key(ra), utf16Key(rb)
			if ka < kb {
				return -1
			}
			return 1
		}
		a, b = a[na:], b[nb:]
	}
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	}
	return 1
}

func firstRune(s string) (rune, int) {
	if s[0] < utf8.RuneSelf {
		return rune(s[0]), 1
	}
	return utf8.DecodeRuneInString(s)
}

// utf16Key maps a code point so that code point order becomes UTF-16
// order: supplementary characters (surrogate pairs, 0xD800...) sort after
// U+D7FF and before U+E000.
func utf16Key(r rune) rune {
	switch {
	case r >= 0x10000:
		return 0xD800 + (r - 0x10000)
	case r >= 0xE000:
		return r + 0x110000
	}
	return r
}
