package render

// Decoders for TOON and Compact, for tests only: they read back what the
// encoders write and check it strictly, so that round trips can tell a
// wrong quote or indent from a right one.

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

type textLine struct {
	depth int
	text  string
}

// splitLines checks the whitespace invariants both formats share (LF only,
// no blank lines, no trailing spaces or newline, indentation in units of
// two spaces) and returns the lines with their depths.
func splitLines(doc string) ([]textLine, error) {
	if doc == "" {
		return nil, nil
	}
	var lines []textLine
	for n, s := range strings.Split(doc, "\n") {
		content := strings.TrimLeft(s, " ")
		indent := len(s) - len(content)
		switch {
		case content == "":
			return nil, fmt.Errorf("line %d is blank", n+1)
		case strings.HasSuffix(content, " "):
			return nil, fmt.Errorf("line %d ends with a space: %q", n+1, s)
		case strings.Contains(s, "\r"):
			return nil, fmt.Errorf("line %d has a CR: %q", n+1, s)
		case indent%2 != 0:
			return nil, fmt.Errorf("line %d is indented by %d spaces", n+1, indent)
		case content[0] == '\t':
			return nil, fmt.Errorf("line %d is indented with a tab", n+1)
		}
		lines = append(lines, textLine{depth: indent / 2, text: content})
	}
	return lines, nil
}

// unquote reads the quoted token at the start of s and returns its string
// and the rest of s. It accepts only the escapes the encoders write:
// \\ \" \n \r \t and \uXXXX with lowercase hex for a control character or,
// with extended, for a C1 control, U+007F, U+2028 or U+2029.
func unquote(s string, extended bool) (string, string, error) {
	if s == "" || s[0] != '"' {
		return "", s, errors.New("no opening quote")
	}
	var b strings.Builder
	for i := 1; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), s[i+1:], nil
		case c < 0x20:
			return "", "", fmt.Errorf("raw control character %#x in quotes", c)
		case c == 0x7f && extended:
			return "", "", errors.New("raw DEL in quotes")
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[i:])
			if extended && escapedRune(r) {
				return "", "", fmt.Errorf("raw %U in quotes", r)
			}
			b.WriteString(s[i : i+size])
			i += size
			continue
		case c != '\\':
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(s) {
			break
		}
		switch e := s[i+1]; e {
		case '\\', '"':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			if i+6 > len(s) || strings.ToLower(s[i+2:i+6]) != s[i+2:i+6] {
				return "", "", fmt.Errorf("bad \\u escape in %q", s)
			}
			n, err := strconv.ParseUint(s[i+2:i+6], 16, 16)
			r := rune(n)
			ok := err == nil && (r < 0x20 && r != '\n' && r != '\r' && r != '\t' ||
				extended && (r == 0x7f || escapedRune(r)))
			if !ok {
				return "", "", fmt.Errorf("unexpected escape %q", s[i:i+6])
			}
			b.WriteRune(r)
			i += 6
			continue
		default:
			return "", "", fmt.Errorf("invalid escape \\%c", e)
		}
		i += 2
	}
	return "", "", fmt.Errorf("unterminated string %q", s)
}

// nextUnquoted returns the index of the first occurrence of sep in s outside
// double quotes, or -1.
func nextUnquoted(s, sep string) int {
	in := false
	for i := 0; i < len(s); i++ {
		switch {
		case in && s[i] == '\\':
			i++
		case s[i] == '"':
			in = !in
		case !in && strings.HasPrefix(s[i:], sep):
			return i
		}
	}
	return -1
}

// splitUnquoted splits s at every sep outside double quotes.
func splitUnquoted(s, sep string) []string {
	var parts []string
	for {
		i := nextUnquoted(s, sep)
		if i < 0 {
			return append(parts, s)
		}
		parts = append(parts, s[:i])
		s = s[i+len(sep):]
	}
}

// --- TOON ---

type toonDecoder struct {
	lines []textLine
	pos   int
}

