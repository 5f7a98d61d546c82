package attacks

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

// regexCases try catastrophic backtracking, which goja's backtracking
// engine does not interrupt, and regexes the preset forbids.
var regexCases = []attackCase{
	// Wall: goja runs RE2-compatible patterns on Go's linear engine, so
	// the classic nested quantifier is harmless and prompt.
	{name: "nested-quantifier-re2", cat: catRegex, preset: presets.Balanced,
		script: `return /(a+)+$/.test('a'.repeat(40) + 'b')`, want: ok(`false`), check: prompt(time.Second)},
	// Wall: the same, (x+x+)+y.
	{name: "xx-plus-y-re2", cat: catRegex, preset: presets.Balanced,
		script: `return /(x+x+)+y/.test('x'.repeat(5000))`, want: ok(`false`), check: prompt(time.Second)},
	// Wall: the regex time limit, a backreference forces backtracking.
	{name: "backreference-catastrophe", cat: catRegex, preset: presets.Balanced,
		script: `return /^(a+)+\1b$/.test('a'.repeat(40))`, want: regexTimeout, check: prompt(time.Second)},
	// Wall: the regex time limit, a lookahead forces backtracking.
	{name: "lookahead-catastrophe", cat: catRegex, preset: presets.Balanced,
		script: `return /^(?=(a+)+b)/.test('a'.repeat(40))`, want: regexTimeout, check: prompt(time.Second)},
	// Wall: the regex time limit inside String.prototype.replace.
	{name: "replace-catastrophe", cat: catRegex, preset: presets.Balanced,
		script: `return 'a'.repeat(40).replace(/^(a+)+\1b/, 'x')`, want: regexTimeout, check: prompt(time.Second)},
	// Wall: the regex time limit for a pattern built at run time.
	{name: "regexp-constructor-catastrophe", cat: catRegex, preset: presets.Balanced,
		script: `return new RegExp('^(?=(a+)+b)').test('a'.repeat(40))`, want: regexTimeout, check: prompt(time.Second)},
	// Wall: the regex time limit cannot be caught and retried.
	{name: "catastrophe-caught", cat: catRegex, preset: presets.Balanced,
		script: `try { /^(a+)+\1b$/.test('a'.repeat(40)) } catch (e) { return 'caught' } return 'done'`, want: regexTimeout, check: prompt(time.Second)},
	// Wall: the regex compilers' recursion: 25000 nested groups in one
	// literal compile and match without harm.
	{name: "deeply-nested-groups", cat: catRegex, preset: presets.Balanced,
		script: "return /" + strings.Repeat("(?:", 25000) + "a" + strings.Repeat(")", 25000) + "/.test('a')", want: ok(`true`), check: prompt(time.Second)},
	// Wall: counted repetition beyond RE2's limit runs on the backtracking
	// engine, under the regex time limit.
	{name: "huge-counted-repetition", cat: catRegex, preset: presets.Balanced,
		script: `return /(?:a{1000}){1000}b/.test('a'.repeat(100000))`, want: ok(`false`), check: prompt(time.Second)},
	// Wall: validator, secure allows literals only: RegExp is banned.
	{name: "secure-RegExp-constructor", cat: catRegex,
		script: `return new RegExp('^a+$').test('aaa')`, want: bannedIdentifier},
	// Wall: validator, secure allows RE2-safe literals only: no
	// backreferences.
	{name: "secure-backreference-literal", cat: catRegex,
		script: `return /^(a+)+\1b$/.test('a'.repeat(40))`, want: regexRefused},
	// Wall: validator, secure: no lookarounds.
	{name: "secure-lookahead-literal", cat: catRegex,
		script: `return /^(?=(a+)+b)/.test('a'.repeat(40))`, want: regexRefused},
	// Wall: runtime, secure: a RegExp reached through a literal's
	// constructor by computed key.
	{name: "secure-RegExp-via-literal", cat: catRegex,
		script: `const R = /x/['constr' + 'uctor']; return new R('^(a+)+\\1b$').test('a'.repeat(40))`, want: regexAtRunTime},
	// Wall: runtime, secure: a string pattern that only the backtracking
	// engine can run, built by String.prototype.match.
	{name: "secure-match-string-pattern", cat: catRegex,
		script: `return 'a'.repeat(40).match('^(a+)+\\1b$')`, want: regexAtRunTime},
	// Wall: validator, locked_down forbids regex literals (in process here).
	{name: "locked-down-literal", cat: catRegex, preset: presets.LockedDown,
		script: `return /a/.test('a')`, want: regexRefused},
	// Wall: runtime, locked_down: String.prototype.match builds a RegExp.
	{name: "locked-down-match-string", cat: catRegex, preset: presets.LockedDown,
		script: `return 'abc'.match('b') !== null`, want: regexAtRunTime},
	// Wall: none needed: locked_down string methods without regexes work.
	{name: "locked-down-split-string", cat: catRegex, preset: presets.LockedDown,
		script: `return 'a-b'.split('-')`, want: ok(`["a","b"]`)},
}

