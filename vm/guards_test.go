package vm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/internal/proccpu"
	"github.com/codecall-go/codecall/presets"
)

// smallBudget shrinks the caps with the memory budget: 32 MiB gives a
// string cap of 2M characters, an element cap of 1M and 256K index keys.
func smallBudget(l *presets.Limits) {
	l.MemoryBytes = 32 << 20
	l.Timeout = 10 * time.Second
}

// promptly accepts a run that ended by its deadline, shortly after it.
func promptly(d time.Duration) func(*presets.Limits) {
	return func(l *presets.Limits) { l.Timeout = d }
}

// TestTextGuards covers the string built-ins whose output or work grows
// faster than their input: each is refused past the caps, or done in
// checkpointed steps, and gives the standard answer within them.
func TestTextGuards(t *testing.T) {
	cases := []hardeningCase{
		// normalize: NFKD expands U+FDFA eighteen times.
		{name: "normalize NFKD bomb", script: `return '\ufdfa'.repeat(2e6).normalize('NFKD').length`, want: tooBigOrDeadline},
		{name: "normalize NFKD bomb, small budget", change: smallBudget, script: `return '\ufdfa'.repeat(2e5).normalize('NFKD').length`, want: tooBigOrDeadline},
		{name: "normalize within the cap", script: `return '\ufdfa'.repeat(1000).normalize('NFKD').length`, want: okWith(`18000`)},
		{name: "normalize forms", script: `const s = '\u1E9B\u0323'; return [s.normalize('NFC'), s.normalize('NFD'), s.normalize('NFKC'), s.normalize('NFKD'), s.normalize(), 'abc'.normalize('NFKD'), '\ud800'.normalize().length]`,
			want: okWith(`["\u1E9B\u0323", "\u017F\u0323\u0307", "\u1E69", "s\u0323\u0307", "\u1E9B\u0323", "abc", 1]`)},
		{name: "normalize bad form", script: `return 'a'.normalize('NFX')`, want: tooBig},
		{name: "normalize on null", script: `return String.prototype.normalize.call(null)`, want: typeErr},
		// Case mappings: ß upper-cases to SS, U+0390 to three code points.
		{name: "toUpperCase doubling", change: smallBudget, script: `return 'ß'.repeat(1.5e6).toUpperCase().length`, want: tooBig},
		{name: "toLocaleUpperCase tripling", change: smallBudget, script: `return '\u0390'.repeat(8e5).toLocaleUpperCase().length`, want: tooBig},
		{name: "toUpperCase within the cap", change: smallBudget, script: `return ['ß'.repeat(9e5).toUpperCase().length, 'x'.repeat(1.9e6).toUpperCase().length, 'ß'.toUpperCase(), '\u0390'.toUpperCase().length]`, want: okWith(`[1800000, 1900000, "SS", 3]`)},
		{name: "toLowerCase", change: smallBudget, script: `return ['\u0130'.repeat(8e5).toLowerCase().length, 'ΑΣ'.toLowerCase(), 'ABC'.toLocaleLowerCase()]`, want: okWith(`[1600000, "ας", "abc"]`)},
		{name: "toLowerCase past the cap", change: smallBudget, script: `return '\u0130'.repeat(1.2e6).toLowerCase().length`, want: tooBig},
		// localeCompare collates both strings in one native step.
		{name: "localeCompare long strings", script: `return 'é'.repeat(2e5).localeCompare('é'.repeat(2e5))`, want: tooBig},
		{name: "localeCompare", script: `return ['a'.localeCompare('b'), 'b'.localeCompare('a'), 'é'.localeCompare('e\u0301'), 'x'.repeat(1000).localeCompare('x'.repeat(1000))]`, want: okWith(`[-1, 1, 0, 0]`)},
		// The URI encoders write up to nine characters per unit, escape six.
		{name: "encodeURI bomb", change: smallBudget, script: `return encodeURI('\u0800'.repeat(3e5)).length`, want: tooBig},
		{name: "encodeURIComponent bomb", change: smallBudget, script: `return encodeURIComponent('\u00e9'.repeat(4e5)).length`, want: tooBig},
		{name: "escape bomb", change: smallBudget, script: `return escape('\u0800'.repeat(4e5)).length`, want: tooBig},
		{name: "encoders within the cap", change: smallBudget, script: `return [encodeURI('\u0800'.repeat(2e5)).length, encodeURIComponent('a b;/?#'), encodeURI('a b;/?#'), escape('a b\u0100'), encodeURIComponent('\ud83d\ude00')]`,
			want: okWith(`[1800000, "a%20b%3B%2F%3F%23", "a%20b;/?#", "a%20b%u0100", "%F0%9F%98%80"]`)},
		{name: "encodeURI lone surrogate", script: `return encodeURI('\ud800')`, want: want{status: StatusRuntimeError, name: "URIError"}},
		// parseFloat finds its number with a regular expression over the
		// whole string.
		{name: "parseFloat long", script: `return [parseFloat('1'.repeat(1e7)), Number.parseFloat('0'.repeat(1e7) + '1.5e1x')]`, want: okWith(`[null, 15]`)},
		{name: "parseFloat forms", script: `const pad = 'x'.repeat(5000); return [parseFloat('  -12.5e3' + pad), parseFloat('.5' + pad), parseFloat('1.e2' + pad), parseFloat('-Infinity' + pad), parseFloat('.' + pad), parseFloat('+' + pad), parseFloat('1e+' + pad), parseFloat('\u00a0 7' + ' '.repeat(5000)), parseFloat('-0' + pad) === 0 && 1 / parseFloat('-0' + pad)]`,
			want: okWith(`[-12500, 0.5, 100, null, null, null, 1, 7, null]`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkWant(t, c.run(t), c.want) })
	}
}

