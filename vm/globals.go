package vm

import (
	"github.com/dop251/goja"
)

// The plan's global object is not goja's. goja builds its built-ins lazily,
// on first access, and hardening one means building it and wrapping a
// dozen of its functions; doing that for every built-in on every run would
// cost more than the rest of a run together. So the plan gets a fresh,
// ordinary global object holding CodeCall's own bindings (locked), whose
// prototype is a dynamic object that resolves every other global on first
// use: from goja's global, which the plan never sees and which therefore
// stays a pristine source of the original built-ins, hardened first where
// they need it. Built-ins reachable without naming a global (through
// literals or prototypes: Array, String, Function, RegExp, Promise...) are
// hardened eagerly in setup. The web globals goja lacks (URL, TextEncoder,
// structuredClone, setTimeout...) are built on first use the same way;
// Map and Set capture their original methods then, for structuredClone.
//
// Observable differences from a plain global: the standard globals are
// inherited rather than own properties of globalThis, and deleting one
// does not remove it.

// lazyGroup names the built-ins hardened together on first use.
type lazyGroup int

const (
	groupNone lazyGroup = iota
	groupBuffers
	groupReflect
	groupProxy
	groupJSON
	groupRegExp
	groupCollections
	groupURL
	groupEncoding
	groupClone
	groupTimers
	groupGlobalFunctions
)

// lazyGlobals is the dynamic object behind the plan's global object.
type lazyGlobals struct {
	r     *run
	cache map[string]goja.Value // resolved globals; nil for removed ones
}

// removedGlobals are goja globals a plan must not have: GoError wraps Go
// errors; BigInt, BigInt64Array and BigUint64Array create BigInt values,
// whose ** and << allocate without bound in one native step.
var removedGlobals = map[string]bool{"GoError": true, "BigInt": true, "BigInt64Array": true, "BigUint64Array": true}

// standardGlobals are the names goja's global object defines. The dynamic
// object resolves only these from it, and only as own properties: a
// lookup that fell through to goja's global's prototype would run a getter
// the plan put on Object.prototype with goja's global as `this`, handing
// the plan the unhardened originals (the real Function constructor among
// them). Names goja may add later stay unavailable until listed here.
var standardGlobals = map[string]bool{
	"Object": true, "Function": true, "Array": true, "String": true, "Number": true, "RegExp": true,
	"Date": true, "Boolean": true, "Proxy": true, "Reflect": true, "Error": true, "AggregateError": true,
	"TypeError": true, "ReferenceError": true, "SyntaxError": true, "RangeError": true, "EvalError": true,
	"URIError": true, "Math": true, "JSON": true, "ArrayBuffer": true, "DataView": true,
	"Uint8Array": true, "Uint8ClampedArray": true, "Int8Array": true, "Uint16Array": true, "Int16Array": true,
	"Uint32Array": true, "Int32Array": true, "Float32Array": true, "Float64Array": true,
	"Symbol": true, "WeakSet": true, "WeakMap": true, "Map": true, "Set": true, "Promise": true,
	"NaN": true, "undefined": true, "Infinity": true, "isNaN": true, "parseInt": true, "parseFloat": true,
	"isFinite": true, "decodeURI": true, "decodeURIComponent": true, "encodeURI": true,
	"encodeURIComponent": true, "escape": true, "unescape": true,
}

// lazyGroups maps globals to the group that hardens them.
var lazyGroups = map[string]lazyGroup{
	"ArrayBuffer": groupBuffers, "DataView": groupBuffers,
	"Int8Array": groupBuffers, "Uint8Array": groupBuffers, "Uint8ClampedArray": groupBuffers,
	"Int16Array": groupBuffers, "Uint16Array": groupBuffers, "Int32Array": groupBuffers,
	"Uint32Array": groupBuffers, "Float32Array": groupBuffers, "Float64Array": groupBuffers,
	"Reflect": groupReflect, "Proxy": groupProxy, "JSON": groupJSON, "RegExp": groupRegExp,
	"Map": groupCollections, "Set": groupCollections,
	// The web platform's globals, which goja does not have: CodeCall's own.
	"URL": groupURL, "URLSearchParams": groupURL,
	"TextEncoder": groupEncoding, "TextDecoder": groupEncoding,
	"structuredClone": groupClone, "setTimeout": groupTimers, "clearTimeout": groupTimers,
	"encodeURI": groupGlobalFunctions, "encodeURIComponent": groupGlobalFunctions, "escape": groupGlobalFunctions,
	"parseFloat": groupGlobalFunctions,
}

// installGlobals gives the runtime the plan's global object.
func (r *run) installGlobals() {
	r.lazy = &lazyGlobals{r: r, cache: make(map[string]goja.Value, 32)}
	r.global = r.rt.NewObject()
	if err := r.global.SetPrototype(r.rt.NewDynamicObject(r.lazy)); err != nil {
		panic(err)
	}
	r.lazy.cache["globalThis"] = r.global
	r.rt.SetGlobalObject(r.global)
}

// setGlobal makes name resolve to v, as a standard global would. It is
// inherited, not an own property of the plan's global object, so a
// strict-mode plan cannot reassign it (the assignment throws a
// ReferenceError); local declarations may shadow it.
func (r *run) setGlobal(name string, v goja.Value) {
	r.lazy.cache[name] = v
}

// lockGlobal binds name to v on the plan's global object itself,
// non-writable and non-configurable.
func (r *run) lockGlobal(name string, v goja.Value) {
	r.lockData(r.global, name, v)
	r.lazy.cache[name] = v
}

// Get resolves a global on first use.
func (g *lazyGlobals) Get(key string) goja.Value {
	if v, ok := g.cache[key]; ok {
		return v
	}
	r := g.r
	switch {
	case removedGlobals[key]:
		g.cache[key] = nil
		return nil
	case lazyGroups[key] != groupNone:
		switch lazyGroups[key] {
		case groupBuffers:
			r.guardBuffers()
		case groupReflect:
			r.guardReflect()
		case groupProxy:
			r.guardProxy()
		case groupJSON:
			r.guardJSON()
		case groupRegExp:
			r.hardenRegExp()
		case groupCollections:
			r.captureCollections()
			r.guardCollections()
		case groupURL:
			r.installURL()
		case groupEncoding:
			r.installEncoding()
		case groupClone:
			r.installClone()
		case groupTimers:
			r.installTimers()
		case groupGlobalFunctions:
			r.guardGlobalFunctions()
		}
		if v, ok := g.cache[key]; ok {
			return v
		}
	}
	var v goja.Value
	if standardGlobals[key] {
		v = r.std.Get(key)
	}
	g.cache[key] = v
	return v
}

// Has reports whether a global exists.
func (g *lazyGlobals) Has(key string) bool { return g.Get(key) != nil }

// Set refuses: the plan's writes land on its own global object, which
// shadows this one.
func (g *lazyGlobals) Set(string, goja.Value) bool { return false }

// Delete refuses.
func (g *lazyGlobals) Delete(string) bool { return false }

// Keys lists nothing: standard globals are not enumerable.
func (g *lazyGlobals) Keys() []string { return nil }
