package policy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/codecall-go/codecall/toolerr"
)

// maxReceived bounds the JSON of a received value a mismatch repeats.
const maxReceived = 120

// locate turns the validator's first leaf error into a Mismatch: the JSON
// Pointer of the failing value, what the schema expected there and what
// the input holds. Leaves are visited depth first, so the pointer is the
// deepest, most specific one on the first path that failed.
func locate(verr *jsonschema.ValidationError, inst any) *toolerr.Mismatch {
	leaf := verr
	for len(leaf.Causes) > 0 {
		leaf = leaf.Causes[0]
	}
	path := append([]string(nil), leaf.InstanceLocation...)
	m := &toolerr.Mismatch{}
	switch k := leaf.ErrorKind.(type) {
	case *kind.Required:
		if len(k.Missing) > 0 {
			path = append(path, k.Missing[0])
		}
		m.Expected, m.Received = "a value (the property is required)", "nothing (the property is missing)"
	case *kind.Type:
		m.Expected, m.Received = strings.Join(k.Want, " or "), k.Got
	case *kind.Enum:
		m.Expected, m.Received = "one of "+clipJSON(k.Want), clipJSON(k.Got)
	case *kind.Const:
		m.Expected, m.Received = clipJSON(k.Want), clipJSON(k.Got)
	case *kind.AdditionalProperties:
		if len(k.Properties) > 0 {
			path = append(path, k.Properties[0])
		}
		m.Expected, m.Received = "no such property (the schema allows no other properties)", "a value"
	default:
		m.Expected = "what the schema's " + strings.Join(leaf.ErrorKind.KeywordPath(), "/") + " asks for"
		if msg := leafMessage(leaf); msg != "" {
			m.Expected = msg
		}
		m.Received = clipJSON(valueAt(inst, leaf.InstanceLocation))
	}
	m.Pointer = pointer(path)
	return m
}

// leafMessage is the validator's own words for one error, without its
// location.
func leafMessage(e *jsonschema.ValidationError) string {
	lines := strings.Split(e.Error(), "\n")
	last := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[len(lines)-1]), "- "))
	if _, after, ok := strings.Cut(last, ": "); ok && strings.HasPrefix(last, "at ") {
		return after
	}
	return last
}

// pointer renders path as a JSON Pointer (RFC 6901).
func pointer(path []string) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(p))
	}
	return b.String()
}

// valueAt returns the value at path in inst, or nil.
func valueAt(inst any, path []string) any {
	for _, p := range path {
		switch v := inst.(type) {
		case map[string]any:
			inst = v[p]
		case []any:
			var i int
			if _, err := fmt.Sscan(p, &i); err != nil || i < 0 || i >= len(v) {
				return nil
			}
			inst = v[i]
		default:
			return nil
		}
	}
	return inst
}

// clipJSON renders v as JSON of at most maxReceived bytes.
func clipJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "a value that is not JSON"
	}
	if len(b) > maxReceived {
		return string(b[:maxReceived]) + "…"
	}
	return string(b)
}
