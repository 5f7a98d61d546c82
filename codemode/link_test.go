package codemode

import (
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/codecall-go/codecall/ast"
)

// resolver resolves the specifiers it holds, to their exports.
type resolver map[string][]string

func (r resolver) Exports(specifier string) ([]string, bool) {
	e, ok := r[specifier]
	return e, ok
}

var modules = resolver{
	"@codemode/servers/github": {"__meta__", "list_repos", "get_repo", "create_issue", "search_code", "a-b"},
	"@codemode/servers/slack":  {"__meta__", "post_message"},
	"@codemode/discovery":      {"listServers", "listTools", "getTool", "searchTools"},
	"@codemode/withdefault":    {"default", "x"},
	"@codemode/empty":          {},
}

const (
	gh = `"@codemode/servers/github"`
	sl = `"@codemode/servers/slack"`
	m0 = ModulesName + "[0]"
	m1 = ModulesName + "[1]"
)

// sp is n spaces.
func sp(n int) string { return strings.Repeat(" ", n) }

// gone is what replaces a removed declaration without line breaks.
func gone(decl string) string { return ";" + sp(len(decl)-1) }

type rewrite struct {
	name, src, js string
	imports       []string
}

var importRewrites = []rewrite{
	{"namespace",
		"import * as g from " + gh + ";\nawait g.list_repos({});",
		"const g = " + m0 + ";" + gone("import * as g from "+gh+";") + "\nawait g.list_repos({});",
		[]string{"@codemode/servers/github"}},
	{"named, renamed and string names",
		"import { list_repos, get_repo as gr, \"a-b\" as ab } from " + gh + "\ngr(ab);",
		"const {list_repos: list_repos, get_repo: gr, \"a-b\": ab} = " + m0 + ";" + gone("import { list_repos, get_repo as gr, \"a-b\" as ab } from "+gh) + "\ngr(ab);",
		[]string{"@codemode/servers/github"}},
	{"trailing comma, single quotes, escapes",
		"import { list_repos, } from '@codemode/servers/git\\x68ub';",
		"const {list_repos: list_repos} = " + m0 + ";" + gone("import { list_repos, } from '@codemode/servers/git\\x68ub';"),
		[]string{"@codemode/servers/github"}},
	{"default export imported by name",
		`import {default as d} from "@codemode/withdefault";`,
		"const {default: d} = " + m0 + ";" + gone(`import {default as d} from "@codemode/withdefault";`),
		[]string{"@codemode/withdefault"}},
	{"default and named",
		`import d, { x } from "@codemode/withdefault"`,
		"const {default: d, x: x} = " + m0 + ";" + gone(`import d, { x } from "@codemode/withdefault"`),
		[]string{"@codemode/withdefault"}},
	{"default and namespace",
		`import d, * as w from "@codemode/withdefault"`,
		"const w = " + m0 + ";const {default: d} = " + m0 + ";" + gone(`import d, * as w from "@codemode/withdefault"`),
		[]string{"@codemode/withdefault"}},
	{"bare import",
		"import " + sl + ";\nf();",
		gone("import "+sl+";") + "\nf();",
		[]string{"@codemode/servers/slack"}},
	{"empty braces",
		"import {} from " + sl,
		gone("import {} from " + sl),
		[]string{"@codemode/servers/slack"}},
	{"one index per module",
		"import * as a from " + gh + ";\nimport * as s from " + sl + ";\nimport { get_repo } from " + gh + ";\nimport " + gh + ";",
		"const a = " + m0 + ";const s = " + m1 + ";const {get_repo: get_repo} = " + m0 + ";" +
			gone("import * as a from "+gh+";") + "\n" + gone("import * as s from "+sl+";") + "\n" +
			gone("import { get_repo } from "+gh+";") + "\n" + gone("import "+gh+";"),
		[]string{"@codemode/servers/github", "@codemode/servers/slack"}},
	{"over several lines, with comments",
		"import {\n  list_repos, // repos\n  get_repo /* one */\n} from " + gh + "\nf()",
		"const {list_repos: list_repos, get_repo: get_repo} = " + m0 + ";;" + sp(7) + "\n" + sp(22) + "\n" + sp(20) + "\n" + sp(len("} from "+gh)) + "\nf()",
		[]string{"@codemode/servers/github"}},
	{"statements around stay apart",
		"f()\nimport * as s from " + sl + "\n(g)",
		"const s = " + m0 + ";f()\n" + gone("import * as s from "+sl) + "\n(g)",
		[]string{"@codemode/servers/slack"}},
	{"names that are only contextual keywords",
		`import { x as as } from "@codemode/withdefault"; import from, {x as of} from "@codemode/withdefault"`,
		"const {x: as} = " + m0 + ";const {default: from, x: of} = " + m0 + ";" +
			gone(`import { x as as } from "@codemode/withdefault";`) + " " + gone(`import from, {x as of} from "@codemode/withdefault"`),
		[]string{"@codemode/withdefault"}},
	{"a semicolon on the next line belongs to the import",
		"import * as s from " + sl + "\n;f()",
		"const s = " + m0 + ";" + gone("import * as s from "+sl) + "\n f()",
		[]string{"@codemode/servers/slack"}},
}

