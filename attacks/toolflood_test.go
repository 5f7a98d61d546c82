package attacks

import (
	"testing"
	"time"

	"github.com/codecall-go/codecall/presets"
)

// atMostConcurrent checks that test.sleep never ran more than n handlers
// at once, and at some point ran at least least of them.
func atMostConcurrent(n, least int64) func(t *testing.T, h *host, r *response) {
	return func(t *testing.T, h *host, r *response) {
		t.Helper()
		if got := h.maxSleepers.Load(); got > n {
			t.Errorf("%d tool calls ran at once, over the concurrency limit %d", got, n)
		}
		if got := h.maxSleepers.Load(); got < least {
			t.Errorf("at most %d tool calls ran at once; Promise.all should run %d", got, least)
		}
	}
}

// countAtMost checks that test.count ran no more than n times.
func countAtMost(n int64) func(t *testing.T, h *host, r *response) {
	return func(t *testing.T, h *host, r *response) {
		t.Helper()
		if got := h.countCalls.Load(); got > n {
			t.Errorf("test.count ran %d times, over the cap of %d", got, n)
		}
		if r.Metrics.ToolCalls > int(n) {
			t.Errorf("metrics.toolCalls = %d, over the cap of %d", r.Metrics.ToolCalls, n)
		}
	}
}

func capTen(l *presets.Limits) { l.MaxToolCalls = 10 }

// secretVariant is a case that calls a spelling of the excluded
// test.secret; every spelling is unknown to the gate.
func secretVariant(name, toolName string) attackCase {
	return attackCase{name: "secret-variant-" + name, cat: catToolFlood, bypass: true,
		script:  `return await callTool(codecallContext.name, {})`,
		context: map[string]any{"name": toolName},
		want:    toolErr(toolName, "NOT_FOUND")}
}

