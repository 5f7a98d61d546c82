package ast_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/ast/tsstrip"
	"github.com/codecall-go/codecall/presets"
)

func rulesFor(t testing.TB, name presets.Name) ast.Rules {
	t.Helper()
	r, ok := ast.RulesForPreset(name)
	if !ok {
		t.Fatalf("unknown preset %q", name)
	}
	return r
}

// TestTypeScriptPlansRun validates TypeScript plans, checks that they were
// read as TypeScript, and runs them.
func TestTypeScriptPlansRun(t *testing.T) {
	tests := []struct {
		name, script, want string
	}{
		{"annotations", "const x: number = 2;\nlet s: string = 'a';\nconst xs: Array<number> = [1, 2];\nreturn JSON.stringify([x, s, xs]);",
			`[2,"a",[1,2]]`},
		{"function types", "function add(a: number, b: number = 1): number { return a + b; }\nconst f: (n: number) => number = n => n * 2;\nreturn JSON.stringify([add(1), f(3)]);",
			`[2,6]`},
		{"generics", "function first<T>(xs: T[]): T | undefined { return xs[0]; }\nconst m = new Map<string, number>([['a', 1]]);\nconst id = <T,>(x: T): T => x;\nreturn JSON.stringify([first<number>([4, 5]), m.get('a'), id('z')]);",
			`[4,1,"z"]`},
		{"as and angle casts", "const v: unknown = '12';\nconst n = Number(v as string);\nconst w = <string>v;\nreturn JSON.stringify([n, w.length, (v as any) as string]);",
			`[12,2,"12"]`},
		{"satisfies", "type Conf = {retries: number};\nconst c = {retries: 3} satisfies Conf;\nreturn JSON.stringify(c);",
			`{"retries":3}`},
		{"interfaces and aliases", "interface Order { id: string; total?: number }\ntype Id = Order['id'];\ntype Pair<A, B> = [A, B];\nconst o: Order = {id: 'o1'};\nconst p: Pair<Id, number> = [o.id, 2];\nreturn JSON.stringify(p);",
			`["o1",2]`},
		{"enums", "enum Color { Red, Green = 5, Blue }\nenum Dir { Up = 'UP', Down = 'DOWN' }\nreturn JSON.stringify([Color.Red, Color.Blue, Color[5], Dir.Down]);",
			`[0,6,"Green","DOWN"]`},
		{"const enum", "const enum K { A = 1, B = 2 }\nreturn JSON.stringify(K.A + K.B);",
			`3`},
		{"non-null and optional chaining", "const o: {a?: {b: number}} = {a: {b: 7}};\nconst m = new Map<string, number>([['k', 1]]);\nreturn JSON.stringify([o.a!.b, o.a?.b, m.get('k')!, (o as any).x?.y ?? 'none']);",
			`[7,7,1,"none"]`},
		{"async arrow with return types", "const load = async (n: number): Promise<number[]> => [n, n + 1];\nasync function total(xs: Promise<number[]>): Promise<number> { return (await xs).reduce((a: number, b: number) => a + b, 0); }\nreturn JSON.stringify(await total(load(3)));",
			`7`},
		{"classes", "abstract class Shape { abstract area(): number; }\nclass Sq extends Shape {\n  #hidden = 1;\n  static count: number = 0;\n  constructor(private readonly side: number, public label?: string) { super(); Sq.count++; }\n  area(): number { return this.side * this.side + this.#hidden - 1; }\n}\nconst s = new Sq(3, 'x');\nreturn JSON.stringify([s.area(), s.label, Sq.count]);",
			`[9,"x",1]`},
		{"declarations vanish", "declare const injected: number;\ndeclare function ext(): void;\ntype Fn = typeof eval;\nlet later!: number;\nlater = 4;\nreturn JSON.stringify(later);",
			`4`},
		{"overloads and this parameter", "function f(x: string): string;\nfunction f(x: number): number;\nfunction f(x: any): any { return x; }\nfunction g(this: void, y: number) { return y; }\nreturn JSON.stringify([f('a'), f(1), g(2)]);",
			`["a",1,2]`},
		{"top-level await and return", "const xs: number[] = await Promise.all([1, 2].map(async (x): Promise<number> => x * 10));\nreturn JSON.stringify(xs);",
			`[10,20]`},
		{"triple-slash and comments", "/// <reference types=\"node\" />\n// a comment: ok\nconst a: number = 1; /* block */\nreturn JSON.stringify(a);",
			`1`},
		{"non-ASCII text", "const s: string = 'é😀';\nconst t = `Größe ${s.length}`;\nreturn JSON.stringify([s, t]);",
			`["é😀","Größe 3"]`},
		{"regular expressions", "const code: string = 'DE-12';\nconst ok = /^[A-Z]{2}-\\d+$/.test(code) && !/x/.test(code);\nreturn JSON.stringify([ok, code.replace(/\\d/g, '#')]);",
			`[true,"DE-##"]`},
		{"shadowed names", "const x: number = 1;\nconst f = (x: number) => { const y = (x: number) => x + 1; return y(x) * 10; };\nreturn JSON.stringify([x, f(2)]);",
			`[1,30]`},
		{"CRLF lines", "const a: number = 1;\r\nconst b: number = 2;\r\nreturn JSON.stringify(a + b);",
			`3`},
		{"types only", "interface Nothing {}\ntype Also = Nothing;",
			``},
	}
	r := rulesFor(t, presets.Secure)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tsstrip.Validate(tt.script, r)
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if !c.TypeScript() {
				t.Error("TypeScript() = false")
			}
			got := ast.RunPlan(t, c).Export()
			if got == nil {
				got = ""
			}
			if got != tt.want {
				t.Errorf("result = %v, want %s\nJavaScript:\n%s", got, tt.want, c.Source())
			}
		})
	}
}

