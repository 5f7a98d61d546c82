package vm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
)

// shopModules are the modules the Code Mode tests import: a server module
// of two tools, discovery and errors, as ModulesGlobal[0..2].
var shopModules = &CodeMode{Modules: []Module{
	{Specifier: "@codemode/servers/shop", Kind: ModuleServer, ServerID: "shop",
		Exports: []Export{{Name: "get_order", Tool: "shop.get_order"}, {Name: "fail", Tool: "shop.fail"}},
		Meta:    json.RawMessage(`{"serverId":"shop","serverName":"shop","tools":[{"toolName":"shop.get_order","exportName":"get_order"}]}`)},
	{Specifier: "@codemode/discovery", Kind: ModuleDiscovery},
	{Specifier: "@codemode/errors", Kind: ModuleErrors},
}}

// runModule runs a linked module body (what codemode.Link makes of a
// module) with shopModules, under balanced.
func runModule(tb testing.TB, h Host, body string, change ...func(*presets.Limits)) *Result {
	tb.Helper()
	l := limits(tb, presets.Balanced)
	for _, c := range change {
		c(&l)
	}
	rules := ast.RulesFor(l)
	rules.CodeMode = true
	prelude := "const shop = __codemode_modules__[0], disc = __codemode_modules__[1], errs = __codemode_modules__[2];\n"
	checked, err := ast.Validate(prelude+body, rules)
	if err != nil {
		tb.Fatalf("validate: %v", err)
	}
	if h == nil {
		h = &mcptest.Host{}
	}
	return Run(context.Background(), checked, h, Options{RunID: "cm", Limits: l, CodeMode: shopModules})
}

func shopHost() *mcptest.Host {
	return &mcptest.Host{Call: func(_ context.Context, name string, in map[string]any) (json.RawMessage, error) {
		switch name {
		case "shop.fail":
			return nil, &toolerr.Error{Code: toolerr.Execution, Message: "out of stock", Retryable: true}
		case "shop.get_order":
			if _, ok := in["id"].(string); !ok {
				return nil, &toolerr.Error{Code: toolerr.Validation, Message: "id must be a string",
					Mismatch: &toolerr.Mismatch{Pointer: "/id", Expected: "string", Received: "number", Example: json.RawMessage(`{"id":"o1"}`)}}
			}
		}
		b, _ := json.Marshal(map[string]any{"tool": name, "input": in})
		return b, nil
	}}
}

func TestCodeModeRun(t *testing.T) {
	cases := []struct {
		name, body string
		status     Status
		want       string // the result's JSON, when status is ok
		class      string // ErrorInfo.Name, when not ok
	}{
		{"result global", `globalThis.__codemode_result__ = await shop.get_order({id: 'o1'});`, StatusOK,
			`{"input":{"id":"o1"},"tool":"shop.get_order"}`, ""},
		{"no result is null", `await shop.get_order({id: 'o1'});`, StatusOK, `null`, ""},
		{"return value ignored", `globalThis.__codemode_result__ = 1; return 2;`, StatusOK, `1`, ""},
		{"no argument is {}", `globalThis.__codemode_result__ = await shop.fail().catch(e => e.code);`, StatusOK, `"EXECUTION"`, ""},
		{"tool error is a catchable ToolCallError", `try { await shop.fail({}); } catch (e) {
			globalThis.__codemode_result__ = [e instanceof errs.ToolCallError, e instanceof errs.CodemodeError, e instanceof Error,
				e.name, e.code, e.toolName, e.exportName, e.serverId, e.retryable, typeof e.hint, e.message]; }`, StatusOK,
			`[true,true,true,"ToolCallError","EXECUTION","shop.fail","fail","shop",true,"string","out of stock"]`, ""},
		{"validation is SchemaValidationError", `try { await shop.get_order({id: 5}); } catch (e) {
			globalThis.__codemode_result__ = [e.name, e instanceof errs.SchemaValidationError, e.path, e.expected, e.received, e.example, e.toolName, e.exportName]; }`,
			StatusOK, `["SchemaValidationError",true,"/id","string","number",{"id":"o1"},"shop.get_order","get_order"]`, ""},
		{"non-object input", `try { await shop.get_order([1]); } catch (e) { globalThis.__codemode_result__ = [e.name, e.expected, e.received]; }`,
			StatusOK, `["SchemaValidationError","object","an array"]`, ""},
		{"uncaught tool error", `await shop.fail({});`, StatusToolError, "", "ToolCallError"},
		{"namespace is frozen", `"use strict"; let threw = false; try { shop.get_order = 1; } catch (e) { threw = e instanceof TypeError; }
			globalThis.__codemode_result__ = [threw, Object.isFrozen(shop), Object.getPrototypeOf(shop), shop[Symbol.toStringTag],
				Object.keys(shop), Object.isFrozen(shop.__meta__), Object.isFrozen(shop.__meta__.tools[0])];`, StatusOK,
			`[true,true,null,"Module",["__meta__","fail","get_order"],true,true]`, ""},
		{"error classes are frozen", `globalThis.__codemode_result__ = [Object.isFrozen(errs.ToolCallError), Object.isFrozen(Reflect.getPrototypeOf(new errs.ToolCallError('x'))),
			new errs.SandboxLimitError('x').name, typeof new errs.CodemodeError('m').hint];`, StatusOK, `[true,true,"SandboxLimitError","string"]`, ""},
		{"discovery exports", `globalThis.__codemode_result__ = [disc.specVersion, typeof disc.listServers, typeof disc.searchTools];`, StatusOK,
			`["1.0.0","function","function"]`, ""},
		{"getter result runs once", `let n = 0; Object.defineProperty(globalThis, '__codemode_result__', {get() { n++; return n; }});`, StatusOK, `1`, ""},
		{"cyclic result", `const a = {}; a.a = a; globalThis.__codemode_result__ = a;`, StatusRuntimeError, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runModule(t, shopHost(), tc.body)
			if res.Status != tc.status {
				t.Fatalf("status %s, want %s: %s", res.Status, tc.status, describe(res))
			}
			if tc.status == StatusOK && string(res.Result) != tc.want {
				t.Errorf("result %s, want %s", res.Result, tc.want)
			}
			if tc.class != "" && (res.Error == nil || res.Error.Name != tc.class) {
				t.Errorf("error %+v, want class %s", res.Error, tc.class)
			}
		})
	}
}

