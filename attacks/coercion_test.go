package attacks

import (
	"strings"
	"testing"

	"github.com/codecall-go/codecall/presets"
)

// coercionCases hand the host objects whose conversion runs plan code:
// toString, valueOf, Symbol.toPrimitive, getters and toJSON. Each is read
// at most once, so what the gate checked is what the tool gets, and plan
// code running inside a conversion is still bound by the run's limits.
var coercionCases = []attackCase{
	// Wall: the bridge. A tool name must be a string; an object whose
	// toString says test.count to the gate and test.secret to dispatch is
	// refused before either.
	{name: "name-toString-switch", cat: catCoercion, bypass: true,
		script: `let n = 0; const name = {toString() { return n++ === 0 ? 'test.count' : 'test.secret' }}; return await callTool(name, {})`,
		want:   typeError},
	// Wall: the bridge. The same with Symbol.toPrimitive.
	{name: "name-toPrimitive-switch", cat: catCoercion, bypass: true,
		script: `let n = 0; const name = {[Symbol.toPrimitive]() { return n++ === 0 ? 'test.count' : 'test.secret' }}; return await callTool(name, {})`,
		want:   typeError},
	// Wall: the bridge. The same with valueOf.
	{name: "name-valueOf-switch", cat: catCoercion, bypass: true,
		script: `let n = 0; const name = {valueOf() { return n++ === 0 ? 'test.count' : 'test.secret' }, toString: undefined}; return await callTool(name, {})`,
		want:   typeError},
	// Wall: the bridge. A String object is not a string either.
	{name: "name-String-object", cat: catCoercion, bypass: true,
		script: `return await callTool(new String('test.count'), {})`,
		want:   typeError},
	// Wall: the bridge. An array that stringifies to a tool name.
	{name: "name-array", cat: catCoercion, bypass: true,
		script: `return await callTool(['test.count'], {})`,
		want:   typeError},
	// Wall: the bridge. A number.
	{name: "name-number", cat: catCoercion, bypass: true,
		script: `return await callTool(42, {})`,
		want:   typeError},
	// Wall: the bridge. A getter is read once: the value the tool gets is
	// the one the plan's single read produced.
	{name: "input-getter-read-once", cat: catCoercion,
		script: `let reads = 0; const o = {}; Object.defineProperty(o, 'x', {enumerable: true, get() { return ++reads }});
const r = await callTool('test.echo', o); return {reads, r}`,
		want: ok(`{"reads":1,"r":{"x":1}}`), check: toolSaw(`{"x":1}`)},
	// Wall: the bridge. The same for a nested getter.
	{name: "nested-getter-read-once", cat: catCoercion,
		script: `let reads = 0; const inner = {}; Object.defineProperty(inner, 'y', {enumerable: true, get() { return ++reads }});
const r = await callTool('test.echo', {a: {b: inner}}); return {reads, r}`,
		want: ok(`{"reads":1,"r":{"a":{"b":{"y":1}}}}`), check: toolSaw(`{"a":{"b":{"y":1}}}`)},
	// Wall: the bridge. An array index getter is read once.
	{name: "array-index-getter-read-once", cat: catCoercion,
		script: `let reads = 0; const a = [0, 0]; Object.defineProperty(a, 0, {enumerable: true, get() { return ++reads }});
const r = await callTool('test.echo', {a}); return {reads, r}`,
		want: ok(`{"reads":1,"r":{"a":[1,0]}}`), check: toolSaw(`{"a":[1,0]}`)},
	// Wall: the bridge. toJSON runs once; a second call would send the
	// marker.
	{name: "toJSON-switch", cat: catCoercion,
		script: `let n = 0; const o = {toJSON() { return n++ === 0 ? {a: 'safe'} : {a: 'PW' + 'NED'} }};
const r = await callTool('test.echo', o); return {n, r}`,
		want: ok(`{"n":1,"r":{"a":"safe"}}`), check: toolSaw(`{"a":"safe"}`)},
	// Wall: the bridge. toString, valueOf and Symbol.toPrimitive on an
	// input value are not called: the value is an object with no data.
	{name: "input-toPrimitive-ignored", cat: catCoercion,
		script: `const x = {toString() { return 'PW' + 'NED' }, valueOf() { return 'PW' + 'NED' }, [Symbol.toPrimitive]() { return 'PW' + 'NED' }};
return await callTool('test.echo', {x})`,
		want: ok(`{"x":{}}`), check: toolSaw(`{"x":{}}`)},
	// Wall: the bridge. A getter that throws fails the call with the
	// plan's own error, as an uncaught script error.
	{name: "getter-throws", cat: catCoercion, bypass: true,
		script: `const o = {}; Object.defineProperty(o, 'x', {enumerable: true, get() { throw new RangeError('boom from getter') }});
return await callTool('test.count', o)`,
		want: rangeError,
		check: func(t *testing.T, h *host, r *response) {
			if !strings.Contains(r.Error.Message, "boom from getter") {
				t.Errorf("message %q does not carry the getter's error", r.Error.Message)
			}
		}},
	// Wall: the bridge. The getter's error is catchable like any other.
	{name: "getter-throws-caught", cat: catCoercion, bypass: true,
		script: `const o = {}; Object.defineProperty(o, 'x', {enumerable: true, get() { throw new RangeError('boom') }});
try { await callTool('test.count', o) } catch (e) { return e.name + ': ' + e.message }`,
		want: ok(`"RangeError: boom"`)},
	// Wall: the deadline. A getter that never returns, run by the host's
	// conversion, still ends at the timeout.
	{name: "getter-loops-forever", cat: catCoercion, preset: presets.Balanced, bypass: true,
		limits: short,
		script: `const o = {}; Object.defineProperty(o, 'x', {enumerable: true, get() { for (;;) {} }}); return await callTool('test.count', o)`,
		want:   timedOut},
	// Wall: the stack limit. A getter that recurses, run by the host's
	// conversion.
	{name: "getter-recurses-forever", cat: catCoercion, bypass: true,
		script: `const o = {}; Object.defineProperty(o, 'x', {enumerable: true, get() { return o.x }}); return await callTool('test.count', o)`,
		want:   stackExceeded},
	// Wall: the bridge. A getter that changes the object while it is being
	// converted: keys are taken once, each value read once.
	{name: "getter-mutates-input", cat: catCoercion,
		script: `const o = {a: 1}; Object.defineProperty(o, 'b', {enumerable: true, get() { delete o.a; o.c = 3; return 2 }});
return await callTool('test.echo', o)`,
		want: ok(`{"a":1,"b":2}`), check: toolSaw(`{"a":1,"b":2}`)},
	// Wall: the bridge. A getter that calls another tool while the host
	// converts the first call's input neither deadlocks nor skips the gate.
	{name: "getter-reentrant-callTool", cat: catCoercion,
		script: `let inner; const o = {}; Object.defineProperty(o, 'x', {enumerable: true, get() { inner = callTool('test.count', {}); return 1 }});
const r = await callTool('test.echo', o); return [r, await inner]`,
		want: ok(`[{"x":1},{"count":1}]`), check: countRan(1)},
	// Wall: the bridge. A Date is converted by its own toJSON.
	{name: "date-input", cat: catCoercion,
		script: `return await callTool('test.echo', {d: new Date(0)})`,
		want:   ok(`{"d":"1970-01-01T00:00:00.000Z"}`)},
}

