package vm

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
)

// boundedHost is a Host that checks every request of a run against the
// run's Bounds, as a host across a process boundary does.
type boundedHost struct {
	mcptest.Host
	t      *testing.T
	b      Bounds
	mu     sync.Mutex
	reqs   int
	open   int
	msgs   int
	bytes  int64
	broken []string
}

func (h *boundedHost) fail(format string) {
	h.mu.Lock()
	h.broken = append(h.broken, format)
	h.mu.Unlock()
}

func (h *boundedHost) request() func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reqs++
	h.open++
	if h.reqs > h.b.ToolCalls {
		h.broken = append(h.broken, "more requests than ToolCalls")
	}
	if h.open > h.b.Concurrency {
		h.broken = append(h.broken, "more requests open than Concurrency")
	}
	return func() {
		h.mu.Lock()
		h.open--
		h.mu.Unlock()
	}
}

func (h *boundedHost) message(n int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs++
	h.bytes += n
	if h.msgs > h.b.HostMessages || h.bytes > h.b.MessageBytes {
		h.broken = append(h.broken, "messages over HostMessages or MessageBytes")
	}
}

func (h *boundedHost) CallTool(ctx context.Context, name string, input map[string]any) (json.RawMessage, error) {
	defer h.request()()
	if err := h.b.CheckName(name); err != nil {
		h.fail("tool name: " + err.Error())
	}
	return h.Host.CallTool(ctx, name, input)
}

func (h *boundedHost) GetTool(name string) (json.RawMessage, bool) {
	if err := h.b.CheckName(name); err != nil {
		h.fail("getTool name: " + err.Error())
	}
	return h.Host.GetTool(name)
}

func (h *boundedHost) Discover(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	defer h.request()()
	if len(args) > h.b.DiscoverArgsBytes || (op != DiscoverSearch && op != DiscoverDescribe) {
		h.fail("discovery request")
	}
	return h.Host.Discover(ctx, op, args)
}

func (h *boundedHost) Log(ctx context.Context, level, message string, data json.RawMessage) {
	if !IsLogLevel(level) {
		h.fail("log level " + level)
	}
	h.message(int64(len(level) + len(message) + len(data)))
	h.Host.Log(ctx, level, message, data)
}

func (h *boundedHost) Notify(ctx context.Context, event string, payload json.RawMessage) {
	if err := h.b.CheckName(event); err != nil {
		h.fail("event name: " + err.Error())
	}
	h.message(int64(len(event) + len(payload)))
	h.Host.Notify(ctx, event, payload)
}

// TestRunKeepsItsBounds runs plans that push every limit a host sees and
// checks that Run stays within the Bounds it promises, in what it asks of
// its host and in the Result it returns.
func TestRunKeepsItsBounds(t *testing.T) {
	small := func(l *presets.Limits) {
		l.MaxToolCalls, l.MaxConcurrency, l.MaxLogBytes, l.MaxResultBytes = 20, 3, 2000, 1000
	}
	scripts := map[string]string{
		"call flood":       `const ps = []; for (let i = 0; i < 100; i++) ps.push(callTool('t' + i, {i})); await Promise.all(ps); return 1`,
		"discovery flood":  `for (let i = 0; i < 100; i++) { searchTools('q' + i); describeTools(['a', 'b']) } return 1`,
		"fire and forget":  `for (let i = 0; i < 15; i++) callTool('slow', {}); return 'left'`,
		"unhandled errors": `for (let i = 0; i < 19; i++) callTool('nope', {}, {}); await callTool('nope', {}); return 1`,
		"escaped args":     `await describeTools(Array.from({length: 6000}, () => '<<<<<<')); await searchTools('<'.repeat(200), {tags: Array.from({length: 6000}, () => '&&&&&&')}); return 1`,
		"log flood":        `for (let i = 0; i < 1000; i++) { console.log('x'.repeat(i)); mcpLog('warning', 'y'.repeat(i), {i}) } return 1`,
		"notify flood":     `for (let i = 0; i < 1000; i++) mcpNotify('e' + i, {pad: 'z'.repeat(i)}); return 1`,
		"big result":       `return '<>&\u2028'.repeat(10000)`,
		"tiny result":      `return 'x'.repeat(10)`,
		"no result":        `callTool('t', {})`,
		"runtime error":    `throw new Error('e'.repeat(100000))`,
		"getTool":          `for (let i = 0; i < 100; i++) getTool('x'.repeat(i + 1)); return 1`,
		"long names":       `try { callTool('n'.repeat(300), {}) } catch (e) {} try { mcpNotify('n'.repeat(300), {}) } catch (e) {} return 1`,
	}
	for name, script := range scripts {
		t.Run(name, func(t *testing.T) {
			l := limits(t, presets.Balanced)
			small(&l)
			if name == "tiny result" {
				l.MaxResultBytes = 5
			}
			b := BoundsFor(l)
			h := &boundedHost{t: t, b: b}
			h.Host.Call = func(ctx context.Context, name string, input map[string]any) (json.RawMessage, error) {
				switch name {
				case "slow":
					<-ctx.Done()
					return nil, ctx.Err()
				case "nope":
					return nil, policyErr("NOT_FOUND", strings.Repeat("m", 10000))
				}
				return json.RawMessage(`{}`), nil
			}
			res := Run(context.Background(), compile(t, script), h, Options{RunID: "bounds", Limits: l})
			if err := b.CheckResult(res); err != nil {
				t.Errorf("the result is out of bounds: %v\n%s", err, describe(res))
			}
			if name == "escaped args" && res.Status != StatusOK {
				t.Errorf("the plan failed: %s", describe(res))
			}
			if len(h.broken) > 0 {
				t.Errorf("the host was asked past the bounds: %v", h.broken)
			}
		})
	}
}

