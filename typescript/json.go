package typescript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// kind is the JSON type of a parsed value.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// node is one parsed JSON value. Objects remember the order in which their
// keys first appeared so that generated declarations list properties the way
// the schema author wrote them, which encoding/json's maps would lose.
type node struct {
	kind  kind
	bool  bool
	text  string           // string value, or the literal text of a number
	items []*node          // array elements
	keys  []string         // object keys in first-seen order, without duplicates
	vals  map[string]*node // object members; a repeated key keeps its last value, as encoding/json does
}

// get returns the member key of an object, or nil when n is not an object or
// has no such member.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kindObject {
		return nil
	}
	return n.vals[key]
}

// str returns the value of n when it is a string.
func (n *node) str() (string, bool) {
	if n == nil || n.kind != kindString {
		return "", false
	}
	return n.text, true
}

// isTrue reports whether n is the JSON literal true.
func (n *node) isTrue() bool { return n != nil && n.kind == kindBool && n.bool }

// isFalse reports whether n is the JSON literal false.
func (n *node) isFalse() bool { return n != nil && n.kind == kindBool && !n.bool }

// nonNegInt returns the value of n when it is a non-negative integer that
// fits an int, written either as 3 or as 3.0.
func (n *node) nonNegInt() (int, bool) {
	if n == nil || n.kind != kindNumber {
		return 0, false
	}
	f, err := strconv.ParseFloat(n.text, 64)
	if err != nil || f < 0 || f != float64(int64(f)) || f > 1<<31 {
		return 0, false
	}
	return int(f), true
}

// parse decodes a schema document into nodes. It rejects documents larger
// than maxSchemaBytes or nested deeper than maxJSONDepth so that hostile
// input cannot make later stages allocate or recurse without bound.
func parse(data []byte) (*node, error) {
	if len(data) > maxSchemaBytes {
		return nil, fmt.Errorf("%w: schema is %d bytes, the limit is %d", ErrTooLarge, len(data), maxSchemaBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := parser{dec: dec}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: unexpected data after the schema", ErrInvalidSchema)
	}
	return n, nil
}

// parser builds nodes from the token stream of a json.Decoder, which
// validates the syntax without recursing itself.
type parser struct {
	dec *json.Decoder
}

func (p *parser) token() (json.Token, error) {
	tok, err := p.dec.Token()
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSchema, err)
	}
	return tok, nil
}

func (p *parser) value(depth int) (*node, error) {
	tok, err := p.token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &node{kind: kindNull}, nil
	case bool:
		return &node{kind: kindBool, bool: t}, nil
	case json.Number:
		return &node{kind: kindNumber, text: string(t)}, nil
	case string:
		return &node{kind: kindString, text: t}, nil
	case json.Delim:
		if depth >= maxJSONDepth {
			return nil, fmt.Errorf("%w: schema nests deeper than %d levels", ErrTooLarge, maxJSONDepth)
		}
		if t == '[' {
			return p.array(depth)
		}
		if t == '{' {
			return p.object(depth)
		}
	}
	return nil, fmt.Errorf("%w: unexpected token %v", ErrInvalidSchema, tok)
}

func (p *parser) array(depth int) (*node, error) {
	n := &node{kind: kindArray}
	for p.dec.More() {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.items = append(n.items, v)
	}
	if _, err := p.token(); err != nil { // the closing bracket
		return nil, err
	}
	return n, nil
}

func (p *parser) object(depth int) (*node, error) {
	n := &node{kind: kindObject, vals: map[string]*node{}}
	for p.dec.More() {
		tok, err := p.token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("%w: object key is not a string", ErrInvalidSchema)
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if _, dup := n.vals[key]; !dup {
			n.keys = append(n.keys, key)
		}
		n.vals[key] = v
	}
	if _, err := p.token(); err != nil { // the closing brace
		return nil, err
	}
	return n, nil
}

// compactJSON writes n as compact JSON, stopping with "…" once the text
// exceeds limit bytes; it is used to show default and example values.
func compactJSON(n *node, limit int) string {
	var b strings.Builder
	writeJSON(&b, n, limit)
	if b.Len() > limit {
		return truncate(b.String(), limit)
	}
	return b.String()
}

func writeJSON(b *strings.Builder, n *node, limit int) {
	if b.Len() > limit {
		return
	}
	switch n.kind {
	case kindNull:
		b.WriteString("null")
	case kindBool:
		b.WriteString(strconv.FormatBool(n.bool))
	case kindNumber:
		b.WriteString(n.text)
	case kindString:
		b.WriteString(quote(n.text))
	case kindArray:
		b.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, it, limit)
			if b.Len() > limit {
				return
			}
		}
		b.WriteByte(']')
	case kindObject:
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quote(k))
			b.WriteByte(':')
			writeJSON(b, n.vals[k], limit)
			if b.Len() > limit {
				return
			}
		}
		b.WriteByte('}')
	}
}