// toolFloodCases flood the tool-call path and try to reach tools the run
// may not call.
var toolFloodCases = []attackCase{
	// Wall: the tool-call cap, calls in parallel.
	{name: "over-cap-parallel", cat: catToolFlood, limits: capTen,
		script: `await Promise.all(Array.from({length: 20}, () => callTool('test.count', {}))); return 'done'`,
		want:   toolCallCap, check: countAtMost(10)},
	// Wall: the tool-call cap, calls one after another.
	{name: "over-cap-sequential", cat: catToolFlood, limits: capTen,
		script: `async function f() { await callTool('test.count', {}); return f() } return await f()`,
		want:   toolCallCap, check: all(countAtMost(10), countRan(10))},
	// Wall: the tool-call cap cannot be caught and retried.
	{name: "over-cap-caught", cat: catToolFlood, limits: capTen,
		script: `async function f() { try { await callTool('test.count', {}) } catch (e) {} return f() } return await f()`,
		want:   toolCallCap, check: countAtMost(10)},
	// Wall: the cap with the secure preset's own numbers: 1000 calls
	// through Promise.all end the run at the 101st, never more than 4 at
	// once.
	{name: "promise-all-1000-secure", cat: catToolFlood,
		script: `await Promise.all(Array.from({length: 1000}, () => callTool('test.sleep', {ms: 2}))); return 'done'`,
		want:   toolCallCap, check: atMostConcurrent(4, 0)},
	// Wall: the concurrency limit, within the cap: 100 slow calls.
	{name: "promise-all-100-secure", cat: catToolFlood,
		script: `const r = await Promise.all(Array.from({length: 100}, () => callTool('test.sleep', {ms: 5}))); return r.length`,
		want:   ok(`100`), check: atMostConcurrent(4, 2)},
	// Wall: the concurrency limit: 1000 calls within a raised cap all
	// succeed, never more than 8 at once.
	{name: "promise-all-1000-balanced", cat: catToolFlood, preset: presets.Balanced,
		limits: func(l *presets.Limits) { l.MaxToolCalls = 1000; l.Timeout = 20 * time.Second },
		script: `const r = await Promise.all(Array.from({length: 1000}, () => callTool('test.sleep', {ms: 1}))); return r.length`,
		want:   ok(`1000`), check: atMostConcurrent(8, 2)},
	// Wall: self-reference, codecall.execute.
	{name: "self-execute", cat: catToolFlood,
		script: `return await callTool('codecall.execute', {script: 'return 1'})`,
		want:   toolErr("codecall.execute", "SELF_REFERENCE")},
	// Wall: self-reference, codecall.search.
	{name: "self-search", cat: catToolFlood,
		script: `return await callTool('codecall.search', {query: 'secret'})`,
		want:   toolErr("codecall.search", "SELF_REFERENCE")},
	// Wall: self-reference, codecall.describe.
	{name: "self-describe", cat: catToolFlood,
		script: `return await callTool('codecall.describe', {tools: ['test.secret']})`,
		want:   toolErr("codecall.describe", "SELF_REFERENCE")},
	// Wall: self-reference, codecall.invoke (not even registered here).
	{name: "self-invoke", cat: catToolFlood,
		script: `return await callTool('codecall.invoke', {tool: 'test.secret', input: {}})`,
		want:   toolErr("codecall.invoke", "SELF_REFERENCE")},
	// Wall: the gate, the excluded tool by its exact name.
	{name: "secret-exact", cat: catToolFlood,
		script: `return await callTool('test.secret', {})`,
		want:   toolErr("test.secret", "NOT_FOUND")},
	// Wall: the gate, spelled variants of the excluded tool.
	secretVariant("upper-case", "TEST.SECRET"),
	secretVariant("leading-space", " test.secret"),
	secretVariant("trailing-space", "test.secret "),
	secretVariant("trailing-NUL", "test.secret\x00"),
	secretVariant("trailing-newline", "test.secret\n"),
	secretVariant("cyrillic-e", "t\u0435st.secret"),
	secretVariant("one-dot-leader", "test\u2024secret"),
	secretVariant("zero-width-space", "test.\u200bsecret"),
	secretVariant("glob", "test.secre*"),
	secretVariant("fullwidth", "\uff54\uff45\uff53\uff54.secret"),
	// Wall: the gate, a case variant of an allowed tool is not that tool.
	{name: "count-case-variant", cat: catToolFlood, bypass: true,
		script: `return await callTool('Test.Count', {})`,
		want:   toolErr("Test.Count", "NOT_FOUND")},
	// Wall: getTool shows nothing of the excluded tool.
	{name: "getTool-secret", cat: catToolFlood,
		script: `return [getTool('test.secret'), getTool('TEST.SECRET'), getTool('codecall.execute')]`,
		want:   ok(`[null, null, null]`)},
	// Wall: allowedTools narrows the run.
	{name: "allowedTools-narrows", cat: catToolFlood, bypass: true, allowed: []string{"test.echo"},
		script: `return await callTool('test.count', {})`,
		want:   toolErr("test.count", "ACCESS_DENIED")},
	// Wall: allowedTools narrows by glob.
	{name: "allowedTools-glob-narrows", cat: catToolFlood, bypass: true, allowed: []string{"test.e*"},
		script: `return await callTool('test.count', {})`,
		want:   toolErr("test.count", "ACCESS_DENIED")},
	// Wall: allowedTools narrows getTool too.
	{name: "allowedTools-getTool", cat: catToolFlood, allowed: []string{"test.echo"},
		script: `return [getTool('test.count'), getTool('test.echo') !== null]`,
		want:   ok(`[null, true]`)},
	// Wall: allowedTools cannot widen past the configuration.
	{name: "allowedTools-cannot-widen", cat: catToolFlood, allowed: []string{"test.secret"},
		script: `return await callTool('test.secret', {})`,
		want:   toolErr("test.secret", "NOT_FOUND")},
	// Wall: a match-everything allowedTools still cannot widen.
	{name: "allowedTools-star", cat: catToolFlood, allowed: []string{"*"},
		script: `return await callTool('test.secret', {})`,
		want:   toolErr("test.secret", "NOT_FOUND")},
	// Wall: the end of the run. A call the plan did not await is
	// cancelled with the run, and a call chained after it never starts.
	{name: "fire-and-forget", cat: catToolFlood, bypass: true,
		script: `callTool('test.sleep', {ms: 300}).then(() => callTool('test.count', {})); return 'done'`,
		want:   ok(`"done"`),
		check: func(t *testing.T, h *host, r *response) {
			time.Sleep(600 * time.Millisecond)
			if n := h.countCalls.Load(); n != 0 {
				t.Errorf("test.count ran %d times after the run had ended", n)
			}
		}},
}

func TestToolCallFloods(t *testing.T) { runCases(t, toolFloodCases) }
