package attacks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

// ctorKey is "constructor" spelled so the validator cannot see it: the
// routes through the web globals to the Function constructor must end at
// the hardened runtime.
const ctorKey = `const k = 'constr' + 'uctor'; `

var (
	dataCloneError = want{status: vm.StatusRuntimeError, name: "DataCloneError"}
	timerCap       = want{status: vm.StatusLimitExceeded, limit: vm.LimitTimers}
)

// webCases attack the web platform globals the sandbox implements (URL,
// URLSearchParams, TextEncoder, TextDecoder, structuredClone): routes to
// the Function constructor and to unguarded built-ins through them,
// tampering, brand spoofing and hostile URLs.
var webCases = []attackCase{
	// Wall: runtime, URL's own constructor property.
	{name: "URL-constructor", cat: catWeb,
		script: ctorKey + `return URL[k](` + pwn + `)()`, want: codeGeneration},
	// Wall: runtime, an instance's prototype chain.
	{name: "URL-instance-prototype-chain", cat: catWeb,
		script: ctorKey + `return Object.getPrototypeOf(new URL('http://a/'))[k][k](` + pwn + `)()`, want: codeGeneration},
	// Wall: runtime, an accessor function of URL.prototype.
	{name: "URL-accessor-constructor", cat: catWeb,
		script: ctorKey + `return Object.getOwnPropertyDescriptor(Object.getPrototypeOf(new URL('http://a/')), 'href').get[k](` + pwn + `)()`, want: codeGeneration},
	// Wall: runtime, the searchParams iterator and its prototypes.
	{name: "URLSearchParams-iterator-chain", cat: catWeb,
		script: ctorKey + `const it = new URL('http://a/?x=1').searchParams.entries(); return Object.getPrototypeOf(Object.getPrototypeOf(it))[Symbol.iterator][k](` + pwn + `)()`, want: codeGeneration},
	// Wall: runtime, a TextDecoder instance.
	{name: "TextDecoder-constructor-chain", cat: catWeb,
		script: ctorKey + `return new TextDecoder()[k][k](` + pwn + `)()`, want: codeGeneration},
	// Wall: runtime, structuredClone itself.
	{name: "structuredClone-constructor", cat: catWeb,
		script: ctorKey + `return structuredClone[k](` + pwn + `)()`, want: codeGeneration},
	// Wall: runtime, a cloned object's chain is the plan's own Object.
	{name: "structuredClone-result-chain", cat: catWeb,
		script: ctorKey + `return structuredClone({a: 1})[k][k](` + pwn + `)()`, want: codeGeneration},
	// Wall: the allocation guards, reached from TextEncoder's output: the
	// Uint8Array it returns leads to the guarded constructors only.
	{name: "TextEncoder-output-to-typed-array-constructor", cat: catWeb, isolate: true,
		script: ctorKey + `return new (new TextEncoder().encode('a')[k])(2 ** 33).length`, want: rangeError},
	// Wall: the same through %TypedArray%.from.
	{name: "TextEncoder-output-to-TypedArray-from", cat: catWeb, isolate: true,
		script: ctorKey + `return Object.getPrototypeOf(new TextEncoder().encode('a')[k]).from({length: 2 ** 33}).length`, want: rangeError},
	// Wall: the same through the output's buffer.
	{name: "TextEncoder-output-to-ArrayBuffer", cat: catWeb, isolate: true,
		script: ctorKey + `return new (new TextEncoder().encode('a').buffer[k])(2 ** 40).byteLength`, want: rangeError},
	// Wall: structuredClone refuses functions: nothing callable crosses.
	{name: "structuredClone-function", cat: catWeb,
		script: `return structuredClone({f: () => 'PW' + 'NED'}).f()`, want: dataCloneError},
	// Wall: validator, the prototype property by name.
	{name: "URL-prototype-named", cat: catWeb,
		script: `URL.prototype.toString = () => 'PW' + 'NED'; return String(new URL('http://a/'))`, want: bannedMember},
	// Wall: frozen prototypes, reached through an instance.
	{name: "URL-prototype-tamper", cat: catWeb,
		script: `Object.getPrototypeOf(new URL('http://a/')).toString = () => 'PW' + 'NED'; return String(new URL('http://a/'))`, want: typeError},
	// Wall: frozen prototypes, redefinition.
	{name: "URLSearchParams-prototype-redefine", cat: catWeb,
		script: `Object.defineProperty(Object.getPrototypeOf(new URLSearchParams()), 'get', {value: () => 'PW' + 'NED'}); return new URLSearchParams('a=1').get('a')`, want: typeError},
	// Wall: frozen prototypes, swapping an instance's prototype gains
	// nothing: the state is not on the object.
	{name: "URL-prototype-swap", cat: catWeb,
		script: `const u = new URL('http://a/'); Object.setPrototypeOf(u, {get href() { return 'PW' + 'NED' }}); return [Object.getPrototypeOf(new URL('http://b/')).toString.call(u), Object.getOwnPropertyNames(u).length]`,
		want:   ok(`["http://a/",0]`)},
	// Wall: frozen functions.
	{name: "setTimeout-extend", cat: catWeb,
		script: `setTimeout.leak = 1; return 1`, want: typeError},
	// Wall: the globals cannot be reassigned.
	{name: "URL-reassign", cat: catWeb,
		script: `URL = function () { return 'PW' + 'NED' }; return new URL('x')`, want: refError},
	// Wall: brand checks, a fake URL made from the prototype.
	{name: "URL-brand-spoof", cat: catWeb,
		script: `const fake = Object.create(Object.getPrototypeOf(new URL('http://a/'))); return fake.href`, want: typeError},
	// Wall: brand checks, a constructor called on a foreign receiver.
	{name: "URL-call-on-object", cat: catWeb,
		script: `const o = {}; URL.call(o, 'http://a/'); return new URL('http://b/').toString.call(o)`, want: typeError},
	// Wall: callbacks get no global this: forEach's is the thisArg, and
	// strict functions see undefined.
	{name: "forEach-this", cat: catWeb,
		script: `let t = 'unset'; new URLSearchParams('a=1').forEach(function () { t = this }); return t === undefined`, want: ok(`true`)},
	// Wall: no Go value or path in what the plan can see of the globals.
	{name: "no-go-names", cat: catWeb,
		script: `const fns = [URL, URLSearchParams, TextEncoder, TextDecoder, structuredClone, setTimeout, clearTimeout, URL.canParse, new URLSearchParams().append, new URLSearchParams().keys().next];
			return fns.map(f => f.name).concat([Object.getOwnPropertyNames(new URL('http://a/')).length, String(structuredClone)])`,
		want: ok(`["URL","URLSearchParams","TextEncoder","TextDecoder","structuredClone","setTimeout","clearTimeout","canParse","append","next",0,"function structuredClone() { [native code] }"]`)},
	// Wall: URL parsing, a URL past the string cap (2 Mi code units in
	// secure).
	{name: "URL-very-long", cat: catWeb, isolate: true,
		script: `return new URL('http://a/' + 'x'.repeat(3e6)).href.length`, want: rangeError},
	// Wall: URL parsing, deep percent-encoding is kept as it is, once.
	{name: "URL-deep-percent-encoding", cat: catWeb,
		script: `const u = new URL('http://a/' + '%25'.repeat(5e5) + '?' + '%2525'.repeat(1e5)); return [u.pathname.length, u.search.length, decodeURIComponent(u.pathname.slice(1, 7))]`,
		want:   ok(`[1500001,500001,"%%"]`)},
	// Wall: URL parsing, a percent-encoded host decodes to a forbidden
	// code point.
	{name: "URL-percent-host", cat: catWeb,
		script: `return new URL('http://' + '%25'.repeat(1e5) + '/').host`, want: typeError},
	// Wall: URL parsing, an endless IPv6 address.
	{name: "URL-hostile-ipv6", cat: catWeb,
		script: `return new URL('http://[' + '1:'.repeat(1e5) + ']/').host`, want: typeError},
	// Wall: URL parsing, a huge internationalised domain: punycode is
	// quadratic, so a domain that needs it is refused past 4 KiB.
	{name: "URL-huge-idn", cat: catWeb, isolate: true,
		script: `const cjk = Array.from({length: 2e4}, (_, i) => String.fromCharCode(0x4e00 + i)).join(''); return new URL('http://' + cjk + '/').host`, want: typeError},
	// Wall: URL parsing, a path of a hundred thousand segments.
	{name: "URL-many-segments", cat: catWeb, isolate: true,
		script: `return new URL('http://a' + '/b'.repeat(1e5)).pathname.length`, want: rangeError},
	// Wall: the URLSearchParams cap, a list grown past it.
	{name: "URLSearchParams-growth", cat: catWeb, isolate: true,
		script: `const p = new URLSearchParams(); const big = 'x'.repeat(1e6); [1, 2, 3].forEach(() => p.append(big, big)); return p.size`, want: rangeError},
	// Wall: the URLSearchParams cap, a query string past it.
	{name: "URLSearchParams-huge-string", cat: catWeb, isolate: true,
		script: `return new URLSearchParams('a=b&'.repeat(6e5)).size`, want: rangeError},
	// Wall: the URLSearchParams cap, a linked URL's query past it.
	{name: "URLSearchParams-linked-growth", cat: catWeb, isolate: true,
		script: `const u = new URL('http://a/'); const big = '\u00e9'.repeat(5e5); [1, 2, 3].forEach(() => u.searchParams.append('a', big)); return u.href.length`, want: rangeError},
}

