package tsstrip

import (
	"errors"
	"strings"
	"testing"

	"github.com/codecall-go/codecall/ast"
)

func TestVLQ(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"A", 0}, {"C", 1}, {"D", -1}, {"gB", 16}, {"hB", -16}, {"2H", 123}, {"+/////D", 1<<31 - 1}, {"//////D", -(1<<31 - 1)},
	} {
		v, next, err := vlq(tc.in, 0)
		if err != nil || v != tc.want || next != len(tc.in) {
			t.Errorf("vlq(%q) = %d, %d, %v; want %d", tc.in, v, next, err, tc.want)
		}
	}
	for _, bad := range []string{"", "g", "!", "gggggggggA"} {
		if _, _, err := vlq(bad, 0); err == nil {
			t.Errorf("vlq(%q) decoded", bad)
		}
	}
}

// TestMappings: every mapping ties a token of the JavaScript to the same
// token of the script, through non-ASCII text, astral characters, CRLF and
// U+2028 line breaks.
func TestMappings(t *testing.T) {
	for _, script := range []string{
		"const a: number = 1;\nreturn a;",
		"const s: string = 'é😀é'; const t = s;\r\nreturn t + s;",
		"const s = '\u2028'; let u: string = `x\u2029y`;\u2028return [s, u];",
		"\tconst x = {a: 1} as {a: number};\r\treturn x.a satisfies number;",
		"const 𝒳𝒳 = 1;\nconst b = '𝒳' + 𝒳𝒳;\nreturn b",
	} {
		st, err := Stripper{}.StripTypes(script)
		if err != nil {
			t.Fatalf("%q: %v", script, err)
		}
		if len(st.Mappings) == 0 {
			t.Fatalf("%q: no mappings", script)
		}
		for _, m := range st.Mappings {
			if m.JavaScript < 0 || m.JavaScript > len(st.JavaScript) || m.Script < 0 || m.Script > len(script) {
				t.Fatalf("%q: mapping %+v outside the texts", script, m)
			}
			j, s := st.JavaScript[m.JavaScript:], script[m.Script:]
			for _, word := range []string{"const", "return", "let", "a", "b", "s", "t", "u", "x"} {
				if strings.HasPrefix(j, word+" ") || strings.HasPrefix(j, word+";") || strings.HasPrefix(j, word+".") {
					if !strings.HasPrefix(s, word) {
						t.Errorf("%q: %q at %d of the JavaScript maps to %.10q", script, word, m.JavaScript, s)
					}
				}
			}
		}
	}
}

func TestStripErrorsAreLocated(t *testing.T) {
	for _, tc := range []struct {
		script string
		off    int
	}{
		{"const a: number = 1;\nlet b = 2;\nlet c = a +;", len("const a: number = 1;\nlet b = 2;\nlet c = a +")},
		{"const é: string = 'é'; let c = +;", len("const é: string = 'é'; let c = +")},
		{"const a = {", len("const a = {")},
		{"\r\nlet x: = 1", len("\r\nlet x: ")},
	} {
		_, err := Stripper{}.StripTypes(tc.script)
		var se *ast.StripError
		if !errors.As(err, &se) || se.Offset != tc.off {
			t.Errorf("%q: %#v, want a StripError at %d", tc.script, err, tc.off)
		}
	}
}

func TestWhatIsNotOneFunctionIsRefused(t *testing.T) {
	var se *ast.StripError
	if _, err := (Stripper{}).StripTypes(strings.Repeat(" ", MaxBytes+1)); !errors.As(err, &se) || se.Offset != -1 {
		t.Errorf("a script over MaxBytes: %v", err)
	}
	// A script that closes the function esbuild reads keeps the wrapper's
	// first and last lines, and its body does not validate as a plan: ast
	// checks that what it is given stays inside its own wrapper.
	r, _ := ast.RulesForPreset("experimental")
	for _, script := range []string{
		"}\nfunction other() {",
		"return 1 }\nasync function __codecall_plan() {",
	} {
		st, err := Stripper{}.StripTypes(script)
		if err != nil {
			continue
		}
		if _, err := ast.Validate(st.JavaScript, r); err == nil {
			t.Errorf("%q: the body validates:\n%s", script, st.JavaScript)
		}
	}
	// Nor does the wrapper's name confuse the shape check.
	st, err := Stripper{}.StripTypes("const __codecall_plan: number = 1;\nreturn __codecall_plan;")
	if err != nil || !strings.Contains(st.JavaScript, "return __codecall_plan") {
		t.Errorf("%v: %+v", err, st)
	}
}

// TestStripTypesStackBound feeds esbuild the constructs that cost it the
// most Go stack per byte of source, nested as deep as MaxBytes allows,
// without ast's bounds in front: a wrong figure in the package
// documentation ends this test with a fatal stack overflow.
func TestStripTypesStackBound(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("uses hundreds of megabytes of stack")
	}
	n := MaxBytes - 16
	for name, script := range map[string]string{
		"array":  "return " + strings.Repeat("[", n),
		"paren":  "return " + strings.Repeat("(", n),
		"member": "return a" + strings.Repeat(".b", n/2),
		"not":    "return " + strings.Repeat("!", n/8) + "x", // quadratic in esbuild: ast bounds it
	} {
		if len(script) > MaxBytes {
			t.Fatalf("%s is %d bytes", name, len(script))
		}
		_, _ = Stripper{}.StripTypes(script)
	}
}