// TestJavaScriptFirst: a script that is JavaScript is read as JavaScript,
// and the Checked is the one Validate returns.
func TestJavaScriptFirst(t *testing.T) {
	r := rulesFor(t, presets.Secure)
	for _, script := range []string{
		"return 1 + 2",
		"const lt = (a, b) => a < b; return lt(1, 2) > false",
		"const f = (x) => x; const T = 1; return f < T > (0)", // TypeScript would read a generic call
	} {
		c, err := tsstrip.Validate(script, r)
		if err != nil {
			t.Fatalf("%q: %v", script, err)
		}
		if c.TypeScript() || c.Source() != script || c.SourceRules(r).MaxScriptLines != r.MaxScriptLines {
			t.Errorf("%q: TypeScript %v, Source %q", script, c.TypeScript(), c.Source())
		}
		if loc := (ast.Location{Line: 1, Column: 5}); c.ScriptLocation(loc) != loc {
			t.Errorf("%q: ScriptLocation moved %v to %v", script, loc, c.ScriptLocation(loc))
		}
	}
	// Errors of JavaScript that TypeScript cannot read either keep their
	// JavaScript wording.
	_, err := tsstrip.Validate("const a = 1;\nconst = 2;", r)
	var se *ast.SyntaxError
	if !errors.As(err, &se) || se.Location != (ast.Location{Line: 2, Column: 7}) || strings.Contains(se.Message, "TypeScript") {
		t.Errorf("err = %#v", err)
	}
	// Without a stripper, ValidateTypeScript is Validate.
	if _, err := ast.ValidateTypeScript("const a: number = 1", r, nil); !errors.As(err, &se) || se.Location.Column != 8 {
		t.Errorf("nil stripper: %v", err)
	}
}