var exportRewrites = []rewrite{
	{"const", "export const a = 1;", ";     " + " const a = 1;", nil},
	{"let and var", "export let b = 2, c;\nexport var d;", ";      let b = 2, c;\n;      var d;", nil},
	{"function", "export function f() {}", ";      function f() {}", nil},
	{"async function", "export async function g() {}", ";      async function g() {}", nil},
	{"generator", "export function* h() {}", ";      function* h() {}", nil},
	{"class", "export class C {}", ";      class C {}", nil},
	{"default named function", "export default function f() {}\n(1)", ";     " + " " + sp(7) + " function f() {}\n(1)", nil},
	{"default named class", "export default class D {}", ";     " + " " + sp(7) + " class D {}", nil},
	{"default anonymous function", "export default function () {}\n(1)", ";0,    " + sp(7) + " function () {};\n(1)", nil},
	{"default anonymous async function", "export default async function () {}", ";0,    " + sp(7) + " async function () {};", nil},
	{"default anonymous class", "export default class {}\n[1]", ";0,    " + sp(7) + " class {};\n[1]", nil},
	{"default anonymous class with heritage", "export default class extends Error {}", ";0,    " + sp(7) + " class extends Error {};", nil},
	{"default expression", "export default 1 + 2;", ";0,    " + sp(7) + " 1 + 2;", nil},
	{"default assignment", "let x;\nexport default x = 3", "let x;\n;0,    " + sp(7) + " x = 3", nil},
	{"default arrow", "export default async () => 1;", ";0,    " + sp(7) + " async () => 1;", nil},
	{"default parenthesised function", "export default (function () {});", ";0,    " + sp(7) + " (function () {});", nil},
	{"default object", "export default {a: 1}", ";0,    " + sp(7) + " {a: 1}", nil},
	{"default with a comment between", "export /* d */ default 1", ";0,    /* d */ " + sp(7) + " 1", nil},
	{"list", "const a = 1, b = 2;\nexport { a, b as c };", "const a = 1, b = 2;\n" + gone("export { a, b as c };"), nil},
	{"list with a string name", "const a = 1;\nexport { a as \"d-e\" }", "const a = 1;\n" + gone("export { a as \"d-e\" }"), nil},
	{"empty list", "export {}", gone("export {}"), nil},
	{"star", "export * from " + sl + ";", gone("export * from " + sl + ";"), []string{"@codemode/servers/slack"}},
	{"star as", "export * as s from " + sl, gone("export * as s from " + sl), []string{"@codemode/servers/slack"}},
	{"named from", "export { post_message as pm, \"post_message\" as \"p-m\" } from " + sl,
		gone("export { post_message as pm, \"post_message\" as \"p-m\" } from " + sl), []string{"@codemode/servers/slack"}},
	{"from on the next line", "export { post_message }\nfrom " + sl, gone("export { post_message }") + "\n" + sp(len("from "+sl)), []string{"@codemode/servers/slack"}},
	{"re-export and import share an index",
		"export * from " + sl + "; import { post_message } from " + sl,
		"const {post_message: post_message} = " + m0 + ";" + gone("export * from "+sl+";") + " " + gone("import { post_message } from "+sl),
		[]string{"@codemode/servers/slack"}},
}