func TestCodeModeDiscoveryOps(t *testing.T) {
	var ops []string
	h := &mcptest.Host{Discovery: func(_ context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
		ops = append(ops, op+" "+string(args))
		if op == DiscoverDescribeServe {
			return nil, &toolerr.Error{Code: toolerr.ServerNotFound, Message: "no such server"}
		}
		return json.RawMessage(`[]`), nil
	}}
	res := runModule(t, h, `await disc.listServers(); await disc.listTools('shop', {detail: 'name'});
		await disc.getTool('shop', 'get_order'); await disc.searchTools('order', {serverId: 'shop', limit: 3});
		let cls = '';
		try { await disc.describeServer('nope'); } catch (e) { cls = e.name + ':' + (e instanceof errs.ServerNotFoundError); }
		let bad = '';
		try { disc.listTools('shop', {detail: 'everything'}); } catch (e) { bad = e.name; }
		globalThis.__codemode_result__ = [cls, bad];`)
	if res.Status != StatusOK || string(res.Result) != `["ServerNotFoundError:true","TypeError"]` {
		t.Fatalf("%s", describe(res))
	}
	want := []string{
		DiscoverListServers + ` {}`,
		DiscoverListTools + ` {"detail":"name","serverId":"shop"}`,
		DiscoverGetTool + ` {"serverId":"shop","toolName":"get_order"}`,
		DiscoverSearchTools + ` {"detail":"description","limit":3,"query":"order","serverId":"shop"}`,
		DiscoverDescribeServe + ` {"serverId":"nope"}`,
	}
	if strings.Join(ops, "\n") != strings.Join(want, "\n") {
		t.Errorf("ops:\n%s\nwant:\n%s", strings.Join(ops, "\n"), strings.Join(want, "\n"))
	}
	if len(res.ToolTrace) != 0 {
		t.Errorf("discovery in the trace: %+v", res.ToolTrace)
	}
}