// TestTypeScriptErrorLocations: syntax errors and violations of TypeScript
// plans are located in the script as sent.
func TestTypeScriptErrorLocations(t *testing.T) {
	tests := []struct {
		name, script string
		kind         ast.Kind // "" for a syntax error
		want         ast.Location
		message      string
	}{
		{
			// goja fails at the first annotation on line 1; esbuild at the
			// real error on line 3.
			name: "syntax error on line 3",
			script: "const totals: Map<string, number> = new Map();\n" +
				"interface Row { id: string; n: number }\n" +
				"const rows = [] as Row[]; rows.push({id: 'a', n: 1} +);\n" +
				"enum Mode { Fast, Slow }\n" +
				"return totals.get(rows[0]!.id) satisfies number | undefined;",
			want: ast.Location{Line: 3, Column: 54}, message: `Unexpected ")" (line 3, column 54), reading the script as TypeScript`,
		},
		{
			name:   "JavaScript error before the first type",
			script: "const a = 1 +;\nconst b: number = 2;",
			want:   ast.Location{Line: 1, Column: 14}, message: "Unexpected token ; (line 1, column 14)",
		},
		{
			name:   "unclosed at the end",
			script: "const a: number = 1;\nfunction f(x: number) {\n  return x;\n",
			want:   ast.Location{Line: 2, Column: 23}, message: `"{" is never closed`,
		},
		{
			name:   "eval after lines that grow",
			script: "enum A { X, Y }\nif (A.X) { const n: number = 1 }\nconst r = [1].map((x: number) => eval('x'));\nreturn r",
			kind:   ast.KindBannedIdentifier, want: ast.Location{Line: 3, Column: 34},
			message: `"eval" is not allowed (line 3, column 34)`,
		},
		{
			name:   "banned member after a cast",
			script: "const f = (() => 1) as any;\nconst g: any = f\n  .constructor;\nreturn g",
			kind:   ast.KindBannedMember, want: ast.Location{Line: 3, Column: 4},
		},
		{
			name:   "loop in a TypeScript plan",
			script: "const xs: number[] = [1];\nfor (const x of xs) {}\n",
			kind:   ast.KindLoop, want: ast.Location{Line: 2, Column: 1},
		},
		{
			name:   "non-ASCII before the violation",
			script: "const é: string = 'ü';\nreturn process",
			kind:   ast.KindUnicode, want: ast.Location{Line: 1, Column: 7},
		},
		{
			name:   "syntax goja cannot run",
			script: "const a: number = 1;\n@dec class C {}\nreturn a",
			want:   ast.Location{Line: 2, Column: 1},
		},
	}
	r := rulesFor(t, presets.Secure)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tsstrip.Validate(tt.script, r)
			var loc ast.Location
			var msg string
			var se *ast.SyntaxError
			var ie *ast.IllegalError
			switch {
			case tt.kind == "" && errors.As(err, &se):
				loc, msg = se.Location, se.Message
			case tt.kind != "" && errors.As(err, &ie):
				first := ie.Violations[0]
				if first.Kind != tt.kind {
					t.Fatalf("violations %+v, want %s first", ie.Violations, tt.kind)
				}
				loc, msg = first.Location, first.Message
			default:
				t.Fatalf("err = %T %v, want kind %q", err, err, tt.kind)
			}
			if loc != tt.want {
				t.Errorf("location %v, want %v (%s)", loc, tt.want, msg)
			}
			if !strings.Contains(msg, tt.message) {
				t.Errorf("message %q, want it to contain %q", msg, tt.message)
			}
		})
	}
}

// TestTypeScriptRuntimeLocations: positions goja reports while running a
// TypeScript plan map to the script as sent, both through Locate (a run in
// this process) and through ScriptLocation (a run of Source in a worker,
// which validated Source again).
func TestTypeScriptRuntimeLocations(t *testing.T) {
	script := "interface Order { id: string; total?: number }\n" +
		"enum Status { Open = 'open', Closed = 'closed' }\n" +
		"const orders: Order[] = [{id: 'a', total: 3}];\n" +
		"const first = orders[0]!;\n" +
		"    throw new Error(`bad ${first.id as string} ${Status.Open}`);\n"
	want := ast.Location{Line: 5, Column: 11} // new Error(...), which goja reports

	r := rulesFor(t, presets.Secure)
	c, err := tsstrip.Validate(script, r)
	if err != nil {
		t.Fatal(err)
	}
	line, col := ast.RejectionPosition(t, c)
	if got := c.Locate(line, col); got != want {
		t.Errorf("in process: program %d:%d is %v, want %v", line, col, got, want)
	}

	w, err := ast.Validate(c.Source(), c.SourceRules(r))
	if err != nil {
		t.Fatalf("Source does not validate again: %v", err)
	}
	line, col = ast.RejectionPosition(t, w)
	js := w.Locate(line, col)
	if got := c.ScriptLocation(js); got != want {
		t.Errorf("worker: Source %v is %v, want %v", js, got, want)
	}
}

