package ast

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/codecall-go/codecall/presets"
)

func presetName(s string) presets.Name { return presets.Name(s) }

func presetRules(t testing.TB, name presets.Name) Rules {
	t.Helper()
	r, ok := RulesForPreset(name)
	if !ok {
		t.Fatalf("unknown preset %q", name)
	}
	return r
}

// kindsOf returns the kinds of an *IllegalError's violations, nil for a nil
// error, and fails the test for any other error.
func kindsOf(t testing.TB, script string, err error) []Kind {
	t.Helper()
	if err == nil {
		return nil
	}
	var ie *IllegalError
	if !errors.As(err, &ie) {
		t.Fatalf("Validate(%q) = %T %v, want nil or *IllegalError", script, err, err)
	}
	var ks []Kind
	for _, v := range ie.Violations {
		ks = append(ks, v.Kind)
	}
	return ks
}

func describe(err error) string {
	var ie *IllegalError
	if errors.As(err, &ie) {
		var b strings.Builder
		for _, v := range ie.Violations {
			fmt.Fprintf(&b, "\n\t%s %d:%d %s", v.Kind, v.Location.Line, v.Location.Column, v.Message)
		}
		return b.String()
	}
	return fmt.Sprint(err)
}

const (
	LD = presets.LockedDown
	SE = presets.Secure
	BA = presets.Balanced
	EX = presets.Experimental
)

// outcome is what a script yields under each preset: nil means allowed.
type outcome map[presets.Name][]Kind

func all(ks ...Kind) outcome {
	return outcome{LD: ks, SE: ks, BA: ks, EX: ks}
}

// only refuses under the listed presets with the kinds given, and allows
// under the others.
func only(ks []Kind, names ...presets.Name) outcome {
	o := outcome{}
	for _, n := range names {
		o[n] = ks
	}
	return o
}

func ks(k ...Kind) []Kind { return k }

