package vm

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
)

func smallMemory(l *presets.Limits) { l.MemoryBytes = 16 << 20 }

func runCases(t *testing.T, cases []hardeningCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkWant(t, c.run(t), c.want) })
	}
}

func TestURL(t *testing.T) {
	runCases(t, []hardeningCase{
		{name: "components", script: `const u = new URL('HTTPS://user:pw@Example.COM:8080/a/./b/../c?x=1&y=2#h');
			return [u.href, u.origin, u.protocol, u.username, u.password, u.host, u.hostname, u.port, u.pathname, u.search, u.hash, String(u), u.toJSON()]`,
			want: okWith(`["https://user:pw@example.com:8080/a/c?x=1&y=2#h","https://example.com:8080","https:","user","pw","example.com:8080","example.com","8080","/a/c","?x=1&y=2","#h","https://user:pw@example.com:8080/a/c?x=1&y=2#h","https://user:pw@example.com:8080/a/c?x=1&y=2#h"]`)},
		{name: "relative to a base", script: `return [new URL('../x?y#z', 'https://a.org/b/c').href, new URL('//cdn.net/f', 'https://a.org/').href, new URL('?q', new URL('http://a/b')).href]`,
			want: okWith(`["https://a.org/x?y#z","https://cdn.net/f","http://a/b?q"]`)},
		{name: "hosts", script: `return ['http://[::1]:80/', 'http://0x7f.1/', 'http://münchen.de/', 'http://EX%41MPLE.com/'].map(s => new URL(s).host)`,
			want: okWith(`["[::1]","127.0.0.1","xn--mnchen-3ya.de","example.com"]`)},
		{name: "percent-encoding", script: `return new URL('https://x.org/a b/é?q=a b\'#f g').href`,
			want: okWith(`"https://x.org/a%20b/%C3%A9?q=a%20b%27#f%20g"`)},
		{name: "opaque", script: `const u = new URL('mailto:ada@example.com'); return [u.origin, u.pathname, u.host, u.protocol]`,
			want: okWith(`["null","ada@example.com","","mailto:"]`)},
		{name: "setters", script: `const u = new URL('http://a.org/p');
			u.protocol = 'https'; u.host = 'b.org:81'; u.pathname = '/x y'; u.search = 'a=1'; u.hash = 'h';
			u.username = 'u@'; u.password = 'p'; u.port = ''; const before = u.href; u.hostname = 'c.org'; u.port = '8080abc';
			return [before, u.href]`,
			want: okWith(`["https://u%40:p@b.org/x%20y?a=1#h","https://u%40:p@c.org:8080/x%20y?a=1#h"]`)},
		{name: "setters ignore invalid values", script: `const u = new URL('http://a.org/p'); u.protocol = 'mailto'; u.host = 'a b'; u.port = 'x'; u.hostname = 'c.org:1'; return u.href`,
			want: okWith(`"http://a.org/p"`)},
		{name: "href setter", script: `const u = new URL('http://a.org/?x=1'); const p = u.searchParams; u.href = 'https://b.org/?y=2'; return [u.href, p.get('y'), p.has('x')]`,
			want: okWith(`["https://b.org/?y=2","2",false]`)},
		{name: "href setter refuses an invalid URL", script: `const u = new URL('http://a.org/'); try { u.href = 'nope' } catch (e) { return [e.name, u.href] }`,
			want: okWith(`["TypeError","http://a.org/"]`)},
		{name: "searchParams is live", script: `const u = new URL('https://x.org/?a=1');
			const p = u.searchParams; p.append('b', 'c d'); p.set('a', '2'); const mid = u.href;
			u.search = '?z=9'; const after = [...p]; p.delete('z');
			return [mid, after, u.href, u.searchParams === p]`,
			want: okWith(`["https://x.org/?a=2&b=c+d",[["z","9"]],"https://x.org/",true]`)},
		{name: "invalid", script: `const out = []; for (const [s, b] of [['nope'], ['http://a b/'], ['x', 'also nope'], ['http://[::1/'], ['http://1.2.3.256/']]) { try { new URL(s, b) } catch (e) { out.push(e.name) } } return out`,
			want: okWith(`["TypeError","TypeError","TypeError","TypeError","TypeError"]`)},
		{name: "canParse and parse", script: `return [URL.canParse('http://a'), URL.canParse('x'), URL.canParse('x', 'http://a/'), URL.parse('x'), URL.parse('/y', 'http://a/b').href, URL.parse('http://a') instanceof URL]`,
			want: okWith(`[true,false,true,null,"http://a/y",true]`)},
		{name: "as a tool input", script: `const r = await callTool('t', {u: new URL('http://a/b'), p: new URLSearchParams('x=1')}); return r.input`, want: okWith(`{"u":"http://a/b","p":{}}`)},
		{name: "JSON", script: `return JSON.parse(JSON.stringify({u: new URL('http://a/b')}))`, want: okWith(`{"u":"http://a/b"}`)},
		{name: "as a result", script: `return new URL('http://a/b')`, want: okWith(`"http://a/b"`)},
		{name: "subclass", script: `class Link extends URL { get label() { return this.hostname + this.pathname } } const l = new Link('http://a.org/x'); return [l.label, l instanceof URL, l.href]`,
			want: okWith(`["a.org/x",true,"http://a.org/x"]`)},
		{name: "coerces its argument once", script: `let n = 0; const s = {toString() { n++; return 'http://a/' }}; new URL(s); return n`, want: okWith(`1`)},
		{name: "lone surrogates", script: `return new URL('http://a/\ud800').pathname`, want: okWith(`"/%EF%BF%BD"`)},
		{name: "no own properties", script: `const u = new URL('http://a/'); return [Object.keys(u), Object.getOwnPropertyNames(u), {...u}]`, want: okWith(`[[],[],{}]`)},
		{name: "interface members are enumerable", script: `return Object.keys(URL.prototype).sort()`,
			want: okWith(`["hash","host","hostname","href","origin","password","pathname","port","protocol","search","searchParams","toJSON","toString","username"]`)},
	})
}

