package benchmarks

import (
	"context"
	"errors"
	"testing"

	"github.com/dop251/goja"
	"github.com/grafana/sobek"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/codemode"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

// noModules resolves nothing: the benchmarked module imports nothing.
type noModules struct{}

func (noModules) Exports(string) ([]string, bool) { return nil, false }

// BenchmarkModuleRoads compares the two roads to ES modules the Code Mode
// surface could take, on a trivial module with top-level await, without
// MCP around it (docs/architecture.md, "Code Mode"):
//
//   - sobek-bare: grafana/sobek's own module support, a fresh runtime that
//     parses, links and evaluates the module and settles its promise, with
//     none of CodeCall's hardening (which would have to be rebuilt on it);
//   - goja-bare: goja compiling and running the same statements as a
//     script, in a fresh runtime, unhardened: the floor of the road taken;
//   - linked: the road taken, codemode.Link and ast.ValidateModule (both
//     walls' first half) and vm.Run, a fresh hardened runtime.
func BenchmarkModuleRoads(b *testing.B) {
	const src = "const x = await Promise.resolve(1);\nglobalThis.__codemode_result__ = x + 1;\n"
	b.Run("sobek-bare", func(b *testing.B) {
		resolve := func(any, string) (sobek.ModuleRecord, error) { return nil, errors.New("no modules") }
		for b.Loop() {
			m, err := sobek.ParseModule("script.js", src, resolve)
			if err != nil {
				b.Fatal(err)
			}
			if err := m.Link(); err != nil {
				b.Fatal(err)
			}
			rt := sobek.New()
			p := rt.CyclicModuleRecordEvaluate(m, resolve)
			if p.State() != sobek.PromiseStateFulfilled || rt.GlobalObject().Get("__codemode_result__").ToInteger() != 2 {
				b.Fatalf("the module did not run: %v", p.Result())
			}
		}
	})
	b.Run("goja-bare", func(b *testing.B) {
		for b.Loop() {
			prg, err := goja.Compile("script.js", "(async function(){"+src+"\n})", true)
			if err != nil {
				b.Fatal(err)
			}
			rt := goja.New()
			fn, err := rt.RunProgram(prg)
			if err != nil {
				b.Fatal(err)
			}
			call, _ := goja.AssertFunction(fn)
			if _, err := call(goja.Undefined()); err != nil || rt.GlobalObject().Get("__codemode_result__").ToInteger() != 2 {
				b.Fatalf("the script did not run: %v", err)
			}
		}
	})
	b.Run("linked", func(b *testing.B) {
		limits, _ := presets.LimitsFor(presets.Secure)
		limits.Isolation = presets.IsolationInProcess
		rules := ast.RulesFor(limits)
		link := linkerFunc(func(s string) (*ast.Stripped, error) {
			l, err := codemode.Link(s, noModules{})
			if err != nil {
				return nil, err
			}
			return &l.Stripped, nil
		})
		host := &mcptest.Host{}
		for b.Loop() {
			checked, err := ast.ValidateModule(src, rules, link)
			if err != nil {
				b.Fatal(err)
			}
			res := vm.Run(context.Background(), checked, host, vm.Options{RunID: "b", Limits: limits, CodeMode: &vm.CodeMode{}})
			if res.Status != vm.StatusOK || string(res.Result) != "2" {
				b.Fatalf("the module did not run: %+v", res)
			}
		}
	})
}

// linkerFunc adapts a function to ast.ModuleLinker.
type linkerFunc func(string) (*ast.Stripped, error)

func (f linkerFunc) LinkModule(s string) (*ast.Stripped, error) { return f(s) }
