// Package jsonpos says where in a JSON document encoding/json found a
// problem, as a line and a column an editor can jump to. encoding/json
// reports byte offsets only, which nobody can find in a file by hand.
package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Position is a 1-based line and column; the column counts characters,
// not bytes.
type Position struct{ Line, Column int }

func (p Position) String() string { return fmt.Sprintf("line %d, column %d", p.Line, p.Column) }

// At returns the position of the byte at offset in data; an offset past the
// end is the position just after the last byte.
func At(data []byte, offset int64) Position {
	off := int(max(0, min(offset, int64(len(data)))))
	before := data[:off]
	line := 1 + bytes.Count(before, []byte("\n"))
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return Position{Line: line, Column: 1 + utf8.RuneCount(before[lineStart:])}
}

// Error is a JSON decoding error with its position in the document.
type Error struct {
	Pos Position
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Pos, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Locate returns err with its position when it is a *json.SyntaxError or
// a *json.UnmarshalTypeError, which carry an offset; doc is the whole
// document and base the offset, in doc, of the bytes that were decoded
// (0 when the whole document was). Other errors come back unchanged.
func Locate(doc []byte, base int64, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		// The offset is just after the byte that could not be read.
		return &Error{Pos: At(doc, base+max(se.Offset-1, 0)), Err: err}
	case errors.As(err, &te):
		// The offset is just after the value of the wrong type: the
		// position is its last character.
		return &Error{Pos: At(doc, base+max(te.Offset-1, 0)), Err: err}
	}
	return err
}

// ElementOffsets returns the offset in doc of each element of the JSON
// array at the top of doc. doc must be a valid JSON array.
func ElementOffsets(doc []byte) ([]int64, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, errors.New("not a JSON array")
	}
	var out []int64
	for dec.More() {
		out = append(out, valueStart(doc, dec.InputOffset()))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MemberOffsets returns the offset in doc of the value of each member of
// the object under key in the JSON object at the top of doc: for
// {"mcpServers": {"a": {...}}} and key "mcpServers", the offset of a's
// value. doc must be valid JSON; a missing key gives an empty map.
func MemberOffsets(doc []byte, key string) (map[string]int64, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	out := map[string]int64{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if name, _ := t.(string); name != key {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return out, nil
		}
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return nil, err
			}
			member, _ := t.(string)
			out[member] = valueStart(doc, dec.InputOffset())
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return out, nil
}

// valueStart skips the white space, commas and colons after off, where
// the decoder stopped, to the first byte of the next value.
func valueStart(doc []byte, off int64) int64 {
	for off < int64(len(doc)) {
		switch doc[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}
