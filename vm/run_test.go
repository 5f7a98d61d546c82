package vm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
)

// TestStatuses produces every status a run can end with.
func TestStatuses(t *testing.T) {
	denied := &mcptest.Host{Call: func(_ context.Context, name string, _ map[string]any) (json.RawMessage, error) {
		return nil, &toolerr.Error{Code: toolerr.AccessDenied, Tool: name, Message: "the policy refuses " + name}
	}}
	cases := []hardeningCase{
		{name: "ok", script: `const r = await callTool('crm.find', {q: 'ada'}); return {n: r.input.q}`, want: okWith(`{"n":"ada"}`)},
		{name: "ok undefined", script: `return`, want: okWith(`null`)},
		{name: "ok sync value", script: `return 42`, want: okWith(`42`)},
		{name: "illegal_access", script: `return eval('1')`, want: codeGen},
		{name: "runtime_error", script: `null.x`, want: want{status: StatusRuntimeError, name: "TypeError"}},
		{name: "runtime_error thrown value", script: `throw 'plain string'`, want: want{status: StatusRuntimeError, contains: "plain string"}},
		{name: "runtime_error custom error", script: `class MyError extends Error { constructor(m) { super(m); this.name = 'MyError' } }; throw new MyError('bad')`,
			want: want{status: StatusRuntimeError, name: "MyError", contains: "bad"}},
		{name: "runtime_error async", script: `await callTool('a', {}); throw new RangeError('late')`, want: want{status: StatusRuntimeError, name: "RangeError", contains: "late"}},
		{name: "runtime_error message getter runs once under deadline", change: shortTimeout(500 * time.Millisecond),
			script: `throw {get message() { while (true) {} }}`, want: want{status: StatusTimeout}},
		{name: "tool_error", script: `await callTool('billing.refund', {id: 7})`, host: denied,
			want: want{status: StatusToolError, contains: "the policy refuses billing.refund"}},
		{name: "tool_error rethrown", script: `try { await callTool('billing.refund', {id: 7}) } catch (e) { throw e }`, host: denied,
			want: want{status: StatusToolError}},
		{name: "fake tool error is a runtime_error", script: `throw {toolName: 'x', code: 'ACCESS_DENIED', message: 'fake'}`,
			want: want{status: StatusRuntimeError, contains: "fake"}},
		{name: "timeout", change: shortTimeout(200 * time.Millisecond), script: `while (true) {}`, want: want{status: StatusTimeout}},
		{name: "limit_exceeded", script: `function f() { return f() } return f()`, want: want{status: StatusLimitExceeded, limit: LimitStack}},
		{name: "never settles", script: `await new Promise(() => {}); return 1`, want: want{status: StatusRuntimeError, contains: "never settle"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := c.run(t)
			checkWant(t, res, c.want)
			if res.RunID != "h" || res.ToolTrace == nil {
				t.Errorf("every result carries the run ID and a trace: %s", describe(res))
			}
		})
	}
}

func TestToolErrorDetails(t *testing.T) {
	h := &mcptest.Host{Call: func(_ context.Context, name string, _ map[string]any) (json.RawMessage, error) {
		return nil, &toolerr.Error{Code: toolerr.ApprovalDenied, Tool: name, Message: "the user said no"}
	}}
	res := runScript(t, h, `console.log('before'); await callTool('billing.refund', {id: 7, note: 'x'})`)
	if res.Status != StatusToolError {
		t.Fatalf("status: %s", describe(res))
	}
	e := res.Error
	if e.Source != "tool" || e.ToolName != "billing.refund" || e.Code != "APPROVAL_DENIED" || e.Message != "the user said no" {
		t.Errorf("error: %s", describe(res))
	}
	if string(e.ToolInput) != `{"id":7,"note":"x"}` {
		t.Errorf("toolInput: %s", e.ToolInput)
	}
	if len(res.Logs) != 1 || res.Logs[0].Message != "before" {
		t.Errorf("logs so far: %s", describe(res))
	}
	if len(res.ToolTrace) != 1 || res.ToolTrace[0].OK || res.ToolTrace[0].Error != "APPROVAL_DENIED" || res.Metrics.ToolCalls != 1 {
		t.Errorf("trace: %s", describe(res))
	}
}

// TestErrorSeenByPlan checks what a plan sees of a failed call.
func TestErrorSeenByPlan(t *testing.T) {
	h := &mcptest.Host{Call: func(_ context.Context, name string, _ map[string]any) (json.RawMessage, error) {
		if name == "plain" {
			return nil, errors.New("dial tcp 10.0.0.1:5432: connection refused at /srv/app/db.go:12")
		}
		return nil, &toolerr.Error{Code: toolerr.NotFound, Tool: name, Message: "no such tool"}
	}}
	res := runScript(t, h, `
		const a = await callTool('missing', {}).catch(e => ({name: e.name, message: e.message, code: e.code, toolName: e.toolName, isError: e instanceof Error}));
		const b = await callTool('missing', {}, {throwOnError: false});
		const c = await callTool('plain', {}, {throwOnError: false});
		const d = await callTool('missing', {}).catch(e => e);
		return {a, b, c, d}`)
	notFound := `"hint":"Names are exact: find the tool with searchTools or codecall.search.","retryable":false`
	checkWant(t, res, okWith(`{"a":{"name":"ToolError","message":"no such tool","code":"NOT_FOUND","toolName":"missing","isError":true},
		"b":{"ok":false,"error":{"code":"NOT_FOUND","message":"no such tool",`+notFound+`}},
		"c":{"ok":false,"error":{"code":"EXECUTION","message":"the tool call failed","hint":"The tool ran and failed; read the message, then fix the input or choose another tool.","retryable":false}},
		"d":{"name":"ToolError","message":"no such tool","toolName":"missing","code":"NOT_FOUND",`+notFound+`}}`))
}