// timerCases attack setTimeout and clearTimeout: storms, recursion,
// string callbacks, timers past the deadline.
var timerCases = []attackCase{
	// Wall: the validator no longer refuses setTimeout, so a string of
	// code reaches the runtime, which treats it as code generation.
	{name: "string-callback", cat: catTimers,
		script: `setTimeout("return 'PW'+'NED'", 0); return 1`, want: codeGeneration},
	// Wall: the same, caught: reaching for it ends the run anyway.
	{name: "string-callback-caught", cat: catTimers,
		script: `try { setTimeout(String.fromCharCode(49), 0) } catch (e) {} return 1`, want: codeGeneration},
	// Wall: the validator, setInterval is not offered.
	{name: "setInterval", cat: catTimers,
		script: `setInterval(() => 0, 1); return 1`, want: bannedIdentifier},
	// Wall: the validator, nor queueMicrotask and setImmediate.
	{name: "queueMicrotask", cat: catTimers,
		script: `queueMicrotask(() => 0); setImmediate(() => 0); return 1`, want: bannedIdentifier},
	// Wall: maxTimers, a million timers from a native loop.
	{name: "storm", cat: catTimers,
		script: `Array.from({length: 1e6}, (_, i) => setTimeout(() => 0, i)); return 1`, want: timerCap},
	// Wall: maxTimers counts cleared timers too.
	{name: "storm-cleared", cat: catTimers,
		script: `Array.from({length: 1e6}, () => clearTimeout(setTimeout(() => 0, 0))); return 1`, want: timerCap},
	// Wall: maxTimers, a timer that sets itself again.
	{name: "recursive", cat: catTimers,
		script: `(function tick() { setTimeout(tick, 0) })(); await new Promise(() => {})`, want: timerCap},
	// Wall: maxTimers, timers that fan out.
	{name: "fan-out", cat: catTimers,
		script: `(function tick() { setTimeout(tick, 0); setTimeout(tick, 0) })(); await new Promise(() => {})`, want: timerCap},
	// Wall: the deadline, a plan waiting on a timer due after it: it ends
	// with timeout, at once.
	{name: "past-the-deadline", cat: catTimers, limits: short,
		script: `await new Promise(r => setTimeout(r, 3600000)); return 'PW' + 'NED'`, want: timedOut},
	// Wall: the deadline, huge, infinite and NaN delays.
	{name: "odd-delays", cat: catTimers, limits: short,
		script: `[Infinity, -Infinity, NaN, 1e308, -1, 2 ** 53].forEach(d => setTimeout(() => 0, d)); await new Promise(r => setTimeout(r, 2 ** 31)); return 1`, want: timedOut},
	// Wall: the deadline, a timer's callback that never returns.
	{name: "callback-spins", cat: catTimers, limits: short, preset: presets.Balanced,
		script: `setTimeout(() => { for (;;) {} }, 0); await new Promise(r => setTimeout(r, 60000))`, want: timedOut},
	// Wall: the deadline, timers that keep the loop busy without end.
	{name: "timer-chain-into-deadline", cat: catTimers, limits: short, preset: presets.Balanced,
		script: `let n = 0; (function tick() { if (++n < 400) setTimeout(tick, 5) })(); await new Promise(() => {})`, want: timedOut},
	// Wall: a timer never outlives its run: one set to fire after the
	// plan returned must not touch the host (the follow-up plan and the
	// goroutine check see it).
	{name: "outlives-the-run", cat: catTimers,
		script: `setTimeout(() => callTool('test.count', {}), 50); return 1`, want: ok(`1`), check: countRan(0)},
	// Wall: a timer's callback that throws ends the run with its error.
	{name: "callback-throws", cat: catTimers,
		script: `setTimeout(() => { throw new TypeError('from a timer') }, 1); await new Promise(r => setTimeout(r, 100)); return 'PW' + 'NED'`, want: typeError},
}

