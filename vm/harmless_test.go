package vm

import "strings"

// harmlessBuiltins are goja's own functions a plan reaches unguarded,
// each with the reason it needs no guard. Anything a plan can reach that
// is neither made by the sandbox nor listed here fails TestBuiltinsGuarded.
//
// "Bounded" below means: each call does a fixed amount of work, or work
// and output linear in values the plan already holds (strings within the
// string cap, buffers within the buffer cap, argument lists built through
// guarded spreads and apply) at memory speed, with no callback and no
// output larger than its input. What the guards exist for is the rest:
// output many times the input, work faster than linear, native loops over
// a length no memory backs, and callbacks in native loops.
var harmlessBuiltins = func() map[string]string {
	m := map[string]string{}
	// names are separated by white space; "get X" and "set X" name an
	// accessor's functions.
	add := func(reason string, names string) {
		prefix := ""
		for _, n := range strings.Fields(names) {
			if n == "get" || n == "set" {
				prefix = n + " "
				continue
			}
			m[prefix+n] = reason
			prefix = ""
		}
	}

	add("constant work: reads or writes one slot, or computes from numbers", `
		Math.abs Math.acos Math.acosh Math.asin Math.asinh Math.atan Math.atan2 Math.atanh Math.cbrt
		Math.ceil Math.clz32 Math.cos Math.cosh Math.exp Math.expm1 Math.floor Math.fround Math.imul
		Math.log Math.log10 Math.log1p Math.log2 Math.pow Math.random Math.round Math.sign Math.sin
		Math.sinh Math.sqrt Math.tan Math.tanh Math.trunc
		Number.isFinite Number.isInteger Number.isNaN Number.isSafeInteger Number.prototype.valueOf
		isFinite isNaN Boolean Boolean.prototype.toString Boolean.prototype.valueOf
		Date.UTC Date.now
		Date.prototype.getDate Date.prototype.getDay Date.prototype.getFullYear Date.prototype.getHours
		Date.prototype.getMilliseconds Date.prototype.getMinutes Date.prototype.getMonth
		Date.prototype.getSeconds Date.prototype.getTime Date.prototype.getTimezoneOffset
		Date.prototype.getUTCDate Date.prototype.getUTCDay Date.prototype.getUTCFullYear
		Date.prototype.getUTCHours Date.prototype.getUTCMilliseconds Date.prototype.getUTCMinutes
		Date.prototype.getUTCMonth Date.prototype.getUTCSeconds Date.prototype.setDate
		Date.prototype.setFullYear Date.prototype.setHours Date.prototype.setMilliseconds
		Date.prototype.setMinutes Date.prototype.setMonth Date.prototype.setSeconds Date.prototype.setTime
		Date.prototype.setUTCDate Date.prototype.setUTCFullYear Date.prototype.setUTCHours
		Date.prototype.setUTCMilliseconds Date.prototype.setUTCMinutes Date.prototype.setUTCMonth
		Date.prototype.setUTCSeconds Date.prototype.valueOf
		DataView.prototype.getFloat32 DataView.prototype.getFloat64 DataView.prototype.getInt16
		DataView.prototype.getInt32 DataView.prototype.getInt8 DataView.prototype.getUint16
		DataView.prototype.getUint32 DataView.prototype.getUint8 DataView.prototype.setFloat32
		DataView.prototype.setFloat64 DataView.prototype.setInt16 DataView.prototype.setInt32
		DataView.prototype.setInt8 DataView.prototype.setUint16 DataView.prototype.setUint32
		DataView.prototype.setUint8
		get DataView.prototype.buffer get DataView.prototype.byteLength get DataView.prototype.byteOffset
		get ArrayBuffer.prototype.byteLength get %TypedArray%.prototype.buffer
		get %TypedArray%.prototype.byteLength get %TypedArray%.prototype.byteOffset
		get %TypedArray%.prototype.length %TypedArray%.prototype.at %TypedArray%.prototype.subarray
		%TypedArray%.prototype.entries %TypedArray%.prototype.keys %TypedArray%.prototype.values
		Array.isArray Array.prototype.at Array.prototype.pop Array.prototype.entries Array.prototype.keys
		Array.prototype.values
		WeakMap WeakMap.prototype.delete WeakMap.prototype.get WeakMap.prototype.has WeakMap.prototype.set
		WeakSet WeakSet.prototype.add WeakSet.prototype.delete WeakSet.prototype.has
		Map.prototype.clear Map.prototype.delete Map.prototype.get Map.prototype.has Map.prototype.set
		Map.prototype.entries Map.prototype.keys Map.prototype.values get Map.prototype.size
		Set.prototype.add Set.prototype.clear Set.prototype.delete Set.prototype.has
		Set.prototype.entries Set.prototype.values get Set.prototype.size
		Symbol.keyFor Symbol.prototype.valueOf get Symbol.prototype.description
		Object.defineProperty Object.getOwnPropertyDescriptor Object.getPrototypeOf Object.hasOwn Object.is
		Object.isExtensible Object.preventExtensions Object.prototype.hasOwnProperty
		Object.prototype.propertyIsEnumerable Object.prototype.valueOf get Object.prototype.__proto__
		Reflect.defineProperty Reflect.deleteProperty Reflect.get Reflect.getOwnPropertyDescriptor
		Reflect.getPrototypeOf Reflect.has Reflect.isExtensible Reflect.preventExtensions Reflect.set
		Promise.prototype.catch Promise.prototype.finally Promise.prototype.then Promise.reject
		Promise.resolve
		Error.isError Function.prototype get Function.prototype.caller %TypedArray%
		get RegExp.prototype.dotAll get RegExp.prototype.global get RegExp.prototype.ignoreCase
		get RegExp.prototype.multiline get RegExp.prototype.sticky get RegExp.prototype.unicode
		String.prototype.at String.prototype.charAt String.prototype.charCodeAt
		String.prototype.codePointAt String.prototype.toString String.prototype.valueOf
		%IteratorPrototype%.[Symbol.iterator] String.prototype.[Symbol.iterator]
		Date.prototype.[Symbol.toPrimitive] Symbol.prototype.[Symbol.toPrimitive]
		get %TypedArray%.[Symbol.species] get Map.[Symbol.species] get Promise.[Symbol.species]
		get Set.[Symbol.species] get %TypedArray%.prototype.[Symbol.toStringTag]`)

	add("walks a prototype chain, which the plan built one object at a time", `
		Object.prototype.isPrototypeOf Object.setPrototypeOf Reflect.setPrototypeOf
		set Object.prototype.__proto__ Function.prototype.[Symbol.hasInstance]`)

	add("output of a fixed size: a number formatted in at most about a thousand characters, or a date", `
		Number.prototype.toExponential Number.prototype.toFixed Number.prototype.toPrecision
		Number.prototype.toString Number.prototype.toLocaleString
		Date.prototype.toDateString Date.prototype.toISOString Date.prototype.toJSON
		Date.prototype.toLocaleDateString Date.prototype.toLocaleString Date.prototype.toLocaleTimeString
		Date.prototype.toString Date.prototype.toTimeString Date.prototype.toUTCString`)

	add("one linear pass over a string the plan holds, no larger output: a parse, a trim, a copy of a part, or a comparison as long as the shorter string", `
		Date Date.parse Number parseInt String.prototype.trim String.prototype.trimEnd String.prototype.trimStart
		String.prototype.slice String.prototype.substr String.prototype.substring
		String.prototype.startsWith String.prototype.endsWith
		decodeURI decodeURIComponent unescape
		Symbol Symbol.for Symbol.prototype.toString String
		Object.prototype.toString Object.prototype.toLocaleString
		get RegExp.prototype.source get RegExp.prototype.flags RegExp.prototype.toString
		Function.prototype.toString Error.prototype.toString
		Error EvalError RangeError ReferenceError SyntaxError TypeError URIError`)

	add("works on its arguments, a list the plan built through guarded spreads and Function.prototype.apply", `
		Math.hypot Math.max Math.min String.fromCharCode String.fromCodePoint Array.of
		Array.prototype.push %TypedArray%.of Function.prototype.call`)

	add("calls this.join, which is guarded (or Object.prototype.toString)", `
		Array.prototype.toString`)

	add("one pass at memory speed over a buffer within the buffer cap, no callback (a quarter of a second at most at balanced's cap)", `
		%TypedArray%.prototype.copyWithin %TypedArray%.prototype.fill %TypedArray%.prototype.includes
		%TypedArray%.prototype.indexOf %TypedArray%.prototype.lastIndexOf %TypedArray%.prototype.reverse
		%TypedArray%.prototype.slice %TypedArray%.prototype.with ArrayBuffer.prototype.slice
		Uint8Array.prototype.setFromBase64 Uint8Array.prototype.setFromHex`)

	add("iterates its argument through the iterator protocol: the array and string iterators' next are checkpoints, and a generator's next runs script code", `
		AggregateError Object.fromEntries Promise.all Promise.allSettled Promise.any Promise.race Map Set`)

	add("one step of an iteration over a Map or Set, whose entries the plan made one at a time", `
		%MapIteratorPrototype%.next %SetIteratorPrototype%.next`)

	add("calls RegExp.prototype.exec, the sandbox's, which is a checkpoint", `
		%RegExpStringIteratorPrototype%.next`)

	add("work bounded by the sizes of two sets the plan made; a set-like argument's has and keys are called as script", `
		Set.prototype.difference Set.prototype.intersection Set.prototype.isDisjointFrom
		Set.prototype.isSubsetOf Set.prototype.isSupersetOf Set.prototype.symmetricDifference
		Set.prototype.union`)

	add("reads a descriptor object per key as it lists the keys: a string's or typed array's first index value is not one and throws; a proxy's target is held to the index key cap when the proxy is made", `
		Object.create Object.defineProperties`)

	add("lists symbol keys only, which the plan made one at a time; a proxy's target is held to the index key cap when the proxy is made", `
		Object.getOwnPropertySymbols`)

	add("a promise whose executor the plan wrote", `Promise`)

	add("the constructor of plain objects: ToObject of one value", `Object`)
	return m
}()