// decodeTOON decodes a document as a strict TOON 4.1 decoder would, and
// also fails on what a conforming encoder may not write: unquoted keys
// outside §7.3's pattern, non-canonical numbers, keyless fields-bearing
// headers in list items.
func decodeTOON(doc string) (value, error) {
	doc = strings.TrimPrefix(doc, "\uFEFF") // a byte-order mark (§12)
	all, err := splitLines(doc)
	if err != nil {
		return value{}, err
	}
	var lines []textLine
	for _, l := range all {
		if l.text[0] == '#' {
			continue // a comment line (§5.1)
		}
		lines = append(lines, l)
	}
	d := &toonDecoder{lines: lines}
	if len(lines) == 0 {
		return value{kind: kObject}, nil
	}
	first := lines[0]
	if first.depth != 0 {
		return value{}, errors.New("the first line is indented")
	}
	var v value
	switch {
	case first.text == "[]":
		v = value{kind: kArray}
		d.pos++
	case first.text[0] == '[':
		h, err := parseHeader(first.text)
		if err != nil {
			return value{}, err
		}
		d.pos++
		v, err = d.headerBody(h, 0)
		if err != nil {
			return value{}, err
		}
	case len(lines) == 1 && nextUnquoted(first.text, ":") < 0:
		v, err = toonPrimitive(first.text)
		d.pos++
	default:
		v, err = d.object(0)
	}
	if err != nil {
		return value{}, err
	}
	if d.pos != len(lines) {
		return value{}, fmt.Errorf("line %q follows the root value", lines[d.pos].text)
	}
	return v, nil
}

// object reads the fields at depth.
func (d *toonDecoder) object(depth int) (value, error) {
	v := value{kind: kObject}
	seen := map[string]bool{}
	for d.pos < len(d.lines) && d.lines[d.pos].depth >= depth {
		l := d.lines[d.pos]
		if l.depth > depth {
			return value{}, fmt.Errorf("line %q is over-indented", l.text)
		}
		key, rest, err := toonKey(l.text)
		if err != nil {
			return value{}, err
		}
		if seen[key] {
			return value{}, fmt.Errorf("key %q repeated", key)
		}
		seen[key] = true
		d.pos++
		var val value
		switch {
		case rest[0] == '[':
			h, err := parseHeader(rest)
			if err != nil {
				return value{}, err
			}
			if val, err = d.headerBody(h, depth); err != nil {
				return value{}, err
			}
		case rest == ":":
			val = value{kind: kObject}
			if d.pos < len(d.lines) && d.lines[d.pos].depth > depth {
				if val, err = d.object(depth + 1); err != nil {
					return value{}, err
				}
			}
		case rest == ": []":
			val = value{kind: kArray}
		case strings.HasPrefix(rest, ": "):
			if val, err = toonPrimitive(rest[2:]); err != nil {
				return value{}, err
			}
		default:
			return value{}, fmt.Errorf("line %q: no colon and space after the key", l.text)
		}
		v.members = append(v.members, member{key: key, val: val})
	}
	return v, nil
}

// toonKey reads the key at the start of a field line, quoted or matching
// §7.3's unquoted pattern, and returns the rest, which starts with ':' or
// '['.
func toonKey(s string) (string, string, error) {
	if s[0] == '"' {
		k, rest, err := unquote(s, false)
		if err != nil {
			return "", "", err
		}
		if bareKey(k) {
			return "", "", fmt.Errorf("key %q needlessly quoted", k)
		}
		if rest == "" || rest[0] != ':' && rest[0] != '[' {
			return "", "", fmt.Errorf("line %q: no colon after the key", s)
		}
		return k, rest, nil
	}
	i := strings.IndexAny(s, ":[")
	if i <= 0 {
		return "", "", fmt.Errorf("line %q has no key", s)
	}
	if !bareKeyPattern.MatchString(s[:i]) {
		return "", "", fmt.Errorf("unquoted key %q", s[:i])
	}
	return s[:i], s[i:], nil
}

type toonHeader struct {
	n      int
	keyed  bool
	fields []column // nil without a field list
	inline *string  // the text after ": ", if any
}

// parseHeader reads [N]{fields}: or [N:]{fields}: with what follows.
func parseHeader(s string) (toonHeader, error) {
	var h toonHeader
	m := bracketSegment.FindStringSubmatch(s)
	if m == nil {
		return h, fmt.Errorf("bad bracket segment in %q", s)
	}
	h.n, _ = strconv.Atoi(m[1])
	h.keyed = m[2] == ":"
	rest := s[len(m[0]):]
	if strings.HasPrefix(rest, "{") {
		var err error
		if h.fields, rest, err = parseFields(rest); err != nil {
			return h, err
		}
	}
	if h.keyed && h.fields == nil {
		return h, fmt.Errorf("keyed header %q without fields", s)
	}
	switch {
	case rest == ":":
	case strings.HasPrefix(rest, ": ") && h.fields == nil && !h.keyed:
		inline := rest[2:]
		h.inline = &inline
	default:
		return h, fmt.Errorf("bad header end %q", rest)
	}
	return h, nil
}