// TestStringSearchGuards covers indexOf, lastIndexOf, includes, split and
// replace with a long needle: goja's search restarts at every match at an
// odd byte offset, quadratic in the lengths, which the sandbox's own
// linear search avoids.
func TestStringSearchGuards(t *testing.T) {
	// s holds needle once, at 300000; its bytes also match at every odd
	// offset of the filler.
	const setup = `const needle = 'Ă'.repeat(2e5); const s = 'ȁ'.repeat(3e5) + needle + 'ȁ';`
	cases := []hardeningCase{
		{name: "misaligned needle", change: promptly(3 * time.Second), script: `const h = 'ȁ'.repeat(4e5), n = 'Ă'.repeat(2e5); return [h.indexOf(n), h.lastIndexOf(n), h.includes(n), h.split(n).length, h.replace(n, 'x').length, h.replaceAll(n, 'x').length]`,
			want: okWith(`[-1, -1, false, 1, 400000, 400000]`)},
		{name: "found", script: setup + `return [s.indexOf(needle), s.lastIndexOf(needle), s.includes(needle), s.indexOf(needle, 300001), s.lastIndexOf(needle, 299999), s.includes(needle, 300001), s.lastIndexOf(needle, NaN), s.indexOf(needle, -5)]`,
			want: okWith(`[300000, 300000, true, -1, -1, false, 300000, 300000]`)},
		{name: "split and replace", script: setup + `const p = s.split(needle); return [p.length, p[0].length, p[1], s.split(needle, 1).length, s.split(needle, 0).length, s.replace(needle, '$&$&').length, s.replaceAll(needle, (m, i, str) => [m.length, i, str.length].join()).slice(300000)]`,
			want: okWith(`[2, 300000, "ȁ", 1, 0, 700001, "200000,300000,500001ȁ"]`)},
		{name: "includes refuses a RegExp", script: `return 'a'.includes(/a/)`, want: typeErr},
		// replaceAll lists every match before it replaces any: many
		// matches are replaced by the sandbox as it finds them.
		{name: "replaceAll many matches", script: `return ['x'.repeat(1e5).replaceAll('x', 'yz').length, 'ab'.repeat(5000).replaceAll('', '-').length, 'ab'.repeat(5000).replaceAll('b', '<$&$$>').slice(0, 9), 'a.b.c'.repeat(3000).replaceAll('.', (m, p, s) => m + p % 7 + typeof s).length, 'ab'.replace('', '-')]`,
			want: okWith(`[200000, 20001, "a<b$>a<b$", 57000, "-ab"]`)},
		{name: "replaceAll many matches over the cap", change: smallBudget, script: `return 'x'.repeat(1e6).replaceAll('x', 'yzw').length`, want: tooBig},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkWant(t, c.run(t), c.want) })
	}
}

