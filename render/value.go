package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// kind is the JSON type of a value. The primitives come first, so that
// k < kObject tests for one.
type kind uint8

const (
	kNull kind = iota
	kFalse
	kTrue
	kNumber
	kString
	kObject
	kArray
)

// value is a decoded JSON value that keeps what Compact and TOON need and Go
// maps lose: the order of an object's keys and the text of its numbers.
type value struct {
	kind    kind
	text    string   // kNumber: the JSON text; kString: the string
	members []member // kObject, in document order, keys unique
	items   []value  // kArray
}

type member struct {
	key string
	val value
}

func (v *value) primitive() bool { return v.kind < kObject }

// parse decodes doc, exactly one JSON value with optional white space
// around it, refusing nesting deeper than MaxDepth before reading further.
// It accepts what encoding/json accepts and decodes strings as it does.
func parse(doc []byte) (value, error) {
	p := parser{doc: doc, src: string(doc)}
	p.space()
	v, ok := p.value(0)
	if p.tooDeep {
		return value{}, fmt.Errorf("%w: more than %d levels", ErrTooDeep, MaxDepth)
	}
	if p.space(); !ok || p.i != len(doc) {
		return value{}, syntaxError(doc)
	}
	return v, nil
}

// syntaxError explains why doc is not JSON in encoding/json's words.
func syntaxError(doc []byte) error {
	var v any
	err := json.Unmarshal(doc, &v)
	if err == nil {
		err = errors.New("not a single JSON value")
	}
	return fmt.Errorf("%w: %w", ErrInvalidJSON, err)
}

// parser reads a JSON document without building interfaces: one pass over
// the bytes, one copy of the document that plain strings, keys and numbers
// are cut from, and one slice per object or array.
type parser struct {
	doc     []byte
	src     string // doc as a string
	i       int
	tooDeep bool
	// members and items are stacks the objects and arrays being read
	// collect their elements on, so that each gets one slice of the exact
	// size when it ends.
	members []member
	items   []value
}

func (p *parser) space() {
	for p.i < len(p.doc) {
		switch p.doc[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value reads the value at p.i; depth is the number of objects and arrays
// around it. It reports false on a syntax error or a too deep document.
func (p *parser) value(depth int) (value, bool) {
	if p.i >= len(p.doc) {
		return value{}, false
	}
	switch c := p.doc[p.i]; {
	case c == '{' || c == '[':
		if depth+1 > MaxDepth {
			p.tooDeep = true
			return value{}, false
		}
		p.i++
		if c == '{' {
			return p.object(depth + 1)
		}
		return p.array(depth + 1)
	case c == '"':
		s, ok := p.string()
		return value{kind: kString, text: s}, ok
	case c == '-' || isDigit(c):
		return p.number()
	case c == 't':
		return value{kind: kTrue}, p.literal("true")
	case c == 'f':
		return value{kind: kFalse}, p.literal("false")
	case c == 'n':
		return value{kind: kNull}, p.literal("null")
	}
	return value{}, false
}

func (p *parser) literal(word string) bool {
	if len(p.doc)-p.i < len(word) || string(p.doc[p.i:p.i+len(word)]) != word {
		return false
	}
	p.i += len(word)
	return true
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (p *parser) number() (value, bool) {
	d, start := p.doc, p.i
	i := start
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && isDigit(d[i]):
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	default:
		return value{}, false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || !isDigit(d[i]) {
			return value{}, false
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			return value{}, false
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	p.i = i
	return value{kind: kNumber, text: p.src[start:i]}, true
}

// string reads a string token. A plain one, valid UTF-8 without escapes, is
// a substring of the document; any other is decoded by encoding/json, so
// that escapes, surrogate pairs and invalid bytes come out as they do there.
func (p *parser) string() (string, bool) {
	d, start := p.doc, p.i
	plain := true
	for i := start + 1; i < len(d); i++ {
		switch c := d[i]; {
		case c == '"':
			p.i = i + 1
			if plain && utf8.Valid(d[start+1:i]) {
				return p.src[start+1 : i], true
			}
			var s string
			if err := json.Unmarshal(d[start:i+1], &s); err != nil {
				return "", false
			}
			return s, true
		case c < 0x20:
			return "", false
		case c == '\\':
			plain = false
			i++ // the escaped character; encoding/json checks the escape
		}
	}
	return "", false
}

func (p *parser) array(depth int) (value, bool) {
	base := len(p.items)
	p.space()
	if p.i < len(p.doc) && p.doc[p.i] == ']' {
		p.i++
		return value{kind: kArray}, true
	}
	for {
		item, ok := p.value(depth)
		if !ok {
			return value{}, false
		}
		p.items = append(p.items, item)
		p.space()
		if p.i >= len(p.doc) {
			return value{}, false
		}
		c := p.doc[p.i]
		p.i++
		if c == ']' {
			break
		}
		if c != ',' {
			return value{}, false
		}
		p.space()
	}
	v := value{kind: kArray, items: append([]value(nil), p.items[base:]...)}
	clear(p.items[base:])
	p.items = p.items[:base]
	return v, true
}

// indexFrom is the member count from which object finds repeated keys with
// a map rather than by scanning.
const indexFrom = 16

// object reads the members of an object. Of a repeated key it keeps the
// last value at the first position, as JavaScript's JSON.parse does.
func (p *parser) object(depth int) (value, bool) {
	base := len(p.members)
	p.space()
	if p.i < len(p.doc) && p.doc[p.i] == '}' {
		p.i++
		return value{kind: kObject}, true
	}
	var index map[string]int
	for {
		if p.i >= len(p.doc) || p.doc[p.i] != '"' {
			return value{}, false
		}
		key, ok := p.string()
		if !ok {
			return value{}, false
		}
		p.space()
		if p.i >= len(p.doc) || p.doc[p.i] != ':' {
			return value{}, false
		}
		p.i++
		p.space()
		val, ok := p.value(depth)
		if !ok {
			return value{}, false
		}
		own := p.members[base:]
		at := -1
		if index != nil {
			if i, ok := index[key]; ok {
				at = i
			}
		} else {
			for i := range own {
				if own[i].key == key {
					at = i
					break
				}
			}
		}
		switch {
		case at >= 0:
			own[at].val = val
		case index != nil:
			index[key] = len(own)
			p.members = append(p.members, member{key: key, val: val})
		default:
			p.members = append(p.members, member{key: key, val: val})
			if len(own)+1 == indexFrom {
				index = make(map[string]int, 2*indexFrom)
				for i, m := range p.members[base:] {
					index[m.key] = i
				}
			}
		}
		p.space()
		if p.i >= len(p.doc) {
			return value{}, false
		}
		c := p.doc[p.i]
		p.i++
		if c == '}' {
			break
		}
		if c != ',' {
			return value{}, false
		}
		p.space()
	}
	v := value{kind: kObject, members: append([]member(nil), p.members[base:]...)}
	clear(p.members[base:])
	p.members = p.members[:base]
	return v, true
}