func TestThrowOnErrorFalse(t *testing.T) {
	res := runScript(t, nil, `return await callTool('t', {a: 1}, {throwOnError: false})`)
	checkWant(t, res, okWith(`{"ok":true,"data":{"tool":"t","input":{"a":1}}}`))
	res = runScript(t, nil, `return await callTool('t', {a: 1}, {throwOnError: 0})`)
	checkWant(t, res, okWith(`{"ok":true,"data":{"tool":"t","input":{"a":1}}}`))
	res = runScript(t, nil, `return await callTool('t', {a: 1}, {})`)
	checkWant(t, res, okWith(`{"tool":"t","input":{"a":1}}`))
}

// TestJSONRoundTrip sends values through a tool that echoes them.
func TestJSONRoundTrip(t *testing.T) {
	h := &mcptest.Host{Call: func(_ context.Context, _ string, input map[string]any) (json.RawMessage, error) {
		return json.Marshal(input["v"])
	}}
	for _, v := range []string{`null`, `true`, `0`, `-1.5`, `1e+300`, `"é\u2028\"\\\n"`, `[]`, `{}`, `[1,"a",{"b":[null,false]}]`,
		`{"__proto__x":1,"constructor":"c","toString":"t"}`, `"\ud83d\ude00"`, `9007199254740993`} {
		res := runScript(t, h, `const r = await callTool('echo', {v: `+v+`}); return r`)
		if res.Status != StatusOK {
			t.Fatalf("%s: %s", v, describe(res))
		}
		var want, got any
		_ = json.Unmarshal([]byte(v), &want)
		_ = json.Unmarshal(res.Result, &got)
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(got)
		if string(w) != string(g) {
			t.Errorf("round trip of %s: got %s", v, res.Result)
		}
	}
	// A tool result that is not JSON, or nests too deeply, fails the call.
	bad := &mcptest.Host{Call: func(_ context.Context, name string, _ map[string]any) (json.RawMessage, error) {
		if name == "deep" {
			return json.RawMessage(strings.Repeat("[", 100000) + strings.Repeat("]", 100000)), nil
		}
		return json.RawMessage(`{not json`), nil
	}}
	res := runScript(t, bad, `return [await callTool('deep', {}, {throwOnError: false}), await callTool('garbage', {}, {throwOnError: false})]`)
	if res.Status != StatusOK || !strings.Contains(string(res.Result), `"code":"LIMIT"`) || !strings.Contains(string(res.Result), `"code":"EXECUTION"`) {
		t.Errorf("bad results: %s", describe(res))
	}
	if res.ToolTrace[0].OK || res.ToolTrace[0].Error != "LIMIT" {
		t.Errorf("trace: %s", describe(res))
	}
}

// TestToolInput checks how callTool converts its arguments.
func TestToolInput(t *testing.T) {
	cases := []struct {
		name, script string
		want         want
		input        string // what the host received
	}{
		{name: "getter read once", script: `let n = 0; await callTool('t', {get a() { return n++ }}); return n`, want: okWith(`1`), input: `{"a":0}`},
		{name: "toJSON", script: `await callTool('t', {d: new Date(0), x: {toJSON() { return 'j' }}}); return 1`, want: okWith(`1`), input: `{"d":"1970-01-01T00:00:00.000Z","x":"j"}`},
		{name: "undefined dropped", script: `await callTool('t', {a: undefined, b: 1, f() {}}); return 1`, want: okWith(`1`), input: `{"b":1}`},
		{name: "proxy", script: `await callTool('t', new Proxy({}, {ownKeys: () => ['a'], getOwnPropertyDescriptor: () => ({value: 1, enumerable: true, configurable: true}), get: () => 7})); return 1`, want: okWith(`1`), input: `{"a":7}`},
		{name: "no input", script: `await callTool('t'); return 1`, want: okWith(`1`), input: `{}`},
		{name: "__proto__ key", script: `await callTool('t', JSON.parse('{"a": {"__proto__": {"polluted": true}}}'))`, want: want{status: StatusRuntimeError, name: "TypeError", contains: "__proto__"}},
		{name: "__proto__ via defineProperty", script: `const o = {}; Object.defineProperty(o, '__proto__', {value: 1, enumerable: true}); await callTool('t', o)`, want: typeErr},
		{name: "cycle", script: `const o = {}; o.o = o; await callTool('t', o)`, want: typeErr},
		{name: "array input", script: `await callTool('t', [1])`, want: typeErr},
		{name: "string input", script: `await callTool('t', 'x')`, want: typeErr},
		{name: "function input", script: `await callTool('t', () => 1)`, want: typeErr},
		{name: "toJSON to string", script: `await callTool('t', {toJSON() { return 'x' }})`, want: typeErr},
		{name: "name not a string", script: `await callTool({toString() { return 't' }}, {})`, want: typeErr},
		{name: "String object name", script: `await callTool(new String('t'), {})`, want: typeErr},
		{name: "empty name", script: `await callTool('', {})`, want: typeErr},
		{name: "long name", script: `await callTool('x'.repeat(300), {})`, want: typeErr},
		{name: "bad options", script: `await callTool('t', {}, 'nope')`, want: typeErr},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := &mcptest.Host{}
			res := runScript(t, h, c.script)
			checkWant(t, res, c.want)
			if c.input != "" {
				if len(h.Calls()) != 1 {
					t.Fatalf("calls: %v", h.Calls())
				}
				got, _ := json.Marshal(h.Calls()[0].Input)
				if string(got) != c.input {
					t.Errorf("host got %s, want %s", got, c.input)
				}
			} else if c.want.status != StatusOK && len(h.Calls()) != 0 {
				t.Errorf("a refused call reached the host: %v", h.Calls())
			}
		})
	}
}

