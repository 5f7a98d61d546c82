package vm

import (
	"fmt"
	"reflect"
	"time"

	"github.com/dop251/goja"
)

// structuredClone copies plain data as the HTML standard's structured
// clone does: primitives, plain objects (own enumerable string keys, read
// through their getters; the prototype is not kept), arrays (holes kept),
// Date, RegExp, Map, Set, ArrayBuffer, typed arrays, DataView, Error
// objects and the Boolean, Number and String wrappers, with shared and
// cyclic references preserved. Functions, symbols, proxies, promises,
// iterators, URL and the other platform objects throw a DataCloneError.
// Transferring is not supported. goja does not tell iterators,
// generators and weak collections from plain objects, so they are known
// by their prototype chains (a plan that rewires one fools only itself).
//
// A clone is bounded: it nests at most maxJSONDepth levels, copies at most
// caps.elements values and properties and caps.bufferBytes bytes of
// buffers, and checks the stop flag as it goes. The Go recursion is
// bounded by the depth; getters of the plan's run as script code, under
// the deadline.

// cloner is one structuredClone call.
type cloner struct {
	r      *run
	memo   map[*goja.Object]*goja.Object
	values int64
	bytes  int64
	depth  int
}

// What goja exports Map, Set and ordinary objects as.
var (
	mapExportType   = reflect.TypeOf([][2]any(nil))
	setExportType   = reflect.TypeOf([]any(nil))
	plainExportType = reflect.TypeOf(map[string]any(nil))
)

// errorNames are the error types a clone keeps; any other becomes Error.
var errorNames = map[string]bool{"Error": true, "EvalError": true, "RangeError": true, "ReferenceError": true,
	"SyntaxError": true, "TypeError": true, "URIError": true}

// installClone defines structuredClone, on first use.
func (r *run) installClone() {
	fn := r.newFunction("structuredClone", 1, r.structuredClone)
	r.freeze(fn)
	r.setGlobal("structuredClone", fn)
}

// captureCollections captures the original Map and Set methods when the
// plan first names either: until then no collection exists, and their
// prototypes are as goja made them.
func (r *run) captureCollections() {
	m, s := object(r.std, "Map"), object(r.std, "Set")
	mp, sp := object(m, "prototype"), object(s, "prototype")
	entries := native(mp.Get("entries"))
	empty, err := r.rt.New(m)
	if err != nil {
		panic(err)
	}
	it := entries(goja.FunctionCall{This: empty}).(*goja.Object)
	r.in.collections = &collectionNatives{
		mapCtor: m, setCtor: s,
		mapEntries: entries, mapNext: native(it.Prototype().Get("next")), mapSet: native(mp.Get("set")),
		setAdd: native(sp.Get("add")),
	}
	r.setGlobal("Map", m)
	r.setGlobal("Set", s)
}

func (r *run) structuredClone(call goja.FunctionCall) goja.Value {
	r.requireArgs(call, 1, "structuredClone")
	if opts, ok := call.Argument(1).(*goja.Object); ok {
		if t := opts.Get("transfer"); t != nil && !goja.IsUndefined(t) {
			if list, ok := t.(*goja.Object); !ok || toLength(list.Get("length")) > 0 {
				r.dataCloneError("transferring objects is not supported")
			}
		}
	}
	c := &cloner{r: r, memo: make(map[*goja.Object]*goja.Object)}
	return c.clone(call.Argument(0))
}

// dataCloneError throws what browsers throw for a value they cannot
// clone: an error named DataCloneError.
func (r *run) dataCloneError(msg string) {
	e := r.newError(r.builtin("Error"), "structuredClone: "+msg)
	r.defineData(e, "name", r.rt.ToValue("DataCloneError"))
	panic(e)
}

// count charges n values against the element cap.
func (c *cloner) count(n int64) {
	r := c.r
	before := c.values
	c.values += n
	if c.values > r.caps.elements {
		r.throwRange(fmt.Sprintf("structuredClone: the value holds more than %d values and properties, the sandbox limit", r.caps.elements))
	}
	if before/checkpointEvery != c.values/checkpointEvery {
		r.checkpoint()
	}
}

