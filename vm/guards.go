package vm

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/dop251/goja"
)

// guardState is the bookkeeping of the guards; VM goroutine only.
type guardState struct {
	genDepth   int
	joinDepth  int
	joining    map[*goja.Object]bool
	bindDepth  map[*goja.Object]int
	proxyDepth map[*goja.Object]int
	// dataViews are the DataView objects of the run: goja gives no other
	// way to tell one from a plain object.
	dataViews map[*goja.Object]bool
	// buffers are the original accessors of typed arrays and DataViews,
	// captured before the plan could reach them; nil until the buffer
	// globals are first used.
	buffers *bufferNatives
}

// bufferNatives are the original getters of %TypedArray%.prototype and
// DataView.prototype: their internal slots, which no property of the
// plan's can fake.
type bufferNatives struct {
	typedTag, typedBuffer, typedOffset, typedLength nativeFunc
	viewBuffer, viewOffset, viewLength              nativeFunc
}

var (
	proxyType       = reflect.TypeOf(goja.Proxy{})
	arrayBufferType = reflect.TypeOf(goja.ArrayBuffer{})
	// typedArrayTypes are what goja exports typed arrays as.
	typedArrayTypes = map[reflect.Type]bool{
		reflect.TypeOf([]uint8(nil)): true, reflect.TypeOf([]int8(nil)): true,
		reflect.TypeOf([]uint16(nil)): true, reflect.TypeOf([]int16(nil)): true,
		reflect.TypeOf([]uint32(nil)): true, reflect.TypeOf([]int32(nil)): true,
		reflect.TypeOf([]float32(nil)): true, reflect.TypeOf([]float64(nil)): true,
		reflect.TypeOf([]uint64(nil)): true, reflect.TypeOf([]int64(nil)): true,
	}
)

// The typed array constructors the sandbox offers, with their element
// sizes. BigInt64Array and BigUint64Array are removed.
var typedArrays = []struct {
	name string
	size int64
}{
	{"Int8Array", 1}, {"Uint8Array", 1}, {"Uint8ClampedArray", 1},
	{"Int16Array", 2}, {"Uint16Array", 2},
	{"Int32Array", 4}, {"Uint32Array", 4}, {"Float32Array", 4},
	{"Float64Array", 8},
}

// Array.prototype methods that walk or copy `this` as an array-like in
// one native call, by whether they write to it: the callback methods
// included, because a native callback (Boolean, Math.abs...) runs no script
// code either. concat, join, toLocaleString, flat and flatMap are replaced
// outright; toString calls join. Not guarded, because they do a bounded
// amount of work per call: at, pop, push, and the iterator methods (the
// iterator's next is a checkpoint instead).
var (
	arrayReaders = []string{"every", "filter", "find", "findIndex", "findLast", "findLastIndex", "forEach",
		"includes", "indexOf", "lastIndexOf", "map", "reduce", "reduceRight", "slice", "some",
		"with", "toReversed", "toSorted", "toSpliced"}
	arrayWriters = []string{"copyWithin", "fill", "reverse", "shift", "sort", "splice", "unshift"}
)

func isProxy(o *goja.Object) bool { return o.ExportType() == proxyType }

func isTypedArray(o *goja.Object) bool { return typedArrayTypes[o.ExportType()] }

// checkpoint throws when the run is being stopped. Guards call it from Go
// loops that run no script code between steps, which goja's interrupt
// cannot reach; the run's interrupt makes the error uncatchable at the
// plan's next instruction.
func (r *run) checkpoint() {
	if r.stopping.Load() {
		r.throwType("the run was stopped")
	}
}

// installGuards guards the built-ins that allocate in proportion to an
// argument, loop over an array-like's length without running script code
// (goja's interrupt does not reach native loops), recurse on the Go stack,
// where an overflow is fatal, or whose output or work grows faster than
// their input (see guards_text.go, guards_objects.go, guards_loops.go).
// TestBuiltinsGuarded holds every other reachable built-in to a list of
// the harmless, each with its reason.
//
// Those reachable through literals and prototypes are guarded here; the
// typed arrays and buffers, Reflect, Proxy, JSON, Map and Set and the
// global functions when the plan first names them (see globals.go).
func (r *run) installGuards() {
	r.guardStrings()
	r.guardText()
	r.guardObjectStatics()
	r.guardArrays()
	r.guardFunctionPrototype()
	r.guardGenerators()
}