// TestSourceRevalidates: the JavaScript of a TypeScript plan validates
// again under SourceRules even when it is longer than the script's limits.
func TestSourceRevalidates(t *testing.T) {
	r := rulesFor(t, presets.LockedDown)
	var b strings.Builder
	b.WriteString("let n: number = 0;\n")
	for b.Len() < 7000 {
		b.WriteString("if (n < 10) { n = n + 1; n = n * 1; }\n")
	}
	b.WriteString("return n;")
	script := b.String()
	r.MaxScriptLines = strings.Count(script, "\n") + 1
	c, err := tsstrip.Validate(script, r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(c.Source(), "\n") <= r.MaxScriptLines {
		t.Fatalf("the JavaScript is not longer than the script: this test tests nothing")
	}
	if _, err := ast.Validate(c.Source(), r); err == nil {
		t.Error("the JavaScript passes the script's line limit")
	}
	if _, err := ast.Validate(c.Source(), c.SourceRules(r)); err != nil {
		t.Errorf("the JavaScript fails SourceRules: %v", err)
	}
	if got := ast.RunPlan(t, c).ToInteger(); got != 10 {
		t.Errorf("result %d", got)
	}
}

// TestTypeScriptAttacks tries TypeScript's own syntax as a way around the
// rules. Each is refused, or stripped to JavaScript that holds nothing of
// what it tried.
func TestTypeScriptAttacks(t *testing.T) {
	const refusedSyntax = ast.Kind("syntax")
	tests := []struct {
		name, script string
		want         ast.Kind // refusedSyntax, a violation's kind, or "" for stripped harmlessly
		absent       string   // for "": what the JavaScript must not contain
	}{
		{"eval declared", "declare const eval: any;\nreturn eval('1')", ast.KindBannedIdentifier, ""},
		{"eval through a cast", "const e = (globalThis as any).eval as (s: string) => unknown;\nreturn e('1')", ast.KindBannedIdentifier, ""},
		{"Function through a type argument", "const F = <T,>(x: T) => x;\nreturn F<typeof Function>(Function)('return 1')()", ast.KindBannedIdentifier, ""},
		{"constructor through non-null", "const f: any = () => 1;\nreturn f!.constructor!('return 1')()", ast.KindBannedMember, ""},
		{"constructor through a generic call", "const f = (() => 1) as any;\nreturn f['constructor']<string>('return 1')", ast.KindBannedMember, ""},
		{"import equals require", "const a: number = 1;\nimport fs = require('fs');\nreturn fs", ast.KindImport, ""},
		{"import type", "const a: number = 1;\nimport type {X} from 'y';\nreturn a", ast.KindImport, ""},
		{"import type first", "import type {X} from 'y';\nconst a: number = 1;", ast.KindImport, ""},
		{"export", "const a: number = 1;\nexport {a};", ast.KindImport, ""},
		{"export default", "const a: number = 1;\nexport default a;", ast.KindImport, ""},
		{"export equals", "const a: number = 1;\nexport = a;", ast.KindImport, ""},
		{"dynamic import", "const m: any = await import('fs');\nreturn m", ast.KindImport, ""},
		{"import.meta", "const u: string = import.meta.url;\nreturn u", ast.KindImport, ""},
		{"require declared", "declare function require(m: string): any;\nreturn require('fs')", ast.KindBannedIdentifier, ""},
		{"process through declare global", "declare global { var process: any }\nreturn process.env", ast.KindBannedIdentifier, ""},
		{"namespace", "namespace N { export const run = eval }\nreturn N.run('1')", refusedSyntax, ""},
		{"module", "module M { }\nconst a: number = 1;", refusedSyntax, ""},
		{"decorator", "function dec(c: any) { return c.constructor }\n@dec class A {}\nreturn A", refusedSyntax, ""},
		{"enum key constructor", "enum E { constructor = 1 }\nreturn E", ast.KindBannedMember, ""},
		{"enum key __proto__", "enum E { __proto__ = 1 }\nreturn E", ast.KindBannedMember, ""},
		{"parameter property __proto__", "class A { constructor(public __proto__: any) {} }\nreturn new A({})", ast.KindBannedMember, ""},
		{"escaped eval in TypeScript", "const a: number = 1;\nreturn \\u0065val('a')", ast.KindUnicode, ""},
		{"look-alike eval", "const a: number = 1;\nreturn еval('a')", ast.KindUnicode, ""},
		{"BiDi in a comment stripping removes", "const a: number = 1; // \u202E } return eval('1') //\nreturn a", ast.KindUnicode, ""},
		{"BiDi in a string", "const a: string = '\u2067';\nreturn a", ast.KindUnicode, ""},
		{"with in TypeScript", "const o: any = {};\nwith (o) {}", ast.KindWith, ""},
		{"debugger in TypeScript", "const a: number = 1;\ndebugger;", ast.KindDebugger, ""},
		{"loops in TypeScript under secure", "const xs: number[] = [];\nwhile (xs.length < 1) xs.push(1);", ast.KindLoop, ""},
		{"BigInt in TypeScript", "const n: bigint = 10n ** 1000000n;\nreturn n", ast.KindBigInt, ""},
		{"closing the wrapper", "const a: number = 1;\n}\nfunction escape() {", refusedSyntax, ""},
		{"closing the wrapper in a template", "const a: number = 1;\nconst s = `${a}}`;\n} function x() {", refusedSyntax, ""},
		{"code hidden in an HTML comment", "const a: number = 1 <!-- `\nreturn eval('1')\n// `", refusedSyntax, ""},
		{"regex that TypeScript reads as division", "const x: any = 4;\nconst y = x! /2/ eval('1');\nreturn y", refusedSyntax, ""},
		{"regex after a type literal", "const x = {} as {a: 1} /1/ eval('1');\nreturn x", refusedSyntax, ""},
		{"type of eval", "type E = typeof eval;\nconst f: E | null = null;\nreturn f", "", "eval"},
		{"eval in a type argument default", "function f<T = typeof eval>(): number { return 1 }\nreturn f()", "", "eval"},
		{"eval in an interface", "interface I { eval(s: string): unknown; Function: typeof Function }\nconst i = {} as I;\nreturn typeof i", "", "Function"},
		{"triple-slash require", "/// <reference path=\"/etc/passwd\" />\nconst a: number = 1;\nreturn a", "", "passwd"},
		{"eval in a comment", "const a: number = 1; /* eval('1') */\nreturn a", "", "eval"},
		{"declare with eval", "declare const x: typeof eval;\nreturn 1", "", "eval"},
	}
	r := rulesFor(t, presets.Secure)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tsstrip.Validate(tt.script, r)
			var se *ast.SyntaxError
			var ie *ast.IllegalError
			switch {
			case tt.want == "":
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if strings.Contains(c.Source(), tt.absent) {
					t.Errorf("the JavaScript holds %q:\n%s", tt.absent, c.Source())
				}
				ast.RunPlan(t, c)
			case tt.want == refusedSyntax:
				if !errors.As(err, &se) {
					t.Fatalf("err = %T %v, want a syntax error", err, err)
				}
			default:
				if !errors.As(err, &ie) {
					t.Fatalf("err = %T %v, want %s", err, err, tt.want)
				}
				found := false
				for _, v := range ie.Violations {
					found = found || v.Kind == tt.want
				}
				if !found {
					t.Errorf("violations %+v, want %s", ie.Violations, tt.want)
				}
			}
		})
	}
}