func TestGetTool(t *testing.T) {
	h := &mcptest.Host{Tools: map[string]string{"crm.find": `{"name":"crm.find","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}`}}
	res := runScript(t, h, `
		const d = getTool('crm.find');
		const same = d === getTool('crm.find');
		let frozen = false;
		try { d.inputSchema.properties.q.type = 'number' } catch (e) { frozen = e instanceof TypeError }
		return {name: d.name, missing: getTool('nope'), same, frozen, type: d.inputSchema.properties.q.type}`)
	checkWant(t, res, okWith(`{"name":"crm.find","missing":null,"same":true,"frozen":true,"type":"string"}`))
	res = runScript(t, h, `return getTool(42)`)
	checkWant(t, res, typeErr)
}

func TestLogsAndMessages(t *testing.T) {
	h := &mcptest.Host{}
	res := runScript(t, h, `
		console.log('a', 1, true, null, undefined, {x: [1]}, [2], () => 1, Symbol('s'), new Error('e'));
		console.info('i'); console.warn('w'); console.error('e'); console.debug('d');
		mcpLog('info', 'hello', {k: 1});
		mcpNotify('progress', {pct: 50});
		const o = {}; o.o = o; console.log(o);
		return 1`)
	if res.Status != StatusOK {
		t.Fatal(describe(res))
	}
	got := []string{}
	for _, l := range res.Logs {
		got = append(got, l.Level+":"+l.Message)
	}
	want := []string{`log:a 1 true null undefined {"x":[1]} [2] [Function] Symbol(s) Error: e`, "info:i", "warn:w", "error:e", "debug:d", "info:hello", "log:[object]"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("logs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(h.Logs()) != 1 || h.Logs()[0] != `info|hello|{"k":1}` || len(h.Notes()) != 1 || h.Notes()[0] != `progress|{"pct":50}` {
		t.Errorf("host got logs %v notes %v", h.Logs(), h.Notes())
	}
	for _, s := range []string{`mcpLog('loud', 'x')`, `mcpLog(1, 'x')`, `mcpNotify('', {})`, `mcpNotify({}, {})`} {
		if res := runScript(t, nil, s); res.Status != StatusRuntimeError || res.Error.Name != "TypeError" {
			t.Errorf("%s: %s", s, describe(res))
		}
	}
}

func TestMessageRateLimit(t *testing.T) {
	h := &mcptest.Host{}
	res := runScript(t, h, `for (let i = 0; i < 100; i++) { mcpLog('info', 'm' + i); mcpNotify('e', i) } return 1`)
	if res.Status != StatusOK {
		t.Fatal(describe(res))
	}
	if n := len(h.Logs()) + len(h.Notes()); n != maxHostMessages {
		t.Errorf("host got %d messages, want %d", n, maxHostMessages)
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Type != WarningMessagesDropped {
		t.Errorf("warnings: %s", describe(res))
	}
}

func TestLogBudget(t *testing.T) {
	res := runScript(t, nil, `for (let i = 0; i < 1000; i++) console.log('line ' + i + ' ' + 'x'.repeat(100)); mcpLog('info', 'late'); return 1`,
		func(l *presets.Limits) { l.MaxLogBytes = 1000 })
	if res.Status != StatusOK {
		t.Fatal(describe(res))
	}
	// The budget counts each entry's text and its JSON framing.
	total := 0
	for _, l := range res.Logs[:len(res.Logs)-1] {
		total += len(l.Message) + int(entryOverhead) + len(l.Level)
	}
	last := res.Logs[len(res.Logs)-1]
	if total != 1000 || last.Level != "warn" || last.Message != "logs truncated after 1000 bytes (the limit maxLogBytes is 1000)" {
		t.Errorf("logs: %d bytes, last %+v", total, last)
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Type != WarningLogsTruncated {
		t.Errorf("warnings: %+v", res.Warnings)
	}
}

func TestResultBudget(t *testing.T) {
	res := runScript(t, nil, `return {big: 'x'.repeat(1500), n: 1}`, func(l *presets.Limits) { l.MaxResultBytes = 1000 })
	if res.Status != StatusOK {
		t.Fatal(describe(res))
	}
	var m struct {
		Truncated bool
		Preview   string
		Bytes     int
		AtLeast   bool
	}
	if err := json.Unmarshal(res.Result, &m); err != nil || !m.Truncated || m.Bytes != 1516 || m.AtLeast || !strings.HasPrefix(m.Preview, `{"big":"xxx`) {
		t.Errorf("result: %s (%v)", res.Result, err)
	}
	if len(res.Result) > 1000 {
		t.Errorf("marker is %d bytes, over the budget", len(res.Result))
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Type != WarningResultTruncated {
		t.Errorf("warnings: %+v", res.Warnings)
	}
	// Past twice the budget, encoding stops: the size is a lower bound.
	res = runScript(t, nil, `return {big: 'x'.repeat(50000), more: Array.from({length: 1000}, (_, i) => ({i}))}`, func(l *presets.Limits) { l.MaxResultBytes = 1000 })
	m.AtLeast = false
	if err := json.Unmarshal(res.Result, &m); err != nil || res.Status != StatusOK || !m.Truncated || !m.AtLeast || m.Bytes <= 2000 || m.Bytes > 50016 || len(res.Result) > 1000 {
		t.Errorf("result: %s (%v)", string(res.Result[:min(len(res.Result), 300)]), err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Message, "at least") {
		t.Errorf("warnings: %+v", res.Warnings)
	}
	// A result of exactly the budget is kept.
	res = runScript(t, nil, `return 'x'.repeat(998)`, func(l *presets.Limits) { l.MaxResultBytes = 1000 })
	if res.Status != StatusOK || len(res.Result) != 1000 || len(res.Warnings) != 0 {
		t.Errorf("exact fit: %d bytes, %+v", len(res.Result), res.Warnings)
	}
}

// TestResultExport covers the serialisation of results inside the runtime.
func TestResultExport(t *testing.T) {
	cases := []hardeningCase{
		{name: "function", script: `return {a: 1, f() {}}`, want: want{status: StatusRuntimeError, name: "TypeError", contains: "a function at $.f"}},
		{name: "symbol", script: `return [1, Symbol('x')]`, want: want{status: StatusRuntimeError, contains: "a symbol at $[1]"}},
		{name: "cycle", script: `const o = {a: {b: {}}}; o.a.b.c = o.a; return o`, want: want{status: StatusRuntimeError, contains: "cycle at $.a.b.c (refers back to $.a)"}},
		{name: "cycle to the root", script: `const o = {a: 1}; o.b = {c: o}; return o`, want: want{status: StatusRuntimeError, contains: "cycle at $.b.c (refers back to $)"}},
		{name: "root that is its own member", script: `const o = {}; o.self = o; return o`, want: want{status: StatusRuntimeError, contains: "cycle at $.self (refers back to $)"}},
		{name: "shared, not cyclic", script: `const s = {x: 1}; return {a: s, b: [s, {c: s}]}`, want: okWith(`{"a":{"x":1},"b":[{"x":1},{"c":{"x":1}}]}`)},
		{name: "undefined members", script: `return {a: undefined, b: [undefined]}`, want: okWith(`{"b":[null]}`)},
		{name: "specials", script: `return [NaN, Infinity, -0, new Date(0), new Map([[1, 2]]), /x/, new Boolean(false), new Number(2), new String('s')]`,
			want: okWith(`[null,null,0,"1970-01-01T00:00:00.000Z",{},{},false,2,"s"]`)},
		{name: "toJSON", script: `return {toJSON() { return {x: 1} }}`, want: okWith(`{"x":1}`)},
		{name: "getter", script: `return {get x() { return 2 }}`, want: okWith(`{"x":2}`)},
		{name: "getter loops", change: shortTimeout(300 * time.Millisecond), script: `return {get x() { while (true) {} }}`, want: want{status: StatusTimeout}},
		{name: "toJSON loops", change: shortTimeout(300 * time.Millisecond), script: `return {toJSON() { for (;;) {} }}`, want: want{status: StatusTimeout}},
		{name: "proxy loops", change: shortTimeout(300 * time.Millisecond), script: `return new Proxy({}, {ownKeys() { for (;;) {} }})`, want: want{status: StatusTimeout}},
		{name: "getter throws", script: `return {get x() { throw new RangeError('nope') }}`, want: want{status: StatusRuntimeError, name: "RangeError"}},
		{name: "getter does code generation", script: `return {get x() { return eval('1') }}`, want: codeGen},
		{name: "deep result", script: `let a = 1; for (let i = 0; i < 1000; i++) a = [a]; return a`, want: tooBig},
		{name: "unicode", script: `return ['é', '\ud83d\ude00', '\u0000', '<&>']`, want: okWith(`["é","😀","\u0000","<&>"]`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkWant(t, c.run(t), c.want) })
	}
}

// TestToolCallCap checks maxToolCalls: the call over the cap ends the run.
func TestToolCallCap(t *testing.T) {
	h := &mcptest.Host{}
	res := runScript(t, h, `for (let i = 0; i < 10; i++) { try { await callTool('t', {i}) } catch (e) {} } return 'done'`,
		func(l *presets.Limits) { l.MaxToolCalls = 3 })
	checkWant(t, res, want{status: StatusLimitExceeded, limit: LimitToolCalls})
	if len(h.Calls()) != 3 || res.Metrics.ToolCalls != 3 || len(res.ToolTrace) != 3 {
		t.Errorf("calls: host %d, %s", len(h.Calls()), describe(res))
	}
	res = runScript(t, nil, `await Promise.all([1, 2, 3].map(i => callTool('t', {i}))); return 'ok'`, func(l *presets.Limits) { l.MaxToolCalls = 3 })
	checkWant(t, res, okWith(`"ok"`))
}

// TestMemoryBudget stops runs that grow the heap past memoryBytes.
func TestMemoryBudget(t *testing.T) {
	// A generous deadline: under the race detector on a loaded machine, filling
	// 64 MiB takes seconds, and the point is that memory, not time, ends the run.
	small := func(l *presets.Limits) { l.MemoryBytes = 64 << 20; l.Timeout = 60 * time.Second }
	for _, script := range []string{
		`let s = 'x'; while (true) s += s + 'y'`,
		`const a = []; while (true) a.push(new Array(1000).fill(1))`,
		`const m = new Map(); for (let i = 0; ; i++) m.set(i, {i, s: 'v' + i})`,
		`const a = []; while (true) a.push('x'.repeat(1 << 20))`,
	} {
		t.Run(script, func(t *testing.T) {
			res := runScript(t, nil, script, small)
			checkWant(t, res, want{status: StatusLimitExceeded, limit: LimitMemory})
		})
	}
	runtime.GC()
}

func TestStackDepth(t *testing.T) {
	for _, script := range []string{
		`function f(n) { return f(n + 1) + 1 } return f(0)`,
		`const o = {get x() { return this.x }}; return o.x`,
		`function f() { return [1].map(f) } return f()`,
		`function f() { try { return f() } catch (e) { return f() } } return f()`,
	} {
		res := runScript(t, nil, script, func(l *presets.Limits) { l.MaxStackDepth = 100 })
		checkWant(t, res, want{status: StatusLimitExceeded, limit: LimitStack})
	}
	res := runScript(t, nil, `function f(n) { return n ? f(n - 1) + 1 : 0 } return f(90)`, func(l *presets.Limits) { l.MaxStackDepth = 100 })
	checkWant(t, res, okWith(`90`))
}

func TestTimeouts(t *testing.T) {
	for _, script := range []string{
		`while (true) {}`,
		`for (;;) { try { while (true) {} } catch (e) {} finally { continue } }`,
		`async function f() { await null; return f() } return f()`,
		`const p = Promise.resolve(); for (;;) await p`,
		`while (true) { try { JSON.stringify([[[[]]]]) } catch (e) {} }`,
	} {
		start := time.Now()
		res := runScript(t, nil, script, shortTimeout(200*time.Millisecond))
		if res.Status != StatusTimeout || !strings.Contains(res.Error.Message, "timeout of 200ms") {
			t.Errorf("%s: %s", script, describe(res))
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: took %v", script, d)
		}
	}
}

// TestCancellation cancels the caller's context mid-run: the run ends
// promptly, tool calls in flight see the cancellation, nothing leaks.
func TestCancellation(t *testing.T) {
	base := runtime.NumGoroutine()
	h := &mcptest.Host{Delay: 10 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	res := Run(ctx, compile(t, `await Promise.all([callTool('a', {}), callTool('b', {})]); return 1`), h, Options{RunID: "c", Limits: limits(t, presets.Balanced)})
	if d := time.Since(start); d > time.Second {
		t.Errorf("cancelled run took %v", d)
	}
	if res.Status != StatusCancelled || !strings.Contains(res.Error.Message, "cancelled") {
		t.Errorf("status: %s", describe(res))
	}
	if h.Cancelled() != 2 {
		t.Errorf("host saw %d cancelled calls, want 2", h.Cancelled())
	}
	for _, e := range res.ToolTrace {
		if e.OK || e.Error != codeCancelled {
			t.Errorf("trace: %s", describe(res))
		}
	}
	settleGoroutines(t, base)

	// A busy plan is interrupted too.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	res = Run(ctx, compile(t, `while (true) {}`), h, Options{Limits: limits(t, presets.Balanced)})
	if res.Status != StatusCancelled {
		t.Errorf("busy plan: %s", describe(res))
	}
	// An already cancelled context stops the run at once.
	res = Run(ctx, compile(t, `while (true) {}`), h, Options{Limits: limits(t, presets.Balanced)})
	if res.Status != StatusCancelled {
		t.Errorf("cancelled before start: %s", describe(res))
	}
	settleGoroutines(t, base)
}

// TestCancelledStatus checks that a run's status names why its caller's
// context ended: a cancellation is cancelled, the caller's own deadline is a
// timeout, and the logs written before either are in the result.
func TestCancelledStatus(t *testing.T) {
	h := &mcptest.Host{Delay: 10 * time.Second}
	script := `console.log("before"); await callTool('slow', {}); console.log("after"); return 1`
	for _, tc := range []struct {
		name    string
		ctx     func() (context.Context, context.CancelFunc)
		status  Status
		message string
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			return ctx, cancel
		}, StatusCancelled, "cancelled by the client"},
		{"cancelled with a cause", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancelCause(context.Background())
			time.AfterFunc(100*time.Millisecond, func() { cancel(errors.New("the client went away")) })
			return ctx, func() { cancel(nil) }
		}, StatusCancelled, "cancelled by the client"},
		{"client's deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 100*time.Millisecond)
		}, StatusTimeout, "client's deadline"},
		{"client's deadline as a cause", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancelCause(context.Background())
			time.AfterFunc(100*time.Millisecond, func() { cancel(context.DeadlineExceeded) })
			return ctx, func() { cancel(nil) }
		}, StatusTimeout, "client's deadline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := tc.ctx()
			defer cancel()
			l := limits(t, presets.Balanced)
			l.Timeout = 5 * time.Second
			res := Run(ctx, compile(t, script), h, Options{RunID: "c", Limits: l})
			if res.Status != tc.status || res.Error == nil || !strings.Contains(res.Error.Message, tc.message) {
				t.Fatalf("got %s, want %s with %q", describe(res), tc.status, tc.message)
			}
			if len(res.Logs) != 1 || res.Logs[0].Message != "before" {
				t.Errorf("logs before the end are not in the result: %+v", res.Logs)
			}
		})
	}
}