func TestURLSearchParams(t *testing.T) {
	runCases(t, []hardeningCase{
		{name: "from a string", script: `const p = new URLSearchParams('?a=1&b=x+y&c=%20%zz&&d&=e'); return [...p]`,
			want: okWith(`[["a","1"],["b","x y"],["c"," %zz"],["d",""],["","e"]]`)},
		{name: "from an object, pairs and another", script: `const a = new URLSearchParams({x: 1, y: 'two'}); const b = new URLSearchParams([['k', 'v'], new Set(['s', 't'])]); const c = new URLSearchParams(a); a.append('z', '3');
			return [a.toString(), b.toString(), c.toString()]`,
			want: okWith(`["x=1&y=two&z=3","k=v&s=t","x=1&y=two"]`)},
		{name: "methods", script: `const p = new URLSearchParams('a=1&b=2&a=3&c=4');
			const r = [p.get('a'), p.get('nope'), p.getAll('a'), p.has('b'), p.has('a', '3'), p.has('a', '9'), p.size];
			p.delete('a', '3'); r.push(p.toString()); p.set('a', 'x'); p.append('a', 'y'); p.set('a', 'z'); r.push(p.toString()); p.delete('b'); r.push(p.toString(), p.size);
			return r`,
			want: okWith(`["1",null,["1","3"],true,true,false,4,"a=1&b=2&c=4","a=z&b=2&c=4","a=z&c=4",2]`)},
		{name: "sort is stable by UTF-16 code units", script: `const p = new URLSearchParams([['b', '1'], ['\uFFFD', '1'], ['a', '1'], ['\u{1F600}', '1'], ['b', '2'], ['a', '2']]); p.sort(); return [...p.keys()].map(k => k.codePointAt(0)).concat([...p.values()].map(Number))`,
			want: okWith(`[97,97,98,98,128512,65533,1,2,1,2,1,1]`)},
		{name: "serialisation", script: `return new URLSearchParams({'a b': 'c&d=e', 'é': "~*-._!'()"}).toString()`,
			want: okWith(`"a+b=c%26d%3De&%C3%A9=%7E*-._%21%27%28%29"`)},
		{name: "iteration", script: `const p = new URLSearchParams('a=1&b=2'); const it = p.keys(); const first = it.next(); p.append('c', '3');
			const out = []; p.forEach(function (v, k, o) { out.push([k, v, o === p, this.t]) }, {t: 'this'});
			return [first, [...it], [...p.values()], [...p.entries()], out, Object.prototype.toString.call(it), it[Symbol.iterator]() === it]`,
			want: okWith(`[{"value":"a","done":false},["b","c"],["1","2","3"],[["a","1"],["b","2"],["c","3"]],[["a","1",true,"this"],["b","2",true,"this"],["c","3",true,"this"]],"[object URLSearchParams Iterator]",true]`)},
		{name: "bad pairs", script: `const out = []; for (const init of [[['a']], [['a', 'b', 'c']], [1]]) { try { new URLSearchParams(init) } catch (e) { out.push(e.name) } } return out`,
			want: okWith(`["TypeError","TypeError","TypeError"]`)},
		{name: "required arguments", script: `const p = new URLSearchParams(); try { p.append('a') } catch (e) { return e.name }`, want: okWith(`"TypeError"`)},
		{name: "null is a string", script: `return new URLSearchParams(null).toString()`, want: okWith(`"null="`)},
	})
}

