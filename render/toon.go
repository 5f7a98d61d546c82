package render

import (
	"strconv"
	"strings"
)

// The TOON encoder follows spec version 4.1 with its default options: two
// spaces per level and comma as the document delimiter, hence as the active
// delimiter of every header. Section numbers below are the spec's.

// delimiter is the document and active delimiter.
const delimiter = ','

// toonEncoder writes one document. It is used once.
type toonEncoder struct {
	b *strings.Builder
	// hyphen is set when the next line is the hyphen line of a list item
	// whose object fields stand one level deeper than the hyphen (§10).
	hyphen bool
	// keyIndex holds, for objects whose keys a tabular detection had to
	// look up out of order, a key → position index built once.
	keyIndex map[*value]map[string]int
}

func writeTOON(b *strings.Builder, v *value) {
	e := &toonEncoder{b: b}
	switch v.kind {
	case kObject:
		if len(v.members) == 0 {
			return // an empty root object is an empty document (§8)
		}
		if cols, ok := e.keyedShape(v); ok {
			e.writeKeyed(v, cols, 0)
			return
		}
		for i := range v.members {
			e.writeField(&v.members[i], 0)
		}
	case kArray:
		e.writeArray(v, 0, atRoot)
	case kString:
		// A document must not start with U+FEFF (§12): a decoder would take
		// it for a byte-order mark.
		if strings.HasPrefix(v.text, "\uFEFF") {
			writeQuoted(b, v.text, false)
			return
		}
		e.writePrimitive(v)
	default:
		e.writePrimitive(v)
	}
}

// line starts a line at the given depth. On the hyphen line of a list-item
// object the last indentation unit is the "- " marker.
func (e *toonEncoder) line(depth int) {
	if e.b.Len() > 0 {
		e.b.WriteByte('\n')
	}
	indent := depth
	if e.hyphen {
		indent--
	}
	for range indent {
		e.b.WriteString("  ")
	}
	if e.hyphen {
		e.hyphen = false
		e.b.WriteString("- ")
	}
}

// writeField writes an object member at depth (§8, §9).
func (e *toonEncoder) writeField(m *member, depth int) {
	e.line(depth)
	writeKey(e.b, m.key)
	v := &m.val
	switch v.kind {
	case kObject:
		if len(v.members) == 0 {
			e.b.WriteByte(':')
			return
		}
		if cols, ok := e.keyedShape(v); ok {
			e.writeKeyed(v, cols, depth)
			return
		}
		e.b.WriteByte(':')
		for i := range v.members {
			e.writeField(&v.members[i], depth+1)
		}
	case kArray:
		e.writeArray(v, depth, atField)
	default:
		e.b.WriteString(": ")
		e.writePrimitive(v)
	}
}

// position is where an array stands; it decides the forms open to it.
type position uint8

const (
	atRoot  position = iota // [] when empty; tabular allowed
	atField                 // key: [] when empty; tabular allowed
	atItem                  // - [0]: when empty; list form only (§9.4)
)

// writeArray writes the header of an array whose key, if any, is written,
// and its items at depth+1.
func (e *toonEncoder) writeArray(v *value, depth int, pos position) {
	n := len(v.items)
	if n == 0 {
		switch pos {
		case atRoot:
			e.b.WriteString("[]")
		case atField:
			e.b.WriteString(": []")
		default:
			e.b.WriteString("[0]:")
		}
		return
	}
	if allPrimitive(v.items) { // inline form (§9.1)
		e.writeLength(n, false)
		e.b.WriteString(": ")
		for i := range v.items {
			if i > 0 {
				e.b.WriteByte(delimiter)
			}
			e.writePrimitive(&v.items[i])
		}
		return
	}
	if pos != atItem {
		if objs, ok := objects(v.items); ok {
			if cols, ok := e.uniformShape(objs); ok { // tabular form (§9.3)
				e.writeLength(n, false)
				writeColumns(e.b, cols)
				e.b.WriteByte(':')
				for _, o := range objs {
					e.line(depth + 1)
					e.writeCells(o, cols, true)
				}
				return
			}
		}
	}
	e.writeLength(n, false) // list form (§9.2, §9.4)
	e.b.WriteByte(':')
	for i := range v.items {
		e.writeItem(&v.items[i], depth+1)
	}
}