// TestKeyListingGuards covers the Object and Reflect functions that list
// own keys: a string's or a typed array's index keys cost nothing until
// listed, one new string each.
func TestKeyListingGuards(t *testing.T) {
	cases := []hardeningCase{
		{name: "keys of a string", change: smallBudget, script: `return Object.keys('x'.repeat(3e5)).length`, want: tooBig},
		{name: "keys of a String object", change: smallBudget, script: `return Object.keys(new String('x'.repeat(3e5))).length`, want: tooBig},
		{name: "values of a typed array", change: smallBudget, script: `return Object.values(new Uint8Array(3e5)).length`, want: tooBig},
		{name: "proxy of a String object", change: smallBudget, script: `return Object.getOwnPropertySymbols(new Proxy(new String('x'.repeat(3e5)), {ownKeys() { return [] }})).length`, want: tooBig},
		{name: "revocable proxy of a typed array", change: smallBudget, script: `return Proxy.revocable(new Uint8Array(3e5), {}).proxy.length`, want: tooBig},
		{name: "own names of a typed array", change: smallBudget, script: `return Object.getOwnPropertyNames(new Uint8Array(3e5)).length`, want: tooBig},
		{name: "own symbols of a String object", script: `return Object.getOwnPropertySymbols(new String('x'.repeat(16e6))).length`, want: okWith(`0`)},
		{name: "descriptors of a string", change: smallBudget, script: `return Object.getOwnPropertyDescriptors('x'.repeat(3e5))`, want: tooBig},
		{name: "Reflect.ownKeys", change: smallBudget, script: `return Reflect.ownKeys(new Uint8Array(3e5)).length`, want: tooBig},
		{name: "assign from a string", change: smallBudget, script: `return Object.keys(Object.assign({}, 'ab', 'x'.repeat(3e5))).length`, want: tooBig},
		{name: "freeze a String object", change: smallBudget, script: `return Object.isFrozen(Object.freeze(new String('x'.repeat(3e5))))`, want: tooBig},
		{name: "defineProperties from a string", script: `return Object.defineProperties({}, 'x'.repeat(16e6))`, want: typeErr},
		{name: "create from a typed array", script: `return Object.create(null, new Uint8Array(6e7))`, want: typeErr},
		{name: "within the cap", change: smallBudget, script: `return [Object.keys('x'.repeat(2e5)).length, Object.keys(new Uint8Array(2e5)).length, Object.isFrozen(Object.freeze(new String('ab')))]`, want: okWith(`[200000, 200000, true]`)},
		{name: "entries", script: `const o = Object.defineProperty({a: 1, b: [2]}, 'hidden', {value: 3, enumerable: false}); o[Symbol.iterator] = 4; return [Object.entries(o), Object.entries([5, 6]), Object.entries('ab'), Object.entries(7)]`,
			want: okWith(`[[["a",1],["b",[2]]], [["0",5],["1",6]], [["0","a"],["1","b"]], []]`)},
		{name: "entries through a proxy", script: `const log = []; const p = new Proxy({a: 1, b: 2}, {ownKeys(t) { log.push('ownKeys'); return Reflect.ownKeys(t) }, getOwnPropertyDescriptor(t, k) { log.push('gopd ' + k); return Reflect.getOwnPropertyDescriptor(t, k) }, get(t, k) { log.push('get ' + String(k)); return t[k] }}); return [Object.entries(p), log]`,
			want: okWith(`[[["a",1],["b",2]], ["ownKeys", "gopd a", "get a", "gopd b", "get b"]]`)},
		{name: "entries sees deletions", script: `const o = {get a() { delete this.b; return 1 }, b: 2, c: 3}; return Object.entries(o)`, want: okWith(`[["a",1],["c",3]]`)},
		{name: "entries on null", script: `return Object.entries(null)`, want: typeErr},
		{name: "descriptors", script: `const s = Symbol('s'); const d = Object.getOwnPropertyDescriptors({a: 1, get b() { return 2 }, [s]: 3}); return [d.a, typeof d.b.get, d[s].value, Object.keys(Object.getOwnPropertyDescriptors([9]))]`,
			want: okWith(`[{"value":1,"writable":true,"enumerable":true,"configurable":true}, "function", 3, ["0","length"]]`)},
		// An entry array is hundreds of bytes: the heap watchdog stops the
		// loop that makes them.
		{name: "entries of a big array", change: smallBudget, script: `return Object.entries(new Array(1e6).fill(0)).length`, want: want{oneOf: []Status{StatusLimitExceeded, StatusTimeout}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkWant(t, c.run(t), c.want) })
	}
}