var otherRewrites = []rewrite{
	{"empty", "", "", nil},
	{"top-level await and this stay", "const v = await Promise.resolve(this);", "const v = await Promise.resolve(this);", nil},
	{"hashbang", "#!/usr/bin/env node\nimport * as s from " + sl, "const s = " + m0 + ";///usr/bin/env node\n" + gone("import * as s from "+sl), []string{"@codemode/servers/slack"}},
	{"import and export as property names", "const o = {import: 1, export: 2}; o.import + o.export;", "const o = {import: 1, export: 2}; o.import + o.export;", nil},
	{"CRLF line ends", "import * as s from " + sl + "\r\nexport const a = 1;\r\nf(a)",
		"const s = " + m0 + ";" + gone("import * as s from "+sl) + "\r\n;      const a = 1;\r\nf(a)", []string{"@codemode/servers/slack"}},
	{"U+2028 in a removed declaration", "import {\u2028post_message\u2029} from " + sl + ";f()",
		"const {post_message: post_message} = " + m0 + ";" + gone("import {") + "\u2028" + sp(12) + "\u2029" + sp(len("} from "+sl+";")) + "f()", []string{"@codemode/servers/slack"}},
	{"multi-byte characters before an import", "const s = \"ééé\"; import * as g from " + gh + "; s;",
		"const g = " + m0 + ";const s = \"ééé\"; " + gone("import * as g from "+gh+";") + " s;", []string{"@codemode/servers/github"}},
}

func allRewrites() []rewrite {
	return slices.Concat(importRewrites, exportRewrites, otherRewrites)
}

func TestLinkRewrites(t *testing.T) {
	for _, tc := range allRewrites() {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Link(tc.src, modules)
			if err != nil {
				t.Fatalf("Link(%q): %v", tc.src, err)
			}
			if l.JavaScript != tc.js {
				t.Errorf("Link(%q)\n got %q\nwant %q", tc.src, l.JavaScript, tc.js)
			}
			if !slices.Equal(l.Imports, tc.imports) {
				t.Errorf("Imports = %q, want %q", l.Imports, tc.imports)
			}
		})
	}
}

// TestLinkedValidates checks that every linked module is a plan body
// package ast accepts, with as many lines as the module.
func TestLinkedValidates(t *testing.T) {
	rules, ok := ast.RulesForPreset("balanced")
	if !ok {
		t.Fatal("no balanced preset")
	}
	for _, tc := range allRewrites() {
		l, err := Link(tc.src, modules)
		if err != nil {
			t.Fatalf("Link(%q): %v", tc.src, err)
		}
		if _, err := ast.Validate(l.JavaScript, rules); err != nil {
			t.Errorf("%s: Validate(%q): %v", tc.name, l.JavaScript, err)
		}
		if got, want := len(newLineIndex(l.JavaScript).starts), len(newLineIndex(tc.src).starts); got != want {
			t.Errorf("%s: %d lines, want %d", tc.name, got, want)
		}
	}
}