func TestReDoS(t *testing.T) { runCases(t, regexCases) }

// prompt checks that a wall stopped the run before it did the work it
// guards against: the CPU time the run cost stays under d. CPU time, not
// the wall clock, so that a loaded machine does not fail the case; the
// work a guard refuses (building a string of millions of characters
// before counting it) costs seconds of CPU on any machine. The wall is
// the vm's, the same in both isolation modes; it is measured in process,
// where the work is this process's own (a worker's CPU time is not).
func prompt(d time.Duration) func(t *testing.T, h *host, r *response) {
	return func(t *testing.T, h *host, r *response) {
		t.Helper()
		if raceEnabled {
			// The race detector slows the built-ins' Go code tenfold or
			// more: there the answer's cause, checked before this, is the
			// assertion.
			return
		}
		if h.cc.Isolation().Pool != nil {
			return
		}
		t.Logf("the run cost %v of CPU time", r.cpu)
		if r.cpu > d {
			t.Errorf("the run cost %v of CPU time, want under %v: the wall let the work it guards against run first", r.cpu, d)
		}
	}
}

// errorSays checks that the run's error message names the wall that
// stopped it, not another one reached first.
func errorSays(want string) func(t *testing.T, h *host, r *response) {
	return func(t *testing.T, h *host, r *response) {
		t.Helper()
		if r.Error == nil {
			t.Errorf("the run has no error; want one naming %q", want)
		} else if !strings.Contains(r.Error.Message, want) {
			t.Errorf("the error %q does not name %q", r.Error.Message, want)
		}
	}
}

// logsWithin checks that the kept logs fit the log budget (the closing
// note that says they were cut aside) and that a warning says so.
func logsWithin(limit int64) func(t *testing.T, h *host, r *response) {
	return func(t *testing.T, h *host, r *response) {
		t.Helper()
		const note = 256 // the closing "logs truncated" entry
		var n int64
		for _, l := range r.Logs {
			n += int64(len(l.Message))
		}
		if n > limit+note {
			t.Errorf("%d bytes of logs kept, over the %d-byte budget", n, limit)
		}
		if len(r.Logs) < 2 {
			t.Errorf("logs = %+v, want the lines that fitted and a closing note", r.Logs)
		}
		if !hasWarning(r, vm.WarningLogsTruncated) {
			t.Errorf("logs were cut without a %s warning: %+v", vm.WarningLogsTruncated, r.Warnings)
		}
	}
}

// encodedLogsWithin checks that the logs, as the response carries them,
// stay near the log budget (a kilobyte over it for the closing note).
func encodedLogsWithin(limit int64) func(t *testing.T, h *host, r *response) {
	return func(t *testing.T, h *host, r *response) {
		t.Helper()
		b, _ := json.Marshal(r.Logs)
		if n := int64(len(b)); n > limit+1024 {
			t.Errorf("the response carries %d bytes of logs in %d entries for a %d-byte log budget", n, len(r.Logs), limit)
		}
	}
}

// resultWithin checks that a result over the budget became the truncation
// marker, within the budget, with a warning.
func resultWithin(limit int64) func(t *testing.T, h *host, r *response) {
	return func(t *testing.T, h *host, r *response) {
		t.Helper()
		if n := int64(len(r.Result)); n > limit {
			t.Errorf("result of %d bytes, over the %d-byte budget", n, limit)
		}
		var m struct {
			Truncated bool  `json:"truncated"`
			Bytes     int64 `json:"bytes"`
		}
		if err := json.Unmarshal(r.Result, &m); err != nil || !m.Truncated || m.Bytes <= limit {
			t.Errorf("result is not the truncation marker: %s", clip(string(r.Result)))
		}
		if !hasWarning(r, vm.WarningResultTruncated) {
			t.Errorf("result was cut without a %s warning: %+v", vm.WarningResultTruncated, r.Warnings)
		}
	}
}

// hostMessagesCapped checks that a flood of mcpLog or mcpNotify calls
// reached the client at most maxMessages times, with a warning.
func hostMessagesCapped(method string) func(t *testing.T, h *host, r *response) {
	return func(t *testing.T, h *host, r *response) {
		t.Helper()
		const maxMessages = 50
		time.Sleep(100 * time.Millisecond) // let queued notifications arrive
		if got := h.notificationCount(method); got > maxMessages {
			t.Errorf("the client got %d %s notifications; the flood must be capped at %d", got, method, maxMessages)
		}
		if !hasWarning(r, vm.WarningMessagesDropped) {
			t.Errorf("no %s warning: %+v", vm.WarningMessagesDropped, r.Warnings)
		}
	}
}