// TestTimeoutCancelsCalls checks that the deadline reaches calls in flight.
func TestTimeoutCancelsCalls(t *testing.T) {
	base := runtime.NumGoroutine()
	h := &mcptest.Host{Delay: 10 * time.Second}
	res := runScript(t, h, `return await callTool('slow', {})`, shortTimeout(100*time.Millisecond))
	if res.Status != StatusTimeout || h.Cancelled() != 1 || res.ToolTrace[0].Error != codeTimeout {
		t.Errorf("%s (cancelled %d)", describe(res), h.Cancelled())
	}
	settleGoroutines(t, base)
}

func TestConcurrency(t *testing.T) {
	script := `const r = await Promise.all(Array.from({length: 10}, (_, i) => callTool('t' + i, {i}))); return r.length`
	h := &mcptest.Host{Delay: 50 * time.Millisecond}
	start := time.Now()
	res := runScript(t, h, script, func(l *presets.Limits) { l.MaxConcurrency = 10 })
	d := time.Since(start)
	checkWant(t, res, okWith(`10`))
	if d > 400*time.Millisecond || h.Peak() != 10 {
		t.Errorf("10 parallel calls took %v with %d in flight at once", d, h.Peak())
	}

	h = &mcptest.Host{Delay: 50 * time.Millisecond}
	start = time.Now()
	res = runScript(t, h, script, func(l *presets.Limits) { l.MaxConcurrency = 2 })
	d = time.Since(start)
	checkWant(t, res, okWith(`10`))
	if d < 250*time.Millisecond || h.Peak() != 2 {
		t.Errorf("with concurrency 2, 10 calls took %v with %d in flight at once", d, h.Peak())
	}
	// The trace keeps the order the plan made the calls in.
	for i, e := range res.ToolTrace {
		if e.ToolName != fmt.Sprintf("t%d", i) || !e.OK || e.DurationMs < 40 {
			t.Errorf("trace %d: %+v", i, e)
		}
	}
}