func TestCodeModeLogs(t *testing.T) {
	res := runModule(t, nil, `const c = {}; c.c = c;
		console.log('a', 1, true, null, undefined, {b: [1, 2]}); console.info('i'); console.debug('d'); console.warn('w'); console.error(c);`)
	if res.Status != StatusOK {
		t.Fatal(describe(res))
	}
	var got []string
	for _, l := range res.Logs {
		got = append(got, l.Level+"|"+l.Message)
	}
	want := []string{`log|a 1 true null undefined {"b":[1,2]}`, "log|i", "debug|d", "warn|w", "error|[Unserializable Object]"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("logs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCodeModeGlobals(t *testing.T) {
	res := runModule(t, nil, `globalThis.__codemode_result__ = {
		callTool: typeof callTool, getTool: typeof getTool, codecallContext: typeof codecallContext, mcpLog: typeof mcpLog,
		Proxy: typeof Proxy, Reflect: typeof Reflect, URL: typeof URL, TextEncoder: typeof TextEncoder, setTimeout: typeof setTimeout,
		setInterval: typeof globalThis.setInterval, BigInt: typeof globalThis.BigInt, fetch: typeof globalThis.fetch,
		process: typeof globalThis.process, require: typeof globalThis.require, eval: typeof globalThis.eval,
	};`)
	if res.Status != StatusOK {
		t.Fatal(describe(res))
	}
	want := `{"callTool":"undefined","getTool":"undefined","codecallContext":"undefined","mcpLog":"undefined","Proxy":"function","Reflect":"object",` +
		`"URL":"function","TextEncoder":"function","setTimeout":"function","setInterval":"undefined","BigInt":"undefined","fetch":"undefined",` +
		`"process":"undefined","require":"undefined","eval":"undefined"}`
	if string(res.Result) != want {
		t.Errorf("globals %s\nwant    %s", res.Result, want)
	}
}

func TestCodeModeToolCallLimit(t *testing.T) {
	res := runModule(t, shopHost(), `for (let i = 0; i < 5; i++) { try { await shop.get_order({id: 'x'}); } catch (e) {} }
		globalThis.__codemode_result__ = 'done';`, func(l *presets.Limits) { l.MaxToolCalls = 2 })
	if res.Status != StatusLimitExceeded || res.Error == nil || res.Error.Limit != LimitToolCalls {
		t.Fatalf("%s", describe(res))
	}
}

// TestCodeModeClassesOwnError checks that the error classes, made on the
// first failed call when the module does not import @codemode/errors,
// extend the runtime's Error whatever the module made of the global Error
// by then, and that none of the module's code runs while the host makes
// the call's error.
func TestCodeModeClassesOwnError(t *testing.T) {
	shopOnly := &CodeMode{Modules: shopModules.Modules[:1]}
	for name, tamper := range map[string]string{
		"own class":           `Object.defineProperty(globalThis, 'Error', {value: class extends Object { constructor() { super(); ran++ } }});`,
		"throwing function":   `Object.defineProperty(globalThis, 'Error', {value: function () { ran++; throw new RangeError('base') }});`,
		"no global prototype": `Object.setPrototypeOf(g, null);`,
		"proxy prototype": `Object.setPrototypeOf(g, new Proxy(Object.getPrototypeOf(g), {get(t, k, r) {
			if (k === 'Error') { ran++; return class {} } return Reflect.get(t, k, r) }}));`,
	} {
		t.Run(name, func(t *testing.T) {
			l := limits(t, presets.Balanced)
			rules := ast.RulesFor(l)
			rules.CodeMode = true
			body := "const shop = __codemode_modules__[0]; const g = globalThis; let ran = 0;\n" + tamper + `
				let r; try { await shop.fail({}); } catch (e) { r = [e.name, e.code, e.toolName, ran]; }
				g.__codemode_result__ = r;`
			checked, err := ast.Validate(body, rules)
			if err != nil {
				t.Fatalf("validate: %v", err)
			}
			res := Run(context.Background(), checked, shopHost(), Options{RunID: "cm", Limits: l, CodeMode: shopOnly})
			if res.Status != StatusOK || string(res.Result) != `["ToolCallError","EXECUTION","shop.fail",0]` {
				t.Errorf("%s", describe(res))
			}
		})
	}
}

// TestCodeModeLogRevokedProxy checks that the console falls back for a
// revoked proxy, which throws when asked for its class (§3.3.1).
func TestCodeModeLogRevokedProxy(t *testing.T) {
	res := runModule(t, nil, `const {proxy, revoke} = Proxy.revocable({a: 1}, {}); revoke(); console.log('p', proxy, [proxy]);
		globalThis.__codemode_result__ = 'done';`)
	if res.Status != StatusOK || len(res.Logs) != 1 || res.Logs[0].Message != "p [Unserializable Object] [Unserializable Object]" {
		t.Fatalf("%s; logs %+v", describe(res), res.Logs)
	}
}
