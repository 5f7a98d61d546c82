package codemode_test

import (
	"testing"

	"github.com/dop251/goja"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/codemode"
)

// modules resolves the modules runModule provides.
type modules map[string][]string

func (m modules) Exports(s string) ([]string, bool) {
	e, ok := m[s]
	return e, ok
}

// runModule links src, validates it as package vm's plans are validated,
// and runs it the way package vm runs a plan, with the modules the
// prelude reads and a global out array for the module to write to. It
// returns out.
func runModule(t *testing.T, src string) []any {
	t.Helper()
	l, err := codemode.Link(src, modules{
		"@codemode/servers/github": {"__meta__", "list_repos", "a-b"},
		"@codemode/servers/slack":  {"__meta__", "post_message"},
	})
	if err != nil {
		t.Fatalf("Link: %v", err)
	}
	rules, _ := ast.RulesForPreset("balanced")
	c, err := ast.Validate(l.JavaScript, rules)
	if err != nil {
		t.Fatalf("Validate(%q): %v", l.JavaScript, err)
	}
	rt := goja.New()
	byName := map[string]string{
		"@codemode/servers/github": `({__meta__: {serverId: "github"}, list_repos: async () => ["a", "b", "c"], "a-b": "dash"})`,
		"@codemode/servers/slack":  `({__meta__: {serverId: "slack"}, post_message: (m) => { out.push("posted " + m); return true; }})`,
	}
	setup := "var out = []; var " + codemode.ModulesName + " = ["
	for i, spec := range l.Imports {
		if i > 0 {
			setup += ", "
		}
		setup += byName[spec]
	}
	if _, err := rt.RunString(setup + "];"); err != nil {
		t.Fatal(err)
	}
	fnv, err := rt.RunProgram(c.Program)
	if err != nil {
		t.Fatal(err)
	}
	fn, ok := goja.AssertFunction(fnv)
	if !ok {
		t.Fatalf("the program is %v", fnv)
	}
	res, err := fn(goja.Undefined())
	if err != nil {
		t.Fatal(err)
	}
	p := res.Export().(*goja.Promise)
	if p.State() != goja.PromiseStateFulfilled {
		t.Fatalf("the plan's promise is %v: %v", p.State(), p.Result())
	}
	return rt.Get("out").Export().([]any)
}

func TestLinkedModuleRuns(t *testing.T) {
	out := runModule(t, `import * as gh from "@codemode/servers/github";
import { post_message as post, "__meta__" as meta } from "@codemode/servers/slack"
import { "a-b" as ab } from "@codemode/servers/github";

const repos = await gh.list_repos({});
export const n = repos.length;
export function twice(x) { return 2 * x }
export default post(twice(n));
export { n as count };
out.push(meta.serverId, gh.__meta__.serverId, ab, this === undefined);
`)
	want := []any{"posted 6", "slack", "github", "dash", true}
	if len(out) != len(want) {
		t.Fatalf("out = %v, want %v", out, want)
	}
	for i := range want {
		if out[i] != want[i] {
			t.Errorf("out[%d] = %v, want %v", i, out[i], want[i])
		}
	}
}

func TestImportsAreHoisted(t *testing.T) {
	// As in a module, an import binds its name for the whole module.
	out := runModule(t, "out.push(typeof s.post_message);\nimport * as s from \"@codemode/servers/slack\";")
	if len(out) != 1 || out[0] != "function" {
		t.Errorf("out = %v", out)
	}
}

func TestAnonymousDefaultEndsItsStatement(t *testing.T) {
	// The parenthesised expression after the function is a statement of
	// its own, as in a module: it does not call the function.
	out := runModule(t, "export default function () { out.push(\"called\") }\n(out.push(\"after\"))")
	if len(out) != 1 || out[0] != "after" {
		t.Errorf("out = %v", out)
	}
}

func TestValidatorLinesAreTheModules(t *testing.T) {
	l, err := codemode.Link("import * as gh from \"@codemode/servers/github\";\nconst a = 1;\n  eval(\"a\");", modules{"@codemode/servers/github": nil})
	if err != nil {
		t.Fatal(err)
	}
	rules, _ := ast.RulesForPreset("balanced")
	_, err = ast.Validate(l.JavaScript, rules)
	ill, ok := err.(*ast.IllegalError)
	if !ok || len(ill.Violations) == 0 {
		t.Fatalf("Validate: %v", err)
	}
	if got := ill.Violations[0].Location; got != (ast.Location{Line: 3, Column: 3}) {
		t.Errorf("eval is at %v, want 3:3", got)
	}
}
