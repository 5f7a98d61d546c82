package policy

import (
	"testing"
)

func TestLocateMismatch(t *testing.T) {
	schema := compileInputSchema([]byte(`{"type":"object","required":["id"],"additionalProperties":false,
		"properties":{"id":{"type":"string"},"n":{"type":"integer","minimum":1},"kind":{"enum":["a","b"]},
		"items":{"type":"array","items":{"type":"object","properties":{"q":{"type":"number"}}}}}}`))
	if schema == nil {
		t.Fatal("schema did not compile")
	}
	cases := []struct {
		name                        string
		args                        map[string]any
		pointer, expected, received string
	}{
		{"missing required", map[string]any{}, "/id", "a value (the property is required)", "nothing (the property is missing)"},
		{"wrong type", map[string]any{"id": 5.0}, "/id", "string", "number"},
		{"nested array item", map[string]any{"id": "x", "items": []any{map[string]any{"q": "no"}}}, "/items/0/q", "number", "string"},
		{"enum", map[string]any{"id": "x", "kind": "c"}, "/kind", `one of ["a","b"]`, `"c"`},
		{"extra property", map[string]any{"id": "x", "zzz": 1.0}, "/zzz", "no such property (the schema allows no other properties)", "a value"},
		{"minimum", map[string]any{"id": "x", "n": 0.0}, "/n", "", "0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			why, m := explain(schema, tc.args)
			if why == "" || m == nil {
				t.Fatalf("explain = %q, %v; want a mismatch", why, m)
			}
			if m.Pointer != tc.pointer || (tc.expected != "" && m.Expected != tc.expected) || m.Received != tc.received {
				t.Errorf("mismatch = %+v; want pointer %q expected %q received %q", *m, tc.pointer, tc.expected, tc.received)
			}
			if m.Expected == "" {
				t.Errorf("mismatch has no expected: %+v", *m)
			}
		})
	}
}