// origin maps a byte offset of l.JavaScript back to the module the way
// ast.Stripped documents it: the nearest mapping at or before the offset,
// moved on by the distance from it when the text in between is the same in
// both.
func origin(l *Linked, src string, off int) int {
	maps := slices.Clone(l.Mappings)
	sort.SliceStable(maps, func(i, j int) bool { return maps[i].JavaScript < maps[j].JavaScript })
	i := sort.Search(len(maps), func(i int) bool { return maps[i].JavaScript > off }) - 1
	if i < 0 {
		return maps[0].Script
	}
	m := maps[i]
	if d := off - m.JavaScript; d > 0 && m.Script+d <= len(src) && l.JavaScript[m.JavaScript:off] == src[m.Script:m.Script+d] {
		return m.Script + d
	}
	return m.Script
}

func TestLinkMappings(t *testing.T) {
	src := "const s = \"ééé\"; import { post_message as pm } from " + sl + "; MARK1();\r\n" +
		"export const MARK2 = 1;\u2028" +
		"export { MARK2 as m2 }; MARK3(); import * as g from " + gh + "\n" +
		"export default function () { MARK4() }; MARK5;\n" +
		"export default MARK6;"
	l, err := Link(src, modules)
	if err != nil {
		t.Fatal(err)
	}
	srcLines, jsLines := newLineIndex(src), newLineIndex(l.JavaScript)
	for _, marker := range []string{"MARK1", "MARK2", "MARK3", "MARK4", "MARK5", "MARK6"} {
		so, jo := strings.Index(src, marker), strings.Index(l.JavaScript, marker)
		if so < 0 || jo < 0 {
			t.Fatalf("%s not found", marker)
		}
		for d := range len(marker) {
			if got := origin(l, src, jo+d); got != so+d {
				t.Errorf("%s+%d maps to %d, want %d", marker, d, got, so+d)
			}
		}
		sl, _ := srcLines.at(so)
		jl, _ := jsLines.at(jo)
		if sl != jl {
			t.Errorf("%s is on line %d of the JavaScript, %d of the module", marker, jl, sl)
		}
	}
	// Each import's prelude maps to its declaration.
	pm := strings.Index(l.JavaScript, "const {post_message")
	gs := strings.Index(l.JavaScript, "const g")
	for off, want := range map[int]int{
		pm: strings.Index(src, "import {"), pm + 10: strings.Index(src, "import {"),
		gs: strings.Index(src, "import * as g"), gs + 12: strings.Index(src, "import * as g"),
	} {
		if got := origin(l, src, off); got != want {
			t.Errorf("prelude offset %d maps to %d, want %d", off, got, want)
		}
	}
	// Mappings lie within both texts, in order of the JavaScript.
	for i, m := range l.Mappings {
		if m.JavaScript < 0 || m.JavaScript > len(l.JavaScript) || m.Script < 0 || m.Script > len(src) {
			t.Errorf("mapping %v out of bounds", m)
		}
		if i > 0 && m.JavaScript <= l.Mappings[i-1].JavaScript {
			t.Errorf("mappings out of order: %v", l.Mappings)
		}
	}
}

type linkFailure struct {
	name, src string
	code      string
	specifier string
	line, col int
	message   string // a part of the message
	hint      string // a part of the hint
}