// guardGenerators bounds chains of generators delegating with yield*: each
// next, return or throw of a delegating generator calls the inner one's on
// the Go stack (a few KiB per level, while the generator itself costs a few
// hundred bytes of heap), outside the JavaScript call-stack limit.
func (r *run) guardGenerators() {
	for _, name := range []string{"next", "return", "throw"} {
		what := "Generator.prototype." + name
		r.wrap(r.in.generatorProto, name, func(orig nativeFunc) nativeFunc {
			return func(call goja.FunctionCall) goja.Value {
				if r.guards.genDepth >= r.caps.stackDepth {
					r.throwRange(fmt.Sprintf("%s: generators delegate (yield*) deeper than %d levels, this preset's maxStackDepth", what, r.caps.stackDepth))
				}
				r.guards.genDepth++
				defer func() { r.guards.genDepth-- }()
				return orig(call)
			}
		})
	}
}

// guardJSON replaces JSON.stringify and JSON.parse, keeping the original
// parse for the bridge, and removes JSON.rawJSON and JSON.isRawJSON, which
// the sandbox's stringify does not support.
func (r *run) guardJSON() {
	json := object(r.std, "JSON")
	r.in.jsonParse = native(json.Get("parse"))
	r.replaceData(json, "stringify", r.newFunction("stringify", 3, r.jsonStringify))
	r.replaceData(json, "parse", r.newFunction("parse", 2, r.jsonParse))
	for _, name := range []string{"rawJSON", "isRawJSON"} {
		if err := json.Delete(name); err != nil {
			panic(err)
		}
	}
	r.setGlobal("JSON", json)
}

// wrap replaces o[name] by a function of the same name and length made by
// guard from the original's Go implementation.
func (r *run) wrap(o *goja.Object, name string, guard func(orig nativeFunc) nativeFunc) *goja.Object {
	v, _ := o.Get(name).(*goja.Object)
	orig := native(v)
	if orig == nil {
		panic(fmt.Sprintf("vm: %s is not a native function", name))
	}
	fn := r.newFunction(name, int(v.Get("length").ToInteger()), guard(orig))
	r.replaceData(o, name, fn)
	return fn
}

// boundedArrayLike returns what an Array.prototype method may safely take
// as its array-like v, and its length, read once and checked against the
// element cap. Arrays, strings and typed arrays are returned as they are:
// their length cannot be intercepted (a typed array's is read from its
// internal slot). An object whose length is an own
// data property is returned as it is too. Anything else (a proxy, a length
// getter or an inherited length) could report one length to the check and
// another to the built-in, so readers get a "pinned" view instead, an
// object inheriting from v with its own length fixed at the checked value,
// and writers are refused.
func (r *run) boundedArrayLike(v goja.Value, what string, writes bool) (*goja.Object, int64) {
	o := v.ToObject(r.rt)
	var n int64
	stable := false
	switch {
	case isProxy(o):
	case isTypedArray(o):
		// A typed array's length is its buffer's, within the buffer cap,
		// which holds up to eight times more one-byte elements than the
		// element cap: Array methods called on it walk every one.
		n = r.typedLength(o)
		if n > r.caps.elements {
			r.throwRange(fmt.Sprintf("%s: a typed array of length %d exceeds the sandbox limit of %d elements", what, n, r.caps.elements))
		}
		return o, n
	case o.ClassName() == "Array" || o.ClassName() == "String":
		stable = true
	default:
		d, ok := r.in.describe(goja.FunctionCall{Arguments: []goja.Value{o, r.rt.ToValue("length")}}).(*goja.Object)
		stable = ok && d.Get("get") == nil && d.Get("set") == nil
	}
	n = toLength(o.Get("length"))
	if n > r.caps.elements {
		r.throwRange(fmt.Sprintf("%s: an array-like of length %d exceeds the sandbox limit of %d elements", what, n, r.caps.elements))
	}
	if stable {
		return o, n
	}
	if writes {
		r.throwType(what + " on a proxy or an object with a computed length is not supported in the sandbox")
	}
	pinned := r.rt.CreateObject(o)
	r.defineData(pinned, "length", r.rt.ToValue(n))
	return pinned, n
}

// materialize returns what a built-in that accepts an iterable or an
// array-like may safely take in place of o: arrays, strings, typed arrays
// and buffers as they are (lengths checked); an iterable's values, read
// once into a new array with the element cap and the stop flag checked at
// every step; any other object pinned as boundedArrayLike does.
func (r *run) materialize(o *goja.Object, what string) *goja.Object {
	switch {
	case isProxy(o):
	case isTypedArray(o), o.ExportType() == arrayBufferType, o.ClassName() == "String":
		return o
	case o.ClassName() == "Array":
		p, _ := r.boundedArrayLike(o, what, false)
		return p
	}
	it := o.GetSymbol(goja.SymIterator)
	if it == nil || goja.IsUndefined(it) || goja.IsNull(it) {
		p, _ := r.boundedArrayLike(o, what, false)
		return p
	}
	var values []any
	r.rt.ForOf(o, func(v goja.Value) bool {
		if int64(len(values)) >= r.caps.elements {
			r.throwRange(fmt.Sprintf("%s: an iterable of more than %d values exceeds the sandbox limit", what, r.caps.elements))
		}
		if len(values)%checkpointEvery == 0 {
			r.checkpoint()
		}
		values = append(values, v)
		return true
	})
	return r.rt.NewArray(values...)
}