// webMemoryCases are clone and codec bombs: each runs in a child process,
// and the heap must come back.
var webMemoryCases = []attackCase{
	// Wall: the clone's depth cap.
	{name: "clone-deep", cat: catMemory, isolate: true,
		script: `const deep = JSON.parse('['.repeat(500) + ']'.repeat(500)); return structuredClone([[[[[[[[[[[[[[[[deep]]]]]]]]]]]]]]]]).length`, want: rangeError},
	// Wall: the clone's memo: a DAG of 2^64 paths is copied once per node.
	{name: "clone-dag", cat: catMemory, isolate: true,
		script: `const a = Array.from({length: 64}).reduce(acc => ({x: acc, y: acc}), {}); const c = structuredClone(a); return c.x === c.y`, want: ok(`true`)},
	// Wall: the clone's memo, cycles.
	{name: "clone-cycle", cat: catMemory, isolate: true,
		script: `const a = {}; a.a = a; const m = new Map([[a, a]]); m.set(m, m); const c = structuredClone(m); return c.get(c) === c`, want: ok(`true`)},
	// Wall: the clone's element cap, a sparse array of 2^32-1 slots.
	{name: "clone-sparse", cat: catMemory, isolate: true,
		script: `const a = []; a.length = 2 ** 32 - 1; return structuredClone(a).length`, want: rangeError},
	// Wall: the clone's buffer cap.
	{name: "clone-buffers", cat: catMemory, isolate: true, limits: smallHeap,
		script: `return structuredClone(Array.from({length: 3}, () => new ArrayBuffer(4 << 20))).length`, want: rangeError},
	// Wall: the clone's depth cap, a graph its getters grow as it is
	// copied.
	{name: "clone-growing-graph", cat: catMemory, isolate: true,
		script: `const grow = () => ({get a() { return grow() }, get b() { return grow() }}); return structuredClone(grow())`, want: rangeError},
	// Wall: the decoder's input cap (the string cap: 8 Mi in secure).
	{name: "decode-huge-buffer", cat: catMemory, isolate: true,
		script: `return new TextDecoder().decode(new Uint8Array(2 ** 24)).length`, want: rangeError},
	// Wall: the decoder's input cap, through a DataView.
	{name: "decode-huge-dataview", cat: catMemory, isolate: true,
		script: `return new TextDecoder().decode(new DataView(new ArrayBuffer(2 ** 24))).length`, want: rangeError},
	// Wall: encodeInto writes through the real view, whatever length the
	// destination claims.
	{name: "encodeInto-lying-length", cat: catMemory, isolate: true,
		script: `const u = new Uint8Array(2); Object.defineProperty(u, 'length', {value: 2 ** 40}); Object.defineProperty(u, 'byteLength', {value: 2 ** 40}); return new TextEncoder().encodeInto('x'.repeat(1e6), u)`,
		want:   ok(`{"read":2,"written":2}`)},
	// Wall: encode's result is a buffer, capped like one: twelve million
	// euro signs (a string built by concatenation, which no guard
	// bounds) are 36 MB of UTF-8, over the 32 MiB cap of secure. The
	// encoder counts as it goes, under the deadline, which a slow build
	// (the race detector) reaches first: either wall contains it.
	{name: "encode-huge", cat: catMemory, isolate: true,
		script: `const a = '\u20ac'.repeat(4e6); const s = a + a + a; return new TextEncoder().encode(s).length`, want: rangeError, orWant: timedOut, check: prompt(3 * time.Second)},
}

