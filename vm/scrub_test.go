package vm

import (
	"strings"
	"testing"
)

func TestScrubGoValues(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"Could not convert &{Object 0x1c69 <nil> true map[] [] 0 0 <nil> map[]} to primitive", "Could not convert [object] to primitive"},
		{"Could not convert &{Object 0x1 {a b} map[x:0x2]} (*goja.baseObject) to primitive", "Could not convert [object] to primitive"},
		{`{"m":"x &{Object 0x1 map[","n":1}`, `{"m":"x [object]","n":1}`},
		{"two &{a} and &{b {c}} dumps", "two [object] and [object] dumps"},
		{"unterminated &{a", "unterminated [object]"},
		{"a (*not) b", "a (*not) b"},
	}
	for _, tc := range cases {
		if got := scrubGoValues(tc.in); got != tc.want {
			t.Errorf("scrubGoValues(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestNoGoValuesReachTheResult checks that goja's messages that print Go
// values are scrubbed from results, logs and errors, in plans and modules.
func TestNoGoValuesReachTheResult(t *testing.T) {
	for _, res := range []*Result{
		runScript(t, nil, `try { '' + Object.create(null); } catch (e) { console.log(e.message); return e.message; }`),
		runScript(t, nil, `'' + Object.create(null);`),
		runModule(t, nil, `try { Reflect.deleteProperty(__codemode_modules__, 0); } catch (e) { globalThis.__codemode_result__ = e.message; }`),
	} {
		if s := describe(res); strings.Contains(s, "&{") || strings.Contains(s, "\\u0026{") || strings.Contains(s, "goja.") || strings.Contains(s, "0x") {
			t.Errorf("a Go value reached the result: %s", s)
		}
	}
}