// TestCheckResultRefuses lists results no run can return.
func TestCheckResultRefuses(t *testing.T) {
	l := limits(t, presets.Secure)
	b := BoundsFor(l)
	ok := func(mut func(*Result)) *Result {
		r := &Result{Status: StatusOK, Result: json.RawMessage(`1`), ToolTrace: []TraceEntry{}}
		mut(r)
		return r
	}
	tests := map[string]*Result{
		"unknown status":     ok(func(r *Result) { r.Status = "pwned" }),
		"ok without result":  ok(func(r *Result) { r.Result = nil }),
		"error with result":  ok(func(r *Result) { r.Status, r.Error = StatusRuntimeError, &ErrorInfo{Message: "x"} }),
		"result over budget": ok(func(r *Result) { r.Result = json.RawMessage(`"` + strings.Repeat("x", int(l.MaxResultBytes)-1) + `"`) }),
		"unknown limit": ok(func(r *Result) {
			r.Status, r.Result, r.Error = StatusLimitExceeded, nil, &ErrorInfo{Limit: "cpuTime", Message: "x"}
		}),
		"huge error": ok(func(r *Result) {
			r.Status, r.Result, r.Error = StatusRuntimeError, nil, &ErrorInfo{Message: strings.Repeat("x", 100<<10)}
		}),
		"log level": ok(func(r *Result) { r.Logs = []LogEntry{{Level: "root", Message: "x"}} }),
		"logs over": ok(func(r *Result) {
			r.Logs = []LogEntry{{Level: "info", Message: strings.Repeat("x", int(l.MaxLogBytes))}}
		}),
		"warning type":   ok(func(r *Result) { r.Warnings = []Warning{{Type: "trust_me", Message: "x"}} }),
		"warning size":   ok(func(r *Result) { r.Warnings = []Warning{{Type: WarningNoResult, Message: strings.Repeat("x", 20<<10)}} }),
		"many warnings":  ok(func(r *Result) { r.Warnings = make([]Warning, 2*l.MaxToolCalls+fixedWarnings+1) }),
		"trace too long": ok(func(r *Result) { r.ToolTrace = make([]TraceEntry, l.MaxToolCalls+1) }),
		"metrics":        ok(func(r *Result) { r.Metrics.ToolCalls = l.MaxToolCalls + 1 }),
		"traced name":    ok(func(r *Result) { r.ToolTrace = []TraceEntry{{ToolName: ""}} }),
	}
	for name, res := range tests {
		if err := b.CheckResult(res); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// The entry that closes a full log is not charged, as in the runtime.
	full := ok(func(r *Result) {
		r.Logs = []LogEntry{{Level: "log", Message: strings.Repeat("x", int(l.MaxLogBytes-entryOverhead-3))}, {Level: "warn", Message: "logs truncated after 65536 bytes"}}
	})
	if err := b.CheckResult(full); err != nil {
		t.Errorf("a full log: %v", err)
	}
}