func TestWebGlobals(t *testing.T)     { runCases(t, webCases) }
func TestTimers(t *testing.T)         { runCases(t, timerCases) }
func TestWebMemoryBombs(t *testing.T) { runCases(t, webMemoryCases) }

// approver approves every prompt after delay, as a slow person would.
type approver struct{ delay time.Duration }

func (a approver) Elicit(ctx context.Context, _ mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	select {
	case <-time.After(a.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	res := &mcp.ElicitationResult{}
	res.Action = mcp.ElicitationResponseActionAccept
	res.Content = map[string]any{"decision": "approve"}
	return res, nil
}

// TestTimersDuringApproval checks, in both isolation modes, that a
// plan's timers follow its clock: while a call waits for a person the
// clock stands still, so neither the run's timeout nor a timer's delay
// advances.
func TestTimersDuringApproval(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			srv := server.NewMCPServer("attack", "1.0.0", server.WithToolCapabilities(true), server.WithElicitation())
			srv.AddTool(catalog.SetMeta(mcp.NewTool("test.charge", readOnly()...), catalog.Meta{RequiresApproval: catalog.Bool(true)}),
				func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return mcp.NewToolResultText(`{"charged":true}`), nil
				})
			cfg := config(attackCase{}, mode, viaExecute)
			cfg.VM.Timeout = time.Second
			cc, err := middleware.Wrap(srv, middleware.WithConfig(cfg), middleware.WithLogger(quietLogger))
			if err != nil {
				if strings.Contains(err.Error(), "cannot start one") {
					t.Skipf("sandboxed worker processes are not available on this host: %v", err)
				}
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cc.Close() })
			if mode == presets.IsolationProcess && cc.Isolation().Effective != presets.IsolationProcess {
				t.Skipf("sandboxed worker processes are not available on this host")
			}
			h := &host{t: t, srv: srv, cc: cc}
			h.c = mcptest.Connect(t, srv, mcptest.Legacy(), mcptest.WithElicitation(approver{delay: 1500 * time.Millisecond}))
			r := h.execute(t, map[string]any{"script": `const out = []; setTimeout(() => out.push('timer'), 400);
				await callTool('test.charge', {}); out.push('call');
				await new Promise(r => setTimeout(r, 500)); return out`})
			checkWant(t, ok(`["call","timer"]`), r)
		})
	}
}