// outputCases flood logs, notifications and the result.
var outputCases = []attackCase{
	// Wall: the log budget (balanced, 256 KiB): the run succeeds with
	// its logs cut and a warning.
	{name: "console-log-loop", cat: catOutput, preset: presets.Balanced,
		script: `for (let i = 0; i < 10000; i++) console.log('x'.repeat(100)); return 'done'`,
		want:   ok(`"done"`), check: logsWithin(256 << 10)},
	// Wall: the log budget (secure, 64 KiB), without a loop.
	{name: "console-log-array-from", cat: catOutput,
		script: `Array.from({length: 2000}, () => console.log('y'.repeat(100))); return 'done'`,
		want:   ok(`"done"`), check: logsWithin(64 << 10)},
	// Wall: the log budget, one huge line.
	{name: "console-log-one-huge-line", cat: catOutput,
		script: `console.log('z'.repeat(1e6)); return 'done'`,
		want:   ok(`"done"`), check: logsWithin(64 << 10)},
	// Wall: the log budget, every console method.
	{name: "console-every-method", cat: catOutput,
		script: `Array.from({length: 500}, () => { console.info('i'.repeat(100)); console.warn('w'.repeat(100)); console.error('e'.repeat(100)); console.debug('d'.repeat(100)) }); return 'done'`,
		want:   ok(`"done"`), check: logsWithin(64 << 10)},
	// Wall: the log budget counts entries, not only their text: a flood of
	// empty lines must not turn a 64 KiB budget into megabytes of logs.
	{name: "console-log-empty-lines", cat: catOutput,
		script: `Array.from({length: 1e4}, () => console.log('')); return 'done'`,
		want:   ok(`"done"`), check: encodedLogsWithin(64 << 10)},
	// Wall: the same with one-character lines.
	{name: "console-log-short-lines", cat: catOutput,
		script: `Array.from({length: 1e4}, () => console.log('x')); return 'done'`,
		want:   ok(`"done"`), check: encodedLogsWithin(64 << 10)},
	// Wall: console formatting survives a cycle.
	{name: "console-log-cycle", cat: catOutput,
		script: `const o = {a: 1}; o.self = o; console.log(o); return 'done'`,
		want:   ok(`"done"`)},
	// Wall: locked_down has no console (in process here).
	{name: "locked-down-console", cat: catOutput, preset: presets.LockedDown,
		script: `console.log('x'); return 1`,
		want:   bannedIdentifier},
	// Wall: mcpLog is rate-limited.
	{name: "mcpLog-flood", cat: catOutput,
		script: `Array.from({length: 5000}, (_, i) => mcpLog('info', 'm' + i)); return 'done'`,
		want:   ok(`"done"`), check: hostMessagesCapped("notifications/message")},
	// Wall: mcpNotify is rate-limited.
	{name: "mcpNotify-flood", cat: catOutput,
		script: `Array.from({length: 5000}, (_, i) => mcpNotify('tick', {i})); return 'done'`,
		want:   ok(`"done"`), check: hostMessagesCapped("notifications/codecall/event")},
	// Wall: the result budget (balanced, 1 MiB): a huge string is cut
	// with a warning.
	{name: "huge-string-result", cat: catOutput, preset: presets.Balanced,
		script: `return 'x'.repeat(2e6)`,
		want:   ok(""), check: resultWithin(1 << 20)},
	// Wall: the result budget, a huge array of objects.
	{name: "huge-array-result", cat: catOutput, preset: presets.Balanced,
		script: `return Array.from({length: 2e4}, (_, i) => ({i, s: 'x'.repeat(50)}))`,
		want:   ok(""), check: resultWithin(1 << 20)},
	// Wall: result export. A cycle is a clear error.
	{name: "cyclic-result", cat: catOutput,
		script: `const o = {a: 1}; o.self = o; return o`,
		want:   typeError},
	// Wall: validator. A BigInt result would be a clear export error, but
	// BigInt literals are refused outright.
	{name: "bigint-result", cat: catOutput,
		script: `return {n: 10n}`,
		want:   bigintRefused},
	// Wall: result export. A symbol is a clear error.
	{name: "symbol-result", cat: catOutput,
		script: `return {s: Symbol('x')}`,
		want:   typeError},
	// Wall: result export. A function is a clear error.
	{name: "function-result", cat: catOutput,
		script: `return function () { return 1 }`,
		want:   typeError},
	// Wall: result export. undefined becomes null.
	{name: "undefined-result", cat: catOutput,
		script: `return undefined`,
		want:   ok(`null`)},
	// Wall: result export. No return value at all is null too.
	{name: "no-return", cat: catOutput,
		script: `const x = 1`,
		want:   ok(`null`)},
	// Wall: result export. A result whose toJSON returns a huge value is
	// cut like any other.
	{name: "toJSON-huge-result", cat: catOutput, preset: presets.Balanced,
		script: `return {toJSON() { return 'q'.repeat(3e6) }}`,
		want:   ok(""), check: resultWithin(1 << 20)},
}

func TestOutputFloods(t *testing.T) { runCases(t, outputCases) }