// TestLoopGuards covers native loops that call back or compare: over a
// typed array (up to eight times the element cap) and with a native
// callback or comparator, which goja's interrupt does not reach.
func TestLoopGuards(t *testing.T) {
	timedOut := want{status: StatusTimeout}
	cases := []hardeningCase{
		{name: "typed map with a native callback", change: promptly(300 * time.Millisecond), script: `return new Uint8Array(6e7).map(Math.abs).length`, want: timedOut},
		{name: "typed sort with a native comparator", change: promptly(300 * time.Millisecond), script: `return new Uint8Array(4e7).sort(Math.min).length`, want: timedOut},
		{name: "array forEach with a native callback", change: promptly(300 * time.Millisecond), script: `const a = new Array(4e6).fill(1); for (;;) a.forEach(Math.abs)`, want: timedOut},
		{name: "array sort with a native comparator", change: promptly(300 * time.Millisecond), script: `const a = Array.from({length: 2e6}, (_, i) => i % 1000); a.sort(Math.max); return 1`, want: timedOut},
		{name: "set from a long string", change: promptly(200 * time.Millisecond), script: `const s = 'x'.repeat(16e6); for (;;) new Set(s)`, want: timedOut},
		{name: "Array.from a long string", change: smallBudget, script: `return Array.from('x'.repeat(2e6)).length`, want: tooBig},
		{name: "array methods on a big typed array", script: `return [].indexOf.call(new Uint8Array(9e6), 1)`, want: tooBig},
		{name: "typed set from a big array-like", script: `new Uint8Array(1e7).set({length: 9e6}); return 1`, want: tooBig},
		{name: "toHex past the string cap", script: `return new Uint8Array(1e7).toHex().length`, want: tooBig},
		{name: "toBase64 past the string cap", script: `return new Uint8Array(1.3e7).toBase64().length`, want: tooBig},
		{name: "toHex and toBase64", script: `const u = new Uint8Array([1, 255]); return [u.toHex(), u.toBase64(), new Uint8Array(6e6).toBase64().length]`, want: okWith(`["01ff", "Af8=", 8000000]`)},
		{name: "typed default sort", script: `const show = a => Array.from(a, x => Object.is(x, -0) ? '-0' : String(x));
			return [show(new Float64Array([3, NaN, -0, 0, -1, Infinity, -Infinity, 0.5]).sort()), show(new Float32Array([2, NaN, -0, 0, -2]).sort()),
				Array.from(new Int8Array([5, -3, 127, -128, 0]).sort()), Array.from(new Uint8Array([3, 255, 0, 3]).sort()),
				Array.from(new Int16Array([300, -300, 0]).sort()), Array.from(new Uint16Array([65535, 1, 0]).sort()),
				Array.from(new Int32Array([-5, 2147483647, -2147483648]).sort()), Array.from(new Uint32Array([4294967295, 0, 5]).sort()),
				Array.from(new Uint8ClampedArray([9, 1]).sort())]`,
			want: okWith(`[["-Infinity","-1","-0","0","0.5","3","Infinity","NaN"], ["-2","-0","0","2","NaN"], [-128,-3,0,5,127], [0,3,3,255], [-300,0,300], [0,1,65535], [-2147483648,-5,2147483647], [0,5,4294967295], [1,9]]`)},
		{name: "typed toSorted and toReversed", script: `const a = new Int16Array([3, 1, 2]); const s = a.toSorted(), r = a.toReversed(), c = new Uint8ClampedArray([2, 1]).toSorted();
			return [Array.from(a), Array.from(s), Array.from(r), Object.prototype.toString.call(s), Object.prototype.toString.call(c), Array.from(a.toSorted((x, y) => y - x)), Array.from(a.sort((x, y) => y - x))]`,
			want: okWith(`[[3,1,2], [1,2,3], [2,1,3], "[object Int16Array]", "[object Uint8ClampedArray]", [3,2,1], [3,2,1]]`)},
		{name: "typed counting sort", script: `const a = new Int8Array(1e5); a[5] = -9; a[7] = 3; a.sort(); const b = new Uint16Array(1e5); b[1] = 65535; b[2] = 7; b.sort(); return [a[0], a[1], a[99999], b[99998], b[99999]]`, want: okWith(`[-9, 0, 3, 7, 65535]`)},
		{name: "typed sort of a big array", script: `const a = new Float64Array(4e6); a[7] = -1; a[9] = NaN; a.sort(); return [a[0], a[1], a[a.length - 1]]`, want: okWith(`[-1, 0, null]`)},
		{name: "callbacks still work", script: `const u = new Uint8Array([1, 2, 3]); const m = new Map([[1, 'a']]); const seen = []; m.forEach((v, k, mm) => seen.push(v, k, mm === m)); new Set([7]).forEach(function (v) { seen.push(v, this.t) }, {t: 't'});
			return [Array.from(u.map(x => x * 2)), u.reduce((a, b) => a + b), u.some(x => x > 2), u.findLast(x => x < 3), [1, 2, 3].map(function (x) { return x + this.k }, {k: 1}), seen, Array.from({length: 3}, (_, i) => i * 2)]`,
			want: okWith(`[[2,4,6], 6, true, 2, [2,3,4], ["a",1,true,7,"t"], [0,2,4]]`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cpu := proccpu.Used()
			res := c.run(t)
			cpu = proccpu.Used() - cpu
			checkWant(t, res, c.want)
			if res.Status == StatusTimeout {
				// The setups (fill, Array.from) are native loops of a few
				// million steps, ten times slower under the race detector.
				// A native loop that outlived the deadline took both the
				// time and the CPU; a run that waited for a core on a
				// loaded machine took only the time.
				limit := 3 * time.Second
				if raceEnabled {
					limit = 20 * time.Second
				}
				if d := time.Duration(res.Metrics.DurationMs * float64(time.Millisecond)); d > limit && cpu > limit {
					t.Errorf("the run timed out after %v and %v of CPU time: a native loop outlived the deadline", d, cpu)
				}
			}
		})
	}
}

