package vm

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/dop251/goja"
)

// callbackMethods are the Array and %TypedArray% prototype methods that
// call a callback once per element in a native loop.
var callbackMethods = map[string]bool{
	"every": true, "filter": true, "find": true, "findIndex": true, "findLast": true, "findLastIndex": true,
	"forEach": true, "map": true, "reduce": true, "reduceRight": true, "some": true,
}

// callbackCheckpointLength is the length from which a callback method's
// callback is made a checkpoint: a shorter loop ends in a few milliseconds
// whatever the callback.
const callbackCheckpointLength = 1 << 14

// checkpointedCallback returns args with args[0], when it is a function
// and the loop will run more than callbackCheckpointLength times, replaced
// by a function that checks the stop flag every checkpointEvery calls and
// calls it. goja's interrupt reaches a callback of the plan's own, but
// not a native one (Math.abs, Boolean, a bound built-in), which turns the
// method into one long native step.
func (r *run) checkpointedCallback(args []goja.Value, n int64) []goja.Value {
	if len(args) == 0 || n <= callbackCheckpointLength {
		return args
	}
	fn, ok := goja.AssertFunction(args[0])
	if !ok {
		return args
	}
	calls := 0
	wrapped := r.newFunction("", 0, func(call goja.FunctionCall) goja.Value {
		if calls++; calls%checkpointEvery == 0 {
			r.checkpoint()
		}
		return r.call(fn, call.This, call.Arguments...)
	})
	out := append([]goja.Value(nil), args...)
	out[0] = wrapped
	return out
}

// fromGuard guards Array.from and %TypedArray%.from: the source is read
// once (see materialize), a string source is held to the element cap, as
// split is, and a mapping function is a checkpoint.
func (r *run) fromGuard(what string) func(nativeFunc) nativeFunc {
	return func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			args := append([]goja.Value(nil), call.Arguments...)
			n := int64(callbackCheckpointLength + 1)
			switch src := call.Argument(0); {
			case goja.IsString(src):
				r.checkCodePoints(r.toStr(src), what)
			default:
				if o, ok := src.(*goja.Object); ok {
					args[0] = r.materialize(o, what)
				}
			}
			if len(args) > 1 {
				mapped := r.checkpointedCallback(args[1:], n)
				args = append(args[:1], mapped...)
			}
			call.Arguments = args
			return orig(call)
		}
	}
}

// checkCodePoints throws when iterating s (one value per code point)
// would make more values than the element cap.
func (r *run) checkCodePoints(s goja.String, what string) {
	n := int64(s.Length())
	if n <= r.caps.elements {
		return
	}
	points := n
	for i := 0; i+1 < s.Length(); i++ {
		if i%textChunk == 0 {
			r.checkpoint()
		}
		if c := s.CharAt(i); c >= 0xD800 && c < 0xDC00 {
			if d := s.CharAt(i + 1); d >= 0xDC00 && d < 0xE000 {
				points--
				i++
			}
		}
	}
	if points > r.caps.elements {
		r.throwRange(fmt.Sprintf("%s: a string of %d characters exceeds the sandbox limit of %d elements", what, points, r.caps.elements))
	}
}

// toUint32 is the specification's ToUint32, converting v once.
func toUint32(v goja.Value) uint32 {
	f := v.ToFloat()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	m := math.Mod(math.Trunc(f), 1<<32)
	if m < 0 {
		m += 1 << 32
	}
	return uint32(m)
}

// guardTypedArrayLoops guards the %TypedArray%.prototype methods that loop
// natively over every element: a typed array holds up to the buffer cap,
// eight times the element cap in one-byte elements. Callbacks and
// comparators become checkpoints; the default sort, which goja runs in
// one native step of tens of nanoseconds per comparison, is done here,
// in the buffer, with the stop flag checked. Uint8Array's toHex and
// toBase64, which write two and four thirds characters per byte, are
// held to the string cap.
func (r *run) guardTypedArrayLoops(proto, uint8Proto *goja.Object) {
	for name := range callbackMethods {
		r.wrap(proto, name, func(orig nativeFunc) nativeFunc {
			return func(call goja.FunctionCall) goja.Value {
				if o, ok := call.This.(*goja.Object); ok && isTypedArray(o) {
					call.Arguments = r.checkpointedCallback(call.Arguments, r.typedLength(o))
				}
				return orig(call)
			}
		})
	}
	r.wrap(proto, "sort", func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			o, ok := call.This.(*goja.Object)
			if !ok || !isTypedArray(o) {
				return orig(call)
			}
			if !goja.IsUndefined(call.Argument(0)) {
				call.Arguments = r.checkpointedCallback(call.Arguments, r.typedLength(o))
				return orig(call)
			}
			r.sortTyped(o)
			return o
		}
	})
	r.wrap(proto, "toSorted", func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			o, ok := call.This.(*goja.Object)
			if !ok || !isTypedArray(o) {
				return orig(call)
			}
			if !goja.IsUndefined(call.Argument(0)) {
				call.Arguments = r.checkpointedCallback(call.Arguments, r.typedLength(o))
				return orig(call)
			}
			// A copy of the same type (not the species), sorted in place.
			cp := r.sameTypeCopy(o)
			r.sortTyped(cp)
			return cp
		}
	})
	// set reads an array-like source element by element, generically
	// (a hundred nanoseconds each), up to the target's length.
	r.wrap(proto, "set", func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			if src, ok := call.Argument(0).(*goja.Object); ok && !isTypedArray(src) {
				args := append([]goja.Value(nil), call.Arguments...)
				args[0], _ = r.boundedArrayLike(src, "TypedArray.prototype.set", false)
				call.Arguments = args
			}
			return orig(call)
		}
	})
	// toReversed copies element by element, generically; a copy of the
	// same type (not the species) reversed in place costs a tenth.
	reverse := native(proto.Get("reverse"))
	r.wrap(proto, "toReversed", func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			o, ok := call.This.(*goja.Object)
			if !ok || !isTypedArray(o) {
				return orig(call)
			}
			cp := r.sameTypeCopy(o)
			return reverse(goja.FunctionCall{This: cp})
		}
	})
	for _, enc := range []struct {
		name string
		size func(n int64) int64
	}{{"toHex", func(n int64) int64 { return 2 * n }}, {"toBase64", func(n int64) int64 { return (n + 2) / 3 * 4 }}} {
		what := "Uint8Array.prototype." + enc.name
		r.wrap(uint8Proto, enc.name, func(orig nativeFunc) nativeFunc {
			return func(call goja.FunctionCall) goja.Value {
				if o, ok := call.This.(*goja.Object); ok && isTypedArray(o) {
					r.checkUnits(enc.size(r.typedLength(o)), what)
				}
				return orig(call)
			}
		})
	}
}

