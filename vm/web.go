package vm

import (
	"github.com/dop251/goja"
)

// The web platform globals (URL, URLSearchParams, TextEncoder,
// TextDecoder) are CodeCall's own: goja has none. Their instances are
// ordinary JavaScript objects whose state lives on the Go side, in maps
// keyed by the object, so no Go value is ever wrapped for the plan (goja
// would expose a wrapped value's exported methods and fields). Methods
// find their state by `this` and throw a TypeError for any other object.
// Each constructor, prototype and method is frozen; the plan reaches
// nothing through them but these functions, Object.prototype and the
// locked Function constructor.

// webState holds the state of the platform objects of one run. VM
// goroutine only.
type webState struct {
	urls     map[*goja.Object]*urlState
	params   map[*goja.Object]*paramsState
	iters    map[*goja.Object]*paramsIter
	encoders map[*goja.Object]bool
	decoders map[*goja.Object]*decoderState

	urlProto, paramsProto, iterProto *goja.Object
}

func (r *run) webObjects() *webState {
	if r.web == nil {
		r.web = &webState{
			urls:     make(map[*goja.Object]*urlState),
			params:   make(map[*goja.Object]*paramsState),
			iters:    make(map[*goja.Object]*paramsIter),
			encoders: make(map[*goja.Object]bool),
			decoders: make(map[*goja.Object]*decoderState),
		}
	}
	return r.web
}

// platformObject reports whether o is one of the run's URL,
// URLSearchParams, iterator, TextEncoder or TextDecoder objects.
func (w *webState) platformObject(o *goja.Object) bool {
	if w == nil {
		return false
	}
	return w.urls[o] != nil || w.params[o] != nil || w.iters[o] != nil || w.encoders[o] || w.decoders[o] != nil
}

// webClass is a constructor and its prototype.
type webClass struct {
	ctor, proto *goja.Object
}

// newWebClass builds a constructor that must be called with new and whose
// instances inherit from a fresh prototype (or a subclass's), handing
// each new instance to construct. Lock it with lockClass once its members
// are defined.
//
// goja hands a native constructor called as a method (URL.call(obj, ...))
// the receiver as the new instance; such a receiver, and anything that is
// already a platform object, is refused, so only objects made for the
// class (by new, or a subclass's super) get its state. A plain call,
// URL(...), is the same as new URL(...) here, as it is for the sandbox's
// other constructors.
func (r *run) newWebClass(name string, length int, construct func(call goja.ConstructorCall)) webClass {
	var proto *goja.Object
	ctor := r.newConstructor(name, length, func(call goja.ConstructorCall) *goja.Object {
		if !inherits(call.This, proto) || r.web.platformObject(call.This) {
			r.throwType(name + " must be called with new")
		}
		construct(call)
		return nil
	})
	proto = r.rt.NewObject()
	r.replaceData(proto, "constructor", ctor)
	r.toStringTag(proto, name)
	r.lockData(ctor, "prototype", proto)
	return webClass{ctor: ctor, proto: proto}
}

// maxInheritance bounds the prototype chains inherits walks.
const maxInheritance = 256

// inherits reports whether proto is on o's prototype chain.
func inherits(o, proto *goja.Object) bool {
	p := o.Prototype()
	for i := 0; p != nil && i < maxInheritance; i++ {
		if p == proto {
			return true
		}
		p = p.Prototype()
	}
	return false
}

// lockClass freezes a class's constructor and prototype.
func (r *run) lockClass(c webClass) {
	r.freeze(c.proto)
	r.freeze(c.ctor)
}

func (r *run) toStringTag(o *goja.Object, tag string) {
	if err := o.DefineDataPropertySymbol(goja.SymToStringTag, r.rt.ToValue(tag), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		panic(err)
	}
}

// webMethod defines a frozen method. Members of web interfaces are
// enumerable, as Web IDL defines them.
func (r *run) webMethod(o *goja.Object, name string, length int, f nativeFunc) *goja.Object {
	fn := r.newFunction(name, length, f)
	r.freeze(fn)
	if err := o.DefineDataProperty(name, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
		panic(err)
	}
	return fn
}

// webAccessor defines an enumerable accessor with frozen functions; set
// may be nil.
func (r *run) webAccessor(o *goja.Object, name string, get, set nativeFunc) {
	g := r.newFunction("get "+name, 0, get)
	r.freeze(g)
	var s goja.Value
	if set != nil {
		fn := r.newFunction("set "+name, 1, set)
		r.freeze(fn)
		s = fn
	}
	if err := o.DefineAccessorProperty(name, g, s, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
		panic(err)
	}
}

// requireArgs throws when a call has fewer arguments than a web method
// requires.
func (r *run) requireArgs(call goja.FunctionCall, n int, what string) {
	if len(call.Arguments) < n {
		r.throwType(what + ": not enough arguments")
	}
}

// usvString converts v once to a Go string, as Web IDL's USVString does
// (lone surrogates become U+FFFD), refusing strings over limit UTF-16
// code units before converting them.
func (r *run) usvString(v goja.Value, limit int64, what string) string {
	s := r.toStr(v)
	if int64(s.Length()) > limit {
		r.throwRange(what + ": the string is longer than the sandbox allows")
	}
	return s.String()
}

// iterResult is {value, done}.
func (r *run) iterResult(v goja.Value, done bool) *goja.Object {
	o := r.rt.NewObject()
	r.defineData(o, "value", v)
	r.defineData(o, "done", r.rt.ToValue(done))
	return o
}
