package vm

import (
	"context"
	"encoding/json"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/internal/proccpu"
	"github.com/codecall-go/codecall/presets"
)

// fuzzSeeds are scripts that have broken sandboxes before.
var fuzzSeeds = []string{
	`return 1`,
	`return (function(){}).constructor('return 1')()`,
	`return 'x'.repeat(2**30)`,
	`const a = []; a.length = 2**32 - 1; return a.join()`,
	`return Array.prototype.indexOf.call({length: 2**53 - 1}, 1)`,
	`return JSON.parse('['.repeat(1e5) + ']'.repeat(1e5))`,
	`let a = []; for (let i = 0; i < 1e5; i++) a = [a]; return String(a)`,
	`while (true) {}`,
	`return {get x() { while (true) {} }}`,
	`return /(a+)+$/g.exec('a'.repeat(30) + 'b')`,
	`const r = /(a+)+$/g; r.lastIndex = 1; return r.test('a'.repeat(30) + 'b')`,
	`return new Uint8Array(2**33)`,
	`return await Promise.all([callTool('a', {}), callTool('b', {x: [1, {y: 2}]})])`,
	`const o = {}; o.o = o; return o`,
	`let p = {}; for (let i = 0; i < 1e4; i++) p = new Proxy(p, {}); return p.x`,
	`function f() { return f() } return f()`,
	`await new Promise(() => {})`,
	`return [...'abc'].map(c => c.charCodeAt(0)).reduce((a, b) => a + b)`,
	`console.log(codecallContext); mcpLog('info', 'x', {a: 1}); return getTool('t')`,
	`return 'a'.repeat(1e5).replace(/a/g, "$'")`,
	`const it = [][Symbol.iterator](); return [...it]`,
}

var (
	bigIntLiteral = regexp.MustCompile(`[0-9]n`)
	deepSource    = 48
)

// FuzzRun runs random scripts: Run must never panic and never run past
// its timeout by more than a small margin.
func FuzzRun(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	l := limits(f, presets.Balanced)
	l.Timeout = 300 * time.Millisecond
	l.MemoryBytes = 64 << 20
	f.Fuzz(func(t *testing.T, script string) {
		// What the validator refuses before a plan reaches Run: huge or
		// deeply nested source (the parser recurses on the Go stack) and
		// BigInt literals (BigInt ** and << allocate without bound).
		if len(script) > 4096 || bigIntLiteral.MatchString(script) || nesting(script) > deepSource {
			t.Skip()
		}
		p, err := goja.Compile("plan.js", "(async function(){"+script+"\n})", true)
		if err != nil {
			t.Skip()
		}
		start, cpu := time.Now(), proccpu.Used()
		res := Run(context.Background(), &ast.Checked{Program: p}, &mcptest.Host{Tools: map[string]string{"t": `{"name":"t"}`}},
			Options{RunID: "fuzz", Limits: l, Context: json.RawMessage(`{"a":1}`)})
		// Overrunning means running: on a busy machine a run may wait for
		// a CPU well past its deadline without doing anything wrong.
		const margin = 1500 * time.Millisecond
		if d, c := time.Since(start), proccpu.Used()-cpu; d > l.Timeout+margin && (c == 0 || c > l.Timeout+margin) {
			t.Errorf("ran %v (%v of CPU) with a timeout of %v: %q", d, c, l.Timeout, script)
		}
		if res == nil || res.Status == "" || res.ToolTrace == nil {
			t.Fatalf("bad result for %q: %+v", script, res)
		}
		if res.Status == StatusOK && !json.Valid(res.Result) {
			t.Errorf("invalid JSON result %q for %q", res.Result, script)
		}
		// A script such as "}%{" escapes the wrapper, which the validator
		// refuses; Run reports it as an internal error.
		if res.Status == StatusRuntimeError && res.Error.Name == "InternalError" && res.Error.Message != errNotAFunction {
			t.Errorf("internal error for %q", script)
		}
	})
}

func nesting(s string) int {
	depth, deepest := 0, 0
	for _, c := range s {
		switch c {
		case '(', '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ')', ']', '}':
			depth--
		}
	}
	return deepest
}

// TestNoGoroutineLeaks runs a mix of plans and checks that every goroutine
// a run starts is gone when it returns.
func TestNoGoroutineLeaks(t *testing.T) {
	runtime.GC()
	base := runtime.NumGoroutine()
	h := &mcptest.Host{Delay: 20 * time.Millisecond, PanicOn: "boom"}
	for _, s := range []string{
		`return 1`,
		`return await Promise.all([callTool('a', {}), callTool('b', {}), callTool('c', {})])`,
		`callTool('a', {}); return 1`,
		`await callTool('boom', {})`,
		`while (true) {}`,
		`mcpLog('info', 'x'); mcpNotify('e', 1); return 1`,
		`await new Promise(() => {})`,
		`for (let i = 0; i < 30; i++) callTool('a', {}); return 1`,
	} {
		res := runScript(t, h, s, shortTimeout(200*time.Millisecond))
		if res.Status == "" {
			t.Fatal(s)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	Run(ctx, compile(t, `await callTool('a', {}); await callTool('b', {}); return 1`), h, Options{Limits: limits(t, presets.Balanced)})
	settleGoroutines(t, base)
}
