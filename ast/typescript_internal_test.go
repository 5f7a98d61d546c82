package ast

import (
	"errors"
	"strings"
	"testing"
)

// fakeStripper strips what the tests tell it to, without a TypeScript
// parser: it replaces ": number" with nothing and maps every byte it keeps.
type fakeStripper struct {
	err   error
	calls int
}

func (f *fakeStripper) StripTypes(script string) (*Stripped, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	var js strings.Builder
	var maps []Mapping
	for i := 0; i < len(script); {
		if strings.HasPrefix(script[i:], ": number") {
			i += len(": number")
			continue
		}
		maps = append(maps, Mapping{JavaScript: js.Len(), Script: i})
		js.WriteByte(script[i])
		i++
	}
	return &Stripped{JavaScript: js.String(), Mappings: maps}, nil
}

func TestValidateTypeScriptWithAFakeStripper(t *testing.T) {
	r := presetRules(t, SE)
	f := &fakeStripper{}
	c, err := ValidateTypeScript("const a: number = 1;\nconst b: number = a + 1;\nreturn b", r, f)
	if err != nil {
		t.Fatal(err)
	}
	if !c.TypeScript() || f.calls != 1 || c.Source() != "const a = 1;\nconst b = a + 1;\nreturn b" {
		t.Fatalf("TypeScript %v, calls %d, Source %q", c.TypeScript(), f.calls, c.Source())
	}
	if got := runPlan(t, c).ToInteger(); got != 2 {
		t.Errorf("result %d", got)
	}
	// b of return b is at 3:8 in both; a of "a + 1" at 2:11 in Source and
	// 2:19 in the script.
	for _, tc := range []struct{ in, want Location }{
		{Location{3, 8}, Location{3, 8}},
		{Location{2, 11}, Location{2, 19}},
		{Location{1, 1}, Location{1, 1}},
		{Location{9, 9}, Location{3, 9}}, // past the end: the end of the script
	} {
		if got := c.ScriptLocation(tc.in); got != tc.want {
			t.Errorf("ScriptLocation(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}

	// A JavaScript plan never reaches the stripper.
	f.calls = 0
	if _, err := ValidateTypeScript("return 1", r, f); err != nil || f.calls != 0 {
		t.Errorf("JavaScript: err %v, calls %d", err, f.calls)
	}
	// Nor does a refused one, or one over a limit.
	for _, s := range []string{"return eval('1')", "const a: number = 1;\n" + strings.Repeat("x;\n", r.MaxScriptLines)} {
		if _, err := ValidateTypeScript(s, r, f); err == nil || f.calls != 0 {
			t.Errorf("%.30q: err %v, calls %d", s, err, f.calls)
		}
	}

	// A stripper that refuses the script as a whole leaves goja's error,
	// with the reason.
	f.err = errors.New("no reason")
	_, err = ValidateTypeScript("const a: number = 1;", r, f)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Location != (Location{1, 8}) || !strings.HasSuffix(se.Message, "not read as TypeScript either: no reason") {
		t.Errorf("err = %v", err)
	}
	// A TypeScript syntax error further on wins; one before goja's loses.
	f.err = &StripError{Message: "bad", Offset: 25}
	if _, err = ValidateTypeScript("const a: number = 1;\nlet b = 1 +;", r, f); !errors.As(err, &se) || se.Location != (Location{2, 5}) ||
		se.Message != "bad (line 2, column 5), reading the script as TypeScript" {
		t.Errorf("err = %v", err)
	}
	f.err = &StripError{Message: "bad", Offset: 2}
	if _, err = ValidateTypeScript("const a: number = 1;", r, f); !errors.As(err, &se) || se.Location != (Location{1, 8}) {
		t.Errorf("err = %v", err)
	}
}

func TestOriginMapping(t *testing.T) {
	script := newLineIndex("const é: number = 1;\nreturn é")
	js := "  const \\u00E9 = 1;\n  return \\u00E9;\n"
	o := newOrigin(script, js, []Mapping{
		{JavaScript: 2, Script: 0},   // const
		{JavaScript: 8, Script: 6},   // \u00E9 / é
		{JavaScript: 15, Script: 17}, // = 1
		{JavaScript: 22, Script: 22}, // return
		{JavaScript: 1000, Script: 0},
		{JavaScript: 29, Script: 1000}, // \u00E9 / é, clamped to the end
		{JavaScript: 9, Script: 7},     // inside é: moved to its start
	})
	for _, tc := range []struct {
		off  int
		want Location
	}{
		{0, Location{1, 1}},   // before the first mapping
		{2, Location{1, 1}},   // const
		{4, Location{1, 3}},   // inside const: the same text
		{8, Location{1, 7}},   // é
		{10, Location{1, 7}},  // inside the escape: not the same text
		{17, Location{1, 19}}, // 1, two bytes of é before it
		{25, Location{2, 4}},
		{29, Location{2, 9}},
		{len(js), Location{2, 9}},
	} {
		if got := o.at(tc.off); got != tc.want {
			t.Errorf("at(%d) = %v, want %v", tc.off, got, tc.want)
		}
	}
	if len(o.maps) != 6 {
		t.Errorf("%d mappings kept, want 6: %v", len(o.maps), o.maps)
	}
	empty := newOrigin(script, js, nil)
	if got := empty.at(5); got != (Location{1, 1}) {
		t.Errorf("no mappings: %v", got)
	}
}

func TestTypeScriptGateNesting(t *testing.T) {
	nest := func(script string) int {
		t.Helper()
		lines := newLineIndex(script)
		scan := prescan(script, lines, 200)
		if scan.problem != nil {
			t.Fatalf("%q: pre-scan: %s", script, scan.problem.what)
		}
		g := gate{src: script, prev: tokStart}
		spans := literalSpans(script, scan.regions)
		k := 0
		for i := 0; i < len(script); {
			if k < len(spans) && i >= spans[k].from {
				i = max(i, spans[k].to)
				k++
				continue
			}
			i, _ = g.token(i)
		}
		return g.nestMax
	}
	for _, tc := range []struct {
		script string
		want   int
	}{
		{"return 1", 0},
		{"f(a, [b], {c: 1})", 2},
		{"a => b => c", 2},
		{"a => b => c; d => e", 2},
		{"f(a => b, c => d)", 2},
		{"const f = a => { return b => c }\nconst g = a => { return 1 }\nconst h = a => 1", 3},
		{"x.map(a => ({b: a})).map(b => b)", 4},
		{"const s = '(((' + `${ '[[' }` // {{{\n", 1},
		{"const r = /(((/; a => b", 1},
	} {
		if got := nest(tc.script); got != tc.want {
			t.Errorf("%q nests %d, want %d", tc.script, got, tc.want)
		}
	}
	// Statements of arrow functions with block bodies, without
	// semicolons, do not add up.
	var b strings.Builder
	for range 100 {
		b.WriteString("const f = async (x) => { return x }\n")
	}
	if got := nest(b.String()); got != 2 {
		t.Errorf("100 arrow statements nest %d, want 2", got)
	}
}

// TestValidatorPanicSaysNothingOfIt checks that a panic inside validation
// becomes a refusal whose text carries nothing of the panic value.
func TestValidatorPanicSaysNothingOfIt(t *testing.T) {
	c, err := func() (c *Checked, err error) {
		defer recoverValidation(&c, &err)
		panic(&struct{ Secret string }{"internals"})
	}()
	if c != nil || err == nil || strings.Contains(err.Error(), "internals") || strings.Contains(err.Error(), "&{") {
		t.Fatalf("got %v, %v; want a refusal without the panic's value", c, err)
	}
}