func (r *run) guardArrays() {
	ap := r.in.arrayProto
	origValues := native(ap.Get("values"))

	// The array iterator's next is the step of every native loop over an
	// array (spread, Array.from, Promise.all, new Set...): make it a
	// checkpoint.
	iterProto := origValues(goja.FunctionCall{This: r.rt.NewArray()}).(*goja.Object).Prototype()
	r.in.iteratorProto = iterProto.Prototype()
	r.wrap(iterProto, "next", func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			r.checkpoint()
			return orig(call)
		}
	})

	guardThis := func(name string, writes bool) func(nativeFunc) nativeFunc {
		what := "Array.prototype." + name
		takesCallback := callbackMethods[name]
		return func(orig nativeFunc) nativeFunc {
			return func(call goja.FunctionCall) goja.Value {
				var n int64
				call.This, n = r.boundedArrayLike(call.This, what, writes)
				if takesCallback {
					call.Arguments = r.checkpointedCallback(call.Arguments, n)
				}
				return orig(call)
			}
		}
	}
	for _, name := range arrayReaders {
		r.wrap(ap, name, guardThis(name, false))
	}
	for _, name := range arrayWriters {
		r.wrap(ap, name, guardThis(name, true))
	}
	// goja's default sort compares in one native call that runs no script
	// code, so a long sort outlives the deadline: without a comparator of
	// the plan's own, sort with one that is a checkpoint.
	defaultCompare := r.newFunction("compare", 2, func(call goja.FunctionCall) goja.Value {
		r.checkpoint()
		// JavaScript orders strings by UTF-16 code units.
		a := utf16.Encode([]rune(call.Argument(0).String()))
		b := utf16.Encode([]rune(call.Argument(1).String()))
		return r.rt.ToValue(slices.Compare(a, b))
	})
	// A comparator of the plan's own that is native (Math.min...) runs no
	// script code either: it is made a checkpoint too.
	for _, name := range []string{"sort", "toSorted"} {
		r.wrap(ap, name, func(orig nativeFunc) nativeFunc {
			return func(call goja.FunctionCall) goja.Value {
				if goja.IsUndefined(call.Argument(0)) {
					call.Arguments = []goja.Value{defaultCompare}
				} else {
					call.Arguments = r.checkpointedCallback(call.Arguments, callbackCheckpointLength+1)
				}
				return orig(call)
			}
		})
	}
	r.replaceData(ap, "join", r.newFunction("join", 1, r.arrayJoin))
	r.replaceData(ap, "toLocaleString", r.newFunction("toLocaleString", 0, r.arrayToLocaleString))
	r.replaceData(ap, "concat", r.newFunction("concat", 1, r.arrayConcat))
	r.replaceData(ap, "flat", r.newFunction("flat", 0, r.arrayFlat))
	r.replaceData(ap, "flatMap", r.newFunction("flatMap", 1, r.arrayFlatMap))

	// Array(n) allocates nothing in goja, but a length beyond the element
	// cap is refused anyway: nothing useful can be done with it here.
	orig := object(r.std, "Array")
	construct, _ := goja.AssertConstructor(orig)
	array := r.newConstructor("Array", 1, func(call goja.ConstructorCall) *goja.Object {
		if len(call.Arguments) == 1 && goja.IsNumber(call.Arguments[0]) {
			if f := call.Arguments[0].ToFloat(); f > float64(r.caps.elements) && f <= 1<<32-1 {
				r.throwRange(fmt.Sprintf("Array: a length of %v exceeds the sandbox limit of %d elements", f, r.caps.elements))
			}
		}
		o, err := construct(call.NewTarget, call.Arguments...)
		if err != nil {
			panic(err)
		}
		return o
	})
	r.lockData(array, "prototype", ap)
	r.replaceData(array, "isArray", orig.Get("isArray"))
	r.replaceData(array, "of", orig.Get("of"))
	r.replaceData(array, "from", orig.Get("from"))
	r.wrap(array, "from", r.fromGuard("Array.from"))
	r.speciesGetter(array)
	r.replaceData(ap, "constructor", array)
	r.setGlobal("Array", array)
}

// speciesGetter gives a replacement constructor the [Symbol.species]
// accessor of the built-in it stands for, returning this.
func (r *run) speciesGetter(ctor *goja.Object) {
	get := r.newFunction("get [Symbol.species]", 0, func(call goja.FunctionCall) goja.Value { return call.This })
	if err := ctor.DefineAccessorPropertySymbol(goja.SymSpecies, get, nil, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		panic(err)
	}
}