func TestRulesPerPreset(t *testing.T) {
	const (
		BI = KindBannedIdentifier
		BM = KindBannedMember
	)
	cases := []struct {
		name   string
		script string
		want   outcome
	}{
		// Allowed everywhere.
		{"arithmetic", "return 1 + 2", all()},
		{"top-level await", "const x = await Promise.resolve(1); return x", all()},
		{"main style", "async function main(){ return 1 }\nreturn main();", all()},
		{"array methods", "return [1,2,3].map(x => x * 2).filter(x => x > 2).reduce((a, b) => a + b, 0)", all()},
		{"class", "class A { constructor(x) { this.x = x } get y() { return this.x } static of(x) { return new A(x) } #p = 1; m() { return this.#p } }\nreturn A.of(2).y", all()},
		{"class static block", "class A { static { A.z = 1 } }\nreturn A.z", all()},
		{"generators", "function* g() { yield 1; yield* [2, 3] }\nreturn [...g()]", all()},
		{"getters and setters", "const o = { get a() { return 1 }, set a(v) {} }; return o.a", all()},
		{"new.target", "function F() { return new.target !== undefined }\nreturn new F()", all()},
		{"spread and rest", "const {a, ...rest} = {a: 1, b: 2}; const [x, ...ys] = [1, 2]; return {...rest, x, ys}", all()},
		{"optional chaining", "const o = null; return o?.a?.[0]?.(1) ?? 2", all()},
		{"labels without loops", "out: { break out }\nreturn 1", all()},
		{"switch", "switch (1) { case 1: return 'a'; default: return 'b' }", all()},
		{"try", "try { throw new Error('x') } catch ({message}) { return message } finally {}", all()},
		{"tagged template", "const t = (s, ...v) => s.raw.join('|'); return t`a${1}b`", all()},
		{"property names after a dot", "const o = {}; return [o.process, o.require, o.eval, o.Function, o.global, o.self, o.import]", all()},
		{"banned names as plain keys", "return {eval: 1, process: 2, require: 3, globalThis: 4, import: 5, console: 6}", all()},
		{"data keys named like legacy members", "return {arguments: [1], caller: 'me', callee: 'you'}", all()},
		{"string methods", "return 'a-b'.split('-').join('+').replaceAll('+', '')", all()},
		{"callTool", "const r = await callTool('users.get', {id: 1}); return r", all()},
		{"timers", "await new Promise(r => setTimeout(r, 10)); const t = setTimeout(() => 1, 5); clearTimeout(t); return 1", all()},
		{"web globals", "const u = new URL('https://x.org/?a=1'); const b = new TextEncoder().encode(u.searchParams.get('a')); return [new TextDecoder().decode(b), structuredClone({u: u.href}), new URLSearchParams('a=b').toString()]", all()},

		// Banned identifiers, every preset.
		{"eval", "eval('1')", all(BI)},
		{"Function", "return Function('return 1')", all(BI)},
		{"new Function", "return new Function('return 1')", all(BI)},
		{"require", "const fs = require('fs')", all(BI)},
		{"process", "return process.env", all(BI)},
		{"globalThis", "return globalThis", all(BI)},
		{"Reflect", "return Reflect.ownKeys({})", all(BI)},
		{"Proxy", "return new Proxy({}, {})", all(BI)},
		{"WebAssembly", "return typeof WebAssembly", all(BI)},
		{"setInterval", "setInterval(() => 1, 10)", all(BI)},
		{"setImmediate", "setImmediate(() => 1)", all(BI)},
		{"queueMicrotask", "queueMicrotask(() => 1)", all(BI)},
		{"arguments", "function f() { return arguments[0] }\nreturn f(1)", all(BI)},
		{"declared name", "const self = 1", all(BI)},
		{"function name", "function eval2() {}\nfunction require() {}", all(BI)},
		{"class name", "class process {}", all(BI)},
		{"parameter", "return ((window) => window)(1)", all(BI, BI)},
		{"catch parameter", "try {} catch (global) {}", all(BI)},
		{"label", "eval: { break eval }", all(BI, BI)},
		{"shorthand property", "return {eval}", all(BI)},
		{"destructuring default", "const {a = eval} = {}", all(BI)},
		{"destructuring target", "const {a: require} = {}", all(BI)},
		{"array pattern", "const [module] = [1]", all(BI)},
		{"rest element", "const [...exports] = [1]", all(BI)},
		{"typeof", "return typeof eval", all(BI)},
		{"__proto__ as identifier", "const __proto__ = 1", all(BI)},
		{"constructor as identifier", "let constructor = 1", all(BI)},

		// Banned members, every preset.
		{"dot constructor", "return (() => 1).constructor", all(BM)},
		{"bracket constructor", "return ({})['constructor']", all(BM)},
		{"double-quoted key", `return ({})["__proto__"]`, all(BM)},
		{"template key", "return ({})[`prototype`]", all(BM)},
		{"optional member", "return null?.constructor", all(BM)},
		{"optional bracket", "return null?.['__proto__']", all(BM)},
		{"super member", "class A extends Object { m() { return super.constructor } }", all(BM)},
		{"legacy accessors", "const o = {}; o.__defineGetter__('a', () => 1); o.__lookupGetter__('a'); o.__defineSetter__; o.__lookupSetter__", all(BM, BM, BM, BM)},
		{"caller, callee, arguments", "function f() {}\nreturn [f.caller, f.arguments, f.callee]", all(BM, BM, BM)},
		{"object literal __proto__", "return {__proto__: null}", all(BM)},
		{"object literal quoted __proto__", `return {"__proto__": null}`, all(BM)},
		{"computed constructor key", `return {["constructor"]: 1}`, all(BM)},
		{"computed template key", "return {[`prototype`]: 1}", all(BM)},
		{"method named prototype", "return {prototype() {}}", all(BM)},
		{"destructured constructor", "const {constructor} = () => 1", all(BM)},
		{"destructured key", "const {constructor: c} = () => 1", all(BM)},
		{"computed destructured key", `const {["__proto__"]: p} = {}`, all(BM)},
		{"assignment pattern", "let c; ({constructor: c} = {})", all(BM)},
		{"class field named prototype", "class A { prototype = 1 }", all(BM)},
		{"class method named __proto__", "class A { __proto__() {} }", all(BM)},
		{"static constructor method", "class A { static constructor() {} }", all(BM)},
		{"computed runtime key is not seen here", `const k = "constr" + "uctor"; return ({})[k]`, all()},

		// with, debugger, import.
		{"with", "with ({a: 1}) { a }", all(KindWith)},
		{"debugger", "debugger", all(KindDebugger)},
		{"import declaration", "import fs from 'fs'", all(KindImport)},
		{"dynamic import", "const m = await import('fs')", all(KindImport)},
		{"import.meta", "return import.meta", all(KindImport)},
		{"export", "export const x = 1", all(KindImport)},

		// Loops: refused by locked_down and secure.
		{"for", "let s = 0; for (let i = 0; i < 3; i++) s += i; return s", only(ks(KindLoop), LD, SE)},
		{"for-in", "for (const k in {a: 1}) {}", only(ks(KindLoop), LD, SE)},
		{"for-of", "for (const x of [1]) {}", only(ks(KindLoop), LD, SE)},
		{"for-of with var", "for (var x of [1]) {}", only(ks(KindLoop), LD, SE)},
		{"for-in with expression", "let k; for (k in {}) {}", only(ks(KindLoop), LD, SE)},
		{"while", "let i = 0; while (i < 3) i++", only(ks(KindLoop), LD, SE)},
		{"do-while", "let i = 0; do { i++ } while (i < 3)", only(ks(KindLoop), LD, SE)},
		{"labelled loop", "outer: for (;;) { inner: while (true) { break outer } }", only(ks(KindLoop, KindLoop), LD, SE)},
		{"loop in a function", "function f() { for (;;) {} }", only(ks(KindLoop), LD, SE)},

		// Console: refused by locked_down only.
		{"console", "console.log('x')", only(ks(BI), LD)},

		// Regular expressions: none in locked_down, RE2-safe literals in
		// secure, anything in balanced and experimental.
		{"regex literal", "return /ab+c/i.test('abbc')", only(ks(KindRegex), LD)},
		{"regex with classes", `return /^[\w.-]+@\d{1,3}\s*$/m.test('a@1')`, only(ks(KindRegex), LD)},
		{"regex named group", "return /(?<year>\\d{4})/.exec('2024').groups.year", only(ks(KindRegex), LD)},
		{"regex lookahead", "return /a(?=b)/.test('ab')", only(ks(KindRegex), LD, SE)},
		{"regex negative lookbehind", "return /(?<!a)b/.test('b')", only(ks(KindRegex), LD, SE)},
		{"regex backreference", `return /(a)\1/.test('aa')`, only(ks(KindRegex), LD, SE)},
		{"regex named backreference", `return /(?<x>a)\k<x>/.test('aa')`, only(ks(KindRegex), LD, SE)},
		{"regex sticky", "return /a/y.test('a')", only(ks(KindRegex), LD, SE)},
		{"regex huge repeat", "return /a{2000}/.test('a')", only(ks(KindRegex), LD, SE)},
		{"RegExp constructor", "return new RegExp('a')", only(ks(BI), LD, SE)},
		{"RegExp reference", "const R = RegExp", only(ks(BI), LD, SE)},
	}
	for _, tc := range cases {
		for _, name := range presets.Names {
			t.Run(tc.name+"/"+string(name), func(t *testing.T) {
				_, err := Validate(tc.script, presetRules(t, name))
				got := kindsOf(t, tc.script, err)
				want := tc.want[name]
				if !slices.Equal(got, want) {
					t.Errorf("Validate(%q) kinds %v, want %v%s", tc.script, got, want, describe(err))
				}
			})
		}
	}
}