func (c *cloner) clone(v goja.Value) goja.Value {
	r := c.r
	o, ok := v.(*goja.Object)
	if !ok {
		if _, isSym := v.(*goja.Symbol); isSym {
			r.dataCloneError("a symbol could not be cloned")
		}
		return v // strings are immutable: sharing one is copying it
	}
	if dst := c.memo[o]; dst != nil {
		return dst
	}
	c.count(1)
	if c.depth >= maxJSONDepth {
		r.throwRange(fmt.Sprintf("structuredClone: the value nests deeper than %d levels", maxJSONDepth))
	}
	c.depth++
	defer func() { c.depth-- }()

	if _, isFunc := goja.AssertFunction(o); isFunc {
		r.dataCloneError("a function could not be cloned")
	}
	switch {
	case isProxy(o):
		r.dataCloneError("a proxy could not be cloned")
	case r.web.platformObject(o):
		r.dataCloneError("URL, URLSearchParams, TextEncoder and TextDecoder objects could not be cloned")
	case o.ExportType() == arrayBufferType:
		return c.buffer(o)
	case isTypedArray(o):
		return c.view(o, true)
	case r.guards.dataViews[o]:
		return c.view(o, false)
	}

	var dst *goja.Object
	switch class := o.ClassName(); class {
	case "Object":
		// goja gives Map, Set and Promise objects the class of a plain
		// object; their Go types tell them apart.
		switch o.ExportType() {
		case mapExportType:
			dst = c.mapClone(o)
		case setExportType:
			dst = c.setClone(o)
		case plainExportType:
			if c.internal(o) {
				r.dataCloneError("iterators, generators, WeakMap and WeakSet objects could not be cloned")
			}
			dst = r.rt.NewObject()
			c.memo[o] = dst
			c.properties(o, dst, 0)
		default:
			r.dataCloneError("this object could not be cloned")
		}
	case "Array":
		n := toLength(o.Get("length"))
		if n > r.caps.elements {
			r.throwRange(fmt.Sprintf("structuredClone: an array of length %d exceeds the sandbox limit of %d elements", n, r.caps.elements))
		}
		c.count(n) // before its keys are listed
		dst = r.rt.NewArray()
		c.memo[o] = dst
		c.properties(o, dst, n)
		if err := dst.Set("length", n); err != nil {
			panic(err)
		}
	case "Date":
		ms := goja.Value(goja.NaN())
		if t, ok := o.Export().(time.Time); ok {
			ms = r.rt.ToValue(t.UnixMilli())
		}
		dst = c.construct(r.builtin("Date"), ms)
	case "RegExp":
		if r.regex.getters == nil {
			r.dataCloneError("this RegExp could not be cloned")
		}
		src := r.regex.getters["source"](goja.FunctionCall{This: o})
		flags := r.regex.getters["flags"](goja.FunctionCall{This: o})
		dst = c.construct(r.regex.ctor, src, flags)
	case "Boolean", "Number":
		dst = r.rt.ToValue(o.Export()).ToObject(r.rt)
	case "String":
		dst = r.toStr(o).ToObject(r.rt)
	case "Error":
		dst = c.error(o)
	default:
		r.dataCloneError("a " + class + " object could not be cloned")
	}
	c.memo[o] = dst
	return dst
}

// internal reports whether a seemingly plain object is an iterator, a
// generator, a WeakMap or a WeakSet, by its prototype chain. Weak
// collections exist only once the plan has named their constructors.
func (c *cloner) internal(o *goja.Object) bool {
	r := c.r
	if inherits(o, r.in.iteratorProto) {
		return true
	}
	for _, name := range []string{"WeakMap", "WeakSet"} {
		if ctor, ok := r.lazy.cache[name].(*goja.Object); ok && inherits(o, object(ctor, "prototype")) {
			return true
		}
	}
	return false
}

func (c *cloner) construct(ctor *goja.Object, args ...goja.Value) *goja.Object {
	o, err := c.r.rt.New(ctor, args...)
	if err != nil {
		panic(err)
	}
	return o
}