// arrayJoin replaces Array.prototype.join: the same algorithm with the
// element cap, a cap on the string it builds, a depth limit on the
// recursion through nested arrays (join calls toString on elements, which
// calls join), and cycles joined as "" as goja and other engines do.
func (r *run) arrayJoin(call goja.FunctionCall) goja.Value {
	return r.join(call.This, call.Argument(0), "Array.prototype.join", false)
}

// arrayToLocaleString replaces Array.prototype.toLocaleString, which
// recurses like join.
func (r *run) arrayToLocaleString(call goja.FunctionCall) goja.Value {
	return r.join(call.This, goja.Undefined(), "Array.prototype.toLocaleString", true)
}

func (r *run) join(this, separator goja.Value, what string, locale bool) goja.Value {
	o := this.ToObject(r.rt)
	if r.guards.joining[o] {
		return r.rt.ToValue("")
	}
	if r.guards.joinDepth >= maxJoinDepth {
		r.throwRange(fmt.Sprintf("%s: arrays nest deeper than %d levels", what, maxJoinDepth))
	}
	if r.guards.joining == nil {
		r.guards.joining = make(map[*goja.Object]bool)
	}
	r.guards.joining[o] = true
	r.guards.joinDepth++
	defer func() {
		delete(r.guards.joining, o)
		r.guards.joinDepth--
	}()

	src, n := r.boundedArrayLike(o, what, false)
	sep := goja.String(r.rt.ToValue(",").(goja.String))
	if !goja.IsUndefined(separator) {
		sep = r.toStr(separator)
	}
	var b goja.StringBuilder
	units := int64(0)
	for i := int64(0); i < n; i++ {
		if i%checkpointEvery == 0 {
			r.checkpoint()
		}
		if i > 0 {
			units += int64(sep.Length())
			r.checkUnits(units, what)
			b.WriteString(sep)
		}
		el := src.Get(strconv.FormatInt(i, 10))
		if el == nil || goja.IsUndefined(el) || goja.IsNull(el) {
			continue
		}
		var s goja.String
		if locale {
			fn, ok := goja.AssertFunction(el.ToObject(r.rt).Get("toLocaleString"))
			if !ok {
				r.throwType(what + ": an element has no toLocaleString method")
			}
			s = r.toStr(r.call(fn, el))
		} else {
			s = r.toStr(el)
		}
		units += int64(s.Length())
		r.checkUnits(units, what)
		b.WriteString(s)
	}
	return b.String()
}

// checkUnits throws when a string being built outgrows the string cap.
func (r *run) checkUnits(units int64, what string) {
	if units > r.caps.stringUnits {
		r.throwRange(fmt.Sprintf("%s: the result would exceed the sandbox limit of %d characters", what, r.caps.stringUnits))
	}
}

// arrayConcat replaces Array.prototype.concat: each spreadable item's
// spreadability and length are read once and its length is checked.
// Like flat and flatMap, it always builds a plain Array (a subclass's
// [Symbol.species] is not consulted).
func (r *run) arrayConcat(call goja.FunctionCall) goja.Value {
	items := append([]goja.Value{call.This.ToObject(r.rt)}, call.Arguments...)
	var out []goja.Value
	holes := false
	for _, item := range items {
		o, ok := item.(*goja.Object)
		spreadable := false
		if ok {
			if s := o.GetSymbol(goja.SymIsConcatSpreadable); s != nil && !goja.IsUndefined(s) {
				spreadable = s.ToBoolean()
			} else {
				spreadable = r.isArray(o)
			}
		}
		if !spreadable {
			out = r.appendElement(out, item, "Array.prototype.concat")
			continue
		}
		src, n := r.boundedArrayLike(o, "Array.prototype.concat", false)
		if int64(len(out))+n > r.caps.elements {
			r.throwRange(fmt.Sprintf("Array.prototype.concat: the result would exceed the sandbox limit of %d elements", r.caps.elements))
		}
		for k := int64(0); k < n; k++ {
			if k%checkpointEvery == 0 {
				r.checkpoint()
			}
			v := src.Get(strconv.FormatInt(k, 10))
			holes = holes || v == nil
			out = append(out, v)
		}
	}
	return r.newArray(out, holes)
}

func (r *run) appendElement(out []goja.Value, v goja.Value, what string) []goja.Value {
	if int64(len(out)) >= r.caps.elements {
		r.throwRange(fmt.Sprintf("%s: the result would exceed the sandbox limit of %d elements", what, r.caps.elements))
	}
	return append(out, v)
}

// newArray builds an array of values; nil values are holes.
func (r *run) newArray(values []goja.Value, holes bool) *goja.Object {
	if !holes {
		items := make([]any, len(values))
		for i, v := range values {
			items[i] = v
		}
		return r.rt.NewArray(items...)
	}
	a := r.rt.NewArray()
	for i, v := range values {
		if v != nil {
			r.defineData(a, strconv.Itoa(i), v)
		}
	}
	if err := a.Set("length", len(values)); err != nil {
		panic(err)
	}
	return a
}

