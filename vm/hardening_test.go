package vm

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
)

// want is what a hardening case must end with.
type want struct {
	status   Status
	kind     string // illegal_access kind
	limit    string // limit_exceeded limit
	name     string // runtime_error name
	result   string // JSON result, for ok
	contains string // substring of the error message
	// oneOf accepts any of these statuses instead of status (for races
	// between two limits that both stop the run correctly).
	oneOf []Status
}

type hardeningCase struct {
	name   string
	script string
	want   want
	preset presets.Name
	change func(*presets.Limits)
	host   *mcptest.Host
}

func shortTimeout(d time.Duration) func(*presets.Limits) {
	return func(l *presets.Limits) { l.Timeout = d }
}

func (c hardeningCase) run(t *testing.T) *Result {
	t.Helper()
	preset := c.preset
	if preset == "" {
		preset = presets.Balanced
	}
	l := limits(t, preset)
	if c.change != nil {
		c.change(&l)
	}
	if !c.want.acceptsTimeout() {
		// A case that must end by another cause (its result, a cap) runs
		// under a deadline a loaded machine does not reach first, so its
		// status names that cause, not the machine's load; a deadline
		// its change set (smallBudget's) is lifted too.
		l.Timeout = mustFinishTimeout
	}
	h := c.host
	if h == nil {
		h = &mcptest.Host{}
	}
	return Run(context.Background(), compile(t, c.script), h, Options{RunID: "h", Limits: l})
}

// mustFinishTimeout is the deadline of the cases that must not time out.
const mustFinishTimeout = 60 * time.Second

// acceptsTimeout reports whether a timeout is one of the wanted statuses.
func (w want) acceptsTimeout() bool {
	return w.status == StatusTimeout || slices.Contains(w.oneOf, StatusTimeout)
}

func checkWant(t *testing.T, res *Result, w want) {
	t.Helper()
	ok := res.Status == w.status
	if len(w.oneOf) > 0 {
		ok = false
		for _, s := range w.oneOf {
			ok = ok || res.Status == s
		}
	}
	if !ok {
		t.Fatalf("status %s, want %s %v: %s", res.Status, w.status, w.oneOf, describe(res))
	}
	if w.kind != "" && (res.Error == nil || res.Error.Kind != w.kind) {
		t.Errorf("kind: %s, want %s", describe(res), w.kind)
	}
	if w.limit != "" && (res.Error == nil || res.Error.Limit != w.limit) {
		t.Errorf("limit: %s, want %s", describe(res), w.limit)
	}
	// A run that ended by its deadline has no error name: a case that
	// accepts the deadline as a wall names the error of its other outcome.
	if w.name != "" && res.Status != StatusTimeout && (res.Error == nil || res.Error.Name != w.name) {
		t.Errorf("name: %s, want %s", describe(res), w.name)
	}
	if w.contains != "" && (res.Error == nil || !strings.Contains(res.Error.Message, w.contains)) {
		t.Errorf("message: %s, want it to contain %q", describe(res), w.contains)
	}
	if w.result != "" {
		var got, exp any
		if err := json.Unmarshal(res.Result, &got); err != nil {
			t.Fatalf("result %s: %v", res.Result, err)
		}
		if err := json.Unmarshal([]byte(w.result), &exp); err != nil {
			t.Fatalf("want %s: %v", w.result, err)
		}
		g, _ := json.Marshal(got)
		e, _ := json.Marshal(exp)
		if string(g) != string(e) {
			t.Errorf("result %s, want %s", g, e)
		}
	}
	noLeaks(t, res)
}

var (
	codeGen  = want{status: StatusIllegalAccess, kind: KindCodeGeneration}
	regexBad = want{status: StatusIllegalAccess, kind: KindRegex}
	tooBig   = want{status: StatusRuntimeError, name: "RangeError"}
	// tooBigOrDeadline is a guard that counts its output while it makes
	// it: refused past the cap, or stopped by the deadline first when a
	// slow build (the race detector, a loaded machine) gives it less time.
	tooBigOrDeadline = want{oneOf: []Status{StatusRuntimeError, StatusTimeout}, name: "RangeError"}
	typeErr          = want{status: StatusRuntimeError, name: "TypeError"}
	okWith           = func(result string) want { return want{status: StatusOK, result: result} }
)