// TestFireAndForget: calls the plan never awaits are cancelled when it
// returns, and the run still waits for them. A call starts when the plan
// yields to the event loop: calls made just before returning never reach
// the host; calls already in flight are cancelled.
func TestFireAndForget(t *testing.T) {
	base := runtime.NumGoroutine()
	h := &mcptest.Host{Delay: 10 * time.Second}
	start := time.Now()
	res := runScript(t, h, `callTool('slow', {}); callTool('slow', {}).catch(() => {}); return 'early'`)
	if res.Status != StatusOK || time.Since(start) > time.Second || len(h.Calls()) != 0 || len(res.ToolTrace) != 2 || res.ToolTrace[0].Error != codeCancelled {
		t.Errorf("calls made before returning: %s (host saw %d)", describe(res), len(h.Calls()))
	}
	start = time.Now()
	res = runScript(t, h, `callTool('slow', {}); callTool('slow', {}).catch(() => {}); await new Promise(r => setTimeout(r, 1)); return 'early'`)
	if res.Status != StatusOK || time.Since(start) > time.Second || h.Cancelled() != 2 {
		t.Errorf("calls in flight when the plan returns: %s (cancelled %d)", describe(res), h.Cancelled())
	}
	settleGoroutines(t, base)
}

// TestSequentialCallsOnTheLoop: a call that is all the event loop waits
// for is made on the loop's goroutine, and the plan sees it as any other:
// results, errors, the trace, and a timer or a second call in flight
// sending calls back to goroutines of their own.
func TestSequentialCallsOnTheLoop(t *testing.T) {
	h := &mcptest.Host{Call: func(_ context.Context, name string, in map[string]any) (json.RawMessage, error) {
		if name == "bad" {
			return nil, policyErr(toolerr.AccessDenied, "no")
		}
		b, _ := json.Marshal(map[string]any{"echo": in["i"]})
		return b, nil
	}}
	res := runScript(t, h, `const a = await callTool('t', {i: 1});
		const b = await callTool('bad', {}, {throwOnError: false});
		setTimeout(() => {}, 5);
		const c = await callTool('t', {i: 3});
		const [d, e] = await Promise.all([callTool('t', {i: 4}), callTool('t', {i: 5})]);
		return [a.echo, b.ok, b.error.code, c.echo, d.echo, e.echo]`)
	checkWant(t, res, okWith(`[1, false, "ACCESS_DENIED", 3, 4, 5]`))
	if len(res.ToolTrace) != 5 || res.ToolTrace[1].OK || res.ToolTrace[1].Error != "ACCESS_DENIED" {
		t.Errorf("trace: %s", describe(res))
	}
}