// TestTypeScriptGate: what the pre-scan cannot vouch for is not handed to
// the TypeScript parser, and the JavaScript error says why.
func TestTypeScriptGate(t *testing.T) {
	deep := "const a: number = 1;\nreturn " + strings.Repeat("x => ", 60) + "a;"
	brackets := "const a: number = 1;\nreturn " + strings.Repeat("[", 40) + strings.Repeat("x => ", 10) + "a" + strings.Repeat("]", 40) + ";"
	big := "const a: number = 1;\n" + strings.Repeat("// filler line\n", tsstrip.MaxBytes/15+1)
	tests := []struct{ name, script, why string }{
		{"regex after non-null", "const x: any = 4;\nconst y = x! / 2 / 3;", "the regular expression at line 2, column 14"},
		{"regex after a closing brace", "const a: number = 1;\nif (a) {}\n/x/.test('x');", "the regular expression at line 3, column 1"},
		{"HTML-like comment", "const a: number = 1; <!-- x\n", "an HTML-like comment (<!-- or -->) is at line 1, column 22"},
		{"arrows nested without brackets", deep, "nest more than 48 deep"},
		{"arrows inside brackets", brackets, "nest more than 48 deep"},
		{"too large", big, "TypeScript is read in scripts of at most"},
		{"many type arguments", "const a: number = 1;\n" + strings.Repeat("f("+strings.Repeat("a<", 150)+"a);\n", 7), "more than 1000 '<'"},
		{"many negations", "const a: number = 1;\n" + strings.Repeat("f("+strings.Repeat("!", 150)+"a);\n", 7), "more than 1000 '!'"},
	}
	r := rulesFor(t, presets.Experimental)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tsstrip.Validate(tt.script, r)
			var se *ast.SyntaxError
			if !errors.As(err, &se) || !strings.Contains(se.Message, "not read as TypeScript") || !strings.Contains(se.Message, tt.why) {
				t.Fatalf("err = %v, want a JavaScript syntax error saying %q", err, tt.why)
			}
			if se.Location.Line != 1 && se.Location.Line != 2 {
				t.Errorf("location %v, want goja's, on line 1 or 2", se.Location)
			}
		})
	}
	// Regular expressions where TypeScript too reads an expression pass,
	// and so does nesting a plan uses.
	for _, script := range []string{
		"const s: string = 'a1';\nconst t = [/a/, !/b/.test(s), s.replace(/\\d/g, '')];\nif (!/x/.test(s)) { return t }\nreturn typeof /y/;",
		"const f = (x: number) => (y: number) => (z: number) => ({v: [x, y, z].map(n => n + 1)});\nreturn f(1)(2)(3);",
	} {
		if _, err := tsstrip.Validate(script, r); err != nil {
			t.Errorf("%q: %v", script, err)
		}
	}
}

