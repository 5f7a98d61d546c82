package vm

import (
	"fmt"
	"strconv"

	"github.com/dop251/goja"
)

// The Object and Reflect functions that list or walk an object's own keys
// are guarded here. The keys of an ordinary object were each made by the
// plan and are paid for in its heap, but the index keys of a string, a
// String object or a typed array are virtual: a string of sixteen million
// characters has sixteen million keys that cost nothing until a built-in
// lists them, as one new string each, in one native step. Those are
// checked against caps.indexKeys first. Object.entries and
// Object.getOwnPropertyDescriptors make a new object per key (an entry
// array, a descriptor), hundreds of bytes each, so they are rebuilt as
// loops that are checkpoints, where the heap watchdog can stop them.

// guardObjectStatics guards the Object constructor's functions. The
// constructor is reachable without its name (as the constructor of any
// object), so this runs before the plan. Object.create and
// Object.defineProperties need no guard: they read a descriptor object
// per key as they list them, and a string's or typed array's first index
// value is not one; nor does Object.getOwnPropertySymbols, which lists
// symbols only. A proxy's target is held to the cap when the proxy is
// made (see guardProxy): goja lists a target's keys to check an ownKeys
// trap, and without a trap lists them instead.
func (r *run) guardObjectStatics() {
	obj := object(r.std, "Object")
	r.in.ownNames = native(obj.Get("getOwnPropertyNames"))
	for _, name := range []string{"keys", "values", "getOwnPropertyNames", "freeze", "seal", "isFrozen", "isSealed"} {
		what := "Object." + name
		r.wrap(obj, name, func(orig nativeFunc) nativeFunc {
			return func(call goja.FunctionCall) goja.Value {
				r.checkIndexKeys(call.Argument(0), what)
				return orig(call)
			}
		})
	}
	r.wrap(obj, "assign", func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			for _, src := range call.Arguments[min(1, len(call.Arguments)):] {
				r.checkIndexKeys(src, "Object.assign")
			}
			return orig(call)
		}
	})
	r.replaceData(obj, "entries", r.newFunction("entries", 1, r.objectEntries))
	r.replaceData(obj, "getOwnPropertyDescriptors", r.newFunction("getOwnPropertyDescriptors", 1, r.objectDescriptors))
}

// checkIndexKeys throws when v is a string, a String object or a typed
// array with more index keys than caps.indexKeys.
func (r *run) checkIndexKeys(v goja.Value, what string) {
	var n int64
	if goja.IsString(v) {
		n = int64(r.toStr(v).Length())
	} else if o, ok := v.(*goja.Object); ok {
		switch {
		case typedArrayTypes[o.ExportType()]:
			n = r.typedLength(o)
		case o.ClassName() == "String":
			// A String object's length is non-writable and non-configurable:
			// reading it runs nothing of the plan's.
			n = toLength(o.Get("length"))
		}
	}
	if n > r.caps.indexKeys {
		r.throwRange(fmt.Sprintf("%s: a string or typed array of %d index keys exceeds the sandbox limit of %d", what, n, r.caps.indexKeys))
	}
}

// typedLength is a typed array's length, read from its internal slot.
func (r *run) typedLength(o *goja.Object) int64 {
	return toLength(r.guards.buffers.typedLength(goja.FunctionCall{This: o}))
}

// objectEntries replaces Object.entries: EnumerableOwnProperties(O,
// key+value), in a loop that is a checkpoint. Keys are listed once (one
// ownKeys trap for a proxy) and each is described and read as the
// specification does.
func (r *run) objectEntries(call goja.FunctionCall) goja.Value {
	const what = "Object.entries"
	arg := call.Argument(0)
	r.checkIndexKeys(arg, what)
	o := arg.ToObject(r.rt)
	keys := r.in.ownNames(goja.FunctionCall{Arguments: []goja.Value{o}}).(*goja.Object)
	n := toLength(keys.Get("length"))
	var out []any
	for i := int64(0); i < n; i++ {
		if i%checkpointEvery == 0 {
			r.checkpoint()
		}
		k := keys.Get(strconv.FormatInt(i, 10))
		d, ok := r.in.describe(goja.FunctionCall{Arguments: []goja.Value{o, k}}).(*goja.Object)
		if !ok || !d.Get("enumerable").ToBoolean() {
			continue
		}
		v := o.Get(k.String())
		if v == nil {
			v = goja.Undefined()
		}
		out = append(out, r.rt.NewArray(k, v))
	}
	return r.rt.NewArray(out...)
}

// objectDescriptors replaces Object.getOwnPropertyDescriptors with the
// specification's loop, a checkpoint at every step.
func (r *run) objectDescriptors(call goja.FunctionCall) goja.Value {
	const what = "Object.getOwnPropertyDescriptors"
	arg := call.Argument(0)
	r.checkIndexKeys(arg, what)
	o := arg.ToObject(r.rt)
	keys := r.ownKeys(o)
	out := r.rt.NewObject()
	for i, k := range keys {
		if i%checkpointEvery == 0 {
			r.checkpoint()
		}
		d := r.in.describe(goja.FunctionCall{Arguments: []goja.Value{o, k}})
		if goja.IsUndefined(d) {
			continue
		}
		if sym, ok := k.(*goja.Symbol); ok {
			if err := out.DefineDataPropertySymbol(sym, d, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
				panic(err)
			}
			continue
		}
		r.defineData(out, k.String(), d)
	}
	return out
}

// ownKeys is O.[[OwnPropertyKeys]](), strings and symbols, through goja's
// own Reflect.ownKeys: one ownKeys trap for a proxy. The original is
// captured when the plan first names Reflect (see guardReflect), or here:
// until then the plan cannot have reached it.
func (r *run) ownKeys(o *goja.Object) []goja.Value {
	if r.in.reflectOwnKeys == nil {
		r.in.reflectOwnKeys = native(object(r.std, "Reflect").Get("ownKeys"))
	}
	list := r.in.reflectOwnKeys(goja.FunctionCall{Arguments: []goja.Value{o}}).(*goja.Object)
	n := toLength(list.Get("length"))
	keys := make([]goja.Value, 0, n)
	for i := int64(0); i < n; i++ {
		keys = append(keys, list.Get(strconv.FormatInt(i, 10)))
	}
	return keys
}