func TestTextEncoding(t *testing.T) {
	runCases(t, []hardeningCase{
		{name: "encode", script: `const e = new TextEncoder(); const b = e.encode('hé€😀'); return [e.encoding, b instanceof Uint8Array, b.constructor === Uint8Array, Array.from(b), e.encode().length, Array.from(e.encode('\ud800'))]`,
			want: okWith(`["utf-8",true,true,[104,195,169,226,130,172,240,159,152,128],0,[239,191,189]]`)},
		{name: "encodeInto", script: `const e = new TextEncoder(); const u = new Uint8Array(6);
			return [e.encodeInto('a😀b', u), Array.from(u), e.encodeInto('héllo', new Uint8Array(2)), e.encodeInto('', new Uint8Array(0)), e.encodeInto('xyz', new Uint8Array(new ArrayBuffer(8), 6))]`,
			want: okWith(`[{"read":4,"written":6},[97,240,159,152,128,98],{"read":1,"written":1},{"read":0,"written":0},{"read":2,"written":2}]`)},
		{name: "encodeInto needs a Uint8Array", script: `const out = []; for (const d of [new Uint8ClampedArray(4), [0, 0], new Uint16Array(4), {length: 4}]) { try { new TextEncoder().encodeInto('a', d) } catch (e) { out.push(e.name) } } return out`,
			want: okWith(`["TypeError","TypeError","TypeError","TypeError"]`)},
		{name: "decode", script: `const d = new TextDecoder(); const b = new TextEncoder().encode('\uFEFFhé€');
			return [d.encoding, d.fatal, d.ignoreBOM, d.decode(b), d.decode(b.buffer), d.decode(new DataView(b.buffer, 3)), d.decode(new Uint16Array([0x6968])), d.decode(), new TextDecoder('utf-8', {ignoreBOM: true}).decode(b).length]`,
			want: okWith(`["utf-8",false,false,"hé€","hé€","hé€","hi","",4]`)},
		{name: "replacement", script: `return new TextDecoder().decode(new Uint8Array([0x61, 0xF0, 0x9F, 0x98, 0x62, 0xFF, 0xED, 0xA0, 0x80]))`,
			want: okWith(`"a\ufffdb\ufffd\ufffd\ufffd\ufffd"`)},
		{name: "fatal", script: `const d = new TextDecoder('utf8', {fatal: true}); try { d.decode(new Uint8Array([0xC3])) } catch (e) { return [e.name, d.fatal, d.decode(new Uint8Array([0xC3, 0xA9]))] }`,
			want: okWith(`["TypeError",true,"é"]`)},
		{name: "stream", script: `const d = new TextDecoder(); const b = new TextEncoder().encode('\uFEFF€😀');
			let s = ''; for (const byte of b) s += d.decode(new Uint8Array([byte]), {stream: true}); s += d.decode(); return s`,
			preset: presets.Balanced, want: okWith(`"€😀"`)},
		{name: "labels", script: `const out = [new TextDecoder(' UTF-8 ').encoding, new TextDecoder('unicode-1-1-utf-8').encoding]; try { new TextDecoder('latin1') } catch (e) { out.push(e.name) } return out`,
			want: okWith(`["utf-8","utf-8","RangeError"]`)},
		{name: "bad input", script: `try { new TextDecoder().decode('abc') } catch (e) { return e.name }`, want: okWith(`"TypeError"`)},
	})
}