func TestForAwaitWhenLoopsAreAllowed(t *testing.T) {
	// goja cannot parse for await: with loops allowed it is a syntax
	// error that says so.
	_, err := Validate("for await (const x of []) {}", presetRules(t, BA))
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "for await") || se.Location != (Location{1, 5}) {
		t.Fatalf("got %T %v", err, err)
	}
}

func TestConfiguredBannedIdentifiers(t *testing.T) {
	r := presetRules(t, EX)
	r.BannedIdentifiers = []string{"fetch", "Date"}
	_, err := Validate("const d = Date.now()\nreturn fetch(d)", r)
	var ie *IllegalError
	if !errors.As(err, &ie) || len(ie.Violations) != 2 {
		t.Fatalf("got %v", describe(err))
	}
	for i, want := range []Location{{1, 11}, {2, 8}} {
		v := ie.Violations[i]
		if v.Kind != KindBannedIdentifier || v.Location != want || !strings.Contains(v.Message, "configuration") {
			t.Errorf("violation %d = %+v, want banned_identifier at %v", i, v, want)
		}
	}
	// Property names are not references.
	if _, err := Validate("return ({}).fetch", r); err != nil {
		t.Errorf("property named like a banned identifier: %v", err)
	}
}

func TestMessagesNameThePresetAndTheFix(t *testing.T) {
	_, err := Validate("for (;;) {}", presetRules(t, SE))
	var ie *IllegalError
	if !errors.As(err, &ie) {
		t.Fatal(err)
	}
	msg := ie.Violations[0].Message
	for _, want := range []string{"for loops", "secure preset", "line 1, column 1", "map, filter"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if ie.Error() != msg {
		t.Errorf("Error() = %q, want the first message", ie.Error())
	}
	// Without a preset name the message still reads well.
	r := presetRules(t, SE)
	r.Preset = ""
	_, err = Validate("for (;;) {}", r)
	if !strings.Contains(err.Error(), "by this preset") {
		t.Errorf("message %q", err)
	}
}

func TestEveryViolationWithItsLocation(t *testing.T) {
	script := strings.Join([]string{
		`const a = eval("1");`,                          // eval at 1:11
		`  const b = a.constructor;`,                    // constructor at 2:15
		`for (const x of [1]) {}`,                       // loop at 3:1
		`const s = "é"; process.exit(1)`,                // process at 4:16 (é is one character)
		"\tconst r = /(?=x)/;",                          // regex at 5:12
		`with (a) { debugger }`,                         // with at 6:1, debugger at 6:12
		`const o = {__proto__: null, ["prototype"]: 1}`, // 7:12 and 7:30
	}, "\n")
	_, err := Validate(script, presetRules(t, SE))
	var ie *IllegalError
	if !errors.As(err, &ie) {
		t.Fatalf("got %T %v", err, err)
	}
	want := []struct {
		kind Kind
		loc  Location
	}{
		{KindBannedIdentifier, Location{1, 11}},
		{KindBannedMember, Location{2, 15}},
		{KindLoop, Location{3, 1}},
		{KindBannedIdentifier, Location{4, 16}},
		{KindRegex, Location{5, 12}},
		{KindWith, Location{6, 1}},
		{KindDebugger, Location{6, 12}},
		{KindBannedMember, Location{7, 12}},
		{KindBannedMember, Location{7, 30}},
	}
	if len(ie.Violations) != len(want) {
		t.Fatalf("got %d violations, want %d:%s", len(ie.Violations), len(want), describe(err))
	}
	for i, w := range want {
		v := ie.Violations[i]
		if v.Kind != w.kind || v.Location != w.loc {
			t.Errorf("violation %d = %s at %v, want %s at %v", i, v.Kind, v.Location, w.kind, w.loc)
		}
		at := fmt.Sprintf("(line %d, column %d)", w.loc.Line, w.loc.Column)
		if !strings.Contains(v.Message, at) {
			t.Errorf("message %q does not say %s", v.Message, at)
		}
	}
}

func TestLocations(t *testing.T) {
	r := presetRules(t, SE)
	for _, tc := range []struct {
		script string
		want   Location
	}{
		{"eval()", Location{1, 1}},
		{"  process", Location{1, 3}},
		{"a;\neval()", Location{2, 1}},
		{"a;\r\n  eval()", Location{2, 3}},
		{"a;\rb;\reval()", Location{3, 1}},
		{"a;\u2028eval()", Location{2, 1}},
		{"const s = '日本語'; eval()", Location{1, 18}},
		{"const s = '😀'; eval()", Location{1, 16}},
		{"/* é\n é */ x.constructor", Location{2, 9}},
		{"const t = `line\nline ${eval}`", Location{2, 8}},
	} {
		_, err := Validate(tc.script, r)
		var ie *IllegalError
		if !errors.As(err, &ie) || len(ie.Violations) != 1 {
			t.Errorf("Validate(%q) = %s", tc.script, describe(err))
			continue
		}
		if got := ie.Violations[0].Location; got != tc.want {
			t.Errorf("Validate(%q) at %v, want %v", tc.script, got, tc.want)
		}
	}
}

func TestSyntaxErrors(t *testing.T) {
	r := presetRules(t, SE)
	for _, tc := range []struct {
		script string
		want   Location
		says   string
	}{
		{"let x = ;", Location{1, 9}, "Unexpected token ;"},
		{"const a = 1;\nconst b = a +* 2;", Location{2, 14}, "Unexpected token"},
		{"const a = 1;\nconst b = );", Location{2, 11}, `unexpected ")"`},
		{"const a = [1, 2;\n", Location{1, 11}, `"[" is never closed`},
		{"const o = {a: 1\nreturn o", Location{1, 11}, `"{" is never closed`},
		{"f(1]", Location{1, 4}, `the "(" opened at line 1, column 2 is still open`},
		{"})\n(function(){", Location{1, 1}, "cannot close it"},
		{"const s = 'abc\nreturn s", Location{1, 11}, "string is never closed"},
		{"const t = `abc", Location{1, 11}, "template literal is never closed"},
		{"/* never closed", Location{1, 1}, "comment is never closed"},
		{"const r = /abc\n", Location{1, 11}, "regular expression is never closed"},
		{"return 1 +", Location{1, 11}, "Unexpected end of input"},
		{"let a = 1; let a = 2", Location{1, 16}, "already been declared"},
		{"return 010", Location{1, 8}, "Octal"},
		{"const s = “quoted”", Location{1, 11}, "U+201C"},
		{"return @", Location{1, 8}, ""},
	} {
		_, err := Validate(tc.script, r)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Validate(%q) = %T %v, want *SyntaxError", tc.script, err, err)
			continue
		}
		if se.Location != tc.want || !strings.Contains(se.Message, tc.says) {
			t.Errorf("Validate(%q) = %q at %v, want %v and %q", tc.script, se.Message, se.Location, tc.want, tc.says)
		}
		if !strings.Contains(se.Message, fmt.Sprintf("line %d, column %d", tc.want.Line, tc.want.Column)) {
			t.Errorf("message %q does not carry its location", se.Message)
		}
	}
}