var linkFailures = []linkFailure{
	// Specifiers that do not resolve.
	{"relative", `import * as x from "./x"`, CodeImportFailure, "./x", 1, 20, `cannot find module "./x"`, "only @codemode/* modules can be imported"},
	{"absolute", `import * as x from "/x"`, CodeImportFailure, "/x", 1, 20, `"/x"`, `listServers() from "@codemode/discovery"`},
	{"dot segments", `import * as x from "@codemode/servers/../servers/github"`, CodeImportFailure, "@codemode/servers/../servers/github", 1, 20, "cannot find module", ""},
	{"node builtin", `import * as fs from 'node:fs'`, CodeImportFailure, "node:fs", 1, 21, "cannot find module", ""},
	{"unknown @codemode module", `import "@codemode/nope"`, CodeImportFailure, "@codemode/nope", 1, 8, "cannot find module", ""},
	{"case matters", `import * as x from "@codemode/servers/GitHub"`, CodeImportFailure, "@codemode/servers/GitHub", 1, 20, "cannot find module", ""},
	{"re-export", "const a = 1;\nexport * from './y';", CodeImportFailure, "./y", 2, 15, "cannot find module", ""},
	{"named re-export", "export { a } from './y';", CodeImportFailure, "./y", 1, 19, "cannot find module", ""},

	// Names the module does not export.
	{"default import", "import g from " + gh, CodeImportFailure, "@codemode/servers/github", 1, 8, `has no default export`, `import * as g from "@codemode/servers/github" or import { name } from`},
	{"default with named", "import g, { get_repo } from " + gh, CodeImportFailure, "@codemode/servers/github", 1, 8, `has no default export`, ""},
	{"missing name", "import { get_repo, list_repo } from " + gh, CodeImportFailure, "@codemode/servers/github", 1, 20,
		`has no export named "list_repo"; its exports closest to it are list_repos, get_repo,`, "such as list_repos"},
	{"missing string name", "import { \"a_b\" as ab } from " + gh, CodeImportFailure, "@codemode/servers/github", 1, 10, `no export named "a_b"; its exports closest to it are a-b,`, ""},
	{"missing re-exported name", "export { post, post_message } from " + sl, CodeImportFailure, "@codemode/servers/slack", 1, 10, `no export named "post"`, "such as post_message"},
	{"missing from a module with no exports", `import { a } from "@codemode/empty"`, CodeImportFailure, "@codemode/empty", 1, 10, "exports nothing", ""},

	// import() and import.meta.
	{"dynamic import", "const m = await import(" + gh + ");", CodeImportFailure, "@codemode/servers/github", 1, 17, "import() is not available", `static import * as name from "@codemode/servers/<id>"`},
	{"dynamic import in a function", "function f() {\n  return import /* x */ ('x');\n}", CodeImportFailure, "x", 2, 10, "import()", ""},
	{"dynamic import of an expression", "const s = 'x'; import(s)", CodeImportFailure, "", 1, 16, "import()", ""},
	{"import.meta", "f(import.meta.url)", CodeImportFailure, "", 1, 3, "import.meta is not available", "static import"},
	{"first in source order: import()", "import('x');\nimport * as y from './y';", CodeImportFailure, "x", 1, 1, "import()", ""},
	{"first in source order: declaration", "import * as y from './y';\nimport('x');", CodeImportFailure, "./y", 1, 20, "cannot find", ""},

	// Syntax errors.
	{"syntax", "const a = 1;\nconst = 2;", CodeSyntaxError, "", 2, 7, "Unexpected token", "correct the code"},
	{"syntax after multi-byte characters", "const s = 'ééé'; let = ;", CodeSyntaxError, "", 1, 24, "Unexpected", ""},
	{"top-level return", "const a = 1;\nreturn a;", CodeSyntaxError, "", 2, 1, "Illegal return statement", "set globalThis.__codemode_result__ = value instead"},
	{"reserved name", "const __codemode_modules__ = 1;", CodeSyntaxError, "", 1, 7, "__codemode_modules__ is reserved", "rename it"},
	{"reserved name in a string", "f('__codemode_modules__')", CodeSyntaxError, "", 1, 4, "reserved", ""},
	{"reserved name with escapes", "let \\u005f_codemode_modules__ = 1;", CodeSyntaxError, "", 1, 5, "reserved", ""},
	{"not UTF-8", "const a = '\xff';", CodeSyntaxError, "", 1, 12, "not valid UTF-8", ""},
	{"no from", `import {a} "x"`, CodeSyntaxError, "", 1, 12, `unexpected "\"x\""`, "import * as name from"},
	{"no specifier", "import {a}", CodeSyntaxError, "", 1, 11, "incomplete", ""},
	{"code after the specifier", "import * as s from " + sl + " f()", CodeSyntaxError, "", 1, 46, `unexpected "f"`, ""},
	{"reserved binding", "import * as if from " + sl, CodeSyntaxError, "", 1, 13, "if is a reserved word", ""},
	{"await binding", "import { post_message as await } from " + sl, CodeSyntaxError, "", 1, 26, "await is a reserved word", ""},
	{"eval binding", "import { eval } from " + sl, CodeSyntaxError, "", 1, 10, "eval is a reserved word", ""},
	{"string without as", `import { "a-b" } from ` + gh, CodeSyntaxError, "", 1, 10, "needs a local name", `import { "a-b" as ab }`},
	{"two defaults", `import a, b from "@codemode/withdefault"`, CodeSyntaxError, "", 1, 11, "Unexpected identifier", ""},
	{"imported twice", "import { post_message } from " + sl + ";\nimport { post_message } from " + sl, CodeSyntaxError, "", 2, 10, "post_message is imported twice", ""},
	{"star without from", "export * ;", CodeSyntaxError, "", 1, 10, `unexpected ";"`, ""},
	{"string without from", `export { "a" };`, CodeSyntaxError, "", 1, 10, "a string can name", ""},
	{"non-ASCII name", `import { é } from "x"`, CodeSyntaxError, "", 1, 10, "U+00E9 is not allowed", "ASCII"},
	{"escaped name", `import { \u0061 } from "x"`, CodeSyntaxError, "", 1, 10, "escapes are not allowed", ""},
	{"BiDi control in a removed comment", "import /*\u202E*/ * as s from " + sl, CodeSyntaxError, "", 1, 10, "U+202E", "remove it"},

	// Locations.
	{"CRLF", "a;\r\nb;\r\nimport { nope } from " + sl, CodeImportFailure, "@codemode/servers/slack", 3, 10, "nope", ""},
	{"CR", "a;\rb;\rimport { nope } from " + sl, CodeImportFailure, "@codemode/servers/slack", 3, 10, "nope", ""},
	{"U+2028 and U+2029", "a;\u2028b;\u2029import { nope } from " + sl, CodeImportFailure, "@codemode/servers/slack", 3, 10, "nope", ""},
	{"multi-byte characters", "const s = \"é😀\"; import { nope } from " + sl, CodeImportFailure, "@codemode/servers/slack", 1, 26, "nope", ""},
}