func TestStructuredClone(t *testing.T) {
	runCases(t, []hardeningCase{
		{name: "plain data", script: `const v = {a: [1, 'x', null, undefined, true, {b: -0}], n: NaN, s: 'str', o: {deep: {er: [[]]}}}; const c = structuredClone(v);
			return [c !== v, c.a !== v.a, JSON.stringify(c) === JSON.stringify(v), Object.is(c.a[5].b, -0), Number.isNaN(c.n), 3 in c.a, c.a.length]`,
			want: okWith(`[true,true,true,true,true,true,6]`)},
		{name: "primitives", script: `return [structuredClone(1), structuredClone('s'), structuredClone(null), structuredClone(undefined), structuredClone(true)]`,
			want: okWith(`[1,"s",null,null,true]`)},
		{name: "cycles and shared references", script: `const shared = {x: 1}; const o = {a: shared, b: shared, list: [shared]}; o.self = o; o.list.push(o.list);
			const c = structuredClone(o); return [c.self === c, c.a === c.b, c.list[0] === c.a, c.list[1] === c.list, c.a !== shared]`,
			want: okWith(`[true,true,true,true,true]`)},
		{name: "holes and extra array properties", script: `const a = [1, , 3]; a.extra = 'e'; a.length = 5; const c = structuredClone(a); return [c.length, 1 in c, c.extra, Array.isArray(c)]`,
			want: okWith(`[5,false,"e",true]`)},
		{name: "built-in types", script: `const m = new Map([[{k: 1}, new Set([1, 2])], ['s', new Date(42)]]);
			const c = structuredClone({m, r: /a+b/gi, d: new Date(NaN), w: [new Number(3), new String('s'), new Boolean(false)]});
			const [[k, set], [s, d]] = [...c.m];
			return [c.m instanceof Map, k.k, [...set], s, d.getTime(), c.r.source, c.r.flags, c.r instanceof RegExp, Number.isNaN(c.d.getTime()), c.w.map(x => typeof x), c.w.map(x => x.valueOf())]`,
			want: okWith(`[true,1,[1,2],"s",42,"a+b","gi",true,true,["object","object","object"],[3,"s",false]]`)},
		{name: "buffers and views", script: `const buf = new ArrayBuffer(8); const u8 = new Uint8Array(buf); u8.set([1, 2, 3, 4, 5, 6, 7, 8]);
			const v = {buf, u8, f: new Float64Array([1.5]), cl: new Uint8ClampedArray([300]), dv: new DataView(buf, 2, 4), sub: u8.subarray(4)};
			const c = structuredClone(v); u8[0] = 99;
			return [c.u8[0], c.buf === c.u8.buffer, c.sub.buffer === c.buf, c.sub.byteOffset, c.dv.byteOffset, c.dv.getUint8(0), c.f[0], Object.prototype.toString.call(c.cl), c.dv instanceof DataView]`,
			want: okWith(`[1,true,true,4,2,3,1.5,"[object Uint8ClampedArray]",true]`)},
		{name: "errors", script: `const e = new RangeError('r'); e.extra = 1; const c = structuredClone([e, new Error('x'), Object.assign(new Error('t'), {name: 'ToolError'})]);
			return c.map(x => [x instanceof Error, x.name, x.message])`,
			want: okWith(`[[true,"RangeError","r"],[true,"Error","x"],[true,"Error","t"]]`)},
		{name: "class instances lose their prototype", script: `class P { constructor() { this.x = 1 } get y() { return 2 } } const c = structuredClone(new P()); return [c instanceof P, c.x, c.y]`,
			want: okWith(`[false,1,null]`)},
		{name: "getters run once", script: `let n = 0; const c = structuredClone({get g() { n++; return {v: n} }}); return [c.g, n, Object.getOwnPropertyDescriptor(c, 'g').value.v]`,
			want: okWith(`[{"v":1},1,1]`)},
		{name: "uncloneable values", script: `const out = [];
			for (const v of [() => 1, Symbol('s'), {f() {}}, Promise.resolve(), [1].values(), new URL('http://a'), new URLSearchParams(), new TextEncoder(), new Proxy({}, {}), (function* () {})(), new WeakMap(), new WeakSet()]) {
				try { structuredClone(v); out.push('cloned') } catch (e) { out.push(e.name) } }
			return out`,
			want: okWith(`["DataCloneError","DataCloneError","DataCloneError","DataCloneError","DataCloneError","DataCloneError","DataCloneError","DataCloneError","DataCloneError","DataCloneError","DataCloneError","DataCloneError"]`)},
		{name: "transfer is refused", script: `const b = new ArrayBuffer(1); try { structuredClone(b, {transfer: [b]}) } catch (e) { return [e.name, structuredClone(b, {transfer: []}).byteLength] }`,
			want: okWith(`["DataCloneError",1]`)},
		{name: "needs an argument", script: `try { structuredClone() } catch (e) { return e.name }`, want: okWith(`"TypeError"`)},
	})
}

