package ast

import (
	goast "go/ast"
	"go/build"
	goparser "go/parser"
	"go/token"
	"io/fs"
	"reflect"
	"sort"
	"strings"
	"testing"

	js "github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
)

// nodeTypes lists the concrete types of goja/ast whose pointers implement
// ast.Node, read from the package's source with go/parser, so that a node
// type added by a newer goja shows up here. A type is a node if it declares
// Idx0, or embeds a node interface (such as Expression) or a node type.
func nodeTypes(t *testing.T) []string {
	t.Helper()
	pkg, err := build.Import("github.com/dop251/goja/ast", ".", build.FindOnly)
	if err != nil {
		t.Fatalf("finding goja/ast: %v", err)
	}
	fset := token.NewFileSet()
	pkgs, err := goparser.ParseDir(fset, pkg.Dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatalf("parsing goja/ast: %v", err)
	}
	structs := map[string]*goast.StructType{}
	ifaces := map[string]*goast.InterfaceType{}
	node := map[string]bool{"Node": true} // node interfaces and node types
	for _, f := range pkgs["ast"].Files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *goast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*goast.TypeSpec)
					if !ok {
						continue
					}
					switch ty := ts.Type.(type) {
					case *goast.StructType:
						structs[ts.Name.Name] = ty
					case *goast.InterfaceType:
						ifaces[ts.Name.Name] = ty
					}
				}
			case *goast.FuncDecl:
				if d.Recv != nil && d.Name.Name == "Idx0" {
					if star, ok := d.Recv.List[0].Type.(*goast.StarExpr); ok {
						node[star.X.(*goast.Ident).Name] = true
					}
				}
			}
		}
	}
	embedded := func(fields *goast.FieldList) []string {
		var names []string
		for _, f := range fields.List {
			if len(f.Names) == 0 {
				if id, ok := f.Type.(*goast.Ident); ok {
					names = append(names, id.Name)
				}
			}
		}
		return names
	}
	for changed := true; changed; {
		changed = false
		mark := func(name string, embeds []string) {
			for _, e := range embeds {
				if node[e] && !node[name] {
					node[name], changed = true, true
				}
			}
		}
		for name, it := range ifaces {
			mark(name, embedded(it.Methods))
		}
		for name, st := range structs {
			mark(name, embedded(st.Fields))
		}
	}
	var names []string
	for name := range structs {
		if node[name] {
			names = append(names, name)
		}
	}
	if len(names) < 50 {
		t.Fatalf("only %d node types found: %v", len(names), names)
	}
	sort.Strings(names)
	return names
}

// nodeCorpus together contains every node type goja's parser produces for
// valid code.
var nodeCorpus = []string{
	// Declarations, literals, operators.
	`var v = 1, w; let l = 'a'; const c = null;
const arr = [1, , ...[2]], obj = {a: 1, 'b': 2, [c]: 3, d, ...arr, get g() { return 1 }, set g(x) {}, m() {}, async am() {}, *gen() {}};
const re = /a+/g, t = ` + "`x${v}y`" + `, tag = String.raw` + "`a`" + `;
const n = -v + +w * 2 ** 3 % 4, b = (!true || false && v) ?? w, s = (v, w), q = v ? w : l;
v += 1; v++; --w; typeof v; void 0; delete obj.a; v in obj; v instanceof Object;
const {x, y: [z = 1, ...zs], ...others} = obj, [p, {q2}] = arr;
({x: v} = obj); [v, w] = arr;
obj?.a?.[0]?.(1); obj.a; obj['a']; new Date(); new Date; this;`,
	// Functions and classes.
	`function f(a, b = 1, {c}, [d], ...e) { return arguments0 }
const g = function named() {}, h = async () => await 1, k = x => x, m = async x => ({x});
function* gen() { yield 1; yield* gen(); yield }
class A extends Object {
  static s = 1; f = 2; #p = 3; [Symbol.iterator] = 4;
  constructor() { super(); new.target; this.#p; #p in this; }
  m() { return super.m } static sm() {} get g() { return 1 } set g(v) {} async am() {} *gm() {}
  static { let z = 1 }
}
const B = class {};`,
	// Statements.
	`a: { break a }
if (v) w(); else if (w) v(); else {}
switch (v) { case 1: break; default: }
try { throw 1 } catch (e) {} finally {}
try {} catch {}
for (var i = 0; i < 1; i++) { continue }
for (let j = 0;;) break
for (i = 0; i < 1;) break
for (;;) break
for (const k in obj) {}
for (var k2 in obj) {}
for (k3 in obj) {}
for (const o of arr) {}
for (var o2 of arr) {}
for ([o3] of arr) {}
while (false) {}
do ; while (false)
with (obj) {}
debugger;
;`,
}