func TestLimitsBeforeParsing(t *testing.T) {
	r := presetRules(t, LD) // 16 KiB, 500 lines, nesting 32
	t.Run("size", func(t *testing.T) {
		_, err := Validate(strings.Repeat("a;", 9000), r)
		if ks := kindsOf(t, "", err); !slices.Equal(ks, []Kind{KindScriptTooLarge}) {
			t.Fatalf("got %v", describe(err))
		}
	})
	t.Run("lines", func(t *testing.T) {
		_, err := Validate(strings.Repeat("a\n", 600), r)
		var ie *IllegalError
		if !errors.As(err, &ie) || ie.Violations[0].Kind != KindTooManyLines || ie.Violations[0].Location != (Location{501, 1}) {
			t.Fatalf("got %v", describe(err))
		}
		if _, err := Validate(strings.Repeat("a\n", 500), r); err != nil {
			t.Errorf("500 lines and a final line break: %v", err)
		}
	})
	t.Run("nesting", func(t *testing.T) {
		ok := strings.Repeat("[", 32) + strings.Repeat("]", 32)
		if _, err := Validate("return "+ok, r); err != nil {
			t.Errorf("32 levels: %v", err)
		}
		_, err := Validate("return ["+ok+"]", r)
		var ie *IllegalError
		if !errors.As(err, &ie) || ie.Violations[0].Kind != KindTooDeep || ie.Violations[0].Location != (Location{1, 40}) {
			t.Fatalf("33 levels: %v", describe(err))
		}
	})
	t.Run("nesting without brackets", func(t *testing.T) {
		script := strings.Repeat("if (a) ", 40) + "x()"
		_, err := Validate(script, r)
		if ks := kindsOf(t, script, err); !slices.Contains(ks, KindTooDeep) {
			t.Fatalf("got %v", describe(err))
		}
		// An else-if chain is flat.
		chain := "if (a) x();" + strings.Repeat(" else if (a) x();", 40)
		if _, err := Validate(chain, r); err != nil {
			t.Errorf("else-if chain: %v", err)
		}
	})
	t.Run("zero rules are the strictest", func(t *testing.T) {
		if _, err := Validate("return 1", Rules{}); err != nil {
			t.Errorf("Rules{}: %v", err)
		}
		for _, script := range []string{"console.log(1)", "for (;;) {}", "return /a/", "return RegExp", "return " + strings.Repeat("[", 65) + strings.Repeat("]", 65)} {
			if _, err := Validate(script, Rules{}); err == nil {
				t.Errorf("Rules{} allowed %q", script)
			}
		}
	})
}