// sortTyped sorts a typed array's elements in its buffer in ascending
// numeric order, NaN last and -0 before +0, as the default comparison of
// %TypedArray%.prototype.sort does. Bytes and 16-bit elements are counted
// rather than compared; wider elements are compared with the stop flag
// checked.
func (r *run) sortTyped(o *goja.Object) {
	switch s := o.Export().(type) {
	case []uint8:
		countingSort(r, s, 0, 1<<8)
	case []int8:
		countingSort(r, s, 1<<7, 1<<8)
	case []uint16:
		countingSort(r, s, 0, 1<<16)
	case []int16:
		countingSort(r, s, 1<<15, 1<<16)
	case []uint32:
		sortIntegers(r, s)
	case []int32:
		sortIntegers(r, s)
	case []float32:
		sortFloats(r, s)
	case []float64:
		sortFloats(r, s)
	}
}

// compareEvery is how many comparisons a sort makes between checks of the
// stop flag.
const compareEvery = 1 << 14

// sortIntegers sorts 32-bit elements, a checkpoint every compareEvery
// comparisons.
func sortIntegers[T uint32 | int32](r *run, s []T) {
	calls := 0
	slices.SortFunc(s, func(a, b T) int {
		if calls++; calls%compareEvery == 0 {
			r.checkpoint()
		}
		return cmp.Compare(a, b)
	})
}

// countingSort sorts 8- and 16-bit elements by counting them into buckets
// values: linear, with a checkpoint every few thousand elements. offset
// maps the smallest value to bucket 0. A short array is sorted directly.
func countingSort[T uint8 | int8 | uint16 | int16](r *run, s []T, offset, buckets int) {
	if len(s) < compareEvery {
		slices.Sort(s)
		return
	}
	counts := make([]int, buckets)
	for i, v := range s {
		if i%textChunk == 0 {
			r.checkpoint()
		}
		counts[int(v)+offset]++
	}
	i := 0
	for b, c := range counts {
		for ; c > 0; c-- {
			if i%textChunk == 0 {
				r.checkpoint()
			}
			s[i] = T(b - offset)
			i++
		}
	}
}

// sortFloats sorts floating-point elements: NaNs moved to the end in their
// order (the sort is stable, and NaNs can differ in their bits), the rest
// sorted with -0 before +0; elements that compare equal then have the
// same bits, so an unstable sort is as good as a stable one.
func sortFloats[T float32 | float64](r *run, s []T) {
	k := 0
	var nans []T
	for i, v := range s {
		if i%textChunk == 0 {
			r.checkpoint()
		}
		if v != v {
			nans = append(nans, v)
			continue
		}
		s[k] = v
		k++
	}
	copy(s[k:], nans)
	calls := 0
	slices.SortFunc(s[:k], func(a, b T) int {
		if calls++; calls%compareEvery == 0 {
			r.checkpoint()
		}
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		case a == 0 && b == 0:
			sa, sb := math.Signbit(float64(a)), math.Signbit(float64(b))
			switch {
			case sa && !sb:
				return -1
			case !sa && sb:
				return 1
			}
		}
		return 0
	})
}

// sameTypeCopy copies a typed array into a new one of the same type, made
// by goja's own constructor (TypedArrayCreateSameType: no species).
func (r *run) sameTypeCopy(o *goja.Object) *goja.Object {
	ctor := object(r.std, r.guards.buffers.typedTag(goja.FunctionCall{This: o}).String())
	cp, err := r.rt.New(ctor, o)
	if err != nil {
		panic(err)
	}
	return cp
}

// guardCollections makes the callbacks of Map.prototype.forEach and
// Set.prototype.forEach checkpoints, as the array methods' are.
func (r *run) guardCollections() {
	for _, name := range []string{"Map", "Set"} {
		r.wrap(object(object(r.std, name), "prototype"), "forEach", func(orig nativeFunc) nativeFunc {
			return func(call goja.FunctionCall) goja.Value {
				call.Arguments = r.checkpointedCallback(call.Arguments, callbackCheckpointLength+1)
				return orig(call)
			}
		})
	}
}