func TestTimers(t *testing.T) {
	runCases(t, []hardeningCase{
		{name: "await a delay", script: `const t0 = Date.now(); await new Promise(r => setTimeout(r, 30)); return Date.now() - t0 >= 25`, want: okWith(`true`)},
		{name: "order by delay then creation", script: `const out = []; const done = new Promise(r => setTimeout(r, 40));
			setTimeout(() => out.push('c'), 20); setTimeout(() => out.push('a'), 0); setTimeout(() => out.push('b'), 0); setTimeout(() => out.push('z'), -5);
			await done; return out`,
			want: okWith(`["a","b","z","c"]`)},
		{name: "arguments, this and ids", script: `const ids = []; const r = await new Promise(res => { ids.push(setTimeout(function (a, b) { res([a, b, this]) }, 1, 'x', 2)) }); ids.push(setTimeout(() => 0)); return [r, ids.every(Number.isInteger), ids[0] !== ids[1]]`,
			want: okWith(`[["x",2,null],true,true]`)},
		{name: "clearTimeout", script: `let fired = []; const a = setTimeout(() => fired.push('a'), 1); setTimeout(() => fired.push('b'), 1); clearTimeout(a); clearTimeout(a); clearTimeout('x'); clearTimeout(); clearTimeout(1.5); await new Promise(r => setTimeout(r, 10)); return fired`,
			want: okWith(`["b"]`)},
		{name: "promise jobs run between timers", script: `const out = []; setTimeout(() => { out.push(1); Promise.resolve().then(() => out.push(2)) }); setTimeout(() => out.push(3)); await new Promise(r => setTimeout(r, 5)); return out`,
			want: okWith(`[1,2,3]`)},
		{name: "odd delays", script: `for (const d of [NaN, -Infinity, Infinity, 1e300, '5', {valueOf() { return 1 }}, undefined, null]) setTimeout(() => 0, d); return 'ok'`,
			want: okWith(`"ok"`)},
		{name: "a timer fires while a call is in flight", host: &mcptest.Host{Delay: 150 * time.Millisecond},
			script: `const out = []; setTimeout(() => out.push('timer'), 5); await callTool('slow', {}); out.push('call'); return out`,
			want:   okWith(`["timer","call"]`)},
		{name: "timers do not keep the run alive", script: `setTimeout(() => { throw new Error('late') }, 2000); return 1`, want: okWith(`1`)},
		{name: "a callback that throws ends the run", script: `setTimeout(() => { throw new RangeError('in a timer') }, 1); await new Promise(r => setTimeout(r, 50)); return 1`,
			want: want{status: StatusRuntimeError, name: "RangeError", contains: "in a timer"}},
		{name: "waiting on a timer past the deadline", change: shortTimeout(300 * time.Millisecond),
			script: `await new Promise(r => setTimeout(r, 60000)); return 1`, want: want{status: StatusTimeout, contains: "timer"}},
		{name: "waiting on a long timer ends at the deadline", change: shortTimeout(300 * time.Millisecond),
			script: `await new Promise(r => setTimeout(r, 250)); await new Promise(r => setTimeout(r, 250)); return 1`, want: want{status: StatusTimeout}},
		{name: "never settles, no timer", script: `setTimeout(() => 0, 1); await new Promise(r => setTimeout(r, 5)); await new Promise(() => {}); return 1`,
			want: want{status: StatusRuntimeError, contains: "never settle"}},
		{name: "not a function", script: `setTimeout({}, 1)`, want: typeErr},
		{name: "maxTimers", change: func(l *presets.Limits) { l.MaxTimers = 3 },
			script: `for (let i = 0; i < 4; i++) { const t = setTimeout(() => 0, 1); clearTimeout(t) } return 1`,
			want:   want{status: StatusLimitExceeded, limit: LimitTimers, contains: "maxTimers"}},
		{name: "the limit cannot be caught", change: func(l *presets.Limits) { l.MaxTimers = 1 },
			script: `setTimeout(() => 0); try { setTimeout(() => 0) } catch (e) {} return 1`,
			want:   want{status: StatusLimitExceeded, limit: LimitTimers}},
		{name: "storm", script: `for (let i = 0; i < 1e6; i++) setTimeout(() => 0, i); return 1`,
			want: want{status: StatusLimitExceeded, limit: LimitTimers}},
		{name: "recursive", script: `function tick() { setTimeout(tick, 0) } tick(); await new Promise(() => {})`,
			want: want{status: StatusLimitExceeded, limit: LimitTimers}},
		{name: "code generation inside a callback", script: `setTimeout(() => { try { eval('1') } catch (e) {} }, 1); await new Promise(r => setTimeout(r, 20)); return 1`,
			want: codeGen},
	})
}