// parseFields reads a field list {a,b{c}} and returns the rest.
func parseFields(s string) ([]column, string, error) {
	s = s[1:] // '{'
	var cols []column
	for {
		var name string
		var err error
		if s != "" && s[0] == '"' {
			if name, s, err = unquote(s, false); err != nil {
				return nil, "", err
			}
		} else {
			i := strings.IndexAny(s, ",{}")
			if i <= 0 || !bareKey(s[:i]) {
				return nil, "", fmt.Errorf("bad field name in %q", s)
			}
			name, s = s[:i], s[i:]
		}
		c := column{name: name}
		if strings.HasPrefix(s, "{") {
			if c.sub, s, err = parseFields(s); err != nil {
				return nil, "", err
			}
		}
		for _, prev := range cols {
			if prev.name == name {
				return nil, "", fmt.Errorf("field %q repeated", name)
			}
		}
		cols = append(cols, c)
		switch {
		case strings.HasPrefix(s, ","):
			s = s[1:]
		case strings.HasPrefix(s, "}"):
			return cols, s[1:], nil
		default:
			return nil, "", fmt.Errorf("bad field list at %q", s)
		}
	}
}

func leafCount(cols []column) int {
	n := 0
	for _, c := range cols {
		if c.sub != nil {
			n += leafCount(c.sub)
		} else {
			n++
		}
	}
	return n
}

// row builds an object from cells in the depth-first order of cols.
func row(cols []column, cells []value) (value, []value) {
	v := value{kind: kObject}
	for _, c := range cols {
		var f value
		if c.sub != nil {
			f, cells = row(c.sub, cells)
		} else {
			f, cells = cells[0], cells[1:]
		}
		v.members = append(v.members, member{key: c.name, val: f})
	}
	return v, cells
}

// cells splits a row or inline array at the delimiter and decodes each
// cell, checking the count.
func cells(s string, want int) ([]value, error) {
	parts := splitUnquoted(s, ",")
	if len(parts) != want {
		return nil, fmt.Errorf("%d cells in %q, want %d", len(parts), s, want)
	}
	vs := make([]value, len(parts))
	for i, p := range parts {
		var err error
		if vs[i], err = toonPrimitive(strings.Trim(p, " ")); err != nil {
			return nil, err
		}
	}
	return vs, nil
}

// headerBody reads what a header at depth opens: inline values, rows,
// entry rows or list items at depth+1.
func (d *toonDecoder) headerBody(h toonHeader, depth int) (value, error) {
	rowLine := func() (string, error) {
		if d.pos >= len(d.lines) || d.lines[d.pos].depth != depth+1 {
			return "", errors.New("missing row")
		}
		d.pos++
		return d.lines[d.pos-1].text, nil
	}
	switch {
	case h.keyed:
		v := value{kind: kObject}
		for range h.n {
			s, err := rowLine()
			if err != nil {
				return value{}, err
			}
			key, rest, err := toonKey(s)
			if err != nil || !strings.HasPrefix(rest, ": ") {
				return value{}, fmt.Errorf("bad entry row %q: %v", s, err)
			}
			cs, err := cells(rest[2:], leafCount(h.fields))
			if err != nil {
				return value{}, err
			}
			o, _ := row(h.fields, cs)
			v.members = append(v.members, member{key: key, val: o})
		}
		return v, nil
	case h.fields != nil:
		v := value{kind: kArray}
		for range h.n {
			s, err := rowLine()
			if err != nil {
				return value{}, err
			}
			if nextUnquoted(s, ":") >= 0 {
				return value{}, fmt.Errorf("row %q reads as a key-value line", s)
			}
			cs, err := cells(s, leafCount(h.fields))
			if err != nil {
				return value{}, err
			}
			o, _ := row(h.fields, cs)
			v.items = append(v.items, o)
		}
		return v, nil
	case h.inline != nil:
		cs, err := cells(*h.inline, h.n)
		return value{kind: kArray, items: cs}, err
	}
	v := value{kind: kArray}
	for range h.n {
		if d.pos >= len(d.lines) || d.lines[d.pos].depth != depth+1 {
			return value{}, errors.New("missing list item")
		}
		item, err := d.item(depth + 1)
		if err != nil {
			return value{}, err
		}
		v.items = append(v.items, item)
	}
	return v, nil
}