// TestPanics checks that panics in the host are contained.
func TestPanics(t *testing.T) {
	base := runtime.NumGoroutine()
	for _, script := range []string{
		`await callTool('boom', {})`,
		`getTool('boom')`,
		`await Promise.all([callTool('ok', {}), callTool('boom', {})])`,
	} {
		res := runScript(t, &mcptest.Host{PanicOn: "boom"}, script)
		if res.Status != StatusRuntimeError || res.Error.Name != "InternalError" {
			t.Errorf("%s: %s", script, describe(res))
		}
		noLeaks(t, res)
	}
	logPanic := &panicLogHost{}
	res := runScript(t, logPanic, `mcpLog('info', 'x'); return 1`)
	if res.Status != StatusRuntimeError || res.Error.Name != "InternalError" {
		t.Errorf("Log panic: %s", describe(res))
	}
	settleGoroutines(t, base)
}

type panicLogHost struct{ mcptest.Host }

func (*panicLogHost) Log(context.Context, string, string, json.RawMessage) { panic("log sink /x/y.go") }

// TestBadArguments covers misuse of Run itself.
func TestBadArguments(t *testing.T) {
	for _, plan := range []*ast.Checked{nil, {}} {
		res := Run(context.Background(), plan, &mcptest.Host{}, Options{RunID: "x"})
		if res.Status != StatusRuntimeError || res.RunID != "x" || res.ToolTrace == nil {
			t.Errorf("%s", describe(res))
		}
	}
	res := Run(context.Background(), compile(t, `return 1`), nil, Options{})
	if res.Status != StatusRuntimeError {
		t.Errorf("nil host: %s", describe(res))
	}
	// A program that is not a function still gives a result.
	p := compile(t, `return 1`)
	res = Run(context.Background(), compileRaw(t, `1 + 1`), &mcptest.Host{}, Options{Limits: limits(t, presets.Balanced)})
	if res.Status != StatusRuntimeError || res.Error.Name != "InternalError" {
		t.Errorf("not a function: %s", describe(res))
	}
	_ = p
	// A zero Limits value still bounds the run.
	res = Run(context.Background(), compile(t, `return 1`), &mcptest.Host{}, Options{})
	if res.Status != StatusOK {
		t.Errorf("zero limits: %s", describe(res))
	}
	res = Run(context.Background(), compile(t, `return await callTool('t', {})`), &mcptest.Host{}, Options{})
	if res.Status != StatusLimitExceeded || res.Error.Limit != LimitToolCalls {
		t.Errorf("zero limits allow no tool calls: %s", describe(res))
	}
	// A context that is not valid JSON gives an empty context and a warning.
	res = Run(context.Background(), compile(t, `return codecallContext`), &mcptest.Host{}, Options{Limits: limits(t, presets.Balanced), Context: json.RawMessage(`{"a":`)})
	if res.Status != StatusOK || string(res.Result) != `{}` || len(res.Warnings) != 1 {
		t.Errorf("bad context: %s", describe(res))
	}
}

