package attacks

import (
	"strings"
	"testing"

	"github.com/codecall-go/codecall/presets"
)

// memoryCases ask native built-ins for huge allocations or huge native
// loops. goja has no memory limit, its Interrupt does not stop a native
// built-in, and a failed huge allocation is an unrecoverable Go fatal
// error, so each runs in a child process: whatever the outcome, the
// process must survive, and the heap must come back to its baseline.
var memoryCases = []attackCase{
	// Wall: size guard on String.prototype.repeat.
	{name: "repeat-2^30", cat: catMemory, isolate: true,
		script: `return 'x'.repeat(2 ** 30).length`, want: memoryLimit},
	// Wall: size guard on String.prototype.padStart.
	{name: "padStart-2^30", cat: catMemory, isolate: true,
		script: `return 'x'.padStart(2 ** 30, 'y').length`, want: memoryLimit},
	// Wall: size guard on String.prototype.padEnd.
	{name: "padEnd-2^30", cat: catMemory, isolate: true,
		script: `return 'x'.padEnd(2 ** 30, 'yz').length`, want: memoryLimit},
	// Wall: size guard on Array.prototype.fill over a huge length.
	{name: "array-2^32-1-fill", cat: catMemory, isolate: true,
		script: `return new Array(2 ** 32 - 1).fill(0).length`, want: memoryLimit},
	// Wall: size guard on Array.from with a huge array-like.
	{name: "array-from-1e9", cat: catMemory, isolate: true,
		script: `return Array.from({length: 1e9}).length`, want: memoryLimit},
	// Wall: size guard on ArrayBuffer.
	{name: "arraybuffer-2^31", cat: catMemory, isolate: true,
		script: `return new ArrayBuffer(2 ** 31).byteLength`, want: memoryLimit},
	// Wall: size guard on typed arrays.
	{name: "uint8array-1e10", cat: catMemory, isolate: true,
		script: `return new Uint8Array(1e10).length`, want: memoryLimit},
	// Wall: size guard on typed arrays, 8-byte elements.
	{name: "float64array-2^28", cat: catMemory, isolate: true,
		script: `return new Float64Array(2 ** 28).length`, want: memoryLimit},
	// Wall: the heap watchdog, a string doubling in a loop.
	{name: "string-doubling-loop", cat: catMemory, isolate: true, preset: presets.Balanced,
		script: `let s = 'x'; for (;;) s += s`, want: memoryLimit},
	// Wall: the heap watchdog, a string doubling by recursion (secure).
	{name: "string-doubling-recursion", cat: catMemory, isolate: true,
		script: `function d(s) { return d(s + s) } return d('x')`, want: memoryLimit},
	// Wall: the heap watchdog, a map growing in a loop.
	{name: "map-growth-loop", cat: catMemory, isolate: true, preset: presets.Balanced,
		script: `const m = new Map(); for (let i = 0; ; i++) m.set(i, {i, s: 'v' + i})`, want: memoryLimit},
	// Wall: size guard on join over a huge array.
	{name: "join-huge-array", cat: catMemory, isolate: true,
		script: `return new Array(2 ** 28).join('abcd').length`, want: memoryLimit},
	// Wall: size guard on concat.
	{name: "concat-spread", cat: catMemory, isolate: true,
		script: `const a = new Array(1e6).fill(0); const parts = new Array(300).fill(a); return [].concat(...parts).length`, want: memoryLimit},
	// Wall: size guard on JSON.stringify.
	{name: "json-stringify-huge", cat: catMemory, isolate: true,
		script: `return JSON.stringify(new Array(1e8)).length`, want: memoryLimit},
	// Wall: size guard on split.
	{name: "split-huge", cat: catMemory, isolate: true,
		script: `return 'x'.repeat(2 ** 26).split('').length`, want: memoryLimit},
	// Wall: the heap watchdog, one shared string in ten million slots.
	{name: "fill-shared-string", cat: catMemory, isolate: true,
		script: `return new Array(1e7).fill('x'.repeat(1000)).length`, want: memoryLimit},
	// Wall: a native loop over a huge array-like (no allocation, no
	// interrupt check inside the built-in).
	{name: "indexOf-huge-arraylike", cat: catMemory, isolate: true,
		script: `return Array.prototype.indexOf.call({length: 2 ** 53 - 1}, 1)`, want: memoryLimit},
	// Wall: the same for includes.
	{name: "includes-huge-arraylike", cat: catMemory, isolate: true,
		script: `return Array.prototype.includes.call({length: 2 ** 53 - 1}, 1)`, want: memoryLimit},
	// Wall: the same for lastIndexOf.
	{name: "lastIndexOf-huge-arraylike", cat: catMemory, isolate: true,
		script: `return Array.prototype.lastIndexOf.call({length: 2 ** 53 - 1}, 1)`, want: memoryLimit},
	// Wall: the same for fill, which also allocates a property per index.
	{name: "fill-huge-arraylike", cat: catMemory, isolate: true,
		script: `return Array.prototype.fill.call({length: 2 ** 53 - 1}, 0).length`, want: memoryLimit},
	// Wall: the same for join, which also builds a huge string.
	{name: "join-huge-arraylike", cat: catMemory, isolate: true,
		script: `return Array.prototype.join.call({length: 2 ** 32}).length`, want: memoryLimit},
	// Wall: the bridge, a sparse array input that would expand to a
	// billion nulls.
	{name: "sparse-array-input", cat: catMemory, isolate: true, bypass: true,
		script: `const a = []; a[1e9] = 1; return await callTool('test.count', {a})`, want: memoryLimit},
	// Wall: result export, a sparse array result of four billion slots.
	{name: "sparse-array-result", cat: catMemory, isolate: true,
		script: `const a = []; a[2 ** 32 - 2] = 1; return a`, want: memoryLimit},
}

