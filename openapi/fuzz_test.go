package openapi

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// FuzzSerialize feeds arbitrary values to every location and style: the
// serialiser must never panic, a path value must never add a path
// segment, a query or a fragment, a query must never carry a raw space,
// '#' or an unescaped value separator, and a scalar path value must come
// back unchanged when unescaped.
func FuzzSerialize(f *testing.F) {
	f.Add(`"b-1/../x?y#z"`, uint8(0), false)
	f.Add(`["a b","c,d"]`, uint8(3), true)
	f.Add(`{"color":"r&d=1"}`, uint8(6), false)
	f.Add(`"line\r\nX-Evil: 1"`, uint8(7), false)
	f.Add(`[{"nested":1}]`, uint8(1), false)
	f.Add(`1e400`, uint8(0), false)
	styles := []struct{ in, style string }{
		{"path", styleSimple}, {"path", styleLabel}, {"path", styleMatrix},
		{"query", styleForm}, {"query", styleSpaceDelimited}, {"query", stylePipeDelimited}, {"query", styleDeepObject},
		{"header", styleSimple}, {"cookie", styleForm},
	}
	f.Fuzz(func(t *testing.T, raw string, pick uint8, explode bool) {
		var v any
		if json.Unmarshal([]byte(raw), &v) != nil {
			v = raw
		}
		s := styles[int(pick)%len(styles)]
		p := param{field: "f", name: "na me", in: s.in, style: s.style, explode: explode}
		out, err := serialize(p, v)
		if err != nil {
			return
		}
		switch s.in {
		case "path":
			if strings.ContainsAny(out, "/?# ") {
				t.Fatalf("path value %q escapes its segment", out)
			}
			if str, ok := v.(string); ok && s.style == styleSimple {
				if back, err := url.PathUnescape(out); err != nil || back != str {
					t.Fatalf("%q serialised as %q, which reads back as %q", str, out, back)
				}
			}
		case "query":
			if strings.ContainsAny(out, "# \r\n") {
				t.Fatalf("query %q is not escaped", out)
			}
			if _, err := url.ParseQuery(out); err != nil {
				t.Fatalf("query %q does not parse: %v", out, err)
			}
		case "header", "cookie":
			if strings.ContainsAny(out, "\r\n\x00") {
				t.Fatalf("header %q holds a line break", out)
			}
		}
	})
}