func TestUnicodeTricks(t *testing.T) {
	r := presetRules(t, EX)
	for _, tc := range []struct {
		name   string
		script string
		want   []Kind
		at     Location
	}{
		{"BiDi override in a string", "const s = 'abc\u202Edef'", ks(KindUnicode), Location{1, 15}},
		{"BiDi isolate in a comment", "// \u2066hidden\u2069\nreturn 1", ks(KindUnicode, KindUnicode), Location{1, 4}},
		{"BiDi mark in code", "const a = 1;\u200Freturn a", ks(KindUnicode), Location{1, 13}},
		{"Arabic letter mark", "'\u061C'", ks(KindUnicode), Location{1, 2}},
		{"identifier escape", `\u0065val('1')`, ks(KindBannedIdentifier, KindUnicode), Location{1, 1}},
		{"braced identifier escape", `\u{65}val('1')`, ks(KindBannedIdentifier, KindUnicode), Location{1, 1}},
		{"escape inside an identifier", `ev\u0061l('1')`, ks(KindBannedIdentifier, KindUnicode), Location{1, 1}},
		{"escaped property name", `x.\u0063onstructor`, ks(KindBannedMember, KindUnicode), Location{1, 3}},
		{"harmless escaped identifier", `const \u0061 = 1`, ks(KindUnicode), Location{1, 7}},
		{"Cyrillic homoglyph", "еval('1')", ks(KindUnicode), Location{1, 1}},
		{"Greek letter inside", "const pοrt = 1", ks(KindUnicode), Location{1, 8}},
		{"zero-width joiner in an identifier", "const a\u200Db = 1", ks(KindUnicode), Location{1, 8}},
		{"zero-width no-break space in code", "const a = 1;\uFEFFreturn a", ks(KindUnicode), Location{1, 13}},
		{"escape in regex flags", `return /a/\u0067`, ks(KindUnicode), Location{1, 11}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Validate(tc.script, r)
			got := kindsOf(t, tc.script, err)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("kinds %v, want %v%s", got, tc.want, describe(err))
			}
			var ie *IllegalError
			errors.As(err, &ie)
			if ie.Violations[0].Location != tc.at {
				t.Errorf("first violation at %v, want %v", ie.Violations[0].Location, tc.at)
			}
		})
	}
	// Non-ASCII text in strings, templates and comments is fine,
	// including zero-width joiners in emoji.
	ok := "// héllo wörld\nconst s = 'naïve 日本 👩\u200D💻'; const t = `ü${s}`; return s + t"
	if _, err := Validate(ok, r); err != nil {
		t.Errorf("non-ASCII text: %v", err)
	}
	// Invisible characters inside strings other than BiDi controls are
	// data.
	if _, err := Validate("return 'a\u200Bb'", r); err != nil {
		t.Errorf("zero-width space in a string: %v", err)
	}
}