// arrayFlat replaces Array.prototype.flat: the depth is capped and every
// nested array's length is checked (the original walks inner arrays of
// any length natively and recurses on the Go stack).
func (r *run) arrayFlat(call goja.FunctionCall) goja.Value {
	src, n := r.boundedArrayLike(call.This, "Array.prototype.flat", false)
	depth := int64(1)
	if d := call.Argument(0); !goja.IsUndefined(d) {
		depth = max(toIntegerOrInfinity(d), 0)
	}
	depth = min(depth, maxFlatDepth)
	return r.newArray(r.flatten(nil, src, n, depth, nil, nil, "Array.prototype.flat"), false)
}

// arrayFlatMap replaces Array.prototype.flatMap.
func (r *run) arrayFlatMap(call goja.FunctionCall) goja.Value {
	src, n := r.boundedArrayLike(call.This, "Array.prototype.flatMap", false)
	fn, ok := goja.AssertFunction(call.Argument(0))
	if !ok {
		r.throwType("Array.prototype.flatMap: the mapper is not a function")
	}
	return r.newArray(r.flatten(nil, src, n, 1, fn, call.Argument(1), "Array.prototype.flatMap"), false)
}

func (r *run) flatten(out []goja.Value, src *goja.Object, n, depth int64, mapper goja.Callable, this goja.Value, what string) []goja.Value {
	for i := int64(0); i < n; i++ {
		if i%checkpointEvery == 0 {
			r.checkpoint()
		}
		k := strconv.FormatInt(i, 10)
		v := src.Get(k)
		if v == nil {
			continue
		}
		if mapper != nil {
			v = r.call(mapper, this, v, r.rt.ToValue(i), src)
		}
		if o, ok := v.(*goja.Object); ok && depth > 0 && r.isArray(o) {
			inner, m := r.boundedArrayLike(o, what, false)
			if int64(len(out))+m > r.caps.elements {
				r.throwRange(fmt.Sprintf("%s: the result would exceed the sandbox limit of %d elements", what, r.caps.elements))
			}
			out = r.flatten(out, inner, m, depth-1, nil, nil, what)
			continue
		}
		out = r.appendElement(out, v, what)
	}
	return out
}

// argList returns a guard for a built-in that builds an argument list from
// the array-like at args[index] (goja allocates it in one step).
func (r *run) argList(index int, what string) func(nativeFunc) nativeFunc {
	return func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			if o, ok := call.Argument(index).(*goja.Object); ok {
				args := append([]goja.Value(nil), call.Arguments...)
				args[index], _ = r.boundedArrayLike(o, what, false)
				call.Arguments = args
			}
			return orig(call)
		}
	}
}

// guardFunctionPrototype bounds Function.prototype.apply's argument list
// and chains of bound functions, whose calls recurse on the Go stack.
func (r *run) guardFunctionPrototype() {
	r.wrap(r.in.functionProto, "apply", r.argList(1, "Function.prototype.apply"))
	r.guards.bindDepth = make(map[*goja.Object]int)
	r.wrap(r.in.functionProto, "bind", func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			depth := 1
			if t, ok := call.This.(*goja.Object); ok {
				depth += r.guards.bindDepth[t]
			}
			if depth > maxBindDepth {
				r.throwRange(fmt.Sprintf("Function.prototype.bind: bound functions nest deeper than %d levels", maxBindDepth))
			}
			v := orig(call)
			if o, ok := v.(*goja.Object); ok {
				r.guards.bindDepth[o] = depth
			}
			return v
		}
	})
}

// guardReflect bounds the argument lists of Reflect.apply and
// Reflect.construct and the keys Reflect.ownKeys lists.
func (r *run) guardReflect() {
	reflectObj := object(r.std, "Reflect")
	if r.in.reflectOwnKeys == nil {
		r.in.reflectOwnKeys = native(reflectObj.Get("ownKeys"))
	}
	r.wrap(reflectObj, "apply", r.argList(2, "Reflect.apply"))
	r.wrap(reflectObj, "construct", r.argList(1, "Reflect.construct"))
	r.wrap(reflectObj, "ownKeys", func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			r.checkIndexKeys(call.Argument(0), "Reflect.ownKeys")
			return orig(call)
		}
	})
	r.setGlobal("Reflect", reflectObj)
}