func TestLinkFailures(t *testing.T) {
	for _, tc := range linkFailures {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Link(tc.src, modules)
			var le *LinkError
			if !errors.As(err, &le) {
				t.Fatalf("Link(%q) = %v, %v; want a LinkError", tc.src, l, err)
			}
			if le.Code != tc.code || le.Specifier != tc.specifier || le.Line != tc.line || le.Column != tc.col {
				t.Errorf("Link(%q):\n got %s %q at %d:%d\nwant %s %q at %d:%d (%s)",
					tc.src, le.Code, le.Specifier, le.Line, le.Column, tc.code, tc.specifier, tc.line, tc.col, le.Error())
			}
			if !strings.Contains(le.Message, tc.message) || !strings.Contains(le.Hint, tc.hint) {
				t.Errorf("Link(%q): message %q, hint %q; want %q and %q", tc.src, le.Message, le.Hint, tc.message, tc.hint)
			}
			if loc := " (line " + strconv.Itoa(tc.line) + ", column " + strconv.Itoa(tc.col) + ")"; !strings.Contains(le.Message, loc) {
				t.Errorf("message %q does not say %q", le.Message, loc)
			}
			line, col := newLineIndex(tc.src).at(le.Offset)
			if line != le.Line || col != le.Column {
				t.Errorf("Offset %d is at %d:%d, not %d:%d", le.Offset, line, col, le.Line, le.Column)
			}
			if le.Error() != le.Message+"; "+le.Hint {
				t.Errorf("Error() = %q", le.Error())
			}
		})
	}
}

