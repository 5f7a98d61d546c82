package attacks

import (
	"testing"

	"github.com/codecall-go/codecall/presets"
)

// constructorCases try to reach the Function constructor (or one of its
// async/generator siblings) and build code from a string. Named access to
// .constructor is refused by the validator; computed and indirect routes
// can only be stopped by the hardened runtime. Either way the payload,
// which returns the marker, must never run.
var constructorCases = []attackCase{
	// Wall: validator, .constructor on a function expression.
	{name: "function-expression", cat: catConstructor,
		script: `return (function(){}).constructor("return 'PW'+'NED'")()`,
		want:   bannedMember},
	// Wall: validator, .constructor on an arrow function.
	{name: "arrow", cat: catConstructor,
		script: `return (() => 0).constructor("return 'PW'+'NED'")()`,
		want:   bannedMember},
	// Wall: validator, AsyncFunction through an async function.
	{name: "async-function", cat: catConstructor,
		script: `return await (async function(){}).constructor("return 'PW'+'NED'")()`,
		want:   bannedMember},
	// Wall: validator, GeneratorFunction through a generator.
	{name: "generator", cat: catConstructor,
		script: `return (function*(){}).constructor("return 'PW'+'NED'")().next().value`,
		want:   bannedMember},
	// Wall: validator, AsyncGeneratorFunction (goja has none; the validator
	// refuses the member before the compiler would).
	{name: "async-generator", cat: catConstructor,
		script: `return (async function*(){}).constructor("return 'PW'+'NED'")`,
		want:   bannedMember},
	// Wall: validator, Reflect is banned outright.
	{name: "reflect-get-named", cat: catConstructor,
		script: `return Reflect.get(callTool, 'constr' + 'uctor')("return 'PW'+'NED'")()`,
		want:   bannedIdentifier},
	// Wall: validator, a class's constructor property.
	{name: "class", cat: catConstructor,
		script: `class A {}; return A.constructor("return 'PW'+'NED'")()`,
		want:   bannedMember},
	// Wall: validator, a bound function.
	{name: "bound-function", cat: catConstructor,
		script: `const b = (function(){}).bind(null); return b.constructor("return 'PW'+'NED'")()`,
		want:   bannedMember},
	// Wall: validator, a method shorthand.
	{name: "method-shorthand", cat: catConstructor,
		script: `const o = {m(){ return 1 }}; return o.m.constructor("return 'PW'+'NED'")()`,
		want:   bannedMember},
	// Wall: validator, a getter taken from its descriptor.
	{name: "getter-function", cat: catConstructor,
		script: `const d = Object.getOwnPropertyDescriptor({get g(){ return 1 }}, 'g'); return d.get.constructor("return 'PW'+'NED'")()`,
		want:   bannedMember},
	// Wall: validator, AsyncFunction through Object.getPrototypeOf.
	{name: "getPrototypeOf-async", cat: catConstructor,
		script: `return await Object.getPrototypeOf(async function(){}).constructor("return 'PW'+'NED'")()`,
		want:   bannedMember},
	// Wall: validator, Function named as an identifier.
	{name: "reflect-construct-Function", cat: catConstructor,
		script: `return Reflect.construct(Function, ["return 'PW'+'NED'"])()`,
		want:   bannedIdentifier},
	// Wall: validator, the injected callTool's constructor.
	{name: "callTool-constructor", cat: catConstructor,
		script: `return callTool.constructor("return 'PW'+'NED'")()`,
		want:   bannedMember},
	// Wall: validator, the injected getTool's constructor.
	{name: "getTool-constructor", cat: catConstructor,
		script: `return getTool.constructor("return 'PW'+'NED'")()`,
		want:   bannedMember},
	// Wall: validator, a console method's constructor.
	{name: "console-log-constructor", cat: catConstructor,
		script: `return console.log.constructor("return 'PW'+'NED'")()`,
		want:   bannedMember},
	// Wall: validator, codecallContext → Object → Function.
	{name: "codecallContext-constructor-constructor", cat: catConstructor,
		script: `return codecallContext.constructor.constructor("return 'PW'+'NED'")()`,
		want:   bannedMember},
	// Wall: validator, a Promise returned by callTool.
	{name: "callTool-promise-constructor", cat: catConstructor,
		script: `const p = callTool('test.echo', {}); return p.constructor.constructor("return 'PW'+'NED'")()`,
		want:   bannedMember},
	// Wall: validator, then of a callTool promise.
	{name: "callTool-promise-then-constructor", cat: catConstructor,
		script: `const p = callTool('test.echo', {}); return p.then.constructor("return 'PW'+'NED'")()`,
		want:   bannedMember},
	// Wall: validator, an error thrown by a host function.
	{name: "host-error-constructor", cat: catConstructor,
		script: `try { callTool(1) } catch (e) { return e.constructor.constructor("return 'PW'+'NED'")() } return 'no error'`,
		want:   bannedMember},
	// Wall: validator, the error of a rejected callTool.
	{name: "rejected-callTool-constructor", cat: catConstructor,
		script: `try { await callTool('test.fail', {}) } catch (e) { return e.constructor.constructor("return 'PW'+'NED'")() } return 'no error'`,
		want:   bannedMember},
	// Wall: validator, GeneratorFunction with new.
	{name: "new-generator-function", cat: catConstructor,
		script: `return new (Object.getPrototypeOf(function*(){}).constructor)("return 'PW'+'NED'")().next().value`,
		want:   bannedMember},
	// Wall: validator, Function.prototype.call.call names Function.
	{name: "function-prototype-call-call", cat: catConstructor,
		script: `return Function.prototype.call.call(Function, null, "return 'PW'+'NED'")()`,
		want:   bannedIdentifier},
	// Wall: validator, a string-literal computed key is still a name.
	{name: "string-literal-key", cat: catConstructor,
		script: `return (function(){})['constructor']("return 'PW'+'NED'")()`,
		want:   bannedMember},

	// Wall: runtime. A key the validator cannot see.
	{name: "computed-key-concat", cat: catConstructor,
		script: `const k = 'constr' + 'uctor'; return (function(){})[k]("return 'PW'+'NED'")()`,
		want:   codeGeneration},
	// Wall: runtime. A key built from character codes.
	{name: "computed-key-fromCharCode", cat: catConstructor,
		script: `const k = String.fromCharCode(99,111,110,115,116,114,117,99,116,111,114); return (() => 0)[k]("return 'PW'+'NED'")()`,
		want:   codeGeneration},
	// Wall: runtime. AsyncFunction through a computed key.
	{name: "computed-key-async", cat: catConstructor,
		script: `const k = ['con','str','uctor'].join(''); return await Object.getPrototypeOf(async () => 0)[k]("return 'PW'+'NED'")()`,
		want:   codeGeneration},
	// Wall: runtime. GeneratorFunction through a computed key, with new.
	{name: "computed-key-new-generator", cat: catConstructor,
		script: `const k = 'constr' + 'uctor'; const G = Object.getPrototypeOf(function*(){})[k]; return new G("yield 'PW'+'NED'")().next().value`,
		want:   codeGeneration},
	// Wall: runtime. A walk over Function.prototype's own properties.
	{name: "getOwnPropertyNames-walk", cat: catConstructor,
		script: `const fp = Object.getPrototypeOf(function(){});
const name = Object.getOwnPropertyNames(fp).find(n => n.length === 11 && n.startsWith('constr'));
const F = Object.getOwnPropertyDescriptor(fp, name).value;
return F("return 'PW'+'NED'")()`,
		want: codeGeneration},
	// Wall: runtime. Function.prototype.apply on a Function found by key.
	{name: "apply-computed", cat: catConstructor,
		script: `const F = callTool['constr' + 'uctor']; return F.apply(null, ["return 'PW'+'NED'"])()`,
		want:   codeGeneration},
	// Wall: runtime. new on a Function found by key.
	{name: "new-computed", cat: catConstructor,
		script: `const F = getTool['constr' + 'uctor']; return new F("return 'PW'+'NED'")()`,
		want:   codeGeneration},
	// Wall: runtime. A Function found by key, destructured under another
	// name.
	{name: "destructured-computed", cat: catConstructor,
		script: `const {['constr' + 'uctor']: F} = mcpLog; return F("return 'PW'+'NED'")()`,
		want:   codeGeneration},
	// Wall: runtime. Function.prototype.call.call over a computed Function.
	{name: "call-call-computed", cat: catConstructor,
		script: `const fp = Object.getPrototypeOf(callTool); const F = fp['constr' + 'uctor']; return fp.call.call(F, null, "return 'PW'+'NED'")()`,
		want:   codeGeneration},
	// Wall: runtime. A host error's constructor chain by computed keys.
	{name: "host-error-computed", cat: catConstructor,
		script: `const k = 'constr' + 'uctor'; try { callTool(1) } catch (e) { return e[k][k]("return 'PW'+'NED'")() } return 'no error'`,
		want:   codeGeneration},
	// Wall: runtime. A rejected callTool error's constructor chain.
	{name: "rejected-callTool-computed", cat: catConstructor,
		script: `const k = 'constr' + 'uctor'; try { await callTool('test.fail', {}) } catch (e) { return e[k][k]("return 'PW'+'NED'")() } return 'no error'`,
		want:   codeGeneration},
	// Wall: runtime. codecallContext → Object → Function by computed keys.
	{name: "codecallContext-computed", cat: catConstructor,
		script: `const k = 'constr' + 'uctor'; return codecallContext[k][k]("return 'PW'+'NED'")()`,
		want:   codeGeneration},
	// Wall: runtime. A callTool promise's then, by computed key.
	{name: "promise-then-computed", cat: catConstructor,
		script: `const k = 'constr' + 'uctor'; const p = callTool('test.echo', {}); return p.then[k]("return 'PW'+'NED'")()`,
		want:   codeGeneration},
	// Wall: runtime. Symbol.species makes then() hand its internal
	// executor function to the plan; the executor's Function must be dead.
	{name: "symbol-species-promise-executor", cat: catConstructor,
		script: `const k = 'constr' + 'uctor';
let leaked;
function Fake(executor) { leaked = executor; executor(() => 0, () => 0); }
const p = Promise.resolve(1);
p[k] = {[Symbol.species]: Fake};
p.then(() => 0);
return leaked[k]("return 'PW'+'NED'")()`,
		want: codeGeneration},
	// Wall: runtime. Symbol.species on an array makes map() construct
	// with a plan-chosen function; it still reaches no Function.
	{name: "symbol-species-array", cat: catConstructor,
		script: `const k = 'constr' + 'uctor';
const a = [1];
a[k] = {[Symbol.species]: (Object.getPrototypeOf(async () => 0))[k]};
return await a.map(x => x)[0]`,
		want: codeGeneration},
	// Wall: runtime. A bound Function keeps pointing at the dead
	// constructor.
	{name: "bind-computed-function", cat: catConstructor,
		script: `const F = (x => x)['constr' + 'uctor'].bind(null, "return 'PW'+'NED'"); return F()()`,
		want:   codeGeneration},
	// Wall: runtime. The refusal cannot be swallowed by try/catch and
	// then ignored: the run ends illegal_access even if the plan catches.
	{name: "caught-code-generation", cat: catConstructor,
		script: `let r = 'caught'; try { r = (x => x)['constr' + 'uctor']("return 'PW'+'NED'")() } catch (e) { r = 'caught: ' + e.message } return r`,
		want:   codeGeneration},
	// Wall: runtime, balanced preset (the only in-process wall for it).
	{name: "computed-key-balanced", cat: catConstructor, preset: presets.Balanced,
		script: `const k = 'constr' + 'uctor'; return (function(){})[k]("return 'PW'+'NED'")()`,
		want:   codeGeneration},
	// Wall: runtime. eval reached through a global-object lookup.
	{name: "indirect-eval-computed", cat: catConstructor,
		script: `const g = (function(){ return this })() || {}; const e = g['ev' + 'al']; return typeof e === 'function' ? e("'PW'+'NED'") : 'no eval: ' + typeof e`,
		want:   ok(`"no eval: undefined"`)},
}

func TestConstructorEscapes(t *testing.T) { runCases(t, constructorCases) }
