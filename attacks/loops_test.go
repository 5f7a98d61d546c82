package attacks

import (
	"fmt"
	"testing"
	"time"

	"github.com/codecall-go/codecall/presets"
)

// loopCases never end on their own. The secure preset refuses loop
// statements before running; balanced runs them into the deadline. Every
// other way to spin (recursion, microtasks, callbacks of native built-ins)
// must end at the deadline or the stack limit too.
var loopCases = []attackCase{
	// Wall: validator (secure refuses loops).
	{name: "secure-while-true", cat: catLoops,
		script: `while (true) {}`, want: loopRefused},
	// Wall: validator.
	{name: "secure-for-ever", cat: catLoops,
		script: `for (;;) {}`, want: loopRefused},
	// Wall: validator.
	{name: "secure-do-while", cat: catLoops,
		script: `do {} while (1)`, want: loopRefused},
	// Wall: validator, a loop hidden in a nested function.
	{name: "secure-loop-in-callback", cat: catLoops,
		script: `return [1].map(() => { for (const k in {a: 1}) {} return 1 })`, want: loopRefused},
	// Wall: validator, for-of.
	{name: "secure-for-of", cat: catLoops,
		script: `for (const x of [1]) {} return 1`, want: loopRefused},

	// Wall: the deadline.
	{name: "balanced-while-true", cat: catLoops, preset: presets.Balanced, limits: short,
		script: `while (true) {}`, want: timedOut},
	// Wall: the deadline.
	{name: "balanced-for-ever", cat: catLoops, preset: presets.Balanced, limits: short,
		script: `for (;;) {}`, want: timedOut},
	// Wall: the deadline.
	{name: "balanced-do-while", cat: catLoops, preset: presets.Balanced, limits: short,
		script: `do {} while (1)`, want: timedOut},
	// Wall: the deadline, labelled loops with continue.
	{name: "balanced-labelled", cat: catLoops, preset: presets.Balanced, limits: short,
		script: `outer: for (;;) { inner: for (;;) { continue outer } }`, want: timedOut},
	// Wall: the deadline, a loop swallowing every exception.
	{name: "balanced-loop-swallows-errors", cat: catLoops, preset: presets.Balanced, limits: short,
		script: `for (;;) { try { null.x } catch (e) {} finally { continue } }`, want: timedOut},
	// Wall: the deadline, an endless generator.
	{name: "balanced-endless-generator", cat: catLoops, preset: presets.Balanced, limits: short,
		script: `function* g() { for (;;) yield 1 } for (const x of g()) {}`, want: timedOut},
	// Wall: the deadline, a loop inside a native built-in's callback.
	{name: "balanced-loop-in-sort-comparator", cat: catLoops, preset: presets.Balanced, limits: short,
		script: `return [3, 2, 1].sort(() => { for (;;) {} })`, want: timedOut},
	// Wall: the deadline, a loop inside String.prototype.replace's callback.
	{name: "balanced-loop-in-replace-callback", cat: catLoops, preset: presets.Balanced, limits: short,
		script: `return 'aaa'.replace(/a/g, () => { for (;;) {} })`, want: timedOut},
	// Wall: the deadline, a loop after an awaited tool call.
	{name: "balanced-loop-after-await", cat: catLoops, preset: presets.Balanced, limits: short,
		script: `await callTool('test.echo', {}); for (;;) {}`, want: timedOut},

	// Wall: the stack limit.
	{name: "recursion", cat: catLoops,
		script: `function f() { return f() } return f()`, want: stackExceeded},
	// Wall: the stack limit, mutual recursion.
	{name: "mutual-recursion", cat: catLoops,
		script: `function a() { return b() } function b() { return a() } return a()`, want: stackExceeded},
	// Wall: the stack limit cannot be caught and retried.
	{name: "recursion-swallowing-errors", cat: catLoops,
		script: `function f() { try { return f() } catch (e) { return f() } } return f()`, want: stackExceeded},
	// Wall: the stack limit, recursion through a native built-in.
	{name: "recursion-through-map", cat: catLoops,
		script: `function f() { return [1].map(f) } return f()`, want: stackExceeded},
	// Wall: the deadline, an endless microtask chain. Each link keeps the
	// one before it, so the heap grows too; the budget is raised here so
	// that the deadline, not the watchdog, ends it.
	{name: "microtask-storm", cat: catLoops, limits: func(l *presets.Limits) { short(l); l.MemoryBytes = 1 << 30 },
		script: `await Promise.resolve().then(function f() { return Promise.resolve().then(f) })`, want: timedOut},
	// Wall: the deadline, microtasks that never return to the event loop.
	{name: "microtask-storm-unawaited", cat: catLoops, limits: short,
		script: `(function f() { Promise.resolve().then(f) })(); await new Promise(() => {})`, want: timedOut},
	// Wall: the deadline, a promise that never settles while a tool call
	// keeps the event loop busy.
	{name: "never-settles-with-slow-tool", cat: catLoops, limits: short,
		script: `callTool('test.sleep', {ms: 60000}); await new Promise(() => {})`, want: timedOut},
	// Wall: the deadline, async recursion (no stack growth).
	// Each call's promise waits on the next, so the chain also grows the
	// heap: the memory wall may answer first, and contains it as well.
	{name: "async-recursion", cat: catLoops, limits: short,
		script: `async function f() { await null; return f() } return await f()`, want: timedOut, orWant: memoryLimit},
	// Wall: the deadline, a promise that can never settle.
	{name: "never-settles", cat: catLoops, limits: short,
		script: `await new Promise(() => {})`, want: want{status: "runtime_error", name: "Error"}},
	// Wall: the deadline, a plan that waits on a slow tool; the tool's
	// call is cancelled with the run.
	{name: "slow-tool", cat: catLoops, limits: short,
		script: `return await callTool('test.sleep', {ms: 60000})`, want: timedOut},
	// Wall: the element cap: Array.from over a billion-long array-like is
	// refused before its native loop starts.
	{name: "array-from-callbacks", cat: catLoops, limits: short, isolate: true,
		script: `return Array.from({length: 1e9}, () => 0).length`, want: rangeError},
	// Wall: the element cap, forEach over a billion-long sparse array-like
	// (a native loop goja's interrupt cannot reach).
	{name: "forEach-sparse-arraylike", cat: catLoops, limits: short, isolate: true,
		script: `let n = 0; [].forEach.call({length: 1e9, 0: 1}, () => { n++ }); return n`, want: rangeError},
	// Wall: the deadline must also end a single native built-in that runs
	// long: sort on an array within the element cap (2M here, 4M in secure) is one
	// uninterruptible call, n log² n comparisons with a string conversion
	// each: seconds of CPU past the deadline. The array is built by one
	// fast native call, so the sort starts before the deadline.
	{name: "native-sort-overrun", cat: catLoops, limits: sortDeadline, isolate: true,
		script: sortInput + `a.sort(); return a.length`, want: timedOut},
	// Wall: the same with toSorted, a reader.
	{name: "native-toSorted-overrun", cat: catLoops, limits: sortDeadline, isolate: true,
		script: sortInput + `return a.toSorted().length`, want: timedOut, orWant: memoryLimit},
	// Wall: the deadline, nested callbacks of native built-ins without a
	// loop statement (secure).
	{name: "nested-forEach", cat: catLoops, limits: short,
		script: `const a = new Array(1e5).fill(0); a.forEach(() => a.forEach(() => a.forEach(() => 0)))`, want: timedOut},
}

func TestInfiniteLoops(t *testing.T) { runCases(t, loopCases) }

// sortInput builds the array a to sort: 2M one-character strings in a
// repeating order (1M under the race detector, which slows the sort
// tenfold).
var sortInput = func() string {
	n := 55555
	if raceEnabled {
		n = 27777
	}
	return fmt.Sprintf("const a = 'zyxwvutsrqponmlkjihgfedcba9876543210'.repeat(%d).split(''); ", n)
}()

// sortDeadline leaves time to build the array to sort, not to sort it.
func sortDeadline(l *presets.Limits) {
	l.Timeout = 1500 * time.Millisecond
	if raceEnabled {
		l.Timeout = 4 * time.Second
	}
}