func TestSourceMapsAreNotRead(t *testing.T) {
	// goja's parser would read the file named by a sourceMappingURL
	// comment; Validate turns source maps off. A missing file is silently
	// ignored by goja, so the observable guarantee is that validation does
	// not depend on the file system: the script is valid either way.
	script := "return 1\n//# sourceMappingURL=/etc/passwd"
	if _, err := Validate(script, presetRules(t, SE)); err != nil {
		t.Fatal(err)
	}
}

func TestStrictMode(t *testing.T) {
	c, err := Validate("function f() { return this }\nreturn f() === undefined", presetRules(t, SE))
	if err != nil {
		t.Fatal(err)
	}
	if !runPlan(t, c).ToBoolean() {
		t.Error("this is not undefined in a plain function call")
	}
	// Sloppy-mode-only syntax is refused by the strict compile.
	if _, err := Validate("function f(a, a) {}", presetRules(t, SE)); err == nil {
		t.Error("duplicate parameters compiled")
	}
}

func TestLocate(t *testing.T) {
	c, err := Validate("const a = 1;\nconst s = 'é';   throw new Error('x')", presetRules(t, SE))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line, col int
		want      Location
	}{
		{1, len(wrapPrefix) + 1, Location{1, 1}},
		{1, len(wrapPrefix) + 7, Location{1, 7}},
		{1, 3, Location{1, 1}},     // inside the wrapper's prefix
		{2, 18, Location{2, 17}},   // byte column 18 is after the 2-byte é
		{2, 1000, Location{2, 38}}, // past the end of the line
		{3, 1, Location{2, 38}},    // the wrapper's closing line
		{0, 0, Location{1, 1}},     // nonsense
	} {
		if got := c.Locate(tc.line, tc.col); got != tc.want {
			t.Errorf("Locate(%d, %d) = %v, want %v", tc.line, tc.col, got, tc.want)
		}
	}
	// Positions goja reports at run time map back to the script.
	var nilChecked *Checked
	if got := nilChecked.Locate(2, 3); got != (Location{2, 3}) {
		t.Errorf("nil Checked: %v", got)
	}
}

