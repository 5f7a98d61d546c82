package vm

import (
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// sameAsJSONParse is a deep comparison written in the runtime: the same
// primitives (Object.is, so -0 and NaN count), arrays of the same
// elements, plain objects with the same own keys in the same order, each
// an enumerable, writable, configurable data property, and the same
// prototypes.
const sameAsJSONParse = `(function same(a, b) {
	if (typeof a !== typeof b) return false;
	if (a === null || typeof a !== "object") return Object.is(a, b);
	if (b === null) return false;
	if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
	if (Array.isArray(a) !== Array.isArray(b)) return false;
	const ka = Reflect.ownKeys(a), kb = Reflect.ownKeys(b);
	if (ka.length !== kb.length) return false;
	for (let i = 0; i < ka.length; i++) {
		if (ka[i] !== kb[i]) return false;
		const da = Object.getOwnPropertyDescriptor(a, ka[i]), db = Object.getOwnPropertyDescriptor(b, kb[i]);
		if (da.enumerable !== db.enumerable || da.writable !== db.writable || da.configurable !== db.configurable) return false;
		if (!same(da.value, db.value)) return false;
	}
	return true;
})`

// resultJSONCases are texts a tool could return: valid JSON of every kind,
// strings that need encoding/json's unquoting, numbers at the edges of
// float64, keys JSON.parse treats as plain keys, and malformed text of the
// kinds encoding/json refuses.
var resultJSONCases = []string{
	`{"ok":true}`, `{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1`, `-1.5`, `1e3`, `1E+3`, `2.5e-3`, `123456789012345678901234567890`,
	`1.7976931348623157e308`, `1e400`, `-1e400`, `1e-400`, `4.9e-324`, `0.1`, `9007199254740993`,
	`"plain"`, `""`, `"with \"escapes\" and \\ and \/ and \n\t\r\b\f"`, `"\u00e9\u4e2d\ud83d\ude00"`, `"\ud800 lone"`, `"\udc00"`,
	"\"caf\xc3\xa9\"", "\"bad \xff utf8\"", "\"\x7f del\"", `"tab	raw"`, "\"nl\nraw\"",
	`{"__proto__":{"polluted":true},"a":1}`, `{"a":1,"b":2,"a":3}`, `{"constructor":{"prototype":1}}`, `{"1":"x","0":"y","b":"z"}`,
	` { "a" : [ 1 , 2 , { "b" : null } ] } `, "\n\t{\"a\":1}\r\n", `[[[[[]]]]]`, `[1,"two",{"three":[3]},null,true]`,
	`{"nested":{"deep":{"deeper":{"deepest":"yes"}}}}`, `{"emoji":"😀","long":"` + strings.Repeat("x", 100) + `"}`,
	// Malformed.
	``, ` `, `{`, `}`, `[`, `]`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `{"a" 1}`, `{a:1}`, `{'a':1}`,
	`01`, `-`, `-01`, `1.`, `.5`, `+1`, `1e`, `1e+`, `0x10`, `NaN`, `Infinity`, `tru`, `nul`, `truex`, `true false`,
	`{"a":1}x`, `{"a":1}{}`, `"unterminated`, `"bad \x escape"`, `"\u12"`, `"\u12G4"`, `[1 2]`, `{"a":1 "b":2}`,
	"\xef\xbb\xbf{}", `"a"b`, `[}`, `{]`, `--1`, `1..2`, `1e1.5`,
}

// TestParseResultJSONMatchesJSONParse checks the tool-result parser
// against goja's JSON.parse on every case: both refuse, or both give values
// that are the same in every observable way.
func TestParseResultJSONMatchesJSONParse(t *testing.T) {
	rt := goja.New()
	same, err := rt.RunString(sameAsJSONParse)
	if err != nil {
		t.Fatal(err)
	}
	sameFn, _ := goja.AssertFunction(same)
	parse, _ := goja.AssertFunction(rt.Get("JSON").ToObject(rt).Get("parse"))
	for _, text := range resultJSONCases {
		t.Run(text, func(t *testing.T) {
			want, wantErr := parse(goja.Undefined(), rt.ToValue(text))
			got, gotErr := parseResultJSON(rt, []byte(text))
			if (wantErr != nil) != (gotErr != nil) {
				t.Fatalf("JSON.parse error %v, parseResultJSON error %v", wantErr, gotErr)
			}
			if wantErr != nil {
				return
			}
			eq, err := sameFn(goja.Undefined(), want, got)
			if err != nil {
				t.Fatal(err)
			}
			if !eq.ToBoolean() {
				t.Errorf("JSON.parse gave %v, parseResultJSON gave %v", stringify(rt, want), stringify(rt, got))
			}
		})
	}
}

func stringify(rt *goja.Runtime, v goja.Value) string {
	f, _ := goja.AssertFunction(rt.Get("JSON").ToObject(rt).Get("stringify"))
	s, err := f(goja.Undefined(), v)
	if err != nil {
		return err.Error()
	}
	return s.String()
}

// FuzzParseResultJSON compares the tool-result parser with goja's
// JSON.parse on arbitrary text within checkJSONText's bounds.
func FuzzParseResultJSON(f *testing.F) {
	for _, text := range resultJSONCases {
		f.Add(text)
	}
	rt := goja.New()
	same, err := rt.RunString(sameAsJSONParse)
	if err != nil {
		f.Fatal(err)
	}
	sameFn, _ := goja.AssertFunction(same)
	parse, _ := goja.AssertFunction(rt.Get("JSON").ToObject(rt).Get("parse"))
	f.Fuzz(func(t *testing.T, text string) {
		if checkJSONText(text, 1<<20, maxJSONDepth) != nil {
			return
		}
		want, wantErr := parse(goja.Undefined(), rt.ToValue(text))
		got, gotErr := parseResultJSON(rt, []byte(text))
		if (wantErr != nil) != (gotErr != nil) {
			t.Fatalf("%q: JSON.parse error %v, parseResultJSON error %v", text, wantErr, gotErr)
		}
		if wantErr != nil {
			return
		}
		if eq, err := sameFn(goja.Undefined(), want, got); err != nil || !eq.ToBoolean() {
			t.Fatalf("%q: JSON.parse gave %v, parseResultJSON gave %v", text, stringify(rt, want), stringify(rt, got))
		}
	})
}
