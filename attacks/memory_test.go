package attacks

import (
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

// memoryCases ask native built-ins for huge allocations or huge native
// loops. goja has no memory limit, its Interrupt does not stop a native
// built-in, and a failed huge allocation is an unrecoverable Go fatal
// error, so each runs in a child process: whatever the outcome, the
// process must survive, and the heap must come back to its baseline.
var memoryCases = []attackCase{
	// Wall: size guard on String.prototype.repeat.
	{name: "repeat-2^30", cat: catMemory, isolate: true,
		script: `return 'x'.repeat(2 ** 30).length`, want: rangeError},
	// Wall: size guard on String.prototype.padStart.
	{name: "padStart-2^30", cat: catMemory, isolate: true,
		script: `return 'x'.padStart(2 ** 30, 'y').length`, want: rangeError},
	// Wall: size guard on String.prototype.padEnd.
	{name: "padEnd-2^30", cat: catMemory, isolate: true,
		script: `return 'x'.padEnd(2 ** 30, 'yz').length`, want: rangeError},
	// Wall: size guard on String.prototype.concat.
	{name: "string-concat-method", cat: catMemory, isolate: true, limits: smallHeap,
		script: `const s = 'x'.repeat(1e6); return s.concat(s, s, s, s).length`, want: rangeError},
	// Wall: size guard on the Array constructor.
	{name: "array-2^32-1-fill", cat: catMemory, isolate: true,
		script: `return new Array(2 ** 32 - 1).fill(0).length`, want: rangeError},
	// Wall: size guard on [].fill over a huge length set
	// after construction.
	{name: "array-length-set-fill", cat: catMemory, isolate: true,
		script: `const a = []; a.length = 2 ** 32 - 1; return a.fill(0).length`, want: rangeError},
	// Wall: size guard on Array.from with a huge array-like.
	{name: "array-from-1e9", cat: catMemory, isolate: true,
		script: `return Array.from({length: 1e9}).length`, want: rangeError},
	// Wall: size guard on ArrayBuffer.
	{name: "arraybuffer-2^31", cat: catMemory, isolate: true,
		script: `return new ArrayBuffer(2 ** 31).byteLength`, want: rangeError},
	// Wall: size guard on typed arrays.
	{name: "uint8array-1e10", cat: catMemory, isolate: true,
		script: `return new Uint8Array(1e10).length`, want: rangeError},
	// Wall: size guard on typed arrays, 8-byte elements.
	{name: "float64array-2^28", cat: catMemory, isolate: true,
		script: `return new Float64Array(2 ** 28).length`, want: rangeError},
	// Wall: the heap watchdog, a string doubling in a loop.
	{name: "string-doubling-loop", cat: catMemory, isolate: true, preset: presets.Balanced, limits: smallHeap,
		script: `let s = 'x'; for (;;) s += s`, want: memoryLimit},
	// Wall: the heap watchdog, a string doubling by recursion (secure).
	{name: "string-doubling-recursion", cat: catMemory, isolate: true, limits: smallHeap,
		script: `function d(s) { return d(s + s) } return d('x')`, want: memoryLimit},
	// Wall: the heap watchdog, a map growing in a loop.
	{name: "map-growth-loop", cat: catMemory, isolate: true, preset: presets.Balanced, limits: smallHeap,
		script: `const m = new Map(); for (let i = 0; ; i++) m.set(i, {i, s: 'v' + i})`, want: memoryLimit},
	// Wall: the heap watchdog, many arrays each within the element cap.
	{name: "many-capped-arrays", cat: catMemory, isolate: true, limits: smallHeap,
		script: `return Array.from({length: 64}, () => new Array(1e6).fill(0)).length`, want: memoryLimit},
	// Wall: the element cap on split: two million one-character strings
	// from one native call, twice the cap of a 32 MiB budget.
	{name: "split-element-cap", cat: catMemory, isolate: true, limits: smallHeap,
		script: `return 'x'.repeat(2e6).split('').length`, want: rangeError},
	// Wall: the heap watchdog, split into millions of non-ASCII strings
	// (each costs far more than the 16 bytes the caps assume). The watchdog
	// samples the heap every few milliseconds, and one native call can
	// finish between two samples on a loaded machine; what it guarantees
	// is that a run holding more than its budget does not go on, so the
	// plan keeps working while it holds the pieces.
	{name: "split-unicode", cat: catMemory, isolate: true, preset: presets.Balanced, limits: smallHeap,
		script: `const a = '\u00e9'.repeat(1e6).split(''); let n = 0; for (let i = 0; i < 3e7; i++) n += i & 1; return a.length + n`, want: memoryLimit},
	// Wall: size guard on join over a huge array.
	{name: "join-huge-array", cat: catMemory, isolate: true,
		script: `const a = []; a.length = 2 ** 28; return a.join('abcd').length`, want: rangeError},
	// Wall: size guard on join's result.
	{name: "join-long-result", cat: catMemory, isolate: true, limits: smallHeap,
		script: `return new Array(2e5).fill('abcdefghij').join('klmnopqrst').length`, want: rangeError},
	// Wall: size guard on concat.
	{name: "concat-spread", cat: catMemory, isolate: true, limits: smallHeap,
		script: `const a = new Array(6e5).fill(0); const parts = new Array(300).fill(a); return [].concat(...parts).length`, want: rangeError,
		// The array and its spread take a good part of the 32 MiB budget,
		// so under load the heap wall may answer before the guard (which
		// vm's hardening tests check alone).
		orWant: memoryLimit},
	// Wall: size guard on JSON.stringify's output.
	{name: "json-stringify-huge", cat: catMemory, isolate: true, limits: smallHeap,
		script: `return JSON.stringify(new Array(1e5).fill('x'.repeat(100))).length`, want: rangeError},
	// Wall: a native loop over a huge array-like (no allocation, no
	// interrupt check inside the built-in).
	{name: "indexOf-huge-arraylike", cat: catMemory, isolate: true,
		script: `return [].indexOf.call({length: 2 ** 53 - 1}, 1)`, want: rangeError},
	// Wall: the same for includes.
	{name: "includes-huge-arraylike", cat: catMemory, isolate: true,
		script: `return [].includes.call({length: 2 ** 53 - 1}, 1)`, want: rangeError},
	// Wall: the same for lastIndexOf.
	{name: "lastIndexOf-huge-arraylike", cat: catMemory, isolate: true,
		script: `return [].lastIndexOf.call({length: 2 ** 53 - 1}, 1)`, want: rangeError},
	// Wall: the same for fill, which also allocates a property per index.
	{name: "fill-huge-arraylike", cat: catMemory, isolate: true,
		script: `return [].fill.call({length: 2 ** 53 - 1}, 0).length`, want: rangeError},
	// Wall: the same for join, which also builds a huge string.
	{name: "join-huge-arraylike", cat: catMemory, isolate: true,
		script: `return [].join.call({length: 2 ** 32}).length`, want: rangeError},
	// Wall: the same through a getter that reports a small length to the
	// check and a huge one to the built-in.
	{name: "length-getter-switch", cat: catMemory, isolate: true,
		script: `let n = 0; const o = {get length() { return n++ === 0 ? 3 : 2 ** 53 - 1 }}; return [].indexOf.call(o, 1)`, want: ok(`-1`)},
	// Wall: the bridge, a sparse array input that would expand to a
	// billion nulls.
	{name: "sparse-array-input", cat: catMemory, isolate: true, bypass: true,
		script: `const a = []; a[1e9] = 1; return await callTool('test.count', {a})`, want: rangeError},
	// Wall: result export, a sparse array result of four billion slots.
	{name: "sparse-array-result", cat: catMemory, isolate: true,
		script: `const a = []; a[2 ** 32 - 2] = 1; return a`, want: rangeError},
	// Wall: validator. BigInt arithmetic allocates without bound in one
	// native step (1n << 2n**40n asks Go for a 128 GiB block, a fatal
	// out-of-memory error); the runtime documents that BigInt literals must
	// be refused by the validator. With literal operands goja's compiler
	// folds the expression while validating, before any limit exists.
	{name: "bigint-shift-folded", cat: catMemory, isolate: true,
		script: `return (1n << (1n << 40n)) > 0n`, want: bigintRefused},
	// Wall: validator. The same computed at run time.
	{name: "bigint-shift-runtime", cat: catMemory, isolate: true,
		script: `const e = 40n; return (1n << (1n << e)) > 0n`, want: bigintRefused},
	// Wall: validator. BigInt ** folded at compile time: CPU time in
	// validation, with no limit (the exponent grows it without bound; 3e7
	// costs seconds).
	{name: "bigint-pow-folded", cat: catMemory, isolate: true, limits: short,
		script: `const x = 7n ** 3000000n; return 1`, want: bigintRefused},
	// Wall: validator. BigInt ** at run time: one native step past the
	// deadline, as long as the exponent makes it.
	{name: "bigint-pow-runtime", cat: catMemory, isolate: true, limits: short,
		script: `const e = 3000000n; const x = 7n ** e; return 1`, want: bigintRefused},
	// Wall: runtime. Without literals no BigInt can come into being: every
	// other source of BigInt values is removed.
	{name: "bigint-without-literals", cat: catMemory, isolate: true,
		script: `return [typeof BigInt, typeof BigInt64Array, typeof BigUint64Array, typeof new DataView(new ArrayBuffer(8)).getBigInt64, typeof new DataView(new ArrayBuffer(8)).setBigUint64]`,
		want:   ok(`["undefined","undefined","undefined","undefined","undefined"]`)},
	// Wall: apply's argument list from a huge array-like.
	{name: "apply-huge-arraylike", cat: catMemory, isolate: true,
		script: `return Math.max.apply(null, {length: 2 ** 32 - 1})`, want: rangeError},
}

func TestMemoryBombs(t *testing.T) { runCases(t, memoryCases) }

// smallHeap gives the heap watchdog a small budget and the run a long
// deadline, so that the memory wall, not the clock, ends the case, and
// soon (the race detector slows allocation loops tenfold). The element and
// string caps shrink with the budget (1M elements, 2M characters).
func smallHeap(l *presets.Limits) {
	l.MemoryBytes = 32 << 20
	l.Timeout = 10 * time.Second
}

// longDeadline is for cases whose setup is slow under the race detector.
func longDeadline(l *presets.Limits) { l.Timeout = 10 * time.Second }

// deepCases nest source or data deep enough to overflow the Go stack of a
// recursive parser, compiler, JSON codec or exporter: an unrecoverable
// fatal error in Go, so each runs in a child process. Source nesting is
// refused before parsing; run-time nesting must end as a clear error.
var deepCases = []attackCase{
	// Wall: the depth check before parsing, brackets.
	{name: "source-brackets", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("[", 60000) + strings.Repeat("]", 60000), want: tooDeep, check: refusedPromptly},
	// Wall: the depth check before parsing, brackets, secure's size.
	{name: "source-brackets-secure", cat: catDeep, isolate: true,
		script: "return " + strings.Repeat("[", 30000) + strings.Repeat("]", 30000), want: tooDeep, check: refusedPromptly},
	// Wall: the depth check before parsing, parentheses.
	{name: "source-parens", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("(", 60000) + "1" + strings.Repeat(")", 60000), want: tooDeep, check: refusedPromptly},
	// Wall: the depth check before parsing, blocks.
	{name: "source-blocks", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: strings.Repeat("{", 60000) + strings.Repeat("}", 60000), want: tooDeep, check: refusedPromptly},
	// Wall: the depth check before parsing, calls.
	{name: "source-calls", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("f(", 40000) + strings.Repeat(")", 40000), want: tooDeep, check: refusedPromptly},
	// Wall: the depth check, nesting without any bracket: unary operators.
	{name: "source-unary", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("!", 40000) + "1", want: tooDeep, check: refusedPromptly},
	// Wall: the depth check, nesting without brackets: arrow functions.
	// Validation runs before the run's deadline exists, so it must refuse
	// this without parsing it (goja's parser is superlinear on nested
	// arrows: seconds of CPU for 16000, 48 KB, which even secure's 64 KiB
	// script limit admits).
	{name: "source-arrows", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("x=>", 16000) + "1", want: tooDeep, check: refusedPromptly},
	// Wall: the depth check, nesting without brackets: async arrows.
	{name: "source-async-arrows", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("async x=>", 7000) + "1", want: tooDeep, check: refusedPromptly},
	// Wall: the depth check, nesting without brackets: unary minus.
	{name: "source-unary-minus", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("- ", 20000) + "1", want: tooDeep, check: refusedPromptly},
	// Wall: the depth check, nesting without brackets: assignments.
	{name: "source-assignments", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "let a; " + strings.Repeat("a=", 20000) + "1", want: tooDeep, check: refusedPromptly},
	// Wall: the depth check, nesting without brackets: typeof.
	{name: "source-typeof", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("typeof ", 10000) + "1", want: tooDeep, check: refusedPromptly},
	// Wall: the depth check, nesting without brackets: new.
	{name: "source-new", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("new ", 20000) + "Object", want: tooDeep, check: refusedPromptly},
	// Wall: the depth check, nesting without brackets: conditionals.
	{name: "source-ternary", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("1?", 20000) + "1" + strings.Repeat(":1", 20000), want: tooDeep, check: refusedPromptly},
	// Wall: the depth check, nesting without brackets: await.
	{name: "source-await", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("await ", 10000) + "1", want: tooDeep, check: refusedPromptly},
	// Wall: the depth check, template literals.
	{name: "source-templates", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("`${", 20000) + "1" + strings.Repeat("}`", 20000), want: tooDeep, check: refusedPromptly},
	// Wall: the bridge. A tool result nested past Go's own JSON depth
	// limit is not JSON to the host, so the plan gets it as a string.
	{name: "tool-result-deep", cat: catDeep, isolate: true,
		script: `const r = await callTool('test.deep', {}); return [typeof r, r.length]`, want: ok(`["string", 200000]`)},
	// Wall: the bridge's depth cap on tool results the host can parse.
	{name: "tool-result-1000", cat: catDeep, isolate: true,
		script: `return await callTool('test.deep', {depth: 1000})`, want: toolErr("test.deep", "LIMIT")},
	// Wall: the bridge, a million levels.
	{name: "tool-result-deeper", cat: catDeep, isolate: true,
		script: `const r = await callTool('test.deep', {depth: 1000000}); return typeof r`, want: ok(`"string"`)},
	// Wall: the depth guard on JSON.parse of a deep tool result.
	{name: "json-parse-deep-tool-text", cat: catDeep, isolate: true,
		script: `return JSON.parse(await callTool('test.deep', {})).length`, want: want{status: "runtime_error", name: "SyntaxError"}},
	// Wall: the depth guard on the request's context: too deep to hand to
	// the plan, so the plan gets an empty one and a warning.
	{name: "context-deep", cat: catDeep, isolate: true, context: nestedContext(600),
		script: `return Object.keys(codecallContext).length`, want: ok(`0`),
		check: func(t *testing.T, h *host, r *response) {
			if !hasWarning(r, vm.WarningContextDropped) {
				t.Errorf("no %s warning: %+v", vm.WarningContextDropped, r.Warnings)
			}
		}},
	// Wall: the depth guard on JSON.parse of text built at run time.
	{name: "json-parse-deep", cat: catDeep, isolate: true,
		script: `return JSON.parse('['.repeat(1e5) + ']'.repeat(1e5)).length`, want: want{status: "runtime_error", name: "SyntaxError"}},
	// Wall: the depth guard on a reviver's walk over a value it deepens.
	{name: "json-reviver-deepens", cat: catDeep, isolate: true,
		script: `return JSON.parse('{"a":1,"b":{}}', function (k, v) { if (k === 'a') { let x = {}; const top = x; Array.from({length: 1e4}, () => { x.a = {}; x = x.a }); this.b = top } return v })`, want: rangeError},
	// Wall: the depth guard on JSON.stringify.
	{name: "json-stringify-deep", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: `const a = Array.from({length: 2e4}).reduce(x => [x], []); return JSON.stringify(a).length`, want: rangeError},
	// Wall: the depth guard on result export.
	{name: "result-deep", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: `return Array.from({length: 2e4}).reduce(x => [x], [])`, want: rangeError},
	// Wall: the depth guard on tool input conversion.
	{name: "tool-input-deep", cat: catDeep, isolate: true, bypass: true, preset: presets.Balanced,
		script: `const a = Array.from({length: 2e4}).reduce(x => [x], []); return await callTool('test.count', {a})`, want: rangeError},
	// Wall: the depth guard on [].toString's recursion.
	{name: "array-toString-deep", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: `const a = Array.from({length: 2e4}).reduce(x => [x], [1]); return String(a).length`, want: rangeError},
	// Wall: the depth guard on console formatting.
	{name: "console-log-deep", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: `const a = Array.from({length: 2e4}).reduce(x => [x], [1]); console.log(a); return 'done'`, want: ok(`"done"`)},
	// Wall: validator. Proxy chains (each get recurses in Go) cannot be
	// built: Proxy is banned.
	{name: "proxy-chain-deep", cat: catDeep, isolate: true,
		script: `const p = Array.from({length: 1e4}).reduce(q => new Proxy(q, {}), {}); return p.x`, want: bannedIdentifier},
	// Wall: the depth guard on generator delegation chains.
	{name: "yield-star-chain-deep", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: `function* leaf() { yield 1 } const g = Array.from({length: 2e4}).reduce(inner => (function* () { yield* inner })(), leaf()); return [...g]`, want: rangeError},
	// Wall: the depth guard on bound-function chains.
	{name: "bound-chain-deep", cat: catDeep, isolate: true,
		script: `const f = Array.from({length: 1e4}).reduce(g => g.bind(null), () => 1); return f()`, want: rangeError},
	// Wall: [].flat's depth cap.
	{name: "flat-infinity", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: `const a = Array.from({length: 2e4}).reduce(x => [x], [1]); return a.flat(Infinity).length`, want: ok(`1`)},
	// Wall: prototype chains are walked without running out of Go stack.
	{name: "prototype-chain-deep", cat: catDeep, isolate: true, preset: presets.Balanced, limits: longDeadline,
		script: `const o = Array.from({length: 1e5}).reduce(p => Object.create(p), {}); return o.x === undefined`, want: ok(`true`)},
}

func TestDeepNesting(t *testing.T) { runCases(t, deepCases) }

// nestedContext is a context object nested depth levels deep.
func nestedContext(depth int) map[string]any {
	m := map[string]any{}
	for range depth {
		m = map[string]any{"a": m}
	}
	return m
}

// refusedPromptly checks that a refusal came within two seconds (twenty
// under the race detector; the validator's linear work on these scripts
// takes a small fraction of that): validation runs before the run's
// deadline exists, so a script that makes it slow costs the server CPU
// time no limit bounds.
func refusedPromptly(t *testing.T, h *host, r *response) {
	t.Helper()
	limit := 2 * time.Second
	if raceEnabled {
		limit *= 10
	}
	if got := time.Duration(r.Metrics.DurationMs * float64(time.Millisecond)); got > limit {
		t.Errorf("the refusal took %v, more than %v: validation is slow on this input", got, limit)
	}
}