// guardProxy bounds chains of proxies (by target or handler), whose traps
// forward on the Go stack, and holds a target's index keys to the cap
// (checkIndexKeys): goja lists every key of the target of a proxy whose
// keys are asked for.
func (r *run) guardProxy() {
	r.guards.proxyDepth = make(map[*goja.Object]int)
	proxyDepth := func(args []goja.Value) int {
		if len(args) > 0 {
			r.checkIndexKeys(args[0], "Proxy")
		}
		depth := 0
		for _, a := range args[:min(len(args), 2)] {
			if o, ok := a.(*goja.Object); ok {
				depth = max(depth, r.guards.proxyDepth[o])
			}
		}
		if depth+1 > maxProxyDepth {
			r.throwRange(fmt.Sprintf("Proxy: proxies nest deeper than %d levels", maxProxyDepth))
		}
		return depth + 1
	}
	orig := object(r.std, "Proxy")
	construct, _ := goja.AssertConstructor(orig)
	proxy := r.newConstructor("Proxy", 2, func(call goja.ConstructorCall) *goja.Object {
		depth := proxyDepth(call.Arguments)
		o, err := construct(nil, call.Arguments...)
		if err != nil {
			panic(err)
		}
		r.guards.proxyDepth[o] = depth
		return o
	})
	if err := proxy.DefineDataProperty("prototype", goja.Undefined(), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		panic(err)
	}
	revocable := native(orig.Get("revocable"))
	r.replaceData(proxy, "revocable", r.newFunction("revocable", 2, func(call goja.FunctionCall) goja.Value {
		depth := proxyDepth(call.Arguments)
		v := revocable(call)
		if o, ok := v.(*goja.Object); ok {
			if p, ok := o.Get("proxy").(*goja.Object); ok {
				r.guards.proxyDepth[p] = depth
			}
		}
		return v
	}))
	r.setGlobal("Proxy", proxy)
}

// guardBuffers caps ArrayBuffer and typed array allocations, which goja
// makes in one native step (a huge one is a fatal out-of-memory error).
func (r *run) guardBuffers() {
	g := r.std

	origAB := object(g, "ArrayBuffer")
	constructAB, _ := goja.AssertConstructor(origAB)
	ab := r.newConstructor("ArrayBuffer", 1, func(call goja.ConstructorCall) *goja.Object {
		args := append([]goja.Value(nil), call.Arguments...)
		if len(args) > 0 {
			args[0] = args[0].ToNumber()
			r.checkBytes(toIntegerOrInfinity(args[0]), 1, "ArrayBuffer")
		}
		o, err := constructAB(call.NewTarget, args...)
		if err != nil {
			panic(err)
		}
		return o
	})
	r.standIn(ab, origAB)
	r.setGlobal("ArrayBuffer", ab)

	// DataView's BigInt accessors are a source of BigInt values. The
	// constructor is replaced to record every DataView it makes.
	origDV := object(g, "DataView")
	dvProto := object(origDV, "prototype")
	for _, name := range []string{"getBigInt64", "getBigUint64", "setBigInt64", "setBigUint64"} {
		if err := dvProto.Delete(name); err != nil {
			panic(err)
		}
	}
	r.guards.dataViews = make(map[*goja.Object]bool)
	constructDV, _ := goja.AssertConstructor(origDV)
	dv := r.newConstructor("DataView", 1, func(call goja.ConstructorCall) *goja.Object {
		o, err := constructDV(call.NewTarget, call.Arguments...)
		if err != nil {
			panic(err)
		}
		r.guards.dataViews[o] = true
		return o
	})
	r.lockData(dv, "prototype", dvProto)
	r.replaceData(dvProto, "constructor", dv)
	r.setGlobal("DataView", dv)

	var typedArray *goja.Object // %TypedArray%
	for _, ta := range typedArrays {
		orig := object(g, ta.name)
		construct, _ := goja.AssertConstructor(orig)
		name, size := ta.name, ta.size
		ctor := r.newConstructor(name, 3, func(call goja.ConstructorCall) *goja.Object {
			args := append([]goja.Value(nil), call.Arguments...)
			if len(args) > 0 {
				args[0] = r.typedArraySource(args[0], size, name)
			}
			o, err := construct(call.NewTarget, args...)
			if err != nil {
				panic(err)
			}
			return o
		})
		r.standIn(ctor, orig)
		r.lockData(ctor, "BYTES_PER_ELEMENT", orig.Get("BYTES_PER_ELEMENT"))
		if err := ctor.SetPrototype(orig.Prototype()); err != nil {
			panic(err)
		}
		typedArray = orig.Prototype()
		r.setGlobal(name, ctor)
	}

	r.wrap(typedArray, "from", r.fromGuard("TypedArray.from"))

	// join and toLocaleString build one string natively from every element.
	proto := object(typedArray, "prototype")
	d := r.in.describe(goja.FunctionCall{Arguments: []goja.Value{proto, r.rt.ToValue("length")}}).(*goja.Object)
	length := native(d.Get("get"))
	getter := func(o *goja.Object, key goja.Value) nativeFunc {
		d := r.in.describe(goja.FunctionCall{Arguments: []goja.Value{o, key}}).(*goja.Object)
		return native(d.Get("get"))
	}
	str := func(s string) goja.Value { return r.rt.ToValue(s) }
	r.guards.buffers = &bufferNatives{
		typedTag: getter(proto, r.rt.ToValue(goja.SymToStringTag)), typedBuffer: getter(proto, str("buffer")),
		typedOffset: getter(proto, str("byteOffset")), typedLength: length,
		viewBuffer: getter(dvProto, str("buffer")), viewOffset: getter(dvProto, str("byteOffset")), viewLength: getter(dvProto, str("byteLength")),
	}
	lengthOf := func(this goja.Value) int64 {
		return toLength(length(goja.FunctionCall{This: this}))
	}
	r.wrap(proto, "join", func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			n := lengthOf(call.This)
			sep := goja.Value(r.rt.ToValue(","))
			if s := call.Argument(0); !goja.IsUndefined(s) {
				sep = r.toStr(s)
			}
			r.checkUnits(n*(int64(sep.(goja.String).Length())+24), "TypedArray.prototype.join")
			return orig(goja.FunctionCall{This: call.This, Arguments: []goja.Value{sep}})
		}
	})
	r.wrap(proto, "toLocaleString", func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			r.checkUnits(lengthOf(call.This)*25, "TypedArray.prototype.toLocaleString")
			return orig(call)
		}
	})
	r.guardTypedArrayLoops(proto, object(object(g, "Uint8Array"), "prototype"))
}