// properties copies src's own enumerable string-keyed properties;
// counted of them have been charged already.
func (c *cloner) properties(src, dst *goja.Object, counted int64) {
	keys := src.Keys()
	c.count(max(int64(len(keys))-counted, 0))
	for _, k := range keys {
		v := src.Get(k)
		if v == nil {
			continue
		}
		c.r.defineData(dst, k, c.clone(v))
	}
}

// buffer copies an ArrayBuffer within the buffer cap.
func (c *cloner) buffer(o *goja.Object) *goja.Object {
	r := c.r
	b := o.Export().(goja.ArrayBuffer).Bytes()
	c.bytes += int64(len(b))
	if c.bytes > r.caps.bufferBytes {
		r.throwRange(fmt.Sprintf("structuredClone: the value holds more than %d bytes of buffers, the sandbox limit", r.caps.bufferBytes))
	}
	dst := r.rt.ToValue(r.rt.NewArrayBuffer(append([]byte(nil), b...))).(*goja.Object)
	c.memo[o] = dst
	return dst
}

// view copies a typed array or a DataView: its buffer (once, however
// many views share it), then a view of the same type, offset and length,
// made by the sandbox's constructors. The slots are read by the original
// getters.
func (c *cloner) view(o *goja.Object, typed bool) *goja.Object {
	r := c.r
	bn := r.guards.buffers
	this := goja.FunctionCall{This: o}
	var buf, offset, length goja.Value
	var ctor *goja.Object
	if typed {
		buf, offset, length = bn.typedBuffer(this), bn.typedOffset(this), bn.typedLength(this)
		ctor, _ = r.lazy.Get(bn.typedTag(this).String()).(*goja.Object)
	} else {
		buf, offset, length = bn.viewBuffer(this), bn.viewOffset(this), bn.viewLength(this)
		ctor, _ = r.lazy.Get("DataView").(*goja.Object)
	}
	if ctor == nil {
		r.dataCloneError("this typed array could not be cloned")
	}
	dst := c.construct(ctor, c.clone(buf), offset, length)
	c.memo[o] = dst
	return dst
}

// error copies an Error: its type, when standard, and its own message.
func (c *cloner) error(o *goja.Object) *goja.Object {
	r := c.r
	name := "Error"
	if n := o.Get("name"); n != nil && goja.IsString(n) && errorNames[n.String()] {
		name = n.String()
	}
	var args []goja.Value
	if d, ok := r.in.describe(goja.FunctionCall{Arguments: []goja.Value{o, r.rt.ToValue("message")}}).(*goja.Object); ok {
		if m := d.Get("value"); m != nil && d.Get("get") == nil {
			args = append(args, r.toStr(m))
		}
	}
	return c.construct(r.builtin(name), args...)
}

// mapClone copies a Map's entries, read and written by the original
// methods.
func (c *cloner) mapClone(o *goja.Object) *goja.Object {
	r := c.r
	cn := r.in.collections
	dst := c.construct(cn.mapCtor)
	c.memo[o] = dst
	it := cn.mapEntries(goja.FunctionCall{This: o})
	for {
		res := cn.mapNext(goja.FunctionCall{This: it}).(*goja.Object)
		if res.Get("done").ToBoolean() {
			break
		}
		c.count(1)
		entry := res.Get("value").(*goja.Object)
		k, v := c.clone(entry.Get("0")), c.clone(entry.Get("1"))
		cn.mapSet(goja.FunctionCall{This: dst, Arguments: []goja.Value{k, v}})
	}
	return dst
}

// setClone copies a Set's values, read from its internal list.
func (c *cloner) setClone(o *goja.Object) *goja.Object {
	r := c.r
	cn := r.in.collections
	var values []goja.Value
	if err := r.rt.ExportTo(o, &values); err != nil {
		r.dataCloneError("this Set could not be read")
	}
	c.count(int64(len(values)))
	dst := c.construct(cn.setCtor)
	c.memo[o] = dst
	for _, v := range values {
		cn.setAdd(goja.FunctionCall{This: dst, Arguments: []goja.Value{c.clone(v)}})
	}
	return dst
}
