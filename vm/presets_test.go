package vm

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
)

// TestPresets runs the same probes on every preset and checks each
// preset's own values.
func TestPresets(t *testing.T) {
	for _, name := range presets.Names {
		t.Run(string(name), func(t *testing.T) {
			l := limits(t, name)
			run := func(h Host, script string) *Result {
				t.Helper()
				if h == nil {
					h = &mcptest.Host{}
				}
				return Run(context.Background(), compile(t, script), h, Options{RunID: string(name), Limits: l})
			}

			// console
			res := run(nil, `return typeof console`)
			wantConsole := `"undefined"`
			if l.AllowConsole {
				wantConsole = `"object"`
			}
			checkWant(t, res, okWith(wantConsole))

			// regex rule
			res = run(nil, `return new RegExp('a(?=b)').test('ab')`)
			switch l.Regex {
			case presets.RegexNone, presets.RegexLiteral:
				checkWant(t, res, regexBad)
			case presets.RegexFull:
				checkWant(t, res, okWith(`true`))
			}
			res = run(nil, `return 'ab'.match('b') !== null`)
			if l.Regex == presets.RegexNone {
				checkWant(t, res, regexBad)
			} else {
				checkWant(t, res, okWith(`true`))
			}

			// stack depth
			res = run(nil, fmt.Sprintf(`function f(n) { return n ? f(n - 1) + 1 : 0 } return f(%d)`, l.MaxStackDepth-10))
			checkWant(t, res, okWith(fmt.Sprint(l.MaxStackDepth-10)))
			res = run(nil, fmt.Sprintf(`function f(n) { return n ? f(n - 1) + 1 : 0 } return f(%d)`, l.MaxStackDepth+10))
			checkWant(t, res, want{status: StatusLimitExceeded, limit: LimitStack})

			// tool-call cap and concurrency
			h := &mcptest.Host{Delay: 5 * time.Millisecond}
			res = run(h, fmt.Sprintf(`await Promise.all(Array.from({length: %d}, () => callTool('t', {}))); return 1`, l.MaxToolCalls))
			checkWant(t, res, okWith(`1`))
			if h.Peak() != l.MaxConcurrency {
				t.Errorf("peak concurrency %d, want %d", h.Peak(), l.MaxConcurrency)
			}
			res = run(nil, fmt.Sprintf(`for (let i = 0; i <= %d; i++) callTool('t', {}); return 1`, l.MaxToolCalls))
			checkWant(t, res, want{status: StatusLimitExceeded, limit: LimitToolCalls})

			// log budget (console or mcpLog)
			logger := `mcpLog('info', 'x'.repeat(1000))`
			if l.AllowConsole {
				logger = `console.log('x'.repeat(1000))`
			}
			res = run(nil, fmt.Sprintf(`for (let i = 0; i < %d; i++) %s; return 1`, l.MaxLogBytes/1000+2, logger))
			if res.Status != StatusOK || len(res.Warnings) == 0 {
				t.Errorf("logs: %s", describe(res))
			}
			total := 0
			for _, e := range res.Logs {
				total += len(e.Message)
			}
			if l.AllowConsole && int64(total) > l.MaxLogBytes+64 {
				t.Errorf("logs hold %d bytes, budget %d", total, l.MaxLogBytes)
			}

			// result budget
			res = run(nil, fmt.Sprintf(`return 'x'.repeat(%d)`, l.MaxResultBytes))
			if res.Status != StatusOK || !strings.Contains(string(res.Result), `"truncated":true`) || int64(len(res.Result)) > l.MaxResultBytes {
				t.Errorf("result over budget: status %s, %d bytes", res.Status, len(res.Result))
			}
			res = run(nil, fmt.Sprintf(`return 'x'.repeat(%d)`, l.MaxResultBytes-2))
			if res.Status != StatusOK || int64(len(res.Result)) != l.MaxResultBytes {
				t.Errorf("result at budget: status %s, %d bytes", res.Status, len(res.Result))
			}

			// allocation caps scale with the memory budget
			c := capsFor(l)
			res = run(nil, fmt.Sprintf(`return 'x'.repeat(%d).length`, c.stringUnits+1))
			checkWant(t, res, tooBig)
			res = run(nil, fmt.Sprintf(`return new Uint8Array(%d).length`, c.bufferBytes+1))
			checkWant(t, res, tooBig)
			res = run(nil, fmt.Sprintf(`return Array.prototype.indexOf.call({length: %d}, 1)`, c.elements+1))
			checkWant(t, res, tooBig)
			res = run(nil, fmt.Sprintf(`return Array.prototype.indexOf.call({length: %d}, 1)`, 1000))
			checkWant(t, res, okWith(`-1`))
		})
	}
}

// TestPresetTimeouts checks the timeout of the fastest preset end to end
// and that every preset's timeout is the one reported.
func TestPresetTimeouts(t *testing.T) {
	l := limits(t, presets.LockedDown)
	start := time.Now()
	res := Run(context.Background(), compile(t, `while (true) {}`), &mcptest.Host{}, Options{Limits: l})
	d := time.Since(start)
	if res.Status != StatusTimeout || d < l.Timeout || d > l.Timeout+time.Second {
		t.Errorf("locked_down timeout after %v: %s", d, describe(res))
	}
	for _, name := range presets.Names {
		l := limits(t, name)
		if c := capsFor(l); c.timeout != l.Timeout || c.memoryBytes != l.MemoryBytes || c.stackDepth != l.MaxStackDepth {
			t.Errorf("%s: caps %+v", name, c)
		}
	}
}