func TestMemoryBombs(t *testing.T) { runCases(t, memoryCases) }

// deepCases nest source or data deep enough to overflow the Go stack of a
// recursive parser, compiler, JSON codec or exporter: an unrecoverable
// fatal error in Go, so each runs in a child process. Source nesting is
// refused before parsing; run-time nesting must end as a clear error.
var deepCases = []attackCase{
	// Wall: the depth check before parsing, brackets.
	{name: "source-brackets", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("[", 60000) + strings.Repeat("]", 60000), want: tooDeep},
	// Wall: the depth check before parsing, brackets, secure's size.
	{name: "source-brackets-secure", cat: catDeep, isolate: true,
		script: "return " + strings.Repeat("[", 30000) + strings.Repeat("]", 30000), want: tooDeep},
	// Wall: the depth check before parsing, parentheses.
	{name: "source-parens", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("(", 60000) + "1" + strings.Repeat(")", 60000), want: tooDeep},
	// Wall: the depth check before parsing, blocks.
	{name: "source-blocks", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: strings.Repeat("{", 60000) + strings.Repeat("}", 60000), want: tooDeep},
	// Wall: the depth check before parsing, calls.
	{name: "source-calls", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("f(", 40000) + strings.Repeat(")", 40000), want: tooDeep},
	// Wall: the depth check, nesting without any bracket: unary operators.
	{name: "source-unary", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("!", 120000) + "1", want: tooDeep},
	// Wall: the depth check, nesting without brackets: arrow functions.
	{name: "source-arrows", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("x=>", 40000) + "1", want: tooDeep},
	// Wall: the depth check, nesting without brackets: new.
	{name: "source-new", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("new ", 30000) + "Object", want: tooDeep},
	// Wall: the depth check, nesting without brackets: conditionals.
	{name: "source-ternary", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("1?", 30000) + "1" + strings.Repeat(":1", 30000), want: tooDeep},
	// Wall: the depth check, nesting without brackets: await.
	{name: "source-await", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("await ", 20000) + "1", want: tooDeep},
	// Wall: the depth check, template literals.
	{name: "source-templates", cat: catDeep, isolate: true, preset: presets.Balanced,
		script: "return " + strings.Repeat("`${", 20000) + "1" + strings.Repeat("}`", 20000), want: tooDeep},
	// Wall: the bridge, a deeply nested tool result.
	{name: "tool-result-deep", cat: catDeep, isolate: true,
		script: `const r = await callTool('test.deep', {}); return typeof r`, want: toolErr("test.deep", "EXECUTION")},
	// Wall: the bridge, a deeper tool result still.
	{name: "tool-result-deeper", cat: catDeep, isolate: true,
		script: `const r = await callTool('test.deep', {depth: 1000000}); return typeof r`, want: toolErr("test.deep", "EXECUTION")},
	// Wall: a depth guard on JSON.parse at run time.
	{name: "json-parse-deep", cat: catDeep, isolate: true,
		script: `return JSON.parse('['.repeat(1e7) + ']'.repeat(1e7)).length`, want: rangeError},
	// Wall: a depth guard on JSON.stringify.
	{name: "json-stringify-deep", cat: catDeep, isolate: true,
		script: `const a = Array.from({length: 1e6}).reduce(x => [x], []); return JSON.stringify(a).length`, want: rangeError},
	// Wall: a depth guard on result export.
	{name: "result-deep", cat: catDeep, isolate: true,
		script: `return Array.from({length: 1e6}).reduce(x => [x], [])`, want: rangeError},
	// Wall: a depth guard on tool input conversion.
	{name: "tool-input-deep", cat: catDeep, isolate: true, bypass: true,
		script: `const a = Array.from({length: 1e6}).reduce(x => [x], []); return await callTool('test.count', {a})`, want: rangeError},
	// Wall: a depth guard on Array.prototype.toString's recursion.
	{name: "array-toString-deep", cat: catDeep, isolate: true,
		script: `const a = Array.from({length: 1e6}).reduce(x => [x], [1]); return String(a).length`, want: rangeError},
	// Wall: a depth guard on proxy chains (each get recurses in Go).
	{name: "proxy-chain-deep", cat: catDeep, isolate: true,
		script: `const p = Array.from({length: 1e6}).reduce(q => new Proxy(q, {}), {}); return p.x`, want: rangeError},
	// Wall: a depth guard on bound-function chains.
	{name: "bound-chain-deep", cat: catDeep, isolate: true,
		script: `const f = Array.from({length: 1e6}).reduce(g => g.bind(null), () => 1); return f()`, want: rangeError},
	// Wall: prototype chains are walked without Go recursion.
	{name: "prototype-chain-deep", cat: catDeep, isolate: true,
		script: `const o = Array.from({length: 1e6}).reduce(p => Object.create(p), {}); return o.x === undefined`, want: ok(`true`)},
}

func TestDeepNesting(t *testing.T) { runCases(t, deepCases) }
