package vm

import (
	"sync"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/codecall-go/codecall/presets"
)

// hiddenPrototypes evaluates to functions whose prototypes are intrinsics no
// global names: %AsyncFunction.prototype% and %GeneratorFunction.prototype%.
// Compiled once; a *goja.Program is immutable and shared by every run.
var hiddenPrototypes = sync.OnceValue(func() *goja.Program {
	return goja.MustCompile("", "[async function () {}, function* () {}]", true)
})

// setup builds the run's runtime: a fresh goja.Runtime with source maps
// off and the stack capped, its intrinsics captured and locked down, the
// allocating built-ins guarded (the rarely used ones on first use, see
// globals.go), and the bridge installed. A run taken from Runtimes arrives
// with all of that done but what depends on the run's own options.
func (r *run) setup() {
	if r.rt == nil {
		r.harden(hardeningFor(r.opts.Limits, r.opts.CodeMode != nil))
	}
	r.installRegexEngine()
	if r.opts.CodeMode != nil {
		r.installCodeMode()
	}
}

// hardening is everything that building a run's hardened runtime reads
// from the run's options: two runs with equal hardenings get runtimes
// that differ in nothing, so one can be built before its run is known
// (see Runtimes).
type hardening struct {
	stackDepth int
	codeMode   bool
	console    bool
}

// hardeningFor is what a run under limits (a Code Mode run when codeMode
// is set) needs its runtime hardened for.
func hardeningFor(limits presets.Limits, codeMode bool) hardening {
	return hardening{stackDepth: capsFor(limits).stackDepth, codeMode: codeMode, console: limits.AllowConsole}
}

// harden builds a fresh runtime hardened for h. It reads nothing else of
// the run: the guards and the bridge read the run's limits, host and
// context when the plan calls them, not here.
func (r *run) harden(h hardening) {
	rt := goja.New()
	r.rt = rt
	// goja reads the files a //# sourceMappingURL= comment names when it
	// compiles; nothing may be compiled at run time, but turn it off anyway.
	rt.SetParserOptions(parser.WithDisableSourceMaps)
	rt.SetMaxCallStackSize(h.stackDepth)
	r.std = rt.GlobalObject()

	r.captureIntrinsics()
	r.trackRejections()
	r.installGlobals()
	r.lockCodeGeneration(h.codeMode)
	r.installGuards()
	r.installRegex()
	if h.codeMode {
		return
	}
	r.installBridge(h.console)
}

func (r *run) captureIntrinsics() {
	g := r.std
	objectCtor := object(g, "Object")
	arrayCtor := object(g, "Array")
	r.in = intrinsics{
		objectProto:   object(objectCtor, "prototype"),
		functionProto: object(object(g, "Function"), "prototype"),
		arrayProto:    object(arrayCtor, "prototype"),
		stringProto:   object(object(g, "String"), "prototype"),
		freeze:        native(objectCtor.Get("freeze")),
		describe:      native(objectCtor.Get("getOwnPropertyDescriptor")),
		isArray:       native(arrayCtor.Get("isArray")),
	}
}

// lockCodeGeneration makes every route to code from strings a dead end.
// eval and the Function constructor are replaced by a function that ends
// the run with illegal_access (kind code_generation), and so is the
// constructor property of Function.prototype, %AsyncFunction.prototype%
// and %GeneratorFunction.prototype%, non-writable and non-configurable.
// Those three properties and the two globals are the only references goja
// keeps to its Function, AsyncFunction and GeneratorFunction constructors
// (it has no async generators), so every other route -
// (function(){}).constructor, a class's, a bound function's, a promise's,
// an error's or any value's constructor chain, Reflect.construct,
// Object.getOwnPropertyDescriptor, Reflect.getPrototypeOf - ends at the
// same throwing function.
func (r *run) lockCodeGeneration(codeMode bool) {
	fn := r.newConstructor("Function", 1, func(goja.ConstructorCall) *goja.Object {
		r.codeGeneration("the Function constructor")
		return nil
	})
	if err := fn.DefineDataProperty("prototype", r.in.functionProto, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		panic(err)
	}
	r.freeze(fn)

	protos := []*goja.Object{r.in.functionProto}
	fns := r.mustRun(hiddenPrototypes()).(*goja.Object)
	for _, i := range []string{"0", "1"} {
		protos = append(protos, object(fns, i).Prototype())
	}
	r.in.generatorProto = object(object(fns, "1"), "prototype").Prototype()
	for _, p := range protos {
		r.lockData(p, "constructor", fn)
	}
	r.lockGlobal("Function", fn)

	if codeMode {
		// The Code Mode specification leaves eval out altogether.
		r.lockGlobal("eval", goja.Undefined())
		return
	}
	eval := r.newFunction("eval", 1, func(goja.FunctionCall) goja.Value {
		r.codeGeneration("eval")
		return nil
	})
	r.freeze(eval)
	r.lockGlobal("eval", eval)
}

// mustRun runs a program of CodeCall's own during setup.
func (r *run) mustRun(p *goja.Program) goja.Value {
	v, err := r.rt.RunProgram(p)
	if err != nil {
		panic(err)
	}
	return v
}

// codeGeneration ends the run: the plan tried to create code at run time.
// Catching the error does not help the plan: the run is interrupted at its
// next instruction. A plan that reaches these functions has got around the
// validator's rules (which refuse eval, Function and .constructor), so the
// attempt itself is the violation, whatever the plan does next.
func (r *run) codeGeneration(what string) {
	r.stop(&outcome{status: StatusIllegalAccess, err: &ErrorInfo{Kind: KindCodeGeneration, Location: r.scriptLocation(),
		Message: what + " is not available: plans cannot create code at run time"}})
	r.throwType(what + " is not available in the sandbox")
}

// scriptLocation is the position in the user's script of the innermost
// script frame on the stack, or nil.
func (r *run) scriptLocation() *Location {
	for _, f := range r.rt.CaptureCallStack(0, nil) {
		p := f.Position()
		if p.Line <= 0 {
			continue
		}
		return r.locate(p.Line, p.Column)
	}
	return nil
}

// locate maps a position in the program to the user's script.
func (r *run) locate(line, col int) *Location {
	loc := r.plan.Locate(line, col)
	return &Location{Line: loc.Line, Column: loc.Column}
}