// standIn makes ctor stand in for the built-in constructor orig: the same
// prototype object, whose constructor becomes ctor, and the same
// [Symbol.species] behaviour.
func (r *run) standIn(ctor, orig *goja.Object) {
	proto := object(orig, "prototype")
	r.lockData(ctor, "prototype", proto)
	r.replaceData(proto, "constructor", ctor)
	r.speciesGetter(ctor)
}

// typedArraySource checks the first argument of a typed array constructor:
// a length (checked against the buffer cap), a buffer (a view allocates
// nothing), a typed array (copied: its size in the new element type is
// checked) or an iterable or array-like (materialized).
func (r *run) typedArraySource(v goja.Value, size int64, name string) goja.Value {
	o, ok := v.(*goja.Object)
	if !ok {
		if goja.IsUndefined(v) {
			return v
		}
		n := v.ToNumber()
		r.checkBytes(toIntegerOrInfinity(n), size, name)
		return n
	}
	switch {
	case o.ExportType() == arrayBufferType:
		return o
	case isTypedArray(o):
		r.checkBytes(toLength(o.Get("length")), size, name)
		return o
	}
	m := r.materialize(o, name)
	r.checkBytes(toLength(m.Get("length")), size, name)
	return m
}

// checkBytes throws when n elements of size bytes exceed the buffer cap.
// Negative and non-integral sizes are left to the built-in's own checks.
func (r *run) checkBytes(n, size int64, what string) {
	if n > 0 && n > r.caps.bufferBytes/size {
		r.throwRange(fmt.Sprintf("%s: %d bytes exceed the sandbox limit of %d bytes", what, n*size, r.caps.bufferBytes))
	}
}

// guardStrings caps the String.prototype methods whose result size comes
// from an argument. Each converts `this` and its arguments once and hands
// the primitives to the original, so that what was checked is what runs.
func (r *run) guardStrings() {
	sp := r.in.stringProto
	r.wrap(sp, "repeat", func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			s := r.thisString(call.This, "String.prototype.repeat")
			count := call.Argument(0).ToNumber()
			if n := toIntegerOrInfinity(count); n > 0 && s.Length() > 0 && n > r.caps.stringUnits/int64(s.Length()) {
				r.throwRange(fmt.Sprintf("String.prototype.repeat: the result would exceed the sandbox limit of %d characters", r.caps.stringUnits))
			}
			return orig(goja.FunctionCall{This: s, Arguments: []goja.Value{count}})
		}
	})
	pad := func(name string) func(nativeFunc) nativeFunc {
		what := "String.prototype." + name
		return func(orig nativeFunc) nativeFunc {
			return func(call goja.FunctionCall) goja.Value {
				s := r.thisString(call.This, what)
				maxLength := call.Argument(0).ToNumber()
				fill := call.Argument(1)
				if !goja.IsUndefined(fill) {
					fill = r.toStr(fill)
				}
				if n := toLength(maxLength); n > int64(s.Length()) && n > r.caps.stringUnits &&
					(goja.IsUndefined(fill) || fill.(goja.String).Length() > 0) {
					r.throwRange(fmt.Sprintf("%s: the result would exceed the sandbox limit of %d characters", what, r.caps.stringUnits))
				}
				return orig(goja.FunctionCall{This: s, Arguments: []goja.Value{maxLength, fill}})
			}
		}
	}
	r.wrap(sp, "padStart", pad("padStart"))
	r.wrap(sp, "padEnd", pad("padEnd"))
	r.wrap(sp, "concat", func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			s := r.thisString(call.This, "String.prototype.concat")
			units := int64(s.Length())
			args := make([]goja.Value, len(call.Arguments))
			for i, a := range call.Arguments {
				str := r.toStr(a)
				units += int64(str.Length())
				args[i] = str
			}
			r.checkUnits(units, "String.prototype.concat")
			return orig(goja.FunctionCall{This: s, Arguments: args})
		}
	})
	r.wrap(sp, "split", r.stringSplit)
	// String.raw walks template.raw by its length.
	r.replaceData(object(r.std, "String"), "raw", r.newFunction("raw", 1, r.stringRaw))
}

