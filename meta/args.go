package meta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// decodeArgs decodes a tool call's arguments into dst, refusing unknown
// fields, and returns the offending field and a message a model can act on.
func decodeArgs(args any, dst any, allowed string) (field, msg string, ok bool) {
	if args == nil {
		args = map[string]any{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return "", "arguments cannot be read as JSON: " + err.Error(), false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			f := te.Field
			return f, fmt.Sprintf("%s must be %s, not %s", orArgs(f), jsonKind(te.Type.String()), te.Value), false
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return f, fmt.Sprintf("unknown argument %q; allowed: %s", f, allowed), false
		default:
			return "", "arguments are malformed: " + err.Error(), false
		}
	}
	return "", "", true
}

func orArgs(f string) string {
	if f == "" {
		return "arguments"
	}
	return f
}

func jsonKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "meta."), strings.HasPrefix(goType, "*meta."):
		return "an object"
	case strings.Contains(goType, "int"):
		return "an integer"
	case strings.Contains(goType, "float"):
		return "a number"
	case goType == "bool" || goType == "*bool":
		return "a boolean"
	case goType == "string":
		return "a string"
	}
	return goType
}