// TestTimersFollowThePlansClock checks that time a tool call spends
// waiting for a person (the clock suspended) does not count toward a
// timer's delay.
func TestTimersFollowThePlansClock(t *testing.T) {
	h := &mcptest.Host{Call: func(ctx context.Context, name string, _ map[string]any) (json.RawMessage, error) {
		resume := SuspendClock(ctx)
		defer resume()
		time.Sleep(300 * time.Millisecond)
		return json.RawMessage(`{}`), nil
	}}
	res := runScript(t, h, `const out = []; setTimeout(() => out.push('timer'), 100);
		await callTool('approve', {}); out.push('call');
		await new Promise(r => setTimeout(r, 200)); return out`)
	checkWant(t, res, okWith(`["call","timer"]`))
}

// TestWebGlobalsHardening covers the walls around the new globals.
func TestWebGlobalsHardening(t *testing.T) {
	runCases(t, []hardeningCase{
		{name: "frozen", script: `const p = new URLSearchParams(); return [URL, URL.prototype, URLSearchParams, URLSearchParams.prototype, Object.getPrototypeOf(p.keys()), TextEncoder, TextEncoder.prototype,
			TextDecoder, TextDecoder.prototype, structuredClone, setTimeout, clearTimeout, URL.canParse, Object.getOwnPropertyDescriptor(URL.prototype, 'href').set].every(Object.isFrozen)`,
			want: okWith(`true`)},
		{name: "cannot be extended", script: `URL.prototype.leak = 1; return 1`, want: typeErr},
		{name: "cannot be redefined", script: `Object.defineProperty(URL.prototype, 'href', {get() { return 1 }}); return 1`, want: typeErr},
		{name: "URL.constructor", script: `const k = 'constr' + 'uctor'; return URL[k]('return 1')`, want: codeGen},
		{name: "instance constructor chain", script: `const k = 'constr' + 'uctor'; return Object.getPrototypeOf(new URL('http://a'))[k][k]('return 1')`, want: codeGen},
		{name: "accessor constructor", script: `const k = 'constr' + 'uctor'; return Object.getOwnPropertyDescriptor(URL.prototype, 'href').get[k]('return 1')`, want: codeGen},
		{name: "iterator constructor", script: `const k = 'constr' + 'uctor'; return new URLSearchParams('a=1').keys().next[k]('return 1')`, want: codeGen},
		{name: "iterator prototype chain", script: `const k = 'constr' + 'uctor'; const ip = Object.getPrototypeOf(Object.getPrototypeOf(new URLSearchParams().keys())); return ip[Symbol.iterator][k]('return 1')`, want: codeGen},
		{name: "structuredClone constructor", script: `const k = 'constr' + 'uctor'; return structuredClone[k]('return 1')`, want: codeGen},
		{name: "setTimeout constructor", script: `const k = 'constr' + 'uctor'; return setTimeout[k]('return 1')`, want: codeGen},
		{name: "decoder constructor", script: `const k = 'constr' + 'uctor'; return new TextDecoder()[k][k]('return 1')`, want: codeGen},
		{name: "encoded bytes lead to the guarded Uint8Array", script: `const k = 'constr' + 'uctor'; return new (new TextEncoder().encode('a')[k])(2**33)`, want: tooBig},
		{name: "encoded bytes lead to the guarded %TypedArray%", script: `const k = 'constr' + 'uctor'; return Object.getPrototypeOf(new TextEncoder().encode('a')[k]).from({length: 2**33})`, want: tooBig},
		{name: "encoded bytes lead to the guarded ArrayBuffer", script: `const k = 'constr' + 'uctor'; return new (new TextEncoder().encode('a').buffer[k])(2**40)`, want: tooBig},
		{name: "cloned buffers lead to the guarded constructors", script: `const k = 'constr' + 'uctor'; const c = structuredClone(new Float64Array(1)); return new (c.buffer[k])(2**40)`, want: tooBig},
		{name: "brand checks", script: `const out = []; const href = Object.getOwnPropertyDescriptor(URL.prototype, 'href').get;
			for (const f of [() => href.call({}), () => URL.prototype.href, () => URLSearchParams.prototype.get.call(new URL('http://a'), 'x'),
				() => new URLSearchParams().keys().next.call({}), () => TextDecoder.prototype.decode.call(new TextEncoder()), () => URL.call({}, 'http://a'),
				() => URL.call(new URLSearchParams(), 'http://a')]) {
				try { f(); out.push('no error') } catch (e) { out.push(e.name) } }
			return out`,
			want: okWith(`["TypeError","TypeError","TypeError","TypeError","TypeError","TypeError","TypeError"]`)},
		{name: "names are plain", script: `const d = (o, k) => Object.getOwnPropertyDescriptor(o, k);
			return [URL.name, String(URL), d(URL.prototype, 'href').get.name, d(URL.prototype, 'href').set.name, URLSearchParams.prototype.append.name, setTimeout.name, structuredClone.name, TextEncoder.prototype.encode.name]`,
			want: okWith(`["URL","function URL() { [native code] }","get href","set href","append","setTimeout","structuredClone","encode"]`)},
		{name: "reassigning a global", script: `URL = 1`, want: want{status: StatusRuntimeError, name: "ReferenceError", contains: "cannot be reassigned"}},
		{name: "shadowing a global", script: `const URL = 1; const setTimeout = 2; return URL + setTimeout`, want: okWith(`3`)},
		{name: "lazy", script: `return [typeof URL, typeof URLSearchParams, typeof TextEncoder, typeof TextDecoder, typeof structuredClone, typeof setTimeout, typeof clearTimeout]`,
			want: okWith(`["function","function","function","function","function","function","function"]`)},
		{name: "every preset has them", preset: presets.LockedDown, script: `return [typeof URL, typeof structuredClone, typeof setTimeout, typeof TextDecoder]`,
			want: okWith(`["function","function","function","function"]`)},
	})
}

