package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzValue: no input panics; what is not JSON is refused in every format;
// JSON output re-parses to the same value; Compact and TOON render any JSON
// within MaxDepth, Compact reading back exactly and TOON decoding to the
// same value.
func FuzzValue(f *testing.F) {
	for _, seed := range []string{
		`null`, `0`, `-0.0e-0`, `1e400`, `"x"`, `""`, `" - a: b, c"`, `"\u2028#"`, "\"\ufeff\"",
		`{}`, `[]`, `[[]]`, `[{}]`, `{"":{"":[]}}`, `{"a":1,"a":[2]}`,
		`{"id":7,"tags":["a","b"],"owner":{"name":"Ada"},"notes":["call back"]}`,
		`[{"a":1,"b":{"c":"x,y"}},{"b":{"c":null},"a":-2.50}]`,
		`{"k":{"x":{"p":1},"y":{"p":2}},"l":[[1,[2]],{"m":[{"n":1}]}]}`,
		`[{"t":[{"u":1},{"u":2}],"v":"true"},{"t":[],"v":"-"}]`,
		`["a: b", "c:", "[d]", "{", "e, f", "1.", "+1", "#", "TRUE"]`,
		`{"a":[1,2,3] `, `[1,]`, `{"a" 1}`, "\x00", `[` + strings.Repeat(`[`, 70) + strings.Repeat(`]`, 71),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		valid := json.Valid(doc)
		outs := map[Format]string{}
		for _, fm := range formats {
			out, err := Value(fm, doc)
			switch {
			case !valid && err == nil:
				t.Fatalf("Value(%s, %q) accepted invalid JSON: %q", fm, doc, out)
			case !valid:
				if !errors.Is(err, ErrInvalidJSON) && !errors.Is(err, ErrTooDeep) {
					t.Fatalf("Value(%s, %q) error %v wraps neither ErrInvalidJSON nor ErrTooDeep", fm, doc, err)
				}
			case fm == JSON && err != nil:
				t.Fatalf("Value(json, %q): %v", doc, err)
			}
			outs[fm] = out
		}
		if !valid {
			return
		}

		want := decodeStd(t, doc)
		if got := decodeStd(t, []byte(outs[JSON])); !reflect.DeepEqual(got, want) {
			t.Fatalf("JSON output %q re-parses to %v, want %v", outs[JSON], got, want)
		}
		if bytes.ContainsAny([]byte(outs[JSON]), "\n") {
			t.Fatalf("JSON output %q is not compact", outs[JSON])
		}

		deep := depth(want) > MaxDepth
		for _, fm := range []Format{Compact, TOON} {
			out, err := Value(fm, doc)
			if deep {
				if !errors.Is(err, ErrTooDeep) {
					t.Fatalf("Value(%s) of a document deeper than %d: %v", fm, MaxDepth, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("Value(%s, %q): %v", fm, doc, err)
			}
			roundTrip(t, fm, doc, out)
		}
	})
}

func decodeStd(t *testing.T, doc []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("encoding/json cannot decode %q: %v", doc, err)
	}
	return v
}

// depth is the nesting of objects and arrays, as MaxDepth counts it.
func depth(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, m := range v {
			d = max(d, depth(m))
		}
	case []any:
		for _, m := range v {
			d = max(d, depth(m))
		}
	default:
		return 0
	}
	return d + 1
}
