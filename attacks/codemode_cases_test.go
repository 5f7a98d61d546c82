package attacks

import (
	"strings"
	"testing"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

// The Code Mode cases: modules sent to codemode.run as they are (module
// set), in both modes. Their wants are read from the answer as
// readCodeMode reads it: importFailure is an IMPORT_FAILURE diagnostic,
// illegal an ILLEGAL_ACCESS one, codeGeneration an ILLEGAL_ACCESS one that
// refused code from a string, timedOut and the limits SANDBOX_LIMIT ones,
// a runtime error an UNCAUGHT_EXCEPTION one with the error's name, ok no
// error diagnostic.

var (
	importFailure = want{status: vm.StatusIllegalAccess, kind: string(ast.KindImport)}
	illegal       = want{status: vm.StatusIllegalAccess}
	// invalidArgument is an INVALID_ARGUMENT diagnostic: the request, not
	// the script, is wrong.
	invalidArgument = want{status: "invalid_argument"}
)

// The imports every Code Mode case may use, and the keys the validator
// cannot see.
const (
	importTest   = `import * as t from "@codemode/servers/test"; `
	importErrors = `import * as errs from "@codemode/errors"; `
	keys         = `const k = 'constr' + 'uctor', P = 'proto' + 'type'; `
)

// testModuleKeys are the test module's exports, in namespace order.
const testModuleKeys = `["__meta__","big","charge","count","deep","echo","fail","json","sleep"]`

// answerLacks checks that the raw answer never mentions s.
func answerLacks(ss ...string) func(t *testing.T, h *host, r *response) {
	return func(t *testing.T, h *host, r *response) {
		t.Helper()
		for _, s := range ss {
			if strings.Contains(r.raw, s) {
				t.Errorf("the answer mentions %q: %s", s, clip(r.raw))
			}
		}
	}
}

// diagnosed checks that the answer has a diagnostic with this code whose
// message contains s.
func diagnosed(code, s string) func(t *testing.T, h *host, r *response) {
	return func(t *testing.T, h *host, r *response) {
		t.Helper()
		if !hasDiagnostic(r, code, s) {
			t.Errorf("no %s diagnostic saying %q: %+v", code, s, r.diagnostics)
		}
	}
}

// nextRun checks that a later run on the same server starts afresh: module
// comes to result there.
func nextRun(module, result string) func(t *testing.T, h *host, r *response) {
	return func(t *testing.T, h *host, r *response) {
		t.Helper()
		next := h.run(t, map[string]any{"code": module})
		checkWant(t, ok(result), next)
	}
}

// importCases attack the linker: every specifier but the offered modules',
// import() and import.meta, and the name of the modules' array.
var importCases = []attackCase{
	// Wall: the linker, import() with a literal.
	{name: "dynamic-import", cat: catCMImports, module: true,
		script: `const m = await import("@codemode/servers/test"); globalThis.__codemode_result__ = Object.keys(m);`,
		want:   importFailure},
	// Wall: the linker, import() with a computed specifier.
	{name: "dynamic-import-computed", cat: catCMImports, module: true,
		script: `const s = "@codemode/servers/" + "vault"; globalThis.__codemode_result__ = await import(s);`,
		want:   importFailure},
	// Wall: the linker, import.meta.
	{name: "import-meta", cat: catCMImports, module: true,
		script: `globalThis.__codemode_result__ = import.meta.url;`,
		want:   importFailure},
	// Wall: the resolver, a relative specifier.
	{name: "relative-specifier", cat: catCMImports, module: true,
		script: `import * as x from "./test"; globalThis.__codemode_result__ = x;`,
		want:   importFailure},
	// Wall: the resolver, an absolute path.
	{name: "absolute-specifier", cat: catCMImports, module: true,
		script: `import * as x from "/@codemode/servers/test";`,
		want:   importFailure},
	// Wall: the resolver, a URL.
	{name: "file-url-specifier", cat: catCMImports, module: true,
		script: `import * as x from "file:///etc/passwd";`,
		want:   importFailure},
	// Wall: the resolver, Node's built-ins.
	{name: "node-builtin", cat: catCMImports, module: true,
		script: `import * as fs from "node:fs"; import * as cp from "child_process";`,
		want:   importFailure},
	// Wall: the resolver, .. is not normalised away.
	{name: "dot-dot", cat: catCMImports, module: true,
		script: `import * as x from "@codemode/servers/../servers/test";`,
		want:   importFailure},
	// Wall: the resolver, .. out of the servers' namespace.
	{name: "dot-dot-to-fixed-module", cat: catCMImports, module: true,
		script: `import * as x from "@codemode/servers/../errors";`,
		want:   importFailure},
	// Wall: the resolver, percent-encoded dots are not decoded.
	{name: "percent-dot-dot", cat: catCMImports, module: true,
		script: `import * as x from "@codemode/servers/%2e%2e/discovery";`,
		want:   importFailure},
	// Wall: the resolver, a percent-encoded name is not decoded either.
	{name: "percent-encoded-name", cat: catCMImports, module: true,
		script: `import * as x from "@codemode/servers/%74est";`,
		want:   importFailure},
	// Wall: none needed. A string escape is decoded as the parser decodes
	// it: the specifier is "@codemode/servers/test", and names that
	// module, no other.
	{name: "unicode-escaped-specifier", cat: catCMImports, module: true,
		script: `import * as x from "@codemode/servers/\u0074est"; globalThis.__codemode_result__ = Object.keys(x);`,
		want:   ok(testModuleKeys)},
	// Wall: the resolver, escaped dots decode to .., which is refused.
	{name: "unicode-escaped-dot-dot", cat: catCMImports, module: true,
		script: `import * as x from "@codemode/servers/\u002e\u002e/test";`,
		want:   importFailure},
	// Wall: the resolver, an escaped excluded app.
	{name: "unicode-escaped-excluded-app", cat: catCMImports, module: true,
		script: `import * as x from "@codemode/servers/\u{76}ault";`,
		want:   importFailure, check: answerLacks("vault.open")},
	// Wall: the resolver, paths are exact: no case folding.
	{name: "case-variant", cat: catCMImports, module: true,
		script: `import * as x from "@codemode/servers/TEST";`,
		want:   importFailure},
	// Wall: the resolver, no trailing slash.
	{name: "trailing-slash", cat: catCMImports, module: true,
		script: `import * as x from "@codemode/servers/test/";`,
		want:   importFailure},
	// Wall: the resolver, no trailing NUL.
	{name: "trailing-NUL", cat: catCMImports, module: true,
		script: `import * as x from "@codemode/servers/test\0";`,
		want:   importFailure},
	// Wall: the resolver, the servers' prefix alone.
	{name: "servers-prefix", cat: catCMImports, module: true,
		script: `import * as x from "@codemode/servers/";`,
		want:   importFailure},
	// Wall: the module list. An app whose every tool is excluded has no
	// module, and the answer does not name its tool.
	{name: "excluded-app", cat: catCMImports, module: true,
		script: `import * as v from "@codemode/servers/vault"; globalThis.__codemode_result__ = await v.open({});`,
		want:   importFailure, check: all(diagnosed("IMPORT_FAILURE", "vault"), answerLacks("vault.open"))},
	// Wall: the module's exports. An excluded tool is no export.
	{name: "excluded-tool-named-import", cat: catCMImports, module: true,
		script: `import { secret } from "@codemode/servers/test"; globalThis.__codemode_result__ = await secret({});`,
		want:   importFailure, check: answerLacks("test.secret")},
	// Wall: the same, by its canonical name.
	{name: "excluded-tool-string-import", cat: catCMImports, module: true,
		script: `import { "test.secret" as s } from "@codemode/servers/test"; globalThis.__codemode_result__ = await s({});`,
		want:   importFailure},
	// Wall: the same, re-exported.
	{name: "excluded-tool-re-export", cat: catCMImports, module: true,
		script: `export { secret } from "@codemode/servers/test";`,
		want:   importFailure},
	// Wall: the namespace holds no trace of the excluded tool.
	{name: "excluded-tool-namespace", cat: catCMImports, module: true,
		script: importTest + `globalThis.__codemode_result__ = [typeof t.secret, Object.keys(t).includes('secret'), t.__meta__.tools.some(x => x.toolName === 'test.secret' || x.exportName === 'secret')];`,
		want:   ok(`["undefined", false, false]`)},
	// Wall: the resolver, export * from a module that is not offered.
	{name: "export-star-unknown", cat: catCMImports, module: true,
		script: `export * from "@codemode/servers/vault"; globalThis.__codemode_result__ = 1;`,
		want:   importFailure},
	// Wall: the resolver, a bare import of one.
	{name: "bare-import-unknown", cat: catCMImports, module: true,
		script: `import "@codemode/servers/vault";`,
		want:   importFailure},
	// Wall: the linker, Code Mode's modules have no default export.
	{name: "default-import", cat: catCMImports, module: true,
		script: `import t from "@codemode/servers/test"; globalThis.__codemode_result__ = t;`,
		want:   importFailure},
	// Wall: the parser, import attributes are not Code Mode's.
	{name: "import-attributes", cat: catCMImports, module: true,
		script: `import * as x from "@codemode/servers/test" with { type: "json" };`,
		want:   syntaxErr},
	// Wall: the linker, the modules' array by name.
	{name: "reserved-name-identifier", cat: catCMImports, module: true,
		script: `const __codemode_modules__ = []; globalThis.__codemode_result__ = __codemode_modules__;`,
		want:   syntaxErr},
	// Wall: the linker, the name anywhere in the text.
	{name: "reserved-name-string", cat: catCMImports, module: true,
		script: `globalThis.__codemode_result__ = globalThis["__codemode_modules__"];`,
		want:   syntaxErr},
	// Wall: the runtime. Reached by a computed key, the modules' array is
	// frozen, holds only the imported modules, and each is frozen.
	{name: "reserved-name-computed", cat: catCMImports, module: true,
		script: importTest + `const m = globalThis["__codemode" + "_modules__"];
globalThis.__codemode_result__ = [m.length, m[0] === t, Object.isFrozen(m), Reflect.set(m, 0, {echo: t.count}), Reflect.defineProperty(m, 1, {value: {}}), Object.isFrozen(m[0]), m.length];`,
		want: ok(`[1, true, true, false, false, true, 1]`)},
	// Wall: the runtime, the global cannot be redefined.
	{name: "reserved-name-redefined", cat: catCMImports, module: true,
		script: importTest + `Object.defineProperty(globalThis, "__codemode" + "_modules__", {value: [{echo: t.count}]});`,
		want:   typeError},
	// Wall: strict mode. An import binding is constant.
	{name: "import-binding-reassigned", cat: catCMImports, module: true, bypass: true,
		script: `import { echo, count } from "@codemode/servers/test"; echo = count; globalThis.__codemode_result__ = await echo({});`,
		want:   typeError},
	// Wall: the runtime. A namespace named globalThis shadows the global,
	// and the frozen namespace takes no result.
	{name: "import-binding-shadows-globalThis", cat: catCMImports, module: true,
		script: `import * as globalThis from "@codemode/servers/test"; globalThis.__codemode_result__ = 'x';`,
		want:   typeError},
	// Wall: discovery lists what the gate offers, nothing excluded.
	{name: "discovery-excluded", cat: catCMImports, module: true,
		script: `import { listServers, listTools, searchTools } from "@codemode/discovery";
const servers = (await listServers()).map(s => s.serverId);
const tools = (await listTools('test', {detail: 'name'})).map(x => x.toolName);
const hits = (await searchTools('secret vault open excluded', {detail: 'name'})).results.map(x => x.toolName);
globalThis.__codemode_result__ = [servers, tools.includes('test.secret'), tools.length, hits.filter(n => n === 'test.secret' || n === 'vault.open')];`,
		want: ok(`[["test"], false, 8, []]`), check: answerLacks("s3cr3t", "vault.open")},
	// Wall: discovery refuses the excluded tool and app as unknown.
	{name: "discovery-get-excluded", cat: catCMImports, module: true,
		script: `import { getTool, describeServer, listTools } from "@codemode/discovery";
const names = await Promise.all([() => getTool('test', 'secret'), () => getTool('test', 'test.secret'), () => describeServer('vault'), () => listTools('vault')]
  .map(async f => { try { await f(); return 'found' } catch (e) { return e.name } }));
globalThis.__codemode_result__ = names;`,
		want:  ok(`["ToolNotFoundError", "ToolNotFoundError", "ServerNotFoundError", "ServerNotFoundError"]`),
		check: answerLacks("vault.open")},
	// Wall: requestedCapabilities are hints: an excluded app or a path
	// trick is a warning, never a module.
	{name: "requested-capabilities-excluded", cat: catCMImports, module: true,
		args: map[string]any{"requestedCapabilities": []any{"vault", "../vault", "vault.open"},
			"code": `import * as v from "@codemode/servers/vault";`},
		want: importFailure, check: all(diagnosed("CAPABILITY_UNAVAILABLE", "vault"), answerLacks("s3cr3t"))},
	// Wall: limits only lower the server's: a huge timeoutMs is clamped,
	// and the loop ends at the server's deadline.
	{name: "limits-raised", cat: catCMImports, module: true, preset: presets.Balanced, limits: short,
		args: map[string]any{"limits": map[string]any{"timeoutMs": 1e12, "maxToolCalls": 1e9, "maxMemoryBytes": 1e15},
			"code": `for (;;) {}`},
		want: timedOut, check: diagnosed("LIMIT_CLAMPED", "timeoutMs")},
	// Wall: malformed limits are ignored, never applied.
	{name: "limits-malformed", cat: catCMImports, module: true, preset: presets.Balanced, limits: short,
		args: map[string]any{"limits": map[string]any{"timeoutMs": -1, "maxToolCalls": "1e9", "maxMemoryBytes": 1.5, "maxLogBytes": []any{1}},
			"code": `for (;;) {}`},
		want: timedOut, check: diagnosed("LIMIT_IGNORED", "timeoutMs")},
	// Wall: the arguments. A code that is not a string runs nothing.
	{name: "code-not-a-string", cat: catCMImports, module: true,
		args: map[string]any{"code": map[string]any{"toString": "globalThis.__codemode_result__ = 1"}},
		want: invalidArgument},
	// Wall: the arguments. CodeCall's own arguments are unknown here.
	{name: "codecall-arguments", cat: catCMImports, module: true,
		args: map[string]any{"code": `globalThis.__codemode_result__ = 1;`, "allowedTools": []any{"*"}},
		want: invalidArgument},
}

// tamper is a namespace case: the module tries one tampering (the body of
// an arrow function; its value or the name of its error is recorded), then
// calls t.echo, which must still reach test.echo through the gate, and
// nothing else.
func tamper(name, body, outcome string) attackCase {
	return attackCase{name: name, cat: catCMNamespaces, module: true,
		script: importTest + importErrors + keys + `let outcome;
try { const v = (() => { ` + body + ` })(); outcome = 'returned ' + String(v) } catch (e) { outcome = e.name }
globalThis.__codemode_result__ = [outcome, await t.echo({x: 1}), t.echo.name, Object.keys(t).length];`,
		want:  ok(`["` + outcome + `", {"x": 1}, "echo", 9]`),
		check: all(toolSaw(`{"x":1}`), countRan(0))}
}

// namespaceCases tamper with the module namespaces, their functions,
// __meta__ and the error classes, and check that a later call reaches the
// right tool and that no name leads a call to a tool the gate refuses.
var namespaceCases = []attackCase{
	tamper("assign-export", `t.echo = t.count`, "TypeError"),
	tamper("add-export", `t.secret = t.count`, "TypeError"),
	tamper("delete-export", `delete t.echo`, "TypeError"),
	tamper("defineProperty-export", `Object.defineProperty(t, 'echo', {value: t.count})`, "TypeError"),
	tamper("setPrototypeOf-namespace", `Object.setPrototypeOf(t, {echo: t.count})`, "TypeError"),
	tamper("Reflect-set-export", `return Reflect.set(t, 'echo', t.count)`, "returned false"),
	tamper("Reflect-defineProperty-export", `return Reflect.defineProperty(t, 'echo', {value: t.count})`, "returned false"),
	tamper("Reflect-deleteProperty-export", `return Reflect.deleteProperty(t, 'echo')`, "returned false"),
	tamper("Reflect-setPrototypeOf-namespace", `return Reflect.setPrototypeOf(t, {echo: t.count})`, "returned false"),
	tamper("export-name", `t.echo.name = 'test.secret'`, "TypeError"),
	tamper("export-name-defineProperty", `Object.defineProperty(t.echo, 'name', {value: 'count'})`, "TypeError"),
	tamper("export-length", `return Reflect.defineProperty(t.echo, 'length', {value: 99})`, "returned false"),
	tamper("export-call-replaced", `t.echo.call = () => t.count({})`, "TypeError"),
	tamper("export-setPrototypeOf", `Object.setPrototypeOf(t.echo, {call: () => t.count({})})`, "TypeError"),
	// Function.prototype is the plan's: replacing call, apply and bind
	// changes what the plan's own .call does, not a direct call.
	tamper("function-prototype-call-apply-bind", `const FP = Reflect.getPrototypeOf(t.echo); FP.call = FP.apply = FP.bind = () => t.count({})`, "returned undefined"),
	tamper("meta-toolName", `t.__meta__.tools[0].toolName = 'test.secret'`, "TypeError"),
	tamper("meta-exportName", `Object.defineProperty(t.__meta__.tools[4], 'exportName', {value: 'count'})`, "TypeError"),
	tamper("meta-tools-push", `t.__meta__.tools.push({toolName: 'test.secret', exportName: 'echo'})`, "TypeError"),
	tamper("meta-tools-length", `t.__meta__.tools.length = 0`, "TypeError"),
	tamper("meta-serverId", `return Reflect.set(t.__meta__, 'serverId', 'vault')`, "returned false"),
	tamper("errors-class-replaced", `errs.ToolCallError = class {}`, "TypeError"),
	tamper("errors-class-defineProperty", `Object.defineProperty(errs, 'ToolCallError', {value: errs.CodemodeError})`, "TypeError"),
	tamper("error-prototype-hint", `errs.ToolCallError[P].hint = 'x'`, "TypeError"),
	tamper("error-prototype-setPrototypeOf", `Object.setPrototypeOf(errs.CodemodeError[P], {})`, "TypeError"),
	tamper("error-class-hasInstance", `Object.defineProperty(errs.ToolCallError, Symbol.hasInstance, {value: () => true})`, "TypeError"),
	tamper("modules-array-element", `globalThis['__codemode' + '_modules__'][0] = {echo: t.count}`, "TypeError"),
	// Wall: the gate. A binding is its tool whatever it is called: the
	// approval-needing tool under echo's name is still test.charge, and
	// the gate still asks (and this client cannot answer).
	{name: "approval-tool-renamed", cat: catCMNamespaces, module: true,
		script: importTest + `const echo = t.charge;
const named = Object.defineProperty(async (i) => echo(i), 'name', {value: 'echo'});
const outcomes = await Promise.all([echo, named, (i) => Reflect.apply(t.charge, t.echo, [i])].map(async f => {
  try { await f({}); return 'ran' } catch (e) { return [e.name, e.code, e.toolName] } }));
globalThis.__codemode_result__ = outcomes;`,
		want: ok(`[["ToolCallError","APPROVAL_REQUIRED","test.charge"],["ToolCallError","APPROVAL_REQUIRED","test.charge"],["ToolCallError","APPROVAL_REQUIRED","test.charge"]]`),
		check: func(t *testing.T, h *host, r *response) {
			if len(r.ToolTrace) != 3 {
				t.Errorf("trace %+v, want three refused calls of test.charge", r.ToolTrace)
			}
			for _, e := range r.ToolTrace {
				if e.ToolName != "test.charge" || e.OK {
					t.Errorf("trace entry %+v, want a refused call of test.charge", e)
				}
			}
		}},
	// Wall: the host defines its errors' fields as own properties:
	// getters on Error.prototype never run, never show through.
	{name: "error-prototype-getters", cat: catCMNamespaces, module: true,
		script: importTest + keys + `let ran = 0; const EP = Error[P];
['code', 'toolName', 'serverId', 'exportName', 'retryable', 'message'].forEach(f => Object.defineProperty(EP, f, {get() { ran++; return 'forged' }, set(v) { ran++ }, configurable: true}));
let r;
try { await t.fail({reason: 'r'}) } catch (e) { r = [e.code, e.toolName, e.serverId, e.exportName, e.retryable, e.message.includes('r'), ran] }
globalThis.__codemode_result__ = r;`,
		want: ok(`["EXECUTION", "test.fail", "test", "fail", false, true, 0]`)},
	// Wall: none needed. A wrapper the plan makes reaches the tool it
	// wraps, through the gate, and the trace names that tool.
	{name: "wrapper-named-echo-calls-fail", cat: catCMNamespaces, module: true,
		script: importTest + `const echo = Object.defineProperty((i) => t.fail(i), 'name', {value: 'echo'});
let r; try { await echo({reason: 'w'}) } catch (e) { r = [e.name, e.toolName] }
globalThis.__codemode_result__ = r;`,
		want: ok(`["ToolCallError", "test.fail"]`), check: countRan(0)},
}

// resultCases attack the result slot, which the host reads once when the
// module's evaluation ends.
var resultCases = []attackCase{
	// Wall: the deadline, a getter that never returns.
	{name: "getter-loops", cat: catCMResult, module: true, preset: presets.Balanced, limits: short,
		script: `Object.defineProperty(globalThis, '__codemode_result__', {get() { for (;;) {} }});`,
		want:   timedOut},
	// Wall: the stack limit, a getter that recurses.
	{name: "getter-recurses", cat: catCMResult, module: true,
		script: `Object.defineProperty(globalThis, '__codemode_result__', {get() { return globalThis.__codemode_result__ }});`,
		want:   stackExceeded},
	// Wall: a getter's error is the run's.
	{name: "getter-throws", cat: catCMResult, module: true,
		script: `Object.defineProperty(globalThis, '__codemode_result__', {get() { throw new TypeError('from the getter') }});`,
		want:   typeError},
	// Wall: the host reads the result once.
	{name: "getter-read-once", cat: catCMResult, module: true,
		script: `let n = 0; Object.defineProperty(globalThis, '__codemode_result__', {get() { return ++n }});`,
		want:   ok(`1`)},
	// Wall: a non-configurable getter is read like any other.
	{name: "getter-non-configurable", cat: catCMResult, module: true,
		script: `Object.defineProperty(globalThis, '__codemode_result__', {get() { return 'got' }, configurable: false}); Object.freeze(globalThis);`,
		want:   ok(`"got"`)},
	// Wall: calls the getter starts count against the cap.
	{name: "getter-floods-tool-calls", cat: catCMResult, module: true,
		script: importTest + `Object.defineProperty(globalThis, '__codemode_result__', {get() { return Array.from({length: 1000}, () => t.count({})).length }});`,
		want:   toolCallCap, check: countAtMost(100)},
	// Wall: the deadline, a proxy whose ownKeys trap never returns.
	{name: "proxy-ownKeys-loops", cat: catCMResult, module: true, preset: presets.Balanced, limits: short,
		script: `globalThis.__codemode_result__ = new Proxy({}, {ownKeys() { for (;;) {} }});`,
		want:   timedOut},
	// Wall: a trap's error is the run's.
	{name: "proxy-ownKeys-throws", cat: catCMResult, module: true,
		script: `globalThis.__codemode_result__ = new Proxy({}, {ownKeys() { throw new RangeError('ownKeys') }});`,
		want:   rangeError},
	// Wall: a get trap is read once a key.
	{name: "proxy-get-read-once", cat: catCMResult, module: true,
		script: `let n = 0; globalThis.__codemode_result__ = new Proxy({a: 0, b: 0}, {get(t, k) { return typeof k === 'string' && k.length === 1 ? ++n : undefined }});`,
		want:   ok(`{"a":1,"b":2}`)},
	// Wall: the stack limit, a get trap that recurses.
	{name: "proxy-get-recurses", cat: catCMResult, module: true,
		script: `const p = new Proxy({a: 1}, {get(t, k) { return p[k] }}); globalThis.__codemode_result__ = p;`,
		want:   stackExceeded},
	// Wall: result export. A revoked proxy is a clear error.
	{name: "revoked-proxy", cat: catCMResult, module: true,
		script: `const {proxy, revoke} = Proxy.revocable({a: 1}, {}); revoke(); globalThis.__codemode_result__ = {a: [proxy]};`,
		want:   typeError},
	// Wall: result export. A cycle is a clear error.
	{name: "cyclic", cat: catCMResult, module: true,
		script: `const o = {}; o.o = o; globalThis.__codemode_result__ = o;`,
		want:   typeError},
	// Wall: result export. The global object is a cycle.
	{name: "global-object", cat: catCMResult, module: true,
		script: `globalThis.__codemode_result__ = globalThis;`,
		want:   typeError},
	// Wall: result export. A namespace holds functions.
	{name: "namespace", cat: catCMResult, module: true,
		script: importTest + `globalThis.__codemode_result__ = t;`,
		want:   typeError},
	// Wall: result export, a function.
	{name: "function", cat: catCMResult, module: true,
		script: importTest + `globalThis.__codemode_result__ = t.echo;`,
		want:   typeError},
	// Wall: result export, a symbol.
	{name: "symbol", cat: catCMResult, module: true,
		script: `globalThis.__codemode_result__ = Symbol('x');`,
		want:   typeError},
	// Wall: validator, BigInt literals.
	{name: "bigint-literal", cat: catCMResult, module: true,
		script: `globalThis.__codemode_result__ = 10n;`,
		want:   illegal},
	// Wall: runtime, no BigInt at all, and a boxed symbol has no data.
	{name: "bigint-like", cat: catCMResult, module: true,
		script: `globalThis.__codemode_result__ = [typeof BigInt, typeof BigInt64Array, Object(Symbol('x')), {[Symbol.toPrimitive]() { throw new Error('converted') }}];`,
		want:   ok(`["undefined", "undefined", {}, {}]`)},
	// Wall: the result budget (balanced, 1 MiB).
	{name: "huge", cat: catCMResult, module: true, preset: presets.Balanced,
		script: `globalThis.__codemode_result__ = 'x'.repeat(3e6);`,
		want:   ok(""), check: all(resultWithin(1<<20), diagnosed("RESULT_TRUNCATED", ""))},
	// Wall: the result budget (secure, 256 KiB), through toJSON.
	{name: "huge-toJSON", cat: catCMResult, module: true,
		script: `globalThis.__codemode_result__ = {toJSON() { return Array.from({length: 1e4}, (_, i) => ({i, s: 'y'.repeat(60)})) }};`,
		want:   ok(""), check: resultWithin(256 << 10)},
	// Wall: the result is read when the module ends: a timer set to
	// change it later never runs.
	{name: "set-by-a-later-timer", cat: catCMResult, module: true,
		script: `setTimeout(() => { globalThis.__codemode_result__ = 'PW' + 'NED' }, 0); globalThis.__codemode_result__ = 'before';`,
		want:   ok(`"before"`)},
	// Wall: a deleted slot is no result.
	{name: "deleted", cat: catCMResult, module: true,
		script: `delete globalThis.__codemode_result__;`,
		want:   ok(`null`), check: diagnosed("NO_RESULT", "")},
	// Wall: strict mode, a frozen global takes no result.
	{name: "frozen-global", cat: catCMResult, module: true,
		script: `Object.freeze(globalThis); globalThis.__codemode_result__ = 1;`,
		want:   typeError},
}

// cmTimerCases attack setTimeout from a module: storms, string and
// constructor callbacks, bindings and proxies as callbacks, timers past the
// end of the module.
var cmTimerCases = []attackCase{
	// Wall: runtime, a string of code through Reflect.apply.
	{name: "string-callback-reflect-apply", cat: catCMTimers, module: true,
		script: `Reflect.apply(setTimeout, undefined, ["globalThis.__codemode_result__ = 'PW' + 'NED'", 0]); globalThis.__codemode_result__ = 1;`,
		want:   codeGeneration},
	// Wall: runtime, the Function constructor as the callback.
	{name: "function-constructor-callback", cat: catCMTimers, module: true,
		script: importTest + keys + `setTimeout(Reflect.getPrototypeOf(t.echo)[k], 0, "return 'PW'+'NED'"); await new Promise(r => setTimeout(r, 20)); globalThis.__codemode_result__ = 'after';`,
		want:   codeGeneration},
	// Wall: none needed. A binding as a callback calls its tool, through
	// the gate.
	{name: "binding-callback", cat: catCMTimers, module: true,
		// The plan cannot await a call a timer started; it gives the call
		// a second, which a loaded machine needs (50 ms did not always do).
		script: importTest + `setTimeout(t.echo, 0, {from: 'timer'}); await new Promise(r => setTimeout(r, 1000)); globalThis.__codemode_result__ = 'done';`,
		want:   ok(`"done"`), check: toolSaw(`{"from":"timer"}`)},
	// Wall: a revoked proxy as a callback fails the run when it fires.
	{name: "revoked-proxy-callback", cat: catCMTimers, module: true,
		script: `const {proxy, revoke} = Proxy.revocable(() => 0, {}); revoke(); setTimeout(proxy, 0); await new Promise(r => setTimeout(r, 20)); globalThis.__codemode_result__ = 'PW' + 'NED';`,
		want:   typeError},
	// Wall: maxTimers, a storm of bindings: no call starts.
	{name: "storm-of-bindings", cat: catCMTimers, module: true,
		script: importTest + `Array.from({length: 1e4}, () => setTimeout(t.count, 0, {})); globalThis.__codemode_result__ = 1;`,
		want:   timerCap, check: countRan(0)},
	// Wall: maxTimers (and the call cap), a timer that re-arms itself and
	// calls a tool each time.
	{name: "re-arming-with-calls", cat: catCMTimers, module: true,
		script: importTest + `(function tick() { setTimeout(tick, 0); t.count({}) })(); await new Promise(() => {});`,
		want:   timerCap, check: countAtMost(100)},
	// Wall: the module's end. A timer due after it never runs.
	{name: "after-the-module", cat: catCMTimers, module: true,
		script: importTest + `setTimeout(() => { t.count({}); globalThis.__codemode_result__ = 'PW' + 'NED' }, 3600000); globalThis.__codemode_result__ = 'now';`,
		want:   ok(`"now"`), check: countRan(0)},
	// Wall: the deadline, a timer that turns the result into a getter
	// that never returns.
	{name: "timer-installs-looping-getter", cat: catCMTimers, module: true, preset: presets.Balanced, limits: short,
		script: `setTimeout(() => Object.defineProperty(globalThis, '__codemode_result__', {get() { for (;;) {} }}), 0); await new Promise(r => setTimeout(r, 10));`,
		want:   timedOut},
	// Wall: maxTimers, a storm set off by the result getter.
	{name: "storm-from-result-getter", cat: catCMTimers, module: true,
		script: `Object.defineProperty(globalThis, '__codemode_result__', {get() { Array.from({length: 1e6}, () => setTimeout(() => 0, 0)); return 1 }});`,
		want:   timerCap},
	// Wall: the deadline, a timer waited on past it.
	{name: "past-the-deadline", cat: catCMTimers, module: true, limits: short,
		script: `await new Promise(r => setTimeout(r, 3600000)); globalThis.__codemode_result__ = 'PW' + 'NED';`,
		want:   timedOut},
}

// reflectionCases use Proxy and Reflect, which a module has, around the
// bindings, the error classes and the inputs: the hardened runtime is the
// only wall.
var reflectionCases = []attackCase{
	// Wall: runtime. An error class's constructor is the dead Function.
	{name: "error-class-constructor", cat: catCMReflection, module: true,
		script: importErrors + keys + `globalThis.__codemode_result__ = Reflect.get(errs.ToolCallError, k)("return 'PW'+'NED'")();`,
		want:   codeGeneration},
	// Wall: runtime. The base class's prototype chain: Error, then
	// Function.
	{name: "error-class-prototype-chain", cat: catCMReflection, module: true,
		script: importErrors + keys + `const E = Reflect.getPrototypeOf(errs.CodemodeError); globalThis.__codemode_result__ = Reflect.get(E, k)("return 'PW'+'NED'")();`,
		want:   codeGeneration},
	// Wall: runtime. A host-made error's chain.
	{name: "error-instance-chain", cat: catCMReflection, module: true,
		script: importTest + keys + `try { await t.fail({}) } catch (e) { globalThis.__codemode_result__ = Reflect.get(Reflect.get(e, k), k)("return 'PW'+'NED'")() }`,
		want:   codeGeneration},
	// Wall: runtime. Reflect.construct on a binding's Function.
	{name: "reflect-construct-Function", cat: catCMReflection, module: true,
		script: importTest + keys + `globalThis.__codemode_result__ = Reflect.construct(Reflect.get(t.echo, k), ["return 'PW'+'NED'"])();`,
		want:   codeGeneration},
	// Wall: runtime. AsyncFunction through Reflect.getPrototypeOf.
	{name: "async-function-chain", cat: catCMReflection, module: true,
		script: keys + `globalThis.__codemode_result__ = await Reflect.get(Reflect.getPrototypeOf(async () => 0), k)("return 'PW'+'NED'")();`,
		want:   codeGeneration},
	// Wall: runtime. GeneratorFunction through Reflect.construct.
	{name: "generator-function-chain", cat: catCMReflection, module: true,
		script: keys + `const G = Reflect.get(Reflect.getPrototypeOf(function* () {}), k); globalThis.__codemode_result__ = Reflect.construct(G, ["yield 'PW'+'NED'"])().next().value;`,
		want:   codeGeneration},
	// Wall: runtime. The dead Function as new.target makes nothing run.
	{name: "Function-as-new-target", cat: catCMReflection, module: true,
		script: importErrors + keys + `const o = Reflect.construct(errs.ToolCallError, ['x'], Reflect.get(errs.ToolCallError, k)); globalThis.__codemode_result__ = [typeof o, o instanceof errs.ToolCallError];`,
		want:   ok(`["object", false]`)},
	// Wall: none needed. An apply trap around a binding is the plan's
	// own code: the tool gets what the trap passes, through the gate.
	{name: "proxy-apply-around-binding", cat: catCMReflection, module: true,
		script: importTest + `const p = new Proxy(t.echo, {apply(target, that, args) { return Reflect.apply(target, that, [{a: 5}]) }}); globalThis.__codemode_result__ = await p({a: 0});`,
		want:   ok(`{"a":5}`), check: toolSaw(`{"a":5}`)},
	// Wall: a binding ignores this: another binding as this changes
	// nothing.
	{name: "odd-this", cat: catCMReflection, module: true,
		script: importTest + `globalThis.__codemode_result__ = [await Reflect.apply(t.echo, t.count, [{a: 1}]), await t.echo.call(globalThis, {a: 2}), await t.echo.bind(t.count)({a: 3})];`,
		want:   ok(`[{"a":1},{"a":2},{"a":3}]`), check: all(toolSaw(`{"a":1}`, `{"a":2}`, `{"a":3}`), countRan(0))},
	// Wall: a binding is no constructor, nor a new.target.
	{name: "construct-binding", cat: catCMReflection, module: true,
		script: importTest + `const tries = [() => Reflect.construct(t.echo, [{}]), () => Reflect.construct(Object, [], t.echo), () => new t.count({})];
globalThis.__codemode_result__ = tries.map(f => { try { f(); return 'constructed' } catch (e) { return e.name } });`,
		want: ok(`["TypeError", "TypeError", "TypeError"]`), check: toolSaw()},
	// Wall: runtime. Object.prototype's prototype cannot be set, so a
	// proxy cannot intercept the lookups that miss.
	{name: "proxy-under-Object-prototype", cat: catCMReflection, module: true,
		script: importTest + keys + `let r;
try { Object.setPrototypeOf(Object[P], new Proxy({}, {get(tg, key) { if (key === 'then') { throw new Error('trap') } return undefined }})); r = 'set' } catch (e) { r = e.name }
globalThis.__codemode_result__ = [r, Reflect.setPrototypeOf(Object[P], {}), await t.echo({a: 1})];`,
		want: ok(`["TypeError", false, {"a":1}]`)},
	// Wall: the deadline. A then getter on Object.prototype runs when the
	// host resolves a call's promise with an object, under the deadline.
	{name: "then-getter-loops", cat: catCMReflection, module: true, preset: presets.Balanced, limits: short,
		script: importTest + keys + `Object.defineProperty(Object[P], 'then', {get() { for (;;) {} }, configurable: true}); globalThis.__codemode_result__ = await t.echo({a: 1});`,
		want:   timedOut},
	// Wall: a then getter that throws rejects that promise, as the
	// specification says.
	{name: "then-getter-throws", cat: catCMReflection, module: true,
		script: importTest + keys + `Object.defineProperty(Object[P], 'then', {get() { throw new Error('then') }, configurable: true});
let r; try { r = await t.echo({a: 1}) } catch (e) { r = 'rejected: ' + e.message } delete Object[P].then;
globalThis.__codemode_result__ = r;`,
		want: ok(`"rejected: then"`)},
	// Wall: the binding, a revoked proxy as input.
	{name: "revoked-proxy-input", cat: catCMReflection, module: true, bypass: true,
		script: importTest + `const {proxy, revoke} = Proxy.revocable({a: 1}, {}); revoke(); globalThis.__codemode_result__ = await t.count({p: proxy});`,
		want:   typeError},
	// Wall: the binding, an input whose getter revokes a proxy the
	// conversion reaches next.
	{name: "proxy-revoked-mid-conversion", cat: catCMReflection, module: true, bypass: true,
		script: importTest + `const {proxy, revoke} = Proxy.revocable({a: 1}, {}); globalThis.__codemode_result__ = await t.count({x: 1, get y() { revoke(); return 2 }, z: proxy});`,
		want:   typeError},
	// Wall: the runtime checks the ownKeys invariant: no duplicate keys
	// reach the gate.
	{name: "proxy-input-duplicate-keys", cat: catCMReflection, module: true, bypass: true,
		script: importTest + `let n = 0; const p = new Proxy({}, {ownKeys: () => ['a', 'a'], getOwnPropertyDescriptor: () => ({value: 1, enumerable: true, configurable: true}), get: () => ++n});
globalThis.__codemode_result__ = await t.count(p);`,
		want: typeError},
	// Wall: the binding reads what is enumerable, once: a key the
	// descriptor trap hides is never read.
	{name: "proxy-input-hidden-key", cat: catCMReflection, module: true,
		script: importTest + `const p = new Proxy({}, {ownKeys: () => ['a', 'b'], getOwnPropertyDescriptor: (tg, key) => ({value: key, enumerable: key === 'a', configurable: true}), get: (tg, key) => key === 'b' ? 'PW' + 'NED' : key === 'a' ? 'safe' : undefined});
globalThis.__codemode_result__ = await t.echo(p);`,
		want: ok(`{"a":"safe"}`), check: toolSaw(`{"a":"safe"}`)},
	// Wall: the binding reads each value once: the gate and the tool see
	// the same input.
	{name: "proxy-input-switching-get", cat: catCMReflection, module: true,
		script: importTest + `let n = 0; const p = new Proxy({a: 0}, {get: (tg, key) => key === 'a' ? (n++ === 0 ? 'first' : 'PW' + 'NED') : undefined});
globalThis.__codemode_result__ = [await t.echo(p), n];`,
		want: ok(`[{"a":"first"}, 1]`), check: toolSaw(`{"a":"first"}`)},
	// Wall: the binding, a proxy of an array is an array: refused.
	{name: "proxy-array-input", cat: catCMReflection, module: true, bypass: true,
		script: importTest + `let r; try { await t.count(new Proxy([], {})) } catch (e) { r = e.name } globalThis.__codemode_result__ = r;`,
		want:   ok(`"SchemaValidationError"`)},
	// Wall: the deadline, discovery options behind a looping trap.
	{name: "discovery-options-trap-loops", cat: catCMReflection, module: true, preset: presets.Balanced, limits: short,
		script: `import { listTools } from "@codemode/discovery"; globalThis.__codemode_result__ = await listTools('test', new Proxy({}, {ownKeys() { for (;;) {} }}));`,
		want:   timedOut},
	// Wall: the proxy depth cap, a chain by targets.
	{name: "proxy-chain-by-target", cat: catCMReflection, module: true, isolate: true,
		script: `globalThis.__codemode_result__ = Array.from({length: 1e4}).reduce(q => new Proxy(q, {}), {}).x;`,
		want:   rangeError},
	// Wall: the proxy depth cap, a chain by handlers.
	{name: "proxy-chain-by-handler", cat: catCMReflection, module: true, isolate: true,
		script: `globalThis.__codemode_result__ = Array.from({length: 1e4}).reduce(h => new Proxy({}, h), {}).x;`,
		want:   rangeError},
	// Wall: the memory budget. A chain of proxies through prototypes
	// evades the depth cap, and each lookup along it recurses on the Go
	// stack; it is walked without harm, or stopped by the heap watchdog.
	{name: "proxy-chain-by-prototype", cat: catCMReflection, module: true, isolate: true, preset: presets.Balanced, limits: longDeadline,
		script: `let p = {}; const h = {}; for (let i = 0; i < 3e5; i++) { p = new Proxy(Object.create(p), h) } globalThis.__codemode_result__ = p.x === undefined;`,
		want:   ok(`true`), orWant: memoryLimit},
	// Wall: console serialisation falls back for a revoked proxy.
	{name: "console-revoked-proxy", cat: catCMReflection, module: true,
		script: `const {proxy, revoke} = Proxy.revocable({a: 1}, {}); revoke(); console.log('p', proxy); globalThis.__codemode_result__ = 'done';`,
		want:   ok(`"done"`),
		check: func(t *testing.T, h *host, r *response) {
			if len(r.Logs) != 1 || r.Logs[0].Message != "p [Unserializable Object]" {
				t.Errorf("logs = %+v, want one line with the fallback", r.Logs)
			}
		}},
	// Wall: the deadline, console serialisation of a looping trap.
	{name: "console-proxy-ownKeys-loops", cat: catCMReflection, module: true, preset: presets.Balanced, limits: short,
		script: `console.log(new Proxy({}, {ownKeys() { for (;;) {} }}));`,
		want:   timedOut},
}

// cmPollutionCases change the global object and the built-ins before the
// host makes something of its own (the error classes are made on first
// use), and check that nothing of it reaches the host or the next run.
var cmPollutionCases = []attackCase{
	// Wall: the error classes extend the runtime's Error, whatever the
	// global Error is when the first failed call makes them (they used to
	// be made by looking Error up on the plan's global object: the
	// plan's class became their base, and its constructor ran inside the
	// host's settling of the call).
	{name: "global-Error-before-first-failure", cat: catCMPollution, module: true,
		script: importTest + `let ran = 0;
Object.defineProperty(globalThis, 'Error', {value: class extends Object { constructor() { super(); ran++; this.forged = true } }});
let r;
try { await t.fail({reason: 'x'}) } catch (e) { r = [e.name, e.code, e.toolName, e.forged === undefined, ran] }
globalThis.__codemode_result__ = r;`,
		want: ok(`["ToolCallError", "EXECUTION", "test.fail", true, 0]`)},
	// Wall: the same with a base whose constructor throws: the failed
	// call still rejects with a ToolCallError the plan catches.
	{name: "global-Error-throws-before-first-failure", cat: catCMPollution, module: true,
		script: importTest + `Object.defineProperty(globalThis, 'Error', {value: function () { throw new RangeError('forged base') }});
let r;
try { await t.fail({}) } catch (e) { r = ['caught', e.name, e.message.includes('forged')] }
globalThis.__codemode_result__ = r;`,
		want: ok(`["caught", "ToolCallError", false]`)},
	// Wall: the same with a base whose constructor calls a tool and never
	// returns: it never runs, so no call starts from inside the host's
	// settling of another.
	{name: "global-Error-loops-before-first-failure", cat: catCMPollution, module: true, preset: presets.Balanced, limits: short,
		script: importTest + `Object.defineProperty(globalThis, 'Error', {value: function () { t.count({}); for (;;) {} }});
let r; try { await t.fail({}) } catch (e) { r = e.name }
globalThis.__codemode_result__ = r;`,
		want: ok(`"ToolCallError"`), check: countRan(0)},
	// Wall: the same when the global object has lost every built-in.
	{name: "global-prototype-null-before-first-failure", cat: catCMPollution, module: true,
		script: importTest + `const g = globalThis; Object.setPrototypeOf(g, null);
let r; try { await t.fail({}) } catch (e) { r = e.name }
g.__codemode_result__ = r;`,
		want: ok(`"ToolCallError"`)},
	// Wall: the same with a proxy under the global object that sees every
	// lookup: the host's classes look nothing up there.
	{name: "global-prototype-proxy-before-first-failure", cat: catCMPollution, module: true,
		script: importTest + `const g = globalThis; const looked = [];
Object.setPrototypeOf(g, new Proxy(Object.getPrototypeOf(g), {get(tg, key, rc) { if (key === 'Error') { looked.push(key); return class { constructor() { looked.push('ran') } } } return Reflect.get(tg, key, rc) }}));
let r; try { await t.fail({}) } catch (e) { r = [e.name, e.code] }
g.__codemode_result__ = [r, looked];`,
		want: ok(`[["ToolCallError", "EXECUTION"], []]`)},
	// Wall: the tool-call cap's SandboxLimitError too, made first at the
	// cap, after the plan replaced Error.
	{name: "global-Error-before-call-cap", cat: catCMPollution, module: true,
		script: importTest + `Object.defineProperty(globalThis, 'Error', {value: function () { throw new RangeError('forged base') }});
await Promise.all(Array.from({length: 200}, () => t.count({})));`,
		want: toolCallCap, check: countAtMost(100)},
	// Wall: a fresh sandbox per run. What one run pollutes, the next does
	// not see.
	{name: "builtins-next-run", cat: catCMPollution, module: true,
		script: importTest + keys + `Object[P].polluted = 'yes'; Array[P].map = () => ['forged']; Error[P].code = 'FORGED';
Promise[P].then = function () { return 'forged' }; JSON.parse = () => 'forged'; Object.freeze(Object[P]);
globalThis.__codemode_result__ = 'polluted';`,
		want: ok(`"polluted"`),
		check: nextRun(keys+`globalThis.__codemode_result__ = [({}).polluted === undefined, [1].map(x => x + 1), Error[P].code === undefined, JSON.parse('1'), Object.isFrozen(Object[P])];`,
			`[true, [2], true, 1, false]`)},
	// Wall: the same for the global object and the namespaces.
	{name: "globals-next-run", cat: catCMPollution, module: true,
		script: importTest + `globalThis.leak = 'yes'; Object.defineProperty(globalThis, 'Error', {value: 1}); Object.setPrototypeOf(globalThis, null);`,
		want:   ok(`null`),
		check: nextRun(importTest+`globalThis.__codemode_result__ = [typeof leak, typeof Error, Object.isFrozen(t), Object.keys(t).length];`,
			`["undefined", "function", true, 9]`)},
	// Wall: the same after a run that ended at its deadline in the
	// middle of a tool call.
	{name: "interrupted-run-next-run", cat: catCMPollution, module: true, limits: short,
		script: importTest + keys + `Object[P].polluted = 'yes'; await t.sleep({ms: 60000});`,
		want:   timedOut,
		check:  nextRun(`globalThis.__codemode_result__ = ({}).polluted === undefined;`, `true`)},
}

func TestCodeModeImports(t *testing.T)    { runCases(t, importCases) }
func TestCodeModeNamespaces(t *testing.T) { runCases(t, namespaceCases) }
func TestCodeModeResult(t *testing.T)     { runCases(t, resultCases) }
func TestCodeModeTimers(t *testing.T)     { runCases(t, cmTimerCases) }
func TestCodeModeReflection(t *testing.T) { runCases(t, reflectionCases) }
func TestCodeModePollution(t *testing.T)  { runCases(t, cmPollutionCases) }