// writeItem writes one list item at depth (§9.4, §10).
func (e *toonEncoder) writeItem(v *value, depth int) {
	switch v.kind {
	case kObject:
		if len(v.members) == 0 {
			e.line(depth)
			e.b.WriteByte('-')
			return
		}
		// The fields stand at depth+1, the first on the hyphen line. A
		// tabular or keyed first field puts its header there and its rows
		// at depth+2, which is what writeField does one level deeper.
		e.hyphen = true
		for i := range v.members {
			e.writeField(&v.members[i], depth+1)
		}
	case kArray:
		e.line(depth)
		e.b.WriteString("- ")
		e.writeArray(v, depth, atItem)
	default:
		e.line(depth)
		e.b.WriteString("- ")
		e.writePrimitive(v)
	}
}

// writeKeyed writes the keyed tabular form of v after its key, if any,
// with entry rows at depth+1 (§9.5).
func (e *toonEncoder) writeKeyed(v *value, cols []column, depth int) {
	e.writeLength(len(v.members), true)
	writeColumns(e.b, cols)
	e.b.WriteByte(':')
	for i := range v.members {
		e.line(depth + 1)
		writeKey(e.b, v.members[i].key)
		e.b.WriteString(": ")
		e.writeCells(&v.members[i].val, cols, true)
	}
}

// writeLength writes a bracket segment, [N] or the keyed [N:] (§6). The
// comma delimiter has no symbol.
func (e *toonEncoder) writeLength(n int, keyed bool) {
	var buf [20]byte
	e.b.WriteByte('[')
	e.b.Write(strconv.AppendInt(buf[:0], int64(n), 10))
	if keyed {
		e.b.WriteByte(':')
	}
	e.b.WriteByte(']')
}

// writeCells writes the leaf values of object o in the depth-first order of
// cols, separated by the delimiter; first says no delimiter precedes them.
func (e *toonEncoder) writeCells(o *value, cols []column, first bool) bool {
	for j := range cols {
		c := &cols[j]
		f := e.get(o, c.name, j)
		if c.sub != nil {
			first = e.writeCells(f, c.sub, first)
			continue
		}
		if !first {
			e.b.WriteByte(delimiter)
		}
		first = false
		e.writePrimitive(f)
	}
	return first
}

// writePrimitive writes a string, number, boolean or null (§2, §7.2).
func (e *toonEncoder) writePrimitive(v *value) {
	switch v.kind {
	case kNull:
		e.b.WriteString("null")
	case kFalse:
		e.b.WriteString("false")
	case kTrue:
		e.b.WriteString("true")
	case kNumber:
		writeCanonicalNumber(e.b, v.text)
	default:
		if toonQuoted(v.text) {
			writeQuoted(e.b, v.text, false)
		} else {
			e.b.WriteString(v.text)
		}
	}
}

// toonQuoted reports whether the string value s must be quoted (§7.2). With
// comma as both the document and the active delimiter, one rule serves
// object field values, inline array values, list items and cells.
func toonQuoted(s string) bool {
	if s == "" || s == "true" || s == "false" || s == "null" {
		return true
	}
	if first, last := s[0], s[len(s)-1]; first == ' ' || first == '\t' || last == ' ' || last == '\t' ||
		first == '-' || first == '#' {
		return true
	}
	if toonNumericLike(s) {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ':', '"', '\\', '[', ']', '{', '}', delimiter:
			return true
		default:
			if c < 0x20 {
				return true
			}
		}
	}
	return false
}

// toonNumericLike reports whether s matches
// /^[+-]?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?$/i (§7.2).
func toonNumericLike(s string) bool {
	i := 0
	if s[0] == '+' || s[0] == '-' {
		i++
	}
	j := digitsAt(s, i)
	if j == i {
		return false
	}
	if j < len(s) && s[j] == '.' {
		k := digitsAt(s, j+1)
		if k == j+1 {
			return false
		}
		j = k
	}
	return exponentAt(s, j) == len(s)
}