func TestRuntimeErrorLocation(t *testing.T) {
	l := limits(t, presets.Balanced)
	for _, c := range []struct {
		script string
		loc    Location
	}{
		{"const a = 1;\nnull.x", Location{Line: 2, Column: 6}},
		{"await callTool('t', {});\nfunction f() { throw new Error('late') }\nf()", Location{Line: 2, Column: 22}},
		{"return [1].map(x => x.y.z)", Location{Line: 1, Column: 25}},
	} {
		plan, err := ast.Validate(c.script, ast.RulesFor(l))
		if err != nil {
			t.Fatal(err)
		}
		res := Run(context.Background(), plan, &mcptest.Host{}, Options{Limits: l})
		if res.Status != StatusRuntimeError || res.Error.Location == nil || *res.Error.Location != c.loc {
			t.Errorf("%q: %s, want %+v", c.script, describe(res), c.loc)
		}
	}
	// A thrown value without a stack has no location.
	res := runScript(t, nil, `throw {message: 'm', stack: 'nonsense'}`)
	if res.Status != StatusRuntimeError || res.Error.Location != nil {
		t.Errorf("%s", describe(res))
	}
}

func TestUnhandledToolErrors(t *testing.T) {
	// x answers only after a has failed, and then waits a little more for
	// a's failure to reach the plan: what is asserted is the order of the
	// two, not that a beats a fixed sleep.
	aFailed := make(chan struct{})
	h := &mcptest.Host{Call: func(_ context.Context, name string, _ map[string]any) (json.RawMessage, error) {
		switch name {
		case "a":
			defer close(aFailed)
		case "x":
			select {
			case <-aFailed:
			case <-time.After(10 * time.Second): // a was never called: the assertion below says so
			}
			time.Sleep(20 * time.Millisecond)
		}
		return nil, policyErr(toolerr.AccessDenied, "no "+name)
	}}
	// a fails while the plan still runs, with nothing to handle it
	res := runScript(t, h, `callTool('a', {}); callTool('b', {}).catch(() => 0); await Promise.allSettled([callTool('x', {})]); return 1`)
	if res.Status != StatusOK || len(res.Warnings) != 1 || res.Warnings[0].Type != WarningUnhandledToolError ||
		!strings.Contains(res.Warnings[0].Message, `callTool("a") failed with ACCESS_DENIED`) {
		t.Errorf("%s", describe(res))
	}
	// a fails after the plan has returned
	h.Call = func(ctx context.Context, _ string, _ map[string]any) (json.RawMessage, error) {
		<-ctx.Done() // the plan has returned: the run cancels what is in flight
		return nil, policyErr(toolerr.AccessDenied, "no")
	}
	res = runScript(t, h, `callTool('a', {}); await new Promise(r => setTimeout(r, 1)); return 1`)
	if res.Status != StatusOK || len(res.Warnings) != 1 || res.Warnings[0].Type != WarningLateToolError {
		t.Errorf("%s", describe(res))
	}
}