func TestCoercion(t *testing.T) { runCases(t, coercionCases) }

// short sets the short run timeout for cases that must end by the deadline.
func short(l *presets.Limits) { l.Timeout = shortTimeout }

// proxyCases hide behaviour behind Proxy traps where the host reads inputs,
// names and results. The validator bans Proxy (and Reflect) in every
// preset, so each trick is refused before anything runs; the last cases
// try to reach the constructor without writing its name.
var proxyCases = []attackCase{
	// Wall: validator. A get trap counting the bridge's reads of an input.
	{name: "input-get-trap", cat: catProxy,
		script: `let n = 0; const p = new Proxy({a: 0}, {get(t, k) { return k === 'a' ? ++n : t[k] }});
const r = await callTool('test.echo', p); return {n, r}`,
		want: bannedIdentifier},
	// Wall: validator. A proxy as the tool name, switching on each read.
	{name: "proxy-tool-name", cat: catProxy, bypass: true,
		script: `let n = 0; const name = new Proxy({}, {get(t, k) { return () => (n++ === 0 ? 'test.count' : 'test.secret') }});
return await callTool(name, {})`,
		want: bannedIdentifier},
	// Wall: validator. An ownKeys trap smuggling a __proto__ key.
	{name: "ownKeys-proto", cat: catProxy, bypass: true,
		script: `const p = new Proxy({a: 1}, {
  ownKeys() { return ['__pro' + 'to__', 'a'] },
  getOwnPropertyDescriptor(t, k) { return {value: 1, enumerable: true, configurable: true, writable: true} },
});
return await callTool('test.count', p)`,
		want: bannedIdentifier},
	// Wall: validator. A revoked proxy as input.
	{name: "revoked-input", cat: catProxy, bypass: true,
		script: `const {proxy, revoke} = Proxy.revocable({a: 1}, {}); revoke(); return await callTool('test.count', proxy)`,
		want:   bannedIdentifier},
	// Wall: validator. An ownKeys trap that never returns while the result
	// is exported.
	{name: "result-ownKeys-loops", cat: catProxy, preset: presets.Balanced, limits: short,
		script: `return new Proxy({}, {ownKeys() { for (;;) {} }})`,
		want:   bannedIdentifier},
	// Wall: validator. A get trap that recurses while the result is
	// exported.
	{name: "result-get-trap-recurses", cat: catProxy,
		script: `const p = new Proxy({a: 1}, {get(t, k) { return p[k] }}); return p`,
		want:   bannedIdentifier},
	// Wall: validator. An array proxy lying about its length.
	{name: "input-array-length-lie", cat: catProxy, bypass: true,
		script: `const p = new Proxy([1, 2, 3], {get(t, k) { return k === 'length' ? 1e9 : t[k] }}); return await callTool('test.count', {p})`,
		want:   bannedIdentifier},
	// Wall: validator. A proxy around callTool swapping the name.
	{name: "proxy-around-callTool", cat: catProxy,
		script: `const p = new Proxy(callTool, {apply(t, self, args) { return t('test.secret', {}) }}); return await p('test.count', {})`,
		want:   bannedIdentifier},
	// Wall: validator. Proxy only mentioned, in typeof.
	{name: "typeof-Proxy", cat: catProxy,
		script: `return typeof Proxy`,
		want:   bannedIdentifier},
	// Wall: validator. Proxy spelled with an escape.
	{name: "escaped-Proxy", cat: catProxy,
		script: `return typeof Pro\u0078y`,
		want:   bannedIdentifier},
	// Wall: validator. A local named Proxy is refused too, so the name can
	// never be made to mean something else.
	{name: "shadowed-Proxy", cat: catProxy,
		script: `const Proxy = (t) => t; return Proxy(1)`,
		want:   bannedIdentifier},
	// Wall: strict mode. No global object to look Proxy up on.
	{name: "proxy-from-this", cat: catProxy,
		script: `const g = (function () { return this })(); return g === undefined ? 'no global object' : typeof g['Pro' + 'xy']`,
		want:   ok(`"no global object"`)},
	// Wall: runtime. Every built-in's constructor chain ends at the dead
	// Function constructor, never at Proxy.
	{name: "proxy-through-constructors", cat: catProxy,
		script: `const k = 'constr' + 'uctor'; const F = (() => 0)[k]; return F("return Pro" + "xy")`,
		want:   codeGeneration},
}