// item reads the list item at depth.
func (d *toonDecoder) item(depth int) (value, error) {
	l := d.lines[d.pos]
	if l.text == "-" {
		d.pos++
		return value{kind: kObject}, nil
	}
	if !strings.HasPrefix(l.text, "- ") {
		return value{}, fmt.Errorf("list item %q has no marker", l.text)
	}
	content := l.text[2:]
	if content[0] == '[' {
		h, err := parseHeader(content)
		if err != nil {
			return value{}, err
		}
		if h.fields != nil {
			return value{}, fmt.Errorf("fields-bearing header %q as a list item", content)
		}
		d.pos++
		return d.headerBody(h, depth)
	}
	if nextUnquoted(content, ":") >= 0 {
		// An object: its fields stand at depth+1, the first on this line.
		d.lines[d.pos] = textLine{depth: depth + 1, text: content}
		return d.object(depth + 1)
	}
	d.pos++
	return toonPrimitive(content)
}

var (
	bareKeyPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)
	bracketSegment = regexp.MustCompile(`^\[(0|[1-9][0-9]*)(:?)\]`)
	toonNumber     = regexp.MustCompile(`(?i)^-?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?$`)
	leadingZeros   = regexp.MustCompile(`^-?0[0-9]`)
	canonicalNum   = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$`)
	exponentNum    = regexp.MustCompile(`^-?[1-9](\.[0-9]*[1-9])?e[+-](0|[1-9][0-9]*)$`)
	fractionZeros  = regexp.MustCompile(`^-?0\.(0*)`)
)

// toonPrimitive decodes one primitive token (§4) and checks that a number
// is in canonical form (§2).
func toonPrimitive(tok string) (value, error) {
	if tok == "" {
		return value{kind: kString}, nil
	}
	if tok[0] == '"' {
		s, rest, err := unquote(tok, false)
		if err == nil && rest != "" {
			err = fmt.Errorf("%q after a quoted token", rest)
		}
		return value{kind: kString, text: s}, err
	}
	switch tok {
	case "true":
		return value{kind: kTrue}, nil
	case "false":
		return value{kind: kFalse}, nil
	case "null":
		return value{kind: kNull}, nil
	}
	if !toonNumber.MatchString(tok) || leadingZeros.MatchString(tok) {
		return value{kind: kString, text: tok}, nil
	}
	return value{kind: kNumber, text: tok}, checkCanonical(tok)
}

// checkCanonical fails on a number that is not in §2's canonical form.
func checkCanonical(tok string) error {
	if tok == "-0" {
		return errors.New("-0 is not canonical")
	}
	if canonicalNum.MatchString(tok) {
		intDigits := len(strings.TrimPrefix(strings.SplitN(tok, ".", 2)[0], "-"))
		if intDigits > 21 {
			return fmt.Errorf("%s is 1e21 or more without an exponent", tok)
		}
		if m := fractionZeros.FindStringSubmatch(tok); m != nil && len(m[1]) > 5 {
			return fmt.Errorf("%s is below 1e-6 without an exponent", tok)
		}
		return nil
	}
	m := exponentNum.FindStringSubmatch(tok)
	if m == nil {
		return fmt.Errorf("%s is not canonical", tok)
	}
	exp, _ := new(big.Int).SetString(tok[strings.IndexByte(tok, 'e')+1:], 10)
	if exp.Cmp(big.NewInt(-7)) > 0 && exp.Cmp(big.NewInt(21)) < 0 {
		return fmt.Errorf("%s needs no exponent", tok)
	}
	return nil
}

// --- Compact ---

type compactDecoder struct {
	lines []textLine
	pos   int
}

// decodeCompact reads a Compact document back, failing wherever its reading
// would be ambiguous.
func decodeCompact(doc string) (value, error) {
	lines, err := splitLines(doc)
	if err != nil {
		return value{}, err
	}
	if len(lines) == 0 {
		return value{}, errors.New("empty document")
	}
	d := &compactDecoder{lines: lines}
	if lines[0].depth != 0 {
		return value{}, errors.New("the first line is indented")
	}
	var v value
	if len(lines) == 1 && !isListItem(lines[0].text) && !isMember(lines[0].text) {
		v, err = compactInline(lines[0].text)
		d.pos++
	} else {
		v, err = d.block(0)
	}
	if err != nil {
		return value{}, err
	}
	if d.pos != len(lines) {
		return value{}, fmt.Errorf("line %q follows the root value", lines[d.pos].text)
	}
	return v, nil
}

func isListItem(s string) bool { return strings.HasPrefix(s, "- ") }

// isMember reports whether s is a "key: value" or "key:" line.
func isMember(s string) bool {
	_, _, err := compactKey(s)
	return err == nil
}

// compactKey splits a member line into its key and what follows the colon
// ("" for a block, " value" otherwise).
func compactKey(s string) (string, string, error) {
	if s[0] == '"' {
		k, rest, err := unquote(s, true)
		if err != nil || !strings.HasPrefix(rest, ":") {
			return "", "", errors.New("not a member")
		}
		if !compactKeyQuoted(k) {
			return "", "", fmt.Errorf("key %q needlessly quoted", k)
		}
		return k, rest[1:], nil
	}
	i := strings.Index(s, ": ")
	if i < 0 {
		if !strings.HasSuffix(s, ":") {
			return "", "", errors.New("not a member")
		}
		i = len(s) - 1
	}
	if compactKeyQuoted(s[:i]) {
		return "", "", fmt.Errorf("key %q not quoted", s[:i])
	}
	return s[:i], s[i+1:], nil
}

// block reads the value whose first line is at depth: a list, an object,
// or one inline line.
func (d *compactDecoder) block(depth int) (value, error) {
	l := d.lines[d.pos]
	if l.depth != depth {
		return value{}, fmt.Errorf("line %q at depth %d, want %d", l.text, l.depth, depth)
	}
	switch {
	case isListItem(l.text):
		v := value{kind: kArray}
		for d.pos < len(d.lines) && d.lines[d.pos].depth == depth && isListItem(d.lines[d.pos].text) {
			// The item stands one level deeper, its first line after "- ".
			d.lines[d.pos] = textLine{depth: depth + 1, text: d.lines[d.pos].text[2:]}
			item, err := d.block(depth + 1)
			if err != nil {
				return value{}, err
			}
			v.items = append(v.items, item)
		}
		if len(v.items) == 1 && v.items[0].primitive() {
			return v, nil
		}
		if inline(&v) {
			return value{}, fmt.Errorf("array of %d items as a list", len(v.items))
		}
		return v, nil
	case isMember(l.text):
		v := value{kind: kObject}
		for d.pos < len(d.lines) && d.lines[d.pos].depth >= depth {
			l := d.lines[d.pos]
			if l.depth > depth || isListItem(l.text) {
				return value{}, fmt.Errorf("line %q inside an object", l.text)
			}
			key, rest, err := compactKey(l.text)
			if err != nil {
				return value{}, fmt.Errorf("line %q: %v", l.text, err)
			}
			d.pos++
			var val value
			if rest == "" {
				if d.pos >= len(d.lines) {
					return value{}, fmt.Errorf("nothing under %q", l.text)
				}
				val, err = d.block(depth + 1)
				if err == nil && !(val.kind == kObject && len(val.members) > 0 || val.kind == kArray && !inline(&val)) {
					err = fmt.Errorf("inline value under %q", l.text)
				}
			} else if strings.HasPrefix(rest, " ") {
				val, err = compactInline(rest[1:])
			} else {
				err = fmt.Errorf("no space after the colon in %q", l.text)
			}
			if err != nil {
				return value{}, err
			}
			v.members = append(v.members, member{key: key, val: val})
		}
		return v, nil
	}
	d.pos++
	return compactInline(l.text)
}

// compactInline reads a one-line value: {}, [], an inline array or a
// primitive.
func compactInline(s string) (value, error) {
	switch s {
	case "{}":
		return value{kind: kObject}, nil
	case "[]":
		return value{kind: kArray}, nil
	}
	parts := splitUnquoted(s, ", ")
	if len(parts) == 1 {
		return compactScalar(s)
	}
	v := value{kind: kArray}
	for _, p := range parts {
		item, err := compactScalar(p)
		if err != nil {
			return value{}, err
		}
		v.items = append(v.items, item)
	}
	return v, nil
}

var (
	jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
	numberLike = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)
)

func compactScalar(tok string) (value, error) {
	if tok == "" {
		return value{}, errors.New("empty token")
	}
	if tok[0] == '"' {
		s, rest, err := unquote(tok, true)
		if err == nil && rest != "" {
			err = fmt.Errorf("%q after a quoted token", rest)
		}
		if err == nil && !compactQuoted(s) {
			err = fmt.Errorf("string %q needlessly quoted", s)
		}
		return value{kind: kString, text: s}, err
	}
	switch tok {
	case "true":
		return value{kind: kTrue}, nil
	case "false":
		return value{kind: kFalse}, nil
	case "null":
		return value{kind: kNull}, nil
	}
	if jsonNumber.MatchString(tok) {
		return value{kind: kNumber, text: tok}, nil
	}
	if strings.EqualFold(tok, "true") || strings.EqualFold(tok, "false") || strings.EqualFold(tok, "null") ||
		numberLike.MatchString(tok) {
		return value{}, fmt.Errorf("unquoted %q reads as a literal", tok)
	}
	return value{kind: kString, text: tok}, nil
}

// --- comparison ---

// sameNumber reports whether two JSON or TOON number texts have the same
// mathematical value.
func sameNumber(a, b string) bool {
	if a == b {
		return true
	}
	if ea, eb := exponentOf(a), exponentOf(b); ea.CmpAbs(big.NewInt(1000)) <= 0 && eb.CmpAbs(big.NewInt(1000)) <= 0 {
		ra, ok1 := new(big.Rat).SetString(a)
		rb, ok2 := new(big.Rat).SetString(b)
		return ok1 && ok2 && ra.Cmp(rb) == 0
	}
	return numberKey(a) == numberKey(b)
}

func exponentOf(s string) *big.Int {
	e := new(big.Int)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e.SetString(strings.TrimPrefix(s[i+1:], "+"), 10)
	}
	return e
}

// numberKey is sign, significant digits and the exponent of the last
// digit: equal for equal values.
func numberKey(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, _, _ := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	exp := exponentOf(s)
	exp.Sub(exp, big.NewInt(int64(len(frac))))
	for strings.HasSuffix(digits, "0") {
		digits = digits[:len(digits)-1]
		exp.Add(exp, big.NewInt(1))
	}
	if digits == "" {
		return "0"
	}
	if neg {
		digits = "-" + digits
	}
	return digits + "e" + exp.String()
}

// toAny turns a value into what encoding/json decodes with UseNumber.
func toAny(v *value) any {
	switch v.kind {
	case kNull:
		return nil
	case kFalse:
		return false
	case kTrue:
		return true
	case kNumber:
		return numberText(v.text)
	case kString:
		return v.text
	case kObject:
		m := make(map[string]any, len(v.members))
		for i := range v.members {
			m[v.members[i].key] = toAny(&v.members[i].val)
		}
		return m
	}
	a := make([]any, len(v.items))
	for i := range v.items {
		a[i] = toAny(&v.items[i])
	}
	return a
}

// numberText marks a number in toAny's result.
type numberText string

// equalAny compares a toAny result with an encoding/json one (numbers as
// json.Number text), objects without regard to key order.
func equalAny(got, want any) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("got %v, want object %v", got, want)
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("key %q missing", k)
			}
			if err := equalAny(gv, wv); err != nil {
				return fmt.Errorf("%q: %w", k, err)
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("got %v, want array %v", got, want)
		}
		for i := range w {
			if err := equalAny(g[i], w[i]); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	case fmt.Stringer: // json.Number
		g, ok := got.(numberText)
		if !ok || !sameNumber(string(g), w.String()) {
			return fmt.Errorf("got %v, want number %v", got, want)
		}
		return nil
	}
	if got != want {
		return fmt.Errorf("got %#v, want %#v", got, want)
	}
	return nil
}

// equalValue compares two values exactly, key order and number text
// included.
func equalValue(got, want *value) error {
	if got.kind != want.kind || got.text != want.text ||
		len(got.members) != len(want.members) || len(got.items) != len(want.items) {
		return fmt.Errorf("got %s, want %s", describe(got), describe(want))
	}
	for i := range want.members {
		if got.members[i].key != want.members[i].key {
			return fmt.Errorf("key %d is %q, want %q", i, got.members[i].key, want.members[i].key)
		}
		if err := equalValue(&got.members[i].val, &want.members[i].val); err != nil {
			return fmt.Errorf("%q: %w", want.members[i].key, err)
		}
	}
	for i := range want.items {
		if err := equalValue(&got.items[i], &want.items[i]); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return nil
}

func describe(v *value) string {
	names := [...]string{"null", "false", "true", "number", "string", "object", "array"}
	return fmt.Sprintf("%s %q (%d members, %d items)", names[v.kind], v.text, len(v.members), len(v.items))
}
