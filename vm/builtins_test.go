package vm

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dop251/goja"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
)

// builtinWalk is every function a plan can reach through the standard
// globals, the web globals, CodeCall's bindings and the intrinsics behind
// them (prototypes, accessors, iterator prototypes), named by the shortest
// path to it.
type builtinWalk struct {
	names map[*goja.Object]string
	funcs map[string]*goja.Object
}

// intrinsicSeeds evaluates to the intrinsics no global names, in the
// order of intrinsicNames.
const intrinsicSeeds = `[
	Object.getPrototypeOf(Int8Array),
	Object.getPrototypeOf([][Symbol.iterator]()),
	Object.getPrototypeOf(''[Symbol.iterator]()),
	Object.getPrototypeOf(new Map().entries()),
	Object.getPrototypeOf(new Set().values()),
	Object.getPrototypeOf(/a/g[Symbol.matchAll]('')),
	Object.getPrototypeOf(function* () {}),
	Object.getPrototypeOf(function* () {}).prototype,
	Object.getPrototypeOf(async function () {}),
	Object.getPrototypeOf(new URLSearchParams().entries()),
	Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]())),
]`

var intrinsicNames = []string{
	"%TypedArray%", "%ArrayIteratorPrototype%", "%StringIteratorPrototype%", "%MapIteratorPrototype%",
	"%SetIteratorPrototype%", "%RegExpStringIteratorPrototype%", "%GeneratorFunction.prototype%",
	"%GeneratorPrototype%", "%AsyncFunction.prototype%", "%URLSearchParamsIteratorPrototype%",
	"%IteratorPrototype%",
}

// walkBuiltins builds a hardened runtime with every lazy group resolved
// and walks it breadth first, so the first path to an object is its
// shortest (Object.prototype, not AggregateError.[[Prototype]]...).
func walkBuiltins(t *testing.T) (*run, *builtinWalk) {
	r := newRun(context.Background(), compile(t, "return 1"), &mcptest.Host{}, Options{Limits: limits(t, presets.Balanced)})
	r.own = make(map[*goja.Object]bool)
	r.setup()
	t.Cleanup(r.cancel)

	type item struct {
		o    *goja.Object
		path string
	}
	var queue []item
	var globals []string
	for name := range standardGlobals {
		globals = append(globals, name)
	}
	for name := range lazyGroups {
		globals = append(globals, name)
	}
	globals = append(globals, "callTool", "getTool", "searchTools", "describeTools", "mcpLog", "mcpNotify", "console", "codecallContext")
	slices.Sort(globals)
	for _, name := range slices.Compact(globals) {
		if o, ok := r.global.Get(name).(*goja.Object); ok {
			queue = append(queue, item{o, name})
		}
	}
	seeds, err := r.rt.RunString(intrinsicSeeds)
	if err != nil {
		t.Fatalf("intrinsics: %v", err)
	}
	for i, name := range intrinsicNames {
		queue = append(queue, item{object(seeds.(*goja.Object), fmt.Sprint(i)), name})
	}

	ownSymbols := native(object(r.std, "Object").Get("getOwnPropertySymbols"))
	w := &builtinWalk{names: make(map[*goja.Object]string), funcs: make(map[string]*goja.Object)}
	// Property edges are followed before [[Prototype]] edges, so an object
	// is named by properties where it can be (Function.prototype, not
	// Array.[[Prototype]]).
	var protos []item
	for len(queue) > 0 || len(protos) > 0 {
		if len(queue) == 0 {
			queue, protos = protos, nil
		}
		it := queue[0]
		queue = queue[1:]
		if it.o == nil {
			continue
		}
		if _, seen := w.names[it.o]; seen {
			continue
		}
		w.names[it.o] = it.path
		if _, ok := goja.AssertFunction(it.o); ok {
			w.funcs[it.path] = it.o
		}
		var keys []goja.Value
		for _, k := range it.o.GetOwnPropertyNames() {
			keys = append(keys, r.rt.ToValue(k))
		}
		// Object.Symbols lists only enumerable symbols; the built-in lists
		// them all.
		syms := ownSymbols(goja.FunctionCall{Arguments: []goja.Value{it.o}}).(*goja.Object)
		for i := range toLength(syms.Get("length")) {
			keys = append(keys, syms.Get(fmt.Sprint(i)))
		}
		for _, k := range keys {
			name := k.String()
			if s, ok := k.(*goja.Symbol); ok {
				name = "[" + strings.TrimSuffix(strings.TrimPrefix(s.String(), "Symbol("), ")") + "]"
			}
			d, ok := r.in.describe(goja.FunctionCall{Arguments: []goja.Value{it.o, k}}).(*goja.Object)
			if !ok {
				continue
			}
			if g, ok := d.Get("get").(*goja.Object); ok {
				queue = append(queue, item{g, "get " + it.path + "." + name})
			}
			if s, ok := d.Get("set").(*goja.Object); ok {
				queue = append(queue, item{s, "set " + it.path + "." + name})
			}
			if v, ok := d.Get("value").(*goja.Object); ok {
				queue = append(queue, item{v, it.path + "." + name})
			}
		}
		protos = append(protos, item{it.o.Prototype(), it.path + ".[[Prototype]]"})
	}
	return r, w
}

// TestBuiltinsGuarded fails when a function a plan can reach is goja's own
// and is neither guarded (made by the sandbox: a wrapper or a
// replacement) nor listed in harmlessBuiltins with the reason it needs no
// guard. A goja upgrade that adds a built-in, or a global, fails here
// until someone decides which it is.
func TestBuiltinsGuarded(t *testing.T) {
	r, w := walkBuiltins(t)
	var unlisted, stale []string
	guarded := 0
	for path, fn := range w.funcs {
		switch {
		case r.own[fn]:
			guarded++
			if _, listed := harmlessBuiltins[path]; listed {
				stale = append(stale, path+" (guarded now)")
			}
		case harmlessBuiltins[path] == "":
			unlisted = append(unlisted, path)
		}
	}
	for path := range harmlessBuiltins {
		if w.funcs[path] == nil {
			stale = append(stale, path+" (not reachable)")
		}
	}
	slices.Sort(unlisted)
	slices.Sort(stale)
	if len(unlisted) > 0 {
		t.Errorf("%d built-ins are neither guarded nor listed in harmlessBuiltins with a reason:\n%s", len(unlisted), strings.Join(unlisted, "\n"))
	}
	if len(stale) > 0 {
		t.Errorf("harmlessBuiltins lists entries that are not goja's reachable built-ins:\n%s", strings.Join(stale, "\n"))
	}
	t.Logf("%d functions reachable: %d made by the sandbox, %d of goja's listed as harmless", len(w.funcs), guarded, len(harmlessBuiltins))

	// Every global goja defines is offered (standardGlobals), removed,
	// locked (eval) or the global object itself.
	fresh := goja.New().GlobalObject()
	locked := r.global.GetOwnPropertyNames()
	for _, name := range fresh.GetOwnPropertyNames() {
		if !standardGlobals[name] && !removedGlobals[name] && !slices.Contains(locked, name) && name != "globalThis" {
			t.Errorf("goja defines the global %s, which standardGlobals does not list: decide whether plans get it, and guard it", name)
		}
	}
}