// TestExportBounded covers the result export: a big typed array is
// encoded a slot at a time and only as far as the measure, and the encoder
// stops at the deadline even where no script code runs.
func TestExportBounded(t *testing.T) {
	start := time.Now()
	res := runScript(t, nil, `return new Float64Array(8e6)`, promptly(2*time.Second))
	if res.Status != StatusOK || len(res.Warnings) != 1 || res.Warnings[0].Type != WarningResultTruncated {
		t.Fatalf("%s", describe(res)[:min(len(describe(res)), 500)])
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returning a typed array of 8M elements took %v", d)
	}
	res = runScript(t, nil, `const u = new Uint8Array(3); u.extra = 'e'; return [u, new String('s'), {a: new Int8Array([-1])}]`)
	checkWant(t, res, okWith(`[{"0":0,"1":0,"2":0,"extra":"e"}, "s", {"a":{"0":-1}}]`))

	// A getter stops the run (as the watchdog does at the deadline); the
	// rest of the result is native values whose toJSON, a Go function,
	// counts how often the encoder still calls it.
	r := newRun(context.Background(), compile(t, "return 1"), &mcptest.Host{}, Options{Limits: limits(t, presets.Balanced)})
	r.setup()
	o := r.rt.NewObject()
	stop := r.newFunction("stop", 0, func(goja.FunctionCall) goja.Value {
		r.stop(&outcome{status: StatusTimeout, err: &ErrorInfo{Message: "deadline"}})
		return goja.Undefined()
	})
	if err := o.DefineAccessorProperty("first", stop, nil, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
		t.Fatal(err)
	}
	after := 0
	counted := r.rt.NewObject()
	r.defineData(counted, "toJSON", r.newFunction("toJSON", 0, func(goja.FunctionCall) goja.Value {
		after++
		return goja.Undefined()
	}))
	for i := range 100000 {
		r.defineData(o, "k"+string(rune('a'+i%26))+string(rune(i)), counted)
	}
	r.export(o)
	res = r.finish()
	if res.Status != StatusTimeout || after > checkpointEvery {
		t.Errorf("status %s after %d more values; want timeout within %d", res.Status, after, checkpointEvery)
	}
}

// TestCodePointCount checks that a string's values are counted by code
// point: a surrogate pair is one value of its iterator.
func TestCodePointCount(t *testing.T) {
	l := limits(t, presets.Balanced)
	smallBudget(&l) // 1M elements
	r := newRun(context.Background(), compile(t, "return 1"), &mcptest.Host{}, Options{Limits: l})
	r.setup()
	pairs := r.toStr(r.rt.ToValue(strings.Repeat("\U0001F600", 700000)))
	if err := r.try(func() { r.checkCodePoints(pairs, "test") }); err != nil {
		t.Errorf("700000 code points in 1.4M units: %v", err)
	}
	units := r.toStr(r.rt.ToValue(strings.Repeat("\u00e9", 1100000)))
	if err := r.try(func() { r.checkCodePoints(units, "test") }); err == nil {
		t.Error("1.1M code points passed an element cap of 1M")
	}
}