func TestProxy(t *testing.T) { runCases(t, proxyCases) }

// jsonCases abuse JSON.parse revivers and JSON.stringify replacers, which
// run plan code inside native built-ins.
var jsonCases = []attackCase{
	// Wall: validator. A reviver reaching Function by name.
	{name: "reviver-named-constructor", cat: catJSON,
		script: `return JSON.parse('{"a":"x"}', function (k, v) { return k === 'a' ? this.constructor.constructor("return 'PW'+'NED'")() : v })`,
		want:   bannedMember},
	// Wall: runtime. A reviver reaching Function by computed keys.
	{name: "reviver-computed-constructor", cat: catJSON,
		script: `const c = 'constr' + 'uctor'; return JSON.parse('{"a":"x"}', function (k, v) { return k === 'a' ? this[c][c]("return 'PW'+'NED'")() : v })`,
		want:   codeGeneration},
	// Wall: none needed: a replacer's side effects stay in the plan.
	{name: "replacer-side-effects", cat: catJSON,
		script: `let calls = 0; const s = JSON.stringify({a: 1, b: [1, 2]}, function (k, v) { calls++; return v }); return {s, calls}`,
		want:   ok(`{"s":"{\"a\":1,\"b\":[1,2]}","calls":5}`)},
	// Wall: the gate. Tool calls started from inside a replacer go through
	// the gate and count like any other.
	{name: "replacer-calls-tools", cat: catJSON,
		script: `const ps = []; JSON.stringify({a: 1, b: 2}, (k, v) => { ps.push(callTool('test.count', {})); return v }); return (await Promise.all(ps)).length`,
		want:   ok(`3`), check: countRan(3)},
	// Wall: JSON.stringify clamps indentation to ten spaces.
	{name: "huge-indent-number", cat: catJSON,
		script: `return JSON.stringify({a: [1]}, null, 1e9) === JSON.stringify({a: [1]}, null, 10)`,
		want:   ok(`true`)},
	// Wall: JSON.stringify uses only the first ten characters of a gap.
	{name: "huge-indent-string", cat: catJSON,
		script: `return JSON.stringify({a: [1]}, null, 'x'.repeat(1e6)) === JSON.stringify({a: [1]}, null, 'xxxxxxxxxx')`,
		want:   ok(`true`)},
	// Wall: a replacer list ignores plain objects, whatever their toString.
	{name: "replacer-list-toString", cat: catJSON,
		script: `return JSON.stringify({a: 1, b: 2}, [{toString() { return 'a' }}])`,
		want:   ok(`"{}"`)},
	// Wall: result export. A reviver that returns a value with a getter
	// that throws as the whole result.
	{name: "reviver-returns-throwing-getter", cat: catJSON,
		script: `return JSON.parse('{"a":1}', (k, v) => k === '' ? Object.defineProperty({}, 'x', {enumerable: true, get() { throw new TypeError('getter') }}) : v)`,
		want:   typeError},
	// Wall: a reviver's error is an ordinary script error.
	{name: "reviver-throws", cat: catJSON,
		script: `return JSON.parse('{"a":1}', () => { throw new RangeError('reviver') })`,
		want:   rangeError},
}

func TestJSONTricks(t *testing.T) { runCases(t, jsonCases) }
