package vm

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/dop251/goja"
)

// errResultSyntax reports tool-result text that is not one valid JSON
// value. Its wording never reaches the plan: parseToolResult answers any
// failure with the same message.
var errResultSyntax = errors.New("invalid JSON")

// resultParser turns a tool's JSON result into runtime values in one pass
// over the bytes. It gives what JSON.parse gives for the same text (plain
// objects and arrays of the runtime's own intrinsics, every key an own
// enumerable data property, "__proto__" included, the last of duplicate
// keys winning in the first one's place, numbers as float64, strings
// unquoted as encoding/json does) and refuses what JSON.parse refuses, but
// without goja's parser, which reads the text as a json.Decoder token
// stream: that costs some thirty allocations for a result as small as
// {"ok":true}, and every callTool of a plan paid them.
//
// The text must have passed checkJSONText, which bounds its size and its
// nesting (the parser recurses once per level). Strings with escapes or
// bytes outside printable ASCII are unquoted by encoding/json itself, so
// that invalid UTF-8 and lone surrogates become U+FFFD exactly as they do
// through JSON.parse.
type resultParser struct {
	rt   *goja.Runtime
	text []byte
	pos  int
}

// parseResultJSON parses text, a whole JSON value with optional
// whitespace around it.
func parseResultJSON(rt *goja.Runtime, text []byte) (goja.Value, error) {
	p := resultParser{rt: rt, text: text}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if p.skipSpace(); p.pos != len(p.text) {
		return nil, errResultSyntax
	}
	return v, nil
}

func (p *resultParser) skipSpace() {
	for p.pos < len(p.text) {
		switch p.text[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *resultParser) value() (goja.Value, error) {
	p.skipSpace()
	if p.pos >= len(p.text) {
		return nil, errResultSyntax
	}
	switch c := p.text[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return p.rt.ToValue(s), nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	for _, lit := range [...]struct {
		text string
		v    goja.Value
	}{{"true", p.rt.ToValue(true)}, {"false", p.rt.ToValue(false)}, {"null", goja.Null()}} {
		if len(p.text)-p.pos >= len(lit.text) && string(p.text[p.pos:p.pos+len(lit.text)]) == lit.text {
			p.pos += len(lit.text)
			return lit.v, nil
		}
	}
	return nil, errResultSyntax
}

func (p *resultParser) object() (goja.Value, error) {
	p.pos++ // {
	o := p.rt.NewObject()
	p.skipSpace()
	if p.pos < len(p.text) && p.text[p.pos] == '}' {
		p.pos++
		return o, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.text) || p.text[p.pos] != '"' {
			return nil, errResultSyntax
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.text) || p.text[p.pos] != ':' {
			return nil, errResultSyntax
		}
		p.pos++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		// An own data property, as JSON.parse makes it: never a setter,
		// so "__proto__" is a key like any other.
		if err := o.DefineDataProperty(key, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
			return nil, err
		}
		if done, err := p.next('}'); err != nil {
			return nil, err
		} else if done {
			return o, nil
		}
	}
}

func (p *resultParser) array() (goja.Value, error) {
	p.pos++ // [
	var items []any
	p.skipSpace()
	if p.pos < len(p.text) && p.text[p.pos] == ']' {
		p.pos++
		return p.rt.NewArray(), nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		items = append(items, v)
		if done, err := p.next(']'); err != nil {
			return nil, err
		} else if done {
			return p.rt.NewArray(items...), nil
		}
	}
}

// next reads what follows a member or an element: a comma, more to come,
// or close, the end of the object or array (done).
func (p *resultParser) next(close byte) (done bool, err error) {
	p.skipSpace()
	if p.pos >= len(p.text) {
		return false, errResultSyntax
	}
	switch p.text[p.pos] {
	case ',':
		p.pos++
		return false, nil
	case close:
		p.pos++
		return true, nil
	}
	return false, errResultSyntax
}

// str reads a string token. Printable ASCII without escapes, the common
// case, is copied as it is; anything else is unquoted by encoding/json,
// which also checks it.
func (p *resultParser) str() (string, error) {
	start := p.pos // the opening quote
	plain := true
	for p.pos++; p.pos < len(p.text); p.pos++ {
		switch c := p.text[p.pos]; {
		case c == '"':
			p.pos++
			if plain {
				return string(p.text[start+1 : p.pos-1]), nil
			}
			var s string
			if err := json.Unmarshal(p.text[start:p.pos], &s); err != nil {
				return "", errResultSyntax
			}
			return s, nil
		case c == '\\':
			plain = false
			p.pos++ // the escaped byte cannot end the string
		case c < 0x20 || c >= 0x80:
			plain = false
		}
	}
	return "", errResultSyntax
}

// number reads a number token by JSON's grammar and converts it as
// encoding/json does; a number out of float64's range is refused, as
// JSON.parse refuses it.
func (p *resultParser) number() (goja.Value, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.text) && p.text[p.pos] >= '0' && p.text[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.text[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(p.text) && p.text[p.pos] == '0':
		p.pos++
	case digits() == 0:
		return nil, errResultSyntax
	}
	if p.pos < len(p.text) && p.text[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, errResultSyntax
		}
	}
	if p.pos < len(p.text) && (p.text[p.pos] == 'e' || p.text[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.text) && (p.text[p.pos] == '+' || p.text[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, errResultSyntax
		}
	}
	f, err := strconv.ParseFloat(string(p.text[start:p.pos]), 64)
	if err != nil {
		return nil, errResultSyntax
	}
	return p.rt.ToValue(f), nil
}