// TestMcpLogAtBudget checks that a log line cut at the budget reaches the
// host cut, and the closing warning does not.
func TestMcpLogAtBudget(t *testing.T) {
	h := &mcptest.Host{}
	res := runScript(t, h, `mcpLog('info', 'x'.repeat(60)); mcpLog('info', 'y'.repeat(60)); mcpLog('info', 'z'); return 1`,
		// Each entry costs its text plus 47 bytes of framing
		// ({"level":"info","message":"","timeMs":0000000},).
		func(l *presets.Limits) { l.MaxLogBytes = 184 })
	if res.Status != StatusOK || len(h.Logs()) != 2 || h.Logs()[1] != "info|"+strings.Repeat("y", 30)+"|" {
		t.Errorf("host logs %q, result %s", h.Logs(), describe(res))
	}
}

func TestDefaultSortOrder(t *testing.T) {
	res := runScript(t, nil, `return [[3, 1, undefined, 10, 2].sort(), ['b', 'a', 'é', 'Z'].toSorted(), [3, 1, 2].sort((x, y) => y - x)]`)
	checkWant(t, res, okWith(`[[1,10,2,3,null],["Z","a","b","é"],[3,2,1]]`))
}

func TestBuiltinAssignmentExplained(t *testing.T) {
	res := runScript(t, nil, `Object = null; return 1`)
	if res.Status != StatusRuntimeError || res.Error.Name != "ReferenceError" || !strings.Contains(res.Error.Message, "cannot be reassigned") {
		t.Errorf("%s", describe(res))
	}
	res = runScript(t, nil, `return notDeclaredAnywhere`)
	if res.Status != StatusRuntimeError || strings.Contains(res.Error.Message, "reassigned") {
		t.Errorf("an ordinary undefined name must keep the engine's message: %s", describe(res))
	}
}

// TestNoReturnWarns checks that a plan that forgets return is told so, and
// that returning null on purpose is not.
func TestNoReturnWarns(t *testing.T) {
	for _, tc := range []struct {
		script string
		warn   bool
	}{
		{`await callTool('t', {})`, true},
		{`const x = 1; x + 1`, true},
		{`return`, true},
		{`return undefined`, true},
		{`return null`, false},
		{`return 0`, false},
	} {
		t.Run(tc.script, func(t *testing.T) {
			res := runScript(t, nil, tc.script)
			if res.Status != StatusOK || string(res.Result) != "null" && tc.warn {
				t.Fatalf("result: %s", describe(res))
			}
			warned := slices.ContainsFunc(res.Warnings, func(w Warning) bool { return w.Type == WarningNoResult })
			if warned != tc.warn {
				t.Fatalf("no_result warning = %v, want %v: %s", warned, tc.warn, describe(res))
			}
		})
	}
}