func TestWalkerReachesEveryNodeType(t *testing.T) {
	seen := map[string]bool{}
	visit := func(n js.Node) {
		seen[reflect.TypeOf(n).Elem().Name()] = true
	}
	for _, script := range nodeCorpus {
		program := wrapPrefix + script + wrapSuffix
		tree, err := parser.ParseFile(nil, "", program, 0, parser.WithDisableSourceMaps)
		if err != nil {
			t.Fatalf("corpus does not parse: %v\n%s", err, script)
		}
		fn, ok := checkWrapper(tree, len(script))
		if !ok {
			t.Fatal("corpus breaks the wrapper")
		}
		w := &walker{rules: newRuleSet(bigRules()), lines: newLineIndex(script), program: program, visit: visit}
		w.walkPlan(tree, fn)
		for _, v := range w.violations {
			if v.Kind == KindUnsupportedSyntax {
				t.Errorf("valid code reported as unsupported: %s", v.Message)
			}
		}
	}
	// Bad nodes only appear in the trees of scripts that do not parse.
	for _, bad := range []string{"x = = 1", "return", "try {}"} {
		tree, _ := parser.ParseFile(nil, "", bad, 0, parser.WithDisableSourceMaps)
		w := &walker{rules: newRuleSet(bigRules()), lines: newLineIndex(bad), visit: visit}
		w.node(tree, ctxDefault)
	}

	var missing []string
	types := nodeTypes(t)
	t.Logf("%d node types in goja/ast", len(types))
	for _, name := range types {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		t.Errorf("the walker never reached: %s", strings.Join(missing, ", "))
	}
}

// unknownNode stands for a node type goja might add: it satisfies the
// interfaces but is none of the types the walker knows.
type unknownNode struct{ js.Expression }

func TestUnknownAndBadNodesAreRefused(t *testing.T) {
	script := "x"
	for name, n := range map[string]js.Node{
		"unknown expression": &unknownNode{&js.Identifier{Name: "x", Idx: file1()}},
		"bad expression":     &js.BadExpression{From: file1(), To: file1() + 1},
		"bad statement":      &js.BadStatement{From: file1(), To: file1() + 1},
	} {
		w := &walker{rules: newRuleSet(bigRules()), lines: newLineIndex(script)}
		w.node(&js.ExpressionStatement{Expression: asExpression(n)}, ctxDefault)
		if bs, ok := n.(*js.BadStatement); ok {
			w = &walker{rules: newRuleSet(bigRules()), lines: newLineIndex(script)}
			w.node(bs, ctxDefault)
		}
		if len(w.violations) != 1 || w.violations[0].Kind != KindUnsupportedSyntax {
			t.Errorf("%s: violations %+v", name, w.violations)
		}
	}
}

// file1 is the index of the first character of the script in the program.
func file1() file.Idx { return file.Idx(len(wrapPrefix) + 1) }

func asExpression(n js.Node) js.Expression {
	if e, ok := n.(js.Expression); ok {
		return e
	}
	return &js.NullLiteral{Idx: file1()}
}

func TestCheckWrapper(t *testing.T) {
	script := "return 1"
	good := wrapPrefix + script + wrapSuffix
	tree, err := parser.ParseFile(nil, "", good, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := checkWrapper(tree, len(script)); !ok {
		t.Error("the wrapper itself is refused")
	}
	for _, program := range []string{
		"(async function(){return 1\n}); evil()",
		"(async function(){return 1\n})()",
		"(function(){return 1\n})",
		"(async function*(){return 1\n})",
		"(async function f(){return 1\n})",
		"(async function(a){return 1\n})",
		"(async function(){return 1\n}, 1)",
		"(async function(){return 1}) //\n  ",
	} {
		tree, err := parser.ParseFile(nil, "", program, 0)
		if err != nil {
			continue
		}
		if _, ok := checkWrapper(tree, len(script)); ok {
			t.Errorf("checkWrapper accepted %q", program)
		}
	}
	if _, ok := checkWrapper(nil, 0); ok {
		t.Error("nil program accepted")
	}
}