// thisString is RequireObjectCoercible(this) followed by ToString.
func (r *run) thisString(this goja.Value, what string) goja.String {
	if goja.IsUndefined(this) || goja.IsNull(this) {
		r.throwType(what + " called on null or undefined")
	}
	return r.toStr(this)
}

// stringRaw replaces String.raw with the same algorithm and the caps.
func (r *run) stringRaw(call goja.FunctionCall) goja.Value {
	const what = "String.raw"
	cooked := call.Argument(0).ToObject(r.rt)
	raw := cooked.Get("raw")
	if raw == nil {
		raw = goja.Undefined()
	}
	src, n := r.boundedArrayLike(raw, what, false)
	subs := call.Arguments[min(1, len(call.Arguments)):]
	var b goja.StringBuilder
	units := int64(0)
	for i := int64(0); i < n; i++ {
		if i%checkpointEvery == 0 {
			r.checkpoint()
		}
		seg := goja.Value(goja.Undefined())
		if v := src.Get(strconv.FormatInt(i, 10)); v != nil {
			seg = v
		}
		s := r.toStr(seg)
		units += int64(s.Length())
		r.checkUnits(units, what)
		b.WriteString(s)
		if i+1 < n && i < int64(len(subs)) {
			sub := r.toStr(subs[i])
			units += int64(sub.Length())
			r.checkUnits(units, what)
			b.WriteString(sub)
		}
	}
	return b.String()
}

// stringSplit guards String.prototype.split: a separator with a split
// method is called here (read once); a string separator is converted
// once, and the number of pieces, each a new string in the result array,
// is checked against the element cap before the built-in allocates them.
func (r *run) stringSplit(orig nativeFunc) nativeFunc {
	const what = "String.prototype.split"
	return func(call goja.FunctionCall) goja.Value {
		this := call.This
		if goja.IsUndefined(this) || goja.IsNull(this) {
			r.throwType(what + " called on null or undefined")
		}
		sep, limit := call.Argument(0), call.Argument(1)
		if !goja.IsUndefined(sep) && !goja.IsNull(sep) {
			if m := r.method(sep, goja.SymSplit); m != nil {
				return r.call(m, sep, this, limit)
			}
		}
		s := r.toStr(this)
		if !goja.IsUndefined(limit) {
			limit = limit.ToNumber()
		}
		if goja.IsUndefined(sep) {
			return orig(goja.FunctionCall{This: s, Arguments: []goja.Value{sep, limit}})
		}
		sepStr := r.toStr(sep)
		pieces := int64(s.Length()) // an empty separator splits every code unit
		if sepStr.Length() > 0 {
			pieces = int64(strings.Count(s.String(), sepStr.String())) + 1
		}
		if !goja.IsUndefined(limit) {
			pieces = min(pieces, int64(uint32(toIntegerOrInfinity(limit))))
		}
		if pieces > r.caps.elements {
			r.throwRange(fmt.Sprintf("%s: %d pieces exceed the sandbox limit of %d elements", what, pieces, r.caps.elements))
		}
		if searchIsCostly(s.Length(), sepStr.Length()) {
			return r.splitUnits(s, sepStr, limit)
		}
		return orig(goja.FunctionCall{This: s, Arguments: []goja.Value{sepStr, limit}})
	}
}

// splitUnits splits s at a long separator in linear time (see
// searchIsCostly); sep is not empty.
func (r *run) splitUnits(s, sep goja.String, limit goja.Value) goja.Value {
	lim := int64(1<<32 - 1)
	if !goja.IsUndefined(limit) {
		lim = int64(toUint32(limit))
	}
	var out []goja.Value
	last := 0
	if lim > 0 {
		r.matchUnits(r.units(s, 0, s.Length()), r.units(sep, 0, sep.Length()), func(at int) bool {
			out = append(out, s.Substring(last, at))
			last = at + sep.Length()
			return int64(len(out)) < lim
		})
		if int64(len(out)) < lim {
			out = append(out, s.Substring(last, s.Length()))
		}
	}
	return r.newArray(out, false)
}