// TestCodeGeneration covers every route to code from strings.
func TestCodeGeneration(t *testing.T) {
	failing := &mcptest.Host{Call: func(context.Context, string, map[string]any) (json.RawMessage, error) {
		return nil, policyErr(toolerr.AccessDenied, "no")
	}}
	cases := []hardeningCase{
		{name: "eval", script: `return eval('1')`, want: codeGen},
		{name: "indirect eval", script: `const e = eval; return e('1')`, want: codeGen},
		{name: "globalThis.eval", script: `return globalThis.eval('1')`, want: codeGen},
		{name: "Function", script: `return Function('return 1')()`, want: codeGen},
		{name: "new Function", script: `return new Function('return 1')`, want: codeGen},
		{name: "function constructor", script: `return (function(){}).constructor('return 1')()`, want: codeGen},
		{name: "computed constructor", script: `const x = {}; const c = 'constr' + 'uctor'; return x[c][c]('return 1')()`, want: codeGen},
		{name: "arrow constructor", script: `return (() => 1).constructor('return 1')`, want: codeGen},
		{name: "async function constructor", script: `return (async function(){}).constructor('return 1')`, want: codeGen},
		{name: "async arrow constructor", script: `return (async () => 1).constructor('return 1')`, want: codeGen},
		{name: "AsyncFunction via getPrototypeOf", script: `return Object.getPrototypeOf(async function(){}).constructor('return 1')`, want: codeGen},
		{name: "generator constructor", script: `return (function*(){}).constructor('yield 1')`, want: codeGen},
		{name: "GeneratorFunction via getPrototypeOf", script: `return Object.getPrototypeOf(function*(){}).constructor('yield 1')`, want: codeGen},
		{name: "generator method", script: `return ({*g(){}}).g.constructor('yield 1')`, want: codeGen},
		{name: "async method", script: `return ({async m(){}}).m.constructor('return 1')`, want: codeGen},
		{name: "Reflect.getPrototypeOf", script: `return Reflect.getPrototypeOf(async () => {}).constructor('x')`, want: codeGen},
		{name: "class constructor", script: `class A {}; return A.constructor('return 1')`, want: codeGen},
		{name: "bound function", script: `return (function(){}).bind(null).constructor('return 1')`, want: codeGen},
		{name: "Reflect.construct", script: `return Reflect.construct(Object.getPrototypeOf(function(){}).constructor, ['return 1'])`, want: codeGen},
		{name: "descriptor value", script: `return Object.getOwnPropertyDescriptor(Function.prototype, 'constructor').value('return 1')`, want: codeGen},
		{name: "descriptors of async prototype", script: `return Object.getOwnPropertyDescriptors(Object.getPrototypeOf(async function(){})).constructor.value('x')`, want: codeGen},
		{name: "promise constructor chain", script: `return callTool('t', {}).constructor.constructor('return 1')`, want: codeGen},
		{name: "host error constructor chain", script: `const e = await callTool('t', {}).catch(e => e); return e.constructor.constructor('return 1')()`, want: codeGen, host: failing},
		{name: "context constructor chain", script: `return codecallContext.constructor.constructor('return 1')()`, want: codeGen},
		{name: "injected function constructor", script: `return callTool.constructor('return 1')`, want: codeGen},
		{name: "tool result constructor chain", script: `const r = await callTool('t', {}); return r.constructor.constructor('return 1')()`, want: codeGen},
		{name: "caught and swallowed", script: `try { (function(){}).constructor('return 1') } catch (e) { return 'caught' }`, want: codeGen},
		{name: "caught in finally", script: `try { eval('1') } finally { return 'finally' }`, want: codeGen},
		{name: "in a promise job", script: `await Promise.resolve().then(() => eval('1')).catch(() => 0); return 1`, want: codeGen},
		{name: "locked on Function.prototype", script: `Object.defineProperty(Function.prototype, 'constructor', {value: 1}); return 1`, want: typeErr},
		{name: "not writable", script: `Function.prototype.constructor = Object; return 1`, want: typeErr},
		{name: "global Function locked", script: `globalThis.Function = Object; return 1`, want: typeErr},
		{name: "instanceof still works", script: `return [typeof Function, (x => x) instanceof Function, typeof eval]`, want: okWith(`["function", true, "function"]`)},
		{name: "no GoError", script: `return [typeof GoError, typeof BigInt, typeof BigInt64Array, typeof BigUint64Array, typeof JSON.rawJSON]`, want: okWith(`["undefined","undefined","undefined","undefined","undefined"]`)},
		{name: "no DataView BigInt", script: `return typeof new DataView(new ArrayBuffer(8)).getBigInt64`, want: okWith(`"undefined"`)},
		{name: "no require", script: `return require('fs')`, want: want{status: StatusRuntimeError, name: "ReferenceError"}},
		{name: "no process", script: `return process.env`, want: want{status: StatusRuntimeError, name: "ReferenceError"}},
		{name: "no intervals", script: `return [typeof setInterval, typeof clearInterval, typeof setImmediate, typeof clearImmediate, typeof queueMicrotask]`, want: okWith(`["undefined","undefined","undefined","undefined","undefined"]`)},
		{name: "setTimeout with a string", script: `setTimeout('return 1', 0); return 1`, want: codeGen},
		{name: "setTimeout with a String object", script: `try { setTimeout(new String('return 1')) } catch (e) {} return 1`, want: codeGen},
		{name: "getter on Object.prototype sees the plan's global", script: `Object.defineProperty(Object.prototype, 'leak', {get() { return this }, configurable: true}); const g = globalThis.leak; return [g === globalThis, g.Function === Function]`, want: okWith(`[true,true]`)},
		{name: "getter on Object.prototype via the global's prototype", script: `Object.defineProperty(Object.prototype, 'leak', {get() { return this }, configurable: true}); const g = Object.getPrototypeOf(globalThis).leak; return g.Function('return 1')`, want: codeGen},
		{name: "no raw constructor through the global's prototype", script: `const p = Object.getPrototypeOf(globalThis); return [p.Function === Function, p.eval === eval, typeof p.BigInt, new p.Uint8Array(2**33)]`, want: tooBig},
		{name: "unknown globals are undefined", script: `return [typeof window, typeof self, typeof toString === 'function']`, want: okWith(`["undefined","undefined",true]`)},
		{name: "source map comment ignored", script: "return 1\n//# sourceMappingURL=/etc/passwd", want: okWith(`1`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkWant(t, c.run(t), c.want) })
	}
}

