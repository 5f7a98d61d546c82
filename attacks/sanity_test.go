package attacks

import (
	"strings"
	"testing"

	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

// sanityCases are realistic, legitimate plans: the walls above must not
// get in their way.
var sanityCases = []attackCase{
	// Parallel calls joined in the sandbox.
	{name: "promise-all", cat: catSanity,
		script: `const [a, b] = await Promise.all([callTool('test.echo', {a: 1}), callTool('test.echo', {b: 2})]); return {a: a.a, b: b.b}`,
		want:   ok(`{"a":1,"b":2}`),
		check: func(t *testing.T, h *host, r *response) {
			if len(r.ToolTrace) != 2 || r.Metrics.ToolCalls != 2 {
				t.Errorf("want 2 traced tool calls, got trace %+v and metrics %+v", r.ToolTrace, r.Metrics)
			}
			for _, e := range r.ToolTrace {
				if e.ToolName != "test.echo" || !e.OK {
					t.Errorf("trace entry %+v", e)
				}
			}
		}},
	// map, filter and reduce over a tool result.
	{name: "map-filter-reduce", cat: catSanity,
		script: `const r = await callTool('test.echo', {items: [{n: 1, keep: true}, {n: 2, keep: false}, {n: 3, keep: true}]});
return r.items.filter(i => i.keep).map(i => i.n * 10).reduce((s, n) => s + n, 0)`,
		want: ok(`40`)},
	// A tool error caught by the plan.
	{name: "try-catch-tool-error", cat: catSanity,
		script: `try { await callTool('test.fail', {reason: 'nope'}) } catch (e) { return {code: e.code, tool: e.toolName, hasMessage: e.message.includes('nope')} }`,
		want:   ok(`{"code":"EXECUTION","tool":"test.fail","hasMessage":true}`)},
	// throwOnError: false.
	{name: "throwOnError-false", cat: catSanity,
		script: `const bad = await callTool('test.fail', {reason: 'x'}, {throwOnError: false});
const good = await callTool('test.echo', {v: 1}, {throwOnError: false});
return {bad: [bad.ok, bad.error.code], good}`,
		want: ok(`{"bad":[false,"EXECUTION"],"good":{"ok":true,"data":{"v":1}}}`)},
	// Reading codecallContext.
	{name: "codecallContext-read", cat: catSanity, context: map[string]any{"user": "alice", "limits": map[string]any{"n": 3}},
		script: `return [codecallContext.user, codecallContext.limits.n, Object.isFrozen(codecallContext)]`,
		want:   ok(`["alice", 3, true]`)},
	// An uncaught tool error is a tool_error carrying the tool's input.
	{name: "uncaught-tool-error", cat: catSanity,
		script: `await callTool('test.fail', {reason: 'why'}); return 1`,
		want:   toolErr("test.fail", "EXECUTION"),
		check: func(t *testing.T, h *host, r *response) {
			checkJSON(t, "toolInput", r.Error.ToolInput, `{"reason":"why"}`)
		}},
	// Text results: JSON text is parsed, other text stays a string.
	{name: "text-results", cat: catSanity,
		script: `const a = await callTool('test.json', {text: '{"a":1}'}); const b = await callTool('test.json', {text: 'hello'}); return [a, b]`,
		want:   ok(`[{"a":1}, "hello"]`)},
	// Console logs are captured.
	{name: "console-logs", cat: catSanity,
		script: `console.log('hello', 42); console.warn('careful'); return 1`,
		want:   ok(`1`),
		check: func(t *testing.T, h *host, r *response) {
			if len(r.Logs) != 2 || !strings.Contains(r.Logs[0].Message, "hello") || !strings.Contains(r.Logs[1].Message, "careful") {
				t.Errorf("logs = %+v", r.Logs)
			}
		}},
	// A safe regex literal under secure.
	{name: "secure-regex-literal", cat: catSanity,
		script: `return ['ada@example.com', 'nope'].filter(s => /^[a-z]+@[a-z.]+$/.test(s))`,
		want:   ok(`["ada@example.com"]`)},
	// getTool describes a callable tool.
	{name: "getTool", cat: catSanity,
		script: `const t = getTool('test.sleep'); return [t.name, t.inputSchema.required]`,
		want:   ok(`["test.sleep", ["ms"]]`)},
	// A loop in balanced, bounded, with a parallel fan-out.
	{name: "balanced-loop-fan-out", cat: catSanity, preset: presets.Balanced,
		script: `const ps = []; for (let i = 0; i < 10; i++) ps.push(callTool('test.echo', {i})); const r = await Promise.all(ps); return r.map(x => x.i)`,
		want:   ok(`[0,1,2,3,4,5,6,7,8,9]`)},
	// A syntax error is located in the user's script.
	{name: "syntax-error-location", cat: catSanity,
		script: "const a = 1;\nconst b = ;\nreturn a",
		want:   syntaxErr,
		check: func(t *testing.T, h *host, r *response) {
			if r.Error.Location == nil || r.Error.Location.Line != 2 {
				t.Errorf("location = %+v, want line 2", r.Error.Location)
			}
		}},
	// locked_down as configured runs its plan in a sandboxed worker
	// process, whatever the mode under test.
	{name: "locked-down-runs-in-a-worker", cat: catSanity, preset: presets.LockedDown,
		limits: func(l *presets.Limits) { l.Isolation = presets.IsolationProcess },
		script: `return 1`,
		want:   ok(`1`),
		check: func(t *testing.T, h *host, r *response) {
			if iso := h.cc.Isolation(); iso.Effective != presets.IsolationProcess || iso.Confinement == nil || !iso.Confinement.Seccomp {
				t.Errorf("locked_down ran without a worker process: %+v", iso)
			}
		}},
	// An uncaught script error is a runtime_error with its name.
	{name: "runtime-error", cat: catSanity,
		script: `null.x`,
		want:   want{status: vm.StatusRuntimeError, name: "TypeError"}},
}

func TestSanity(t *testing.T) { runCases(t, sanityCases) }