// tsBenchPlan is benchPlan written in TypeScript, as a model handed the
// tools' declarations writes it.
const tsBenchPlan = `// Find open invoices of EU customers and summarise them per country.
interface Customer { id: string; code: string; active: boolean; country?: string }
interface Invoice { amount: number; due: string }
type Page<T> = { items: T[] };
const customers = await callTool("crm.customers.list", {region: "EU", limit: 200}) as Page<Customer>;
const ids: string[] = customers.items
  .filter((c: Customer) => c.active && /^[A-Z]{2}-\d+$/.test(c.code))
  .map(c => c.id);
console.log("customers", ids.length);

const invoices: Page<Invoice>[] = await Promise.all(
  ids.slice(0, 20).map(id => callTool("billing.invoices.list", {customerId: id, status: "open"}))
);

const byCountry: Record<string, number> = {};
invoices.forEach((res, i: number) => {
  const customer = customers.items.find(c => c.id === ids[i])!;
  const country = customer?.country ?? "unknown";
  const total = res.items.reduce((sum: number, inv: Invoice) => sum + inv.amount, 0);
  byCountry[country] = (byCountry[country] ?? 0) + total;
});

const ranking = Object.entries(byCountry)
  .map(([country, total]): {country: string; total: number} => ({country, total: Math.round(total * 100) / 100}))
  .sort((a, b) => b.total - a.total);

const overdue = invoices.flatMap(r => r.items).filter(inv => new Date(inv.due) < new Date("2024-01-01"));
if (overdue.length > 0) {
  console.warn("overdue invoices", overdue.length);
}

return {countries: ranking.length, ranking: ranking.slice(0, 5), overdue: overdue.length, checkedAt: codecallContext.now} satisfies object;`