// writeKey writes an object key, entry key or field name: bare when it
// matches ^[A-Za-z_][A-Za-z0-9_.]*$, quoted otherwise (§7.3).
func writeKey(b *strings.Builder, k string) {
	if bareKey(k) {
		b.WriteString(k)
		return
	}
	writeQuoted(b, k, false)
}

func bareKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
		if !letter && (i == 0 || !isDigit(c) && c != '.') {
			return false
		}
	}
	return true
}

// column is one field of a tabular or keyed header: a leaf, or a nested
// field group when sub is set (§9.3).
type column struct {
	name string
	sub  []column
}

// writeColumns writes a field list, {a,b{c,d}}.
func writeColumns(b *strings.Builder, cols []column) {
	b.WriteByte('{')
	for j := range cols {
		if j > 0 {
			b.WriteByte(delimiter)
		}
		writeKey(b, cols[j].name)
		if cols[j].sub != nil {
			writeColumns(b, cols[j].sub)
		}
	}
	b.WriteByte('}')
}

// keyedShape returns the header fields of v if it takes the keyed tabular
// form: at least two entries, all uniform non-empty objects (§9.5).
func (e *toonEncoder) keyedShape(v *value) ([]column, bool) {
	if len(v.members) < 2 {
		return nil, false
	}
	width := len(v.members[0].val.members)
	for i := range v.members {
		if f := &v.members[i].val; f.kind != kObject || len(f.members) != width {
			return nil, false // before allocating: most objects fail here
		}
	}
	objs := make([]*value, len(v.members))
	for i := range v.members {
		objs[i] = &v.members[i].val
	}
	return e.uniformShape(objs)
}

// uniformShape returns the header fields shared by objs, or false: every
// object non-empty with the same set of keys, and every column either all
// primitives or all objects of one uniform shape, recursively (§9.3). The
// field order is the first object's.
func (e *toonEncoder) uniformShape(objs []*value) ([]column, bool) {
	first := objs[0]
	if first.kind != kObject || len(first.members) == 0 {
		return nil, false
	}
	for _, o := range objs[1:] {
		if o.kind != kObject || len(o.members) != len(first.members) {
			return nil, false
		}
		// Keys are unique, so equal counts and every key found mean the
		// same set.
		for j := range first.members {
			if e.get(o, first.members[j].key, j) == nil {
				return nil, false
			}
		}
	}
	cols := make([]column, len(first.members))
	var col []*value
	for j := range first.members {
		name := first.members[j].key
		cols[j].name = name
		if first.members[j].val.primitive() {
			for _, o := range objs[1:] {
				if !e.get(o, name, j).primitive() {
					return nil, false
				}
			}
			continue
		}
		col = col[:0]
		for _, o := range objs {
			col = append(col, e.get(o, name, j))
		}
		sub, ok := e.uniformShape(col)
		if !ok {
			return nil, false
		}
		cols[j].sub = sub
	}
	return cols, true
}

// get returns the value of key in object o, or nil; hint is where the key
// usually is, its position in the first object of a table.
func (e *toonEncoder) get(o *value, key string, hint int) *value {
	if hint < len(o.members) && o.members[hint].key == key {
		return &o.members[hint].val
	}
	if len(o.members) <= 8 {
		for i := range o.members {
			if o.members[i].key == key {
				return &o.members[i].val
			}
		}
		return nil
	}
	idx, ok := e.keyIndex[o]
	if !ok {
		idx = make(map[string]int, len(o.members))
		for i := range o.members {
			idx[o.members[i].key] = i
		}
		if e.keyIndex == nil {
			e.keyIndex = make(map[*value]map[string]int)
		}
		e.keyIndex[o] = idx
	}
	if i, ok := idx[key]; ok {
		return &o.members[i].val
	}
	return nil
}

func allPrimitive(vs []value) bool {
	for i := range vs {
		if !vs[i].primitive() {
			return false
		}
	}
	return true
}

// objects returns pointers to vs if all are objects.
func objects(vs []value) ([]*value, bool) {
	for i := range vs {
		if vs[i].kind != kObject {
			return nil, false
		}
	}
	objs := make([]*value, len(vs))
	for i := range vs {
		objs[i] = &vs[i]
	}
	return objs, true
}