func TestRuntimeErrorPositionsMapBack(t *testing.T) {
	c, err := Validate("const a = 1;\n  null.x", presetRules(t, SE))
	if err != nil {
		t.Fatal(err)
	}
	line, col := rejectionPosition(t, c)
	if got := c.Locate(line, col); got.Line != 2 || got.Column < 3 || got.Column > 8 {
		t.Errorf("the TypeError is at program %d:%d, script %v; want line 2 within null.x", line, col, got)
	}
	c, err = Validate("throw new Error('x')", presetRules(t, SE))
	if err != nil {
		t.Fatal(err)
	}
	line, col = rejectionPosition(t, c)
	if got := c.Locate(line, col); got.Line != 1 || got.Column < 1 || got.Column > 20 {
		t.Errorf("the Error is at program %d:%d, script %v; want line 1", line, col, got)
	}
}

func TestLongReportsAreCut(t *testing.T) {
	r := presetRules(t, SE)
	for name, script := range map[string]string{
		"rules":   strings.Repeat("eval;\n", 150),
		"unicode": strings.Repeat("'\u202E';\n", 150),
		"both":    strings.Repeat("eval;'\u202E';\n", 150),
	} {
		_, err := Validate(script, r)
		var ie *IllegalError
		if !errors.As(err, &ie) {
			t.Fatalf("%s: %v", name, err)
		}
		total := len(ie.Violations) + ie.Omitted
		want := 150
		if name == "both" {
			want = 300
		}
		if len(ie.Violations) != maxViolations || total != want {
			t.Errorf("%s: %d violations and %d omitted, want %d and %d", name, len(ie.Violations), ie.Omitted, maxViolations, want-maxViolations)
		}
		if ie.Violations[0].Location != (Location{1, 1}) && name != "unicode" {
			t.Errorf("%s: the report does not start at the first violation: %v", name, ie.Violations[0].Location)
		}
	}
}

