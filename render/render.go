package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Format names a text rendering of a JSON document.
type Format string

// The formats. The zero value, "", means JSON.
const (
	// JSON is compact JSON: the document without insignificant whitespace.
	JSON Format = "json"
	// Compact is indented "key: value" text; see the package comment for
	// its rules.
	Compact Format = "compact"
	// TOON is Token-Oriented Object Notation, spec version 4.1.
	TOON Format = "toon"
)

// formats lists the named formats, in the order error messages give them.
var formats = []Format{JSON, Compact, TOON}

// MaxDepth is how deeply Compact and TOON let objects and arrays nest: a
// root object or array is at depth 1, a value inside it at depth 2. A deeper
// document is refused with ErrTooDeep. JSON has no such limit.
const MaxDepth = 64

var (
	// ErrUnknownFormat is returned, wrapped, for a format name that is not
	// one of JSON, Compact or TOON.
	ErrUnknownFormat = errors.New("render: unknown format")
	// ErrTooDeep is returned, wrapped, for a document nested deeper than
	// MaxDepth.
	ErrTooDeep = errors.New("render: document nested too deeply")
	// ErrInvalidJSON is returned, wrapped, for bytes that are not exactly
	// one JSON value. The syntax error, when there is one, is wrapped too.
	ErrInvalidJSON = errors.New("render: invalid JSON")
)

// ParseFormat returns the format named s: "json", "compact" or "toon",
// exactly, or "" for the default, JSON. Any other name is an error that
// wraps ErrUnknownFormat and lists the names allowed.
func ParseFormat(s string) (Format, error) {
	if s == "" {
		return JSON, nil
	}
	for _, f := range formats {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = fmt.Sprintf("%q", string(f))
	}
	return "", fmt.Errorf("%w %q: want one of %s", ErrUnknownFormat, s, strings.Join(names, ", "))
}

// Value renders doc, one JSON value as encoding/json produces it, in format
// f. Leading and trailing whitespace around the value is allowed; anything
// else after it is an error.
//
// JSON keeps the document's text: key order, repeated keys, number
// spellings and string escapes are as written. Compact and TOON keep key
// order and number digits too; of a key repeated within one object they
// keep the last value, at the key's first position, as JavaScript's
// JSON.parse does.
//
// Errors wrap ErrInvalidJSON, ErrTooDeep or ErrUnknownFormat. Value is safe
// for concurrent use. Its time and its output are linear in len(doc), with a
// factor that grows with the nesting and is bounded by MaxDepth: deeper
// lines carry more indentation, and TOON looks for tables at every level.
func Value(f Format, doc []byte) (string, error) {
	switch f {
	case JSON, "":
		var b bytes.Buffer
		b.Grow(len(doc))
		if err := json.Compact(&b, doc); err != nil {
			return "", fmt.Errorf("%w: %w", ErrInvalidJSON, err)
		}
		return b.String(), nil
	case Compact, TOON:
		v, err := parse(doc)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		b.Grow(len(doc))
		if f == Compact {
			writeCompact(&b, &v)
		} else {
			writeTOON(&b, &v)
		}
		return b.String(), nil
	}
	_, err := ParseFormat(string(f))
	return "", err
}