// TestWebGlobalsLimits covers the size caps.
func TestWebGlobalsLimits(t *testing.T) {
	runCases(t, []hardeningCase{
		{name: "long URL", script: `return new URL('http://a/' + 'x'.repeat(5e6)).href.length`, want: tooBig},
		{name: "long base", script: `return new URL('x', 'http://a/' + 'x'.repeat(5e6)).href.length`, want: tooBig},
		{name: "many slashes", script: `return new URL('http://a' + '/'.repeat(1e5)).pathname.length`, want: tooBig},
		{name: "many backslashes in a pathname", script: `const u = new URL('http://a/'); u.pathname = '\\'.repeat(1e5); return 1`, want: tooBig},
		{name: "long setter value", script: `const u = new URL('http://a/'); u.hash = 'x'.repeat(5e6); return 1`, want: tooBig},
		{name: "percent-encoding stays within the cap", change: smallMemory, script: `return new URL('http://a/?' + '\u00e9'.repeat(2e5)).href.length`, want: okWith(`1200010`)},
		{name: "params grow past the cap", script: `const p = new URLSearchParams(); const big = 'x'.repeat(1e6); for (let i = 0; i < 10; i++) p.append('a', big); return p.size`, want: tooBig},
		{name: "params set past the cap", script: `const p = new URLSearchParams('a=1'); p.set('a', 'x'.repeat(5e6)); return p.size`, want: tooBig},
		{name: "long query string", script: `return new URLSearchParams('a&'.repeat(3e6)).size`, want: tooBig},
		{name: "linked params past the cap", script: `const u = new URL('http://a/'); const big = 'x'.repeat(1e6); for (let i = 0; i < 10; i++) u.searchParams.append('a', big); return 1`, want: tooBig},
		{name: "decode a huge buffer", script: `return new TextDecoder().decode(new Uint8Array(2**25)).length`, want: tooBig},
		{name: "decode within the cap", change: smallMemory, script: `return new TextDecoder().decode(new Uint8Array(2**20)).length`, want: okWith(`1048576`)},
		{name: "encode a huge string", change: smallMemory, script: `let s = '\u20ac'; while (s.length < 2e6) s += s; return new TextEncoder().encode(s).length`, want: tooBig},
		{name: "encodeInto with a lying length", script: `const u = new Uint8Array(4); Object.defineProperty(u, 'length', {value: 1e9}); return new TextEncoder().encodeInto('hello world', u)`,
			want: okWith(`{"read":4,"written":4}`)},
		{name: "encodeInto with a subclass's length", script: `class U extends Uint8Array { get length() { return 1e9 } get byteLength() { return 1e9 } } const u = new U(3); return [new TextEncoder().encodeInto('hello', u), Array.from(new Uint8Array(u.buffer))]`,
			want: okWith(`[{"read":3,"written":3},[104,101,108]]`)},
		{name: "clone too deep", script: `let a = []; for (let i = 0; i < 1000; i++) a = [a]; return structuredClone(a)`, want: tooBig},
		{name: "clone of a shared DAG is linear", script: `let a = {}; for (let i = 0; i < 64; i++) a = {x: a, y: a}; const c = structuredClone(a); return c.x === c.y`, want: okWith(`true`)},
		{name: "clone a huge sparse array", script: `const a = []; a.length = 2**32 - 1; return structuredClone(a).length`, want: tooBig},
		{name: "clone too many buffer bytes", change: smallMemory, script: `const b = new ArrayBuffer(3 << 20); return structuredClone([b, new ArrayBuffer(3 << 20)]).length`, want: tooBig},
		{name: "clone a buffer once", change: smallMemory, script: `const b = new ArrayBuffer(3 << 20); return structuredClone([b, b, new Uint8Array(b)]).length`, want: okWith(`3`)},
		{name: "clone with a getter that never ends", change: shortTimeout(300 * time.Millisecond), script: `return structuredClone({get g() { for (;;) {} }})`, want: want{status: StatusTimeout}},
		{name: "clone a graph that grows", script: `let n = 0; const grow = () => ({get next() { n++; return grow() }}); return structuredClone(grow())`, want: tooBig},
	})
}

// TestCloneElementCap runs clones against a small element cap, so the cap,
// not the heap watchdog, is what stops them.
func TestCloneElementCap(t *testing.T) {
	for _, c := range []struct {
		name, script string
		want         want
	}{
		{"arrays", `const a = new Array(600).fill(0); return structuredClone([a, a.slice()]).length`, tooBig},
		{"objects", `const o = Object.fromEntries(Array.from({length: 1200}, (_, i) => ['k' + i, i])); return structuredClone(o).k0`, tooBig},
		{"map", `const m = new Map(Array.from({length: 1200}, (_, i) => [i, i])); return structuredClone(m).size`, tooBig},
		{"set", `return structuredClone(new Set(Array.from({length: 1200}, (_, i) => i))).size`, tooBig},
		{"within the cap", `const a = new Array(400).fill({}); return structuredClone([a, a.slice()]).length`, okWith(`2`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRun(context.Background(), compile(t, c.script), &mcptest.Host{}, Options{RunID: "cap", Limits: limits(t, presets.Balanced)})
			r.caps.elements = 1000
			r.execute()
			checkWant(t, r.finish(), c.want)
		})
	}
}