// BenchmarkValidateJavaScript is ast's BenchmarkValidate, for comparison
// with the two below.
func BenchmarkValidateJavaScript(b *testing.B) {
	r := rulesFor(b, presets.Secure)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ast.Validate(ast.BenchPlan, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateTypeScriptOnJavaScript validates the same JavaScript
// plan with ValidateTypeScript: JavaScript is read first, so the cost is
// the same.
func BenchmarkValidateTypeScriptOnJavaScript(b *testing.B) {
	r := rulesFor(b, presets.Secure)
	b.ReportAllocs()
	for b.Loop() {
		c, err := tsstrip.Validate(ast.BenchPlan, r)
		if err != nil || c.TypeScript() {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateTypeScript validates the typical plan written in
// TypeScript: the JavaScript attempt, the gate, esbuild, and the
// validation of the JavaScript it prints.
func BenchmarkValidateTypeScript(b *testing.B) {
	r := rulesFor(b, presets.Secure)
	b.ReportAllocs()
	for b.Loop() {
		c, err := tsstrip.Validate(tsBenchPlan, r)
		if err != nil || !c.TypeScript() {
			b.Fatal(err)
		}
	}
}

func TestTypeScriptBenchPlan(t *testing.T) {
	c, err := tsstrip.Validate(tsBenchPlan, rulesFor(t, presets.Secure))
	if err != nil {
		t.Fatal(err)
	}
	if !c.TypeScript() {
		t.Error("not read as TypeScript")
	}
}

// FuzzValidateTypeScript: ValidateTypeScript never panics; every location
// it reports, in errors and through the Checked, is in the script as sent;
// and the JavaScript of an accepted TypeScript plan validates again under
// SourceRules, as a worker validates it.
func FuzzValidateTypeScript(f *testing.F) {
	for _, s := range []string{
		tsBenchPlan,
		"const x: number = 1;\nreturn x as number;",
		"enum E { A, B }\nreturn E.B;",
		"interface I { a: string }\nconst i = {a: 'é😀'} satisfies I;\nreturn i.a!;",
		"const f = async <T,>(x: T): Promise<T> => x;\nreturn await f(1);",
		"class A { constructor(private x: number) {} }\r\nreturn new A(1);",
		"const s: string = '\u2028';\u2029return s",
		"const a: number = 1;\nconst b = <T,>(x: T): T => x;\nconst c = a +* 2;",
		"const x: any = 1;\nreturn x! / 2 / 3;",
		"declare const eval: any;\nreturn eval('1');",
		"const a: number = 1 <!-- `\nreturn 1\n// `",
		"import type {X} from 'y';\nconst a: X = 1;",
		"namespace N {}\n@d class C {}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		r, _ := ast.RulesForPreset(presets.Experimental)
		c, err := tsstrip.Validate(script, r)
		var se *ast.SyntaxError
		var ie *ast.IllegalError
		switch {
		case err == nil:
			within := func(loc ast.Location, what string) {
				t.Helper()
				if !inScript(script, loc) {
					t.Fatalf("%s: %v is outside the script", what, loc)
				}
			}
			for line := 0; line <= strings.Count(c.Source(), "\n")+2; line++ {
				for _, col := range []int{0, 1, 3, 20, 1 << 20} {
					within(c.Locate(line, col), "Locate")
					within(c.ScriptLocation(ast.Location{Line: line, Column: col}), "ScriptLocation")
				}
			}
			if !c.TypeScript() {
				return
			}
			if _, err := ast.Validate(c.Source(), c.SourceRules(r)); err != nil {
				t.Fatalf("the JavaScript does not validate again: %v\n%s", err, c.Source())
			}
		case errors.As(err, &se):
			ast.CheckLocation(t, script, se.Location, se.Message)
			if !inScript(script, se.Location) {
				t.Fatalf("%v is outside the script: %s", se.Location, se.Message)
			}
		case errors.As(err, &ie):
			for _, v := range ie.Violations {
				ast.CheckLocation(t, script, v.Location, v.Message)
				if !inScript(script, v.Location) {
					t.Fatalf("%v is outside the script: %s", v.Location, v.Message)
				}
			}
		default:
			t.Fatalf("unexpected error %T: %v", err, err)
		}
	})
}

// inScript reports whether loc is a position of script: a line of it, and a
// column of that line or just after its end.
func inScript(script string, loc ast.Location) bool {
	if !utf8.ValidString(script) {
		return true
	}
	var lines []string
	rest := script
	for {
		i := strings.IndexAny(rest, "\r\n\u2028\u2029")
		if i < 0 {
			lines = append(lines, rest)
			break
		}
		lines = append(lines, rest[:i])
		_, size := utf8.DecodeRuneInString(rest[i:])
		if strings.HasPrefix(rest[i:], "\r\n") {
			size = 2
		}
		rest = rest[i+size:]
	}
	if loc.Line < 1 || loc.Line > len(lines) {
		return false
	}
	return loc.Column >= 1 && loc.Column <= utf8.RuneCountInString(lines[loc.Line-1])+1
}