func TestMissingExportSuggestions(t *testing.T) {
	var exports []string
	for _, n := range []string{"list_repos", "list_issues", "list_pulls", "list_refs", "get_repo", "get_issue",
		"create_issue", "search_code", "search_issues", "delete_repo", "fork_repo", "star_repo", "__meta__"} {
		exports = append(exports, n)
	}
	r := resolver{"m": exports}
	_, err := Link(`import { list_repo } from "m"`, r)
	var le *LinkError
	if !errors.As(err, &le) {
		t.Fatal(err)
	}
	want := `"m" has no export named "list_repo"; its exports closest to it are list_repos, list_refs, get_repo, fork_repo, star_repo, delete_repo, list_pulls, list_issues (line 1, column 10)`
	if le.Message != want {
		t.Errorf("message\n got %q\nwant %q", le.Message, want)
	}
}

// countingResolver counts the questions.
type countingResolver struct {
	resolver
	asked map[string]int
}

func (c *countingResolver) Exports(s string) ([]string, bool) {
	c.asked[s]++
	return c.resolver.Exports(s)
}

func TestLinkAsksOncePerSpecifier(t *testing.T) {
	c := &countingResolver{resolver: modules, asked: map[string]int{}}
	src := "import * as a from " + gh + "; import { get_repo } from " + gh + "; export * from " + gh + "; import " + sl
	if _, err := Link(src, c); err != nil {
		t.Fatal(err)
	}
	if c.asked["@codemode/servers/github"] != 1 || c.asked["@codemode/servers/slack"] != 1 || len(c.asked) != 2 {
		t.Errorf("asked %v", c.asked)
	}
}

func TestLinkWithoutResolver(t *testing.T) {
	if _, err := Link("import "+sl, nil); err == nil || !strings.Contains(err.Error(), "cannot find module") {
		t.Errorf("err = %v", err)
	}
	l, err := Link("const a = 1;", nil)
	if err != nil || l.JavaScript != "const a = 1;" || l.Imports != nil {
		t.Errorf("Link = %+v, %v", l, err)
	}
}

// panicking panics when asked.
type panicking struct{}

func (panicking) Exports(string) ([]string, bool) { panic("boom") }

func TestLinkRecovers(t *testing.T) {
	l, err := Link("import "+sl, panicking{})
	if l != nil || !errors.Is(err, errLinkFailed) {
		t.Errorf("Link = %v, %v", l, err)
	}
	var le *LinkError
	if errors.As(err, &le) {
		t.Errorf("a failure of the linker is reported as the module's: %v", le)
	}
	if strings.Contains(err.Error(), "boom") {
		t.Errorf("the panic's value is in the error: %v", err)
	}
}

func TestQuoteJS(t *testing.T) {
	for in, want := range map[string]string{
		"a-b":    `"a-b"`,
		`q"\`:    `"q\"\\"`,
		"é\n":    `"\u00E9\u000A"`,
		"😀":      `"\uD83D\uDE00"`,
		"\u2028": `"\u2028"`,
	} {
		if got := quoteJS(in); got != want {
			t.Errorf("quoteJS(%q) = %s, want %s", in, got, want)
		}
	}
}

func BenchmarkLink(b *testing.B) {
	var src strings.Builder
	src.WriteString("import * as g from " + gh + ";\nimport { post_message } from " + sl + ";\n")
	for i := 0; src.Len() < 120<<10; i++ {
		src.WriteString("const r" + strconv.Itoa(i) + " = await g.list_repos({ owner: \"octo\", page: " + strconv.Itoa(i) + " });\n")
		src.WriteString("if (r" + strconv.Itoa(i) + ".length > 2) { await post_message({ text: `found ${r" + strconv.Itoa(i) + ".length}` }); }\n")
	}
	src.WriteString("export default r0;\n")
	s := src.String()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if _, err := Link(s, modules); err != nil {
			b.Fatal(err)
		}
	}
}