// TestInjectedGlobals checks that the bridge cannot be replaced, extended
// or used to reach Go.
func TestInjectedGlobals(t *testing.T) {
	cases := []hardeningCase{
		{name: "assign callTool", script: `callTool = () => 1; return 1`, want: typeErr},
		{name: "delete callTool", script: `delete globalThis.callTool; return 1`, want: typeErr},
		{name: "redefine callTool", script: `Object.defineProperty(globalThis, 'callTool', {value: 1}); return 1`, want: typeErr},
		{name: "extend callTool", script: `callTool.x = 1; return 1`, want: typeErr},
		{name: "frozen functions", script: `return [callTool, getTool, mcpLog, mcpNotify].map(Object.isFrozen)`, want: okWith(`[true,true,true,true]`)},
		{name: "console frozen", script: `console.log = () => 1; return 1`, want: typeErr},
		{name: "console extend", script: `console.x = 1; return 1`, want: typeErr},
		{name: "context frozen", script: `codecallContext.user = 'x'; return 1`, want: typeErr},
		{name: "context deep frozen", script: `codecallContext.nested.list.push(1); return 1`, want: typeErr},
		{name: "context reassign", script: `codecallContext = {}; return 1`, want: typeErr},
		{name: "context value", script: `return codecallContext.nested.list`, want: okWith(`[1,2]`)},
		{name: "names are plain", script: `return [callTool, getTool, mcpLog, mcpNotify, console.log].map(f => f.name)`, want: okWith(`["callTool","getTool","mcpLog","mcpNotify","log"]`)},
		{name: "source is native", script: `return String(callTool)`, want: okWith(`"function callTool() { [native code] }"`)},
		{name: "wrapped built-ins keep their names", script: `return [[].join.name, ''.repeat.name, JSON.stringify.name, Array.name, Uint8Array.name, [].values === [][Symbol.iterator]]`, want: okWith(`["join","repeat","stringify","Array","Uint8Array",true]`)},
		{name: "globals look standard", script: `return Object.getOwnPropertyNames(globalThis).filter(n => /[^A-Za-z0-9_$]/.test(n))`, want: okWith(`[]`)},
		{name: "no console on locked_down", preset: presets.LockedDown, script: `return typeof console`, want: okWith(`"undefined"`)},
		{name: "identity of constructors", script: `return [[].constructor === Array, new Uint8Array(1).constructor === Uint8Array, Object.getPrototypeOf(Uint8Array) === Object.getPrototypeOf(Int8Array), /a/.constructor === RegExp, new ArrayBuffer(1).constructor === ArrayBuffer]`, want: okWith(`[true,true,true,true,true]`)},
		{name: "subclass Array", script: `class A extends Array {}; const a = new A(); a.push(1, 2); return [a instanceof A, a.length, Array.isArray(a), A.from([1]) instanceof A]`, want: okWith(`[true,2,true,true]`)},
		{name: "subclass typed array", script: `class U extends Uint8Array {}; const u = new U(4); return [u instanceof U, u.length]`, want: okWith(`[true,4]`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := limits(t, presets.Balanced)
			if c.preset != "" {
				l = limits(t, c.preset)
			}
			res := Run(context.Background(), compile(t, c.script), &mcptest.Host{}, Options{RunID: "g", Limits: l,
				Context: json.RawMessage(`{"user":"ada","nested":{"list":[1,2]}}`)})
			checkWant(t, res, c.want)
		})
	}
}

