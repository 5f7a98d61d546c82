package vm

import (
	"math"

	"github.com/dop251/goja"
)

// nativeFunc is the Go signature of a goja built-in.
type nativeFunc = func(goja.FunctionCall) goja.Value

// intrinsics are the built-ins the run relies on, captured before the plan
// runs, so that nothing the plan does to the globals can change what the
// bridge and the guards call.
type intrinsics struct {
	objectProto    *goja.Object
	functionProto  *goja.Object
	generatorProto *goja.Object // %GeneratorPrototype%
	iteratorProto  *goja.Object // %IteratorPrototype%
	arrayProto     *goja.Object
	stringProto    *goja.Object

	freeze    nativeFunc // Object.freeze
	describe  nativeFunc // Object.getOwnPropertyDescriptor
	isArray   nativeFunc // Array.isArray
	jsonParse nativeFunc // JSON.parse, unguarded: callers check the text first; see parseNative

	ownNames       nativeFunc // Object.getOwnPropertyNames
	reflectOwnKeys nativeFunc // Reflect.ownKeys

	collections *collectionNatives // captured when the plan first names Map or Set
}

// collectionNatives are the original Map and Set methods structuredClone
// reads and fills collections with, whatever the plan does to the
// prototypes later.
type collectionNatives struct {
	mapCtor, setCtor            *goja.Object
	mapEntries, mapNext, mapSet nativeFunc
	setAdd                      nativeFunc
}

// throwType throws a TypeError with message msg from a native function.
func (r *run) throwType(msg string) {
	panic(r.rt.NewTypeError("%s", msg))
}

// throwRange throws a RangeError with message msg from a native function.
func (r *run) throwRange(msg string) {
	panic(r.newError(r.builtin("RangeError"), msg))
}

// builtin returns one of goja's original globals. goja's own global
// object is never exposed to the plan, so what it holds is pristine.
func (r *run) builtin(name string) *goja.Object {
	return object(r.std, name)
}

// newError builds an error with the runtime's own constructor and a message
// CodeCall wrote, never goja.NewGoError, whose value exposes the Go error.
func (r *run) newError(ctor *goja.Object, msg string) *goja.Object {
	o, err := r.rt.New(ctor, r.rt.ToValue(msg))
	if err != nil {
		panic(err)
	}
	return o
}

// defineData defines an own enumerable data property, as
// CreateDataProperty does, so that no setter of the plan's runs.
func (r *run) defineData(o *goja.Object, name string, v goja.Value) {
	if err := o.DefineDataProperty(name, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
		panic(err)
	}
}

// lockData defines a non-writable, non-configurable, non-enumerable data
// property.
func (r *run) lockData(o *goja.Object, name string, v goja.Value) {
	if err := o.DefineDataProperty(name, v, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		panic(err)
	}
}

// replaceData redefines a built-in method with the attributes built-ins
// have: writable, configurable, not enumerable.
func (r *run) replaceData(o *goja.Object, name string, v goja.Value) {
	if err := o.DefineDataProperty(name, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		panic(err)
	}
}

// newFunction returns a native function with the given name and length.
// goja names functions made from Go after the Go function, a package path
// the plan must not see, so both are redefined.
func (r *run) newFunction(name string, length int, f nativeFunc) *goja.Object {
	o := r.rt.ToValue(f).(*goja.Object)
	r.nameFunction(o, name, length)
	return o
}

// newConstructor is newFunction for a function that may be called with new.
func (r *run) newConstructor(name string, length int, f func(goja.ConstructorCall) *goja.Object) *goja.Object {
	o := r.rt.ToValue(f).(*goja.Object)
	r.nameFunction(o, name, length)
	return o
}

func (r *run) nameFunction(o *goja.Object, name string, length int) {
	if r.own != nil {
		r.own[o] = true
	}
	// goja's own length is 0.
	if length == 0 {
		goto name
	}
	if err := o.DefineDataProperty("length", r.rt.ToValue(length), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		panic(err)
	}
name:
	if err := o.DefineDataProperty("name", r.rt.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		panic(err)
	}
}

// native returns the Go implementation of built-in function v. goja exports
// a native function as its implementation, so a wrapper can call it
// directly: exceptions and interrupts then unwind exactly as they would
// from the original.
func native(v goja.Value) nativeFunc {
	o, ok := v.(*goja.Object)
	if !ok {
		return nil
	}
	f, _ := o.Export().(nativeFunc)
	return f
}

// object returns o[name] as an object, or nil.
func object(o *goja.Object, name string) *goja.Object {
	v, _ := o.Get(name).(*goja.Object)
	return v
}

// freeze calls Object.freeze on o.
func (r *run) freeze(o *goja.Object) {
	r.in.freeze(goja.FunctionCall{Arguments: []goja.Value{o}})
}

// isArray is Array.isArray, which sees through proxies.
func (r *run) isArray(o *goja.Object) bool {
	return r.in.isArray(goja.FunctionCall{Arguments: []goja.Value{o}}).ToBoolean()
}

// toLength is the specification's ToLength, converting v once.
func toLength(v goja.Value) int64 {
	if v == nil {
		return 0
	}
	f := v.ToFloat()
	switch {
	case math.IsNaN(f) || f <= 0:
		return 0
	case f >= 1<<53-1:
		return 1<<53 - 1
	}
	return int64(f)
}

// toIntegerOrInfinity is the specification's ToIntegerOrInfinity, clamped
// to the int64 range.
func toIntegerOrInfinity(v goja.Value) int64 {
	f := v.ToFloat()
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// toStr is the specification's ToString, returning a goja string: goja's
// own Value.ToString returns numbers and booleans unchanged. An object is
// converted through its toString/valueOf once; a symbol is a TypeError.
func (r *run) toStr(v goja.Value) goja.String {
	if s, ok := v.(goja.String); ok {
		return s
	}
	if o, ok := v.(*goja.Object); ok {
		v = o.ToString()
		if s, ok := v.(goja.String); ok {
			return s
		}
	}
	if _, ok := v.(*goja.Symbol); ok {
		r.throwType("Cannot convert a Symbol value to a string")
	}
	if v == nil {
		v = goja.Undefined()
	}
	return r.rt.ToValue(v.String()).(goja.String)
}

// parseNative returns the original JSON.parse, hardening the JSON global
// (which captures it) on first use.
func (r *run) parseNative() nativeFunc {
	if r.in.jsonParse == nil {
		r.lazy.Get("JSON")
	}
	return r.in.jsonParse
}