func TestPublicLists(t *testing.T) {
	ids := AlwaysBannedIdentifiers()
	for _, want := range []string{"eval", "Function", "AsyncFunction", "GeneratorFunction", "AsyncGeneratorFunction",
		"require", "process", "module", "exports", "globalThis", "global", "window", "self", "Reflect", "Proxy",
		"WebAssembly", "__proto__", "constructor", "arguments", "setInterval", "clearInterval", "setImmediate", "clearImmediate", "queueMicrotask"} {
		if !slices.Contains(ids, want) {
			t.Errorf("AlwaysBannedIdentifiers lacks %q", want)
		}
	}
	for _, allowed := range []string{"setTimeout", "clearTimeout", "URL", "URLSearchParams", "TextEncoder", "TextDecoder", "structuredClone"} {
		if slices.Contains(ids, allowed) {
			t.Errorf("AlwaysBannedIdentifiers has %q, which plans may use", allowed)
		}
	}
	if !slices.IsSorted(ids) {
		t.Error("AlwaysBannedIdentifiers is not sorted")
	}
	members := BannedMembers()
	for _, want := range []string{"constructor", "prototype", "__proto__", "__defineGetter__", "__defineSetter__",
		"__lookupGetter__", "__lookupSetter__", "caller", "callee", "arguments"} {
		if !slices.Contains(members, want) {
			t.Errorf("BannedMembers lacks %q", want)
		}
	}
	// The lists are copies.
	ids[0] = "changed"
	if AlwaysBannedIdentifiers()[0] == "changed" {
		t.Error("AlwaysBannedIdentifiers returns shared state")
	}
	if _, ok := RulesForPreset("nope"); ok {
		t.Error("RulesForPreset accepted an unknown preset")
	}
	for _, name := range presets.Names {
		r, _ := RulesForPreset(name)
		l, _ := presets.LimitsFor(name)
		if r.Preset != name || r.MaxScriptBytes != l.MaxScriptBytes || r.MaxNestingDepth != l.MaxNestingDepth || r.AllowLoops != l.AllowLoops {
			t.Errorf("RulesForPreset(%s) = %+v", name, r)
		}
	}
}

func TestBigIntLiteralsRefused(t *testing.T) {
	for _, script := range []string{"return 1n", "return 1n << 10n**13n", "const x = 0x1fn; return x"} {
		_, err := Validate(script, RulesFor(mustLimits(t)))
		var ill *IllegalError
		if !errors.As(err, &ill) || ill.Violations[0].Kind != KindBigInt {
			t.Errorf("%q: err = %v, want a bigint violation", script, err)
		}
	}
	if _, err := Validate("return 10 ** 3", RulesFor(mustLimits(t))); err != nil {
		t.Errorf("ordinary numbers refused: %v", err)
	}
}

func mustLimits(t *testing.T) presets.Limits {
	t.Helper()
	l, ok := presets.LimitsFor(presets.Balanced)
	if !ok {
		t.Fatal("no balanced preset")
	}
	return l
}

func TestHasRegExpLiterals(t *testing.T) {
	for script, want := range map[string]bool{
		`return 1`:                      false,
		`return "a/b/c".split("/")`:     false,
		`return /ab+c/.test("abbc")`:    true,
		"return `x`.replace(/x/g, 'y')": true,
		`const r = 4 / 2 / 1; return r`: false,
	} {
		c, err := Validate(script, RulesFor(mustLimits(t)))
		if err != nil {
			t.Fatalf("%q: %v", script, err)
		}
		if got := c.HasRegExpLiterals(); got != want {
			t.Errorf("%q: HasRegExpLiterals = %v, want %v", script, got, want)
		}
	}
	if !(&Checked{}).HasRegExpLiterals() {
		t.Error("a Checked built by hand must report literals, so the runtime hardens RegExp up front")
	}
}