// TestAllocationGuards covers the built-ins that allocate or loop natively
// in proportion to an argument or an array-like's length.
func TestAllocationGuards(t *testing.T) {
	cases := []hardeningCase{
		{name: "repeat", script: `return 'x'.repeat(2**30).length`, want: tooBig},
		{name: "repeat valueOf once", script: `let n = 0; const c = {valueOf(){ return n++ ? 2**30 : 3 }}; return 'ab'.repeat(c)`, want: okWith(`"ababab"`)},
		{name: "repeat fine", script: `return 'ab'.repeat(3)`, want: okWith(`"ababab"`)},
		{name: "padStart", script: `return 'x'.padStart(2**30).length`, want: tooBig},
		{name: "padEnd", script: `return 'x'.padEnd(2**30, 'ab').length`, want: tooBig},
		{name: "padEnd empty fill", script: `return 'x'.padEnd(2**30, '').length`, want: okWith(`1`)},
		{name: "padStart fine", script: `return '7'.padStart(3, '0')`, want: okWith(`"007"`)},
		{name: "concat", script: `const s = 'x'.repeat(2**22); return s.concat(s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s).length`, want: tooBig},
		{name: "Array(n)", script: `return new Array(2**32 - 1).length`, want: tooBig},
		{name: "Array(n) small", script: `return new Array(3).length`, want: okWith(`3`)},
		{name: "fill on huge length", script: `const a = []; a.length = 2**32 - 1; a.fill(0); return 1`, want: tooBig},
		{name: "join on huge length", script: `const a = []; a.length = 2**32 - 1; return a.join('x').length`, want: tooBig},
		{name: "join of big strings", script: `return new Array(1000).fill('x'.repeat(1e6)).join('').length`, want: tooBig},
		{name: "join fine", script: `return [1, null, undefined, 'a', [2, 3]].join('-')`, want: okWith(`"1---a-2,3"`)},
		{name: "join cycle", script: `const a = [1]; a.push(a); return a.join()`, want: okWith(`"1,"`)},
		{name: "Array.from length", script: `return Array.from({length: 2**32}).length`, want: tooBig},
		{name: "Array.from fine", script: `return [Array.from({length: 3}, (_, i) => i), Array.from(new Set([1, 2])), Array.from('ab'), Array.from(new Map([[1, 2]]))]`, want: okWith(`[[0,1,2],[1,2],["a","b"],[[1,2]]]`)},
		{name: "Array.from iterator flips", script: `let n = 0; const o = {length: 2**53 - 1, get [Symbol.iterator]() { return n++ ? undefined : function*(){ yield 1 } }}; return Array.from(o)`, want: typeErr},
		{name: "ArrayBuffer", script: `return new ArrayBuffer(2**40).byteLength`, want: tooBig},
		{name: "Uint8Array length", script: `return new Uint8Array(2**33).length`, want: tooBig},
		{name: "Float64Array length", script: `return new Float64Array(2**28).length`, want: tooBig},
		{name: "typed array from array-like", script: `return new Float64Array({length: 2**31}).length`, want: tooBig},
		{name: "typed array from", script: `return Uint8Array.from({length: 2**33}).length`, want: tooBig},
		{name: "typed array fine", script: `const u = new Uint8Array([1, 2, 3]); return [u.length, Array.from(u), new Float32Array(u.buffer, 0, 0).length, Uint8Array.from([4]).join()]`, want: okWith(`[3,[1,2,3],0,"4"]`)},
		{name: "typed array join separator", script: `return new Uint8Array(1e6).join('x'.repeat(1e5)).length`, want: tooBig},
		{name: "indexOf on array-like", script: `return Array.prototype.indexOf.call({length: 2**53 - 1}, 1)`, want: tooBig},
		{name: "includes on array-like", script: `return Array.prototype.includes.call({length: 2**53 - 1}, 1)`, want: tooBig},
		{name: "lastIndexOf on array-like", script: `return Array.prototype.lastIndexOf.call({length: 2**53 - 1}, 1)`, want: tooBig},
		{name: "fill on array-like", script: `return Array.prototype.fill.call({length: 2**53 - 1}, 1)`, want: tooBig},
		{name: "join on array-like", script: `return Array.prototype.join.call({length: 2**53 - 1})`, want: tooBig},
		{name: "forEach on array-like", script: `Array.prototype.forEach.call({length: 2**53 - 1}, x => x); return 1`, want: tooBig},
		{name: "every on sparse array", script: `const a = []; a.length = 2**32 - 1; return a.every(x => false)`, want: tooBig},
		{name: "sort on array-like", script: `return Array.prototype.sort.call({length: 2**53 - 1})`, want: tooBig},
		{name: "length getter read once", script: `let n = 0; const o = {0: 5, get length() { return n++ ? 2**53 - 1 : 1 }}; return [Array.prototype.indexOf.call(o, 5), n]`, want: okWith(`[0,1]`)},
		{name: "proxy length read once", script: `let n = 0; const p = new Proxy({}, {get(t, k) { return k === 'length' ? (n++ ? 2**53 - 1 : 1) : undefined }}); return Array.prototype.includes.call(p, 1)`, want: okWith(`false`)},
		{name: "writer on computed length", script: `const o = {get length() { return 1 }}; Array.prototype.push.call(o, 1); return 1`, want: typeErr},
		{name: "writer on plain array-like", script: `const o = {length: 0}; Array.prototype.push.call(o, 'a'); return o`, want: okWith(`{"0":"a","length":1}`)},
		{name: "slice of arguments", script: `function f() { return Array.prototype.slice.call(arguments) } return f(1, 2)`, want: okWith(`[1,2]`)},
		{name: "spread of huge array", change: shortTimeout(500 * time.Millisecond), script: `const a = []; a.length = 2**32 - 1; return [...a].length`,
			want: want{oneOf: []Status{StatusTimeout, StatusLimitExceeded}}},
		{name: "native callback on array-like", script: `return Array.prototype.find.call({length: 2**53 - 1}, Boolean)`, want: tooBig},
		{name: "native callback on sparse array", script: `const a = []; a.length = 2**32 - 1; a.forEach(Math.abs); return 1`, want: tooBig},
		{name: "iterator over grown array", change: shortTimeout(time.Second), script: `const a = []; const it = a.values(); a.length = 2**32 - 1; return new Set(it).size`,
			want: want{oneOf: []Status{StatusTimeout, StatusLimitExceeded}}},
		{name: "spread iterator over grown array", change: shortTimeout(time.Second), script: `const a = []; const it = a.values(); a.length = 2**32 - 1; return [...it].length`,
			want: want{oneOf: []Status{StatusTimeout, StatusLimitExceeded}}},
		{name: "concat spreadable", script: `return [].concat({length: 2**53 - 1, [Symbol.isConcatSpreadable]: true}).length`, want: tooBig},
		{name: "concat spreadable getter", script: `let n = 0; const o = {length: 2**53 - 1, get [Symbol.isConcatSpreadable]() { return n++ > 0 }}; return [].concat(o).length`, want: okWith(`1`)},
		{name: "concat fine", script: `return [1].concat([2, [3]], 4, 'x')`, want: okWith(`[1,2,[3],4,"x"]`)},
		{name: "concat holes", script: `return [1, , 3].concat([, 5]).length`, want: okWith(`5`)},
		{name: "apply array-like", script: `return Math.max.apply(null, {length: 2**32})`, want: tooBig},
		{name: "Reflect.apply array-like", script: `return Reflect.apply(Math.max, null, {length: 2**32})`, want: tooBig},
		{name: "Reflect.construct array-like", script: `return Reflect.construct(Array, {length: 2**32})`, want: tooBig},
		{name: "apply fine", script: `return Math.max.apply(null, [1, 5, 2])`, want: okWith(`5`)},
		{name: "split into too many pieces", script: `return 'a'.repeat(2**24).split('').length`, want: tooBig},
		{name: "split fine", script: `return ['a,b,,c'.split(','), 'abc'.split(''), 'a-b-c'.split('-', 2), 'abc'.split(), 'x'.split(undefined, 0), 'a1b'.split({[Symbol.split]: (s, l) => [s, l]}, 3)]`,
			want: okWith(`[["a","b","","c"],["a","b","c"],["a","b"],["abc"],[],["a1b",3]]`)},
		{name: "String.raw", script: `return String.raw({raw: {length: 2**40}})`, want: tooBig},
		{name: "String.raw fine", script: "return String.raw`a${1}b`", want: okWith(`"a1b"`)},
		{name: "replace quadratic", script: `return 'a'.repeat(1e5).replace(/a/g, "$'").length`, want: tooBig},
		{name: "replaceAll empty pattern", script: `return 'a'.repeat(1e5).replaceAll('', 'x'.repeat(1e5)).length`, want: tooBig},
		{name: "replace function growth", script: `const big = 'x'.repeat(1e6); return 'a'.repeat(1e5).replace(/a/g, () => big).length`, want: tooBig},
		{name: "replace patterns", script: "return ['abc'.replace('b', '[$&|$`|$\\'|$$]'), 'a-b'.replace(/(\\w)-(\\w)/, '$2-$1'), '2024-01'.replace(/(?<y>\\d+)-(?<m>\\d+)/, '$<m>/$<y>'), 'aaa'.replaceAll('a', 'b'), 'x'.replace('x', '$1')]",
			want: okWith(`["a[b|a|c|$]c","b-a","01/2024","bbb","$1"]`)},
		{name: "JSON.parse deep", script: `return JSON.parse('['.repeat(1e6) + ']'.repeat(1e6))`, want: want{status: StatusRuntimeError, name: "SyntaxError"}},
		{name: "JSON.parse reviver grafts depth", script: `let deep = []; for (let i = 0; i < 2000; i++) deep = [deep]; return JSON.parse('{"a":1,"b":2}', function(k, v) { if (k === 'a') this.b = deep; return v })`, want: tooBig},
		{name: "JSON.parse fine", script: `return JSON.parse('{"a":[1,{"b":null}]}', (k, v) => typeof v === 'number' ? v * 2 : v)`, want: okWith(`{"a":[2,{"b":null}]}`)},
		{name: "JSON.stringify deep", script: `let a = []; for (let i = 0; i < 1e5; i++) a = [a]; return JSON.stringify(a).length`, want: tooBig},
		{name: "JSON.stringify huge sparse", script: `const a = []; a.length = 2**32 - 1; return JSON.stringify(a).length`, want: tooBig},
		{name: "JSON.stringify cycle", script: `const o = {}; o.o = o; return JSON.stringify(o)`, want: typeErr},
		{name: "JSON.stringify fine", script: `return JSON.stringify({a: [1, 'x', null, undefined, () => 1], d: new Date(0), n: NaN, s: new String('s')}, null, '\t')`,
			want: okWith(`"{\n\t\"a\": [\n\t\t1,\n\t\t\"x\",\n\t\tnull,\n\t\tnull,\n\t\tnull\n\t],\n\t\"d\": \"1970-01-01T00:00:00.000Z\",\n\t\"n\": null,\n\t\"s\": \"s\"\n}"`)},
		{name: "JSON.stringify replacer", script: `return [JSON.stringify({a: 1, b: 2, c: {a: 3}}, ['a', 'c']), JSON.stringify({a: 1}, (k, v) => typeof v === 'number' ? v + 1 : v), JSON.stringify('\u2028"\u0001')]`,
			want: okWith(`["{\"a\":1,\"c\":{\"a\":3}}","{\"a\":2}","\"\u2028\\\"\\u0001\""]`)},
		{name: "String() of deep array", script: `let a = []; for (let i = 0; i < 1e5; i++) a = [a]; return String(a).length`, want: tooBig},
		{name: "toLocaleString of deep array", script: `let a = []; for (let i = 0; i < 1e5; i++) a = [a]; return a.toLocaleString().length`, want: tooBig},
		{name: "flat clamps depth", script: `let a = [1]; for (let i = 0; i < 1e5; i++) a = [a]; return a.flat(Infinity).length`, want: okWith(`1`)},
		{name: "flat inner huge", script: `const b = []; b.length = 2**32 - 1; return [b].flat().length`, want: tooBig},
		{name: "flat fine", script: `return [[1, [2, [3]]], 4].flat(2).concat([[5]].flatMap(x => x))`, want: okWith(`[1,2,[3],4,5]`)},
		{name: "bind chain", script: `let f = function() { return 1 }; for (let i = 0; i < 1e4; i++) f = f.bind(null); return f()`, want: tooBig},
		{name: "proxy chain", script: `let p = {}; for (let i = 0; i < 1e4; i++) p = new Proxy(p, {}); return p.x`, want: tooBig},
		{name: "proxy handler chain", script: `let h = {}; for (let i = 0; i < 1e4; i++) h = new Proxy({}, h); return 1`, want: tooBig},
		{name: "Proxy.revocable chain", script: `let p = {}; for (let i = 0; i < 1e4; i++) p = Proxy.revocable(p, {}).proxy; return 1`, want: tooBig},
		{name: "yield* chain", script: `function* g(inner) { yield* inner } let it = (function*(){ yield 1 })(); for (let i = 0; i < 1e5; i++) it = g(it); return it.next().value`, want: tooBig},
		{name: "yield* chain return", script: `function* g(inner) { yield* inner } let it = (function*(){ yield 1; yield 2 })(); for (let i = 0; i < 100; i++) it = g(it); it.next(); return it.return(7)`, want: okWith(`{"value":7,"done":true}`)},
		{name: "yield* fine", script: `function* g(inner) { yield 0; yield* inner } let it = [1, 2].values(); for (let i = 0; i < 50; i++) it = g(it); return [...it].length`, want: okWith(`52`)},
		{name: "class chain", script: `let C = class {}; for (let i = 0; i < 1e4; i++) C = class extends C {}; return new C() instanceof C`, want: okWith(`true`)},
		{name: "proxy fine", script: `const p = new Proxy({a: 1}, {get: (t, k) => k in t ? t[k] : 'dflt'}); return [p.a, p.b, typeof Proxy.prototype]`, want: okWith(`[1,"dflt","undefined"]`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkWant(t, c.run(t), c.want) })
	}
}
