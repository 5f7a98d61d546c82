package attacks

import (
	"testing"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

// pollutionCases pollute prototypes and tamper with the injected bindings,
// hoping the host's conversions (tool inputs, results, errors) or later
// code pick up what the plan changed. The host must convert with its own
// untouched logic and never let a __proto__ key become a prototype.
var pollutionCases = []attackCase{
	// Wall: validator, .prototype by name.
	{name: "object-prototype-named", cat: catPollution,
		script: `Object.prototype.polluted = 1; return ({}).polluted`,
		want:   bannedMember},
	// Wall: validator, .__proto__ by name.
	{name: "dunder-proto-named", cat: catPollution,
		script: `({}).__proto__.polluted = 1; return ({}).polluted`,
		want:   bannedMember},
	// Wall: validator, ["__proto__"] by string literal.
	{name: "dunder-proto-string-key", cat: catPollution,
		script: `({})["__proto__"].polluted = 1; return ({}).polluted`,
		want:   bannedMember},
	// Wall: validator, __defineGetter__ by name.
	{name: "defineGetter-named", cat: catPollution,
		script: `({}).__defineGetter__('x', () => 1); return 1`,
		want:   bannedMember},
	// Wall: the bridge. The plan may pollute its own Object.prototype, but
	// the host serialises own properties only: nothing inherited reaches
	// the tool or the result.
	{name: "object-prototype-computed", cat: catPollution,
		script: `Object['proto' + 'type'].polluted = 'PW' + 'NED'; return await callTool('test.echo', {a: 1})`,
		want:   ok(`{"a":1}`), check: toolSaw(`{"a":1}`)},
	// Wall: the bridge. An inherited toJSON is the plan's own JSON
	// semantics: it runs once, under the deadline, and what the gate saw is
	// what the tool gets.
	{name: "object-prototype-toJSON", cat: catPollution,
		script: `Object.defineProperty(Object['proto' + 'type'], 'toJSON', {value: () => ({p: 'polluted'}), configurable: true});
return await callTool('test.echo', {a: 1})`,
		want: ok(`{"p":"polluted"}`), check: toolSaw(`{"p":"polluted"}`)},
	// Wall: the bridge. An inherited then makes the plan's own promises
	// thenable; it changes what the plan sees, not what the host records.
	{name: "object-prototype-then", cat: catPollution,
		script: `Object.defineProperty(Object['proto' + 'type'], 'then', {value(res) { res('hijacked') }, configurable: true});
return await callTool('test.echo', {a: 1})`,
		want: ok(`"hijacked"`),
		check: func(t *testing.T, h *host, r *response) {
			if len(r.ToolTrace) != 1 || !r.ToolTrace[0].OK {
				t.Errorf("toolTrace = %+v, want one successful call", r.ToolTrace)
			}
		}},
	// Wall: the bridge. Setters on Object.prototype never run when the host
	// builds objects for the plan ({ok, data}, {ok, error}, tool errors).
	{name: "object-prototype-setters", cat: catPollution,
		script: `let leaked = [];
for (const k of ['ok', 'data', 'error', 'code', 'message', 'toolName', 'name']) {
  Object.defineProperty(Object['proto' + 'type'], k, {set(v) { leaked.push(k) }, configurable: true});
}
const a = await callTool('test.echo', {a: 1}, {throwOnError: false});
const b = await callTool('test.fail', {}, {throwOnError: false});
let c; try { await callTool('test.fail', {}) } catch (e) { c = [e.code, e.toolName] }
return [a.ok, a.data, b.ok, b.error.code, c, leaked]`,
		preset: presets.Balanced,
		want:   ok(`[true, {"a":1}, false, "EXECUTION", ["EXECUTION", "test.fail"], []]`)},
	// Wall: the event loop. Promise.prototype.then replaced before awaiting
	// a tool call: await does not look it up.
	{name: "promise-then-replaced", cat: catPollution,
		script: `Promise['proto' + 'type'].then = function () { return 'hijacked' }; return await callTool('test.echo', {a: 1})`,
		want:   ok(`{"a":1}`)},
	// Wall: the bridge. Array.prototype.map replaced before the host
	// converts an array input.
	{name: "array-map-replaced", cat: catPollution,
		script: `Array['proto' + 'type'].map = function () { return ['PW' + 'NED'] }; return await callTool('test.echo', {list: [1, 2]})`,
		want:   ok(`{"list":[1,2]}`), check: toolSaw(`{"list":[1,2]}`)},
	// Wall: the bridge. JSON.parse replaced before the host turns a text
	// result into a value.
	{name: "json-parse-replaced", cat: catPollution,
		script: `JSON.parse = () => ({p: 'PW' + 'NED'}); return await callTool('test.json', {text: '{"a":1}'})`,
		want:   ok(`{"a":1}`)},
	// Wall: the bridge. JSON.stringify replaced before the host serialises
	// an input and the result.
	{name: "json-stringify-replaced", cat: catPollution,
		script: `JSON.stringify = () => '{"p":"' + 'PW' + 'NED' + '"}'; return await callTool('test.echo', {a: 1})`,
		want:   ok(`{"a":1}`), check: toolSaw(`{"a":1}`)},
	// Wall: the bridge. Object.keys replaced before the host walks an input.
	{name: "object-keys-replaced", cat: catPollution,
		script: `Object.keys = () => ['p']; return await callTool('test.echo', {a: 1})`,
		want:   ok(`{"a":1}`), check: toolSaw(`{"a":1}`)},
	// Wall: the bridge. A __proto__ key from JSON.parse is an own property;
	// the bridge refuses it before the call.
	{name: "json-proto-key-input", cat: catPollution,
		script: `return await callTool('test.echo', JSON.parse('{"__proto__": {"polluted": 1}, "a": 1}'))`,
		want:   typeError, check: toolSaw()},
	// Wall: the bridge. A computed __proto__ key is an own property too.
	{name: "computed-proto-key-input", cat: catPollution,
		script: `return await callTool('test.echo', {['__pro' + 'to__']: {polluted: 1}, a: 1})`,
		want:   typeError, check: toolSaw()},
	// Wall: the bridge. A nested __proto__ key, deeper in the input.
	{name: "nested-proto-key-input", cat: catPollution,
		script: `return await callTool('test.echo', {a: {b: JSON.parse('{"__proto__": {"polluted": 1}, "c": 2}')}})`,
		want:   typeError, check: toolSaw()},
	// Wall: validator. A __proto__ key in an object literal sets the
	// literal's prototype.
	{name: "literal-proto-key-input", cat: catPollution,
		script: `return await callTool('test.echo', {__proto__: {polluted: 1}, a: 1})`,
		want:   bannedMember},
	// Wall: the bridge. A tool result with a __proto__ key becomes no
	// prototype, and Object.prototype stays clean.
	{name: "proto-key-in-result", cat: catPollution,
		script: `const r = await callTool('test.json', {text: '{"__proto__": {"polluted": "yes"}, "a": 1}'});
return [r.polluted === undefined, ({}).polluted === undefined, Object.getPrototypeOf(r) === Object.getPrototypeOf({}), r.a]`,
		want: ok(`[true, true, true, 1]`)},
	// Wall: the bridge. The same in a nested result object.
	{name: "nested-proto-key-in-result", cat: catPollution,
		script: `const r = await callTool('test.json', {text: '{"x": {"__proto__": {"polluted": "yes"}}}'});
return [r.x.polluted === undefined, ({}).polluted === undefined, Object.getPrototypeOf(r.x) === Object.getPrototypeOf({})]`,
		want: ok(`[true, true, true]`)},
	// Wall: the bridge. An inherited property never reaches the tool.
	{name: "inherited-input-property", cat: catPollution,
		script: `const o = Object.setPrototypeOf({a: 1}, {inherited: 'x'}); return await callTool('test.echo', o)`,
		want:   ok(`{"a":1}`), check: toolSaw(`{"a":1}`)},
	// Wall: runtime. callTool cannot be reassigned.
	{name: "callTool-reassigned", cat: catPollution,
		script: `callTool = () => 'PW' + 'NED'; return await callTool('test.echo', {})`,
		want:   typeError},
	// Wall: runtime. Top-level this is undefined in the plan's strict code,
	// so it cannot reach the global object.
	{name: "defineProperty-this", cat: catPollution,
		script: `Object.defineProperty(this, 'callTool', {value: () => 'PW' + 'NED'}); return await callTool('test.echo', {})`,
		want:   typeError},
	// Wall: runtime. codecallContext is frozen.
	{name: "codecallContext-write", cat: catPollution, context: map[string]any{"user": "alice"},
		script: `codecallContext.user = 'mallory'; return codecallContext.user`,
		want:   typeError},
	// Wall: runtime. codecallContext is frozen all the way down.
	{name: "codecallContext-deep-write", cat: catPollution, context: map[string]any{"org": map[string]any{"id": "o1"}},
		script: `codecallContext.org.id = 'o2'; return codecallContext.org.id`,
		want:   typeError},
	// Wall: runtime. codecallContext cannot be rebound.
	{name: "codecallContext-reassigned", cat: catPollution, context: map[string]any{"user": "alice"},
		script: `codecallContext = {user: 'mallory'}; return codecallContext.user`,
		want:   typeError},
	// Wall: runtime. codecallContext's properties cannot be redefined.
	{name: "codecallContext-defineProperty", cat: catPollution, context: map[string]any{"user": "alice"},
		script: `Object.defineProperty(codecallContext, 'user', {value: 'mallory'}); return codecallContext.user`,
		want:   typeError},
	// Wall: runtime. codecallContext's properties cannot be deleted.
	{name: "codecallContext-delete", cat: catPollution, context: map[string]any{"user": "alice"},
		script: `delete codecallContext.user; return codecallContext.user`,
		want:   typeError},
	// Wall: runtime. codecallContext's prototype cannot be swapped.
	{name: "codecallContext-setPrototypeOf", cat: catPollution, context: map[string]any{"user": "alice"},
		script: `Object.setPrototypeOf(codecallContext, {admin: true}); return codecallContext.admin`,
		want:   typeError},
	// Wall: the bridge. A __proto__ key in the request's context is an own
	// property of codecallContext, never its prototype.
	{name: "context-proto-key", cat: catPollution, context: map[string]any{"__proto__": map[string]any{"admin": true}},
		script: `return [codecallContext.admin === undefined, ({}).admin === undefined, Object.getPrototypeOf(codecallContext) === Object.getPrototypeOf({})]`,
		want:   ok(`[true, true, true]`)},
	// Wall: the host. Changing a getTool result changes no later answer.
	{name: "getTool-result-mutated", cat: catPollution,
		script: `const t = getTool('test.echo'); try { t.name = 'test.secret'; t.description = 'x' } catch (e) {}
const u = getTool('test.echo'); return [u.name, u.description === 'x']`,
		want: ok(`["test.echo", false]`)},
	// Wall: the server. Loosening a schema returned by getTool does not
	// loosen the server's validation of the call.
	{name: "getTool-schema-loosened", cat: catPollution,
		script: `const t = getTool('test.sleep'); try { t.inputSchema.required = [] } catch (e) {}
return await callTool('test.sleep', {})`,
		want: toolErr("test.sleep", "VALIDATION")},
}

func TestPrototypePollution(t *testing.T) { runCases(t, pollutionCases) }

// globalCases delete or overwrite built-ins and look for host objects. The
// host must keep converting and calling with its own intrinsics, and the
// plan must find no process, module system or global object.
var globalCases = []attackCase{
	// Wall: the host. Deleting the JSON and Object methods changes nothing
	// the host does.
	{name: "delete-builtin-methods-then-call", cat: catGlobals,
		script: `delete JSON.parse; delete JSON.stringify; delete Object.keys; delete Object.entries; delete Array.isArray;
return await callTool('test.json', {text: '{"a":[1]}'})`,
		want: ok(`{"a":[1]}`)},
	// Wall: strict mode. A global cannot even be deleted by name.
	{name: "delete-global-binding", cat: catGlobals,
		script: `delete JSON; return 1`,
		want:   syntaxErr},
	// Wall: the host. Overwritten constructors change nothing the host
	// does: inputs, results and errors use the original intrinsics.
	// Standard globals are inherited, not own properties of the plan's
	// global object: a strict-mode plan cannot reassign them at all.
	{name: "overwrite-builtins-then-call", cat: catGlobals,
		script: `Object = null; Array = null; JSON = null; Symbol = null; Map = null; return await callTool('test.echo', {a: [1, 2], b: {c: true}})`,
		want:   refError, check: toolSaw()},
	// Wall: the host. Local bindings that shadow the built-ins do not reach
	// the bridge's own conversion.
	{name: "shadow-builtins-then-call", cat: catGlobals,
		script: `const Object = null, Array = null, JSON = null, Symbol = null, Map = null; return await callTool('test.echo', {a: [1, 2], b: {c: true}})`,
		want:   ok(`{"a":[1,2],"b":{"c":true}}`), check: toolSaw(`{"a":[1,2],"b":{"c":true}}`)},
	// Wall: the deadline while the host reads an uncaught error: an
	// inherited message getter that never returns.
	{name: "error-message-getter-loops", cat: catGlobals, preset: presets.Balanced, limits: short,
		script: `Object.defineProperty(Error['proto' + 'type'], 'message', {get() { for (;;) {} }, configurable: true}); throw new Error()`,
		want:   timedOut},
	// Wall: the host reads an uncaught error's fields once, and a getter
	// that throws leaves a generic message.
	{name: "error-name-getter-throws", cat: catGlobals,
		script: `const e = {}; Object.defineProperty(e, 'message', {get() { throw new Error('again') }}); throw e`,
		want:   want{status: vm.StatusRuntimeError, name: "Error"}},
	// Wall: the host. Errors of failed calls are built from the original
	// Error, not from what the plan put in its place.
	{name: "overwrite-Error-then-tool-fails", cat: catGlobals,
		script: `Error = function () { return {message: 'PW' + 'NED'} }; TypeError = Error; await callTool('test.fail', {reason: 'x'})`,
		want:   refError},
	{name: "shadow-Error-then-tool-fails", cat: catGlobals,
		script: `const Error = function () { return {message: 'PW' + 'NED'} }, TypeError = Error; await callTool('test.fail', {reason: 'x'})`,
		want:   toolErr("test.fail", "EXECUTION")},
	// Wall: the host. A replaced Promise global does not break callTool.
	{name: "overwrite-Promise-then-call", cat: catGlobals,
		script: `Promise = function () { throw new Error('hijacked') }; return await callTool('test.echo', {a: 1})`,
		want:   refError},
	{name: "shadow-Promise-then-call", cat: catGlobals,
		script: `const Promise = function () { throw new Error('hijacked') }; return await callTool('test.echo', {a: 1})`,
		want:   ok(`{"a":1}`)},
	// Wall: validator, process.
	{name: "process", cat: catGlobals,
		script: `return typeof process`,
		want:   bannedIdentifier},
	// Wall: validator, require.
	{name: "require", cat: catGlobals,
		script: `return require('fs').readFileSync('/etc/passwd', 'utf8')`,
		want:   bannedIdentifier},
	// Wall: validator, module.
	{name: "module", cat: catGlobals,
		script: `return typeof module`,
		want:   bannedIdentifier},
	// Wall: runtime. No other host objects, whatever the runtime.
	{name: "host-objects", cat: catGlobals,
		script: `return [typeof __dirname, typeof __filename, typeof Deno, typeof Bun, typeof document, typeof navigator, typeof fetch, typeof XMLHttpRequest, typeof WebSocket, typeof importScripts]`,
		want:   ok(`["undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined"]`)},
	// Wall: validator, Node's and browsers' global-object aliases.
	{name: "global-window-self", cat: catGlobals,
		script: `return [typeof global, typeof window, typeof self]`,
		want:   bannedIdentifier},
	// Wall: validator, globalThis.
	{name: "globalThis", cat: catGlobals,
		script: `return Object.getOwnPropertyNames(globalThis)`,
		want:   bannedIdentifier},
	// Wall: strict mode. Top-level this is undefined.
	{name: "top-level-this", cat: catGlobals,
		script: `return this === undefined`,
		want:   ok(`true`)},
	// Wall: strict mode. A plain function's this is undefined too.
	{name: "function-this", cat: catGlobals,
		script: `return (function () { return this })() === undefined`,
		want:   ok(`true`)},
	// Wall: validator, arguments (and its callee).
	{name: "arguments-callee", cat: catGlobals,
		script: `return (function () { return typeof arguments.callee })()`,
		want:   bannedIdentifier},
	// Wall: strict mode. delete of a binding is a syntax error.
	{name: "delete-callTool-binding", cat: catGlobals,
		script: `delete callTool; return typeof callTool`,
		want:   syntaxErr},
	// Wall: runtime, a string timer is code generation.
	{name: "setTimeout-string", cat: catGlobals,
		script: `setTimeout("return 'PW'+'NED'", 0); return 1`,
		want:   codeGeneration},
	// Wall: the bridge. Injected functions expose nothing of Go.
	{name: "injected-functions-are-plain", cat: catGlobals,
		script: `return [callTool, getTool, mcpLog, mcpNotify].map(f => [typeof f, Object.keys(f).length, Object.getOwnPropertyNames(f).filter(n => n !== 'length' && n !== 'name')])`,
		want:   ok(`[["function",0,[]],["function",0,[]],["function",0,[]],["function",0,[]]]`)},
	// Wall: the validator parses the script as a function body: closing
	// the wrapper to run code at the top level is a syntax error.
	{name: "wrapper-escape", cat: catGlobals, bypass: true,
		script: `}), callTool('test.count', {}), (async function () {`,
		want:   syntaxErr},
	// Wall: the same from the other end, with a trailing comment meant to
	// swallow the wrapper's closing.
	{name: "wrapper-escape-comment", cat: catGlobals, bypass: true,
		script: "return 1 }); callTool('test.count', {}); /*",
		want:   syntaxErr},
	// Wall: validator, with.
	{name: "with-statement", cat: catGlobals,
		script: `with ({x: 1}) { return x }`,
		want:   withRefused},
	// Wall: validator, dynamic import.
	{name: "dynamic-import", cat: catGlobals,
		script: `return await import('fs')`,
		want:   importRefused},
	// Wall: validator, debugger.
	{name: "debugger", cat: catGlobals,
		script: `debugger; return 1`,
		want:   want{status: vm.StatusIllegalAccess, kind: string(ast.KindDebugger)}},
}

func TestGlobalTampering(t *testing.T) { runCases(t, globalCases) }
