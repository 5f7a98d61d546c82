package ast

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dop251/goja/parser"

	"github.com/codecall-go/codecall/presets"
)

// fuzzSeeds are tricky scripts: literals that look like code, code that
// looks like literals, and the shapes of known attacks.
var fuzzSeeds = []string{
	"return 1",
	"})\n(function(){",
	"x = a / 2 / (b)",
	"x = {} / 2",
	"if (a) {} /'/.test(s)",
	"let a = 1\n++/x/.lastIndex",
	"x = class {} / 2",
	"return `a${`b${'c'}`}d`",
	"return '\\u{65}' + \"\\x41\" + '\\\n'",
	"const r = /[/\\]]+/gi; return r",
	"/* ( */ // )\nreturn [/*]*/1]",
	"x = = `if (((`",
	"(a=(a=(a=(a=1)=>a)=>a)=>a)=>a",
	"a: b: c: d: ;",
	"\\u0065val('1')",
	"еval('1')",
	"'\u202E' + x",
	"for await (const x of y) {}",
	"import('x')",
	"with (o) { debugger }",
	"x['constr' + 'uctor']",
	"({__proto__: null, ['prototype']: 1, constructor() {}})",
	"class A { constructor() {} static constructor() {} }",
	"return a ? b : c ? d : e",
	"return x => y => z",
	"#!/usr/bin/env node\nreturn 1",
	"return 1 //# sourceMappingURL=data:application/json;base64,e30=",
	"return '\u2028' /*\u2029*/",
	"x = a\r\n/b/g.exec(c)",
	"return /(?<n>a)\\k<n>/y",
	strings.Repeat("[", 100) + strings.Repeat("]", 100),
	strings.Repeat("!", 300) + "a",
	"`${",
	"'",
	"/",
	"\\",
	"#",
	"@",
}

func FuzzValidate(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, uint8(0))
	}
	for _, s := range realisticPlans {
		f.Add(s, uint8(1))
	}
	f.Fuzz(func(t *testing.T, script string, preset uint8) {
		r, _ := RulesForPreset(presets.Names[int(preset)%len(presets.Names)])
		checked, err := Validate(script, r)

		program := wrapPrefix + script + wrapSuffix
		var se *SyntaxError
		var ie *IllegalError
		switch {
		case err == nil:
			if checked == nil || checked.Program == nil {
				t.Fatal("nil program without an error")
			}
			// What was accepted parses as exactly the wrapper.
			tree, perr := parser.ParseFile(nil, "", program, 0, parser.WithDisableSourceMaps)
			if perr != nil {
				t.Fatalf("accepted a script goja cannot parse: %v", perr)
			}
			if _, ok := checkWrapper(tree, len(script)); !ok {
				t.Fatal("accepted a script that escapes the wrapper")
			}
		case errors.As(err, &se):
			checkLocation(t, script, se.Location, se.Message)
		case errors.As(err, &ie):
			if len(ie.Violations) == 0 {
				t.Fatal("IllegalError without violations")
			}
			for _, v := range ie.Violations {
				if v.Kind == "" {
					t.Fatalf("violation without a kind: %+v", v)
				}
				checkLocation(t, script, v.Location, v.Message)
			}
		default:
			t.Fatalf("unexpected error %T: %v", err, err)
		}
	})
}

// checkLocation checks that a location is inside the script (or just past
// its end) and that the message says where it is.
func checkLocation(t *testing.T, script string, loc Location, msg string) {
	t.Helper()
	if msg == "" {
		t.Fatal("empty message")
	}
	if !utf8.ValidString(script) {
		return
	}
	lines := newLineIndex(script)
	if loc.Line < 1 || loc.Column < 1 || loc.Line > len(lines.starts) {
		t.Fatalf("location %v outside a script of %d lines: %s", loc, len(lines.starts), msg)
	}
	if !strings.Contains(msg, fmt.Sprintf("line %d, column %d", loc.Line, loc.Column)) &&
		!strings.Contains(msg, "too many to parse safely") && !strings.Contains(msg, "more than the") {
		t.Fatalf("message %q does not say %v", msg, loc)
	}
}
