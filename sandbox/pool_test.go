package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
	"github.com/codecall-go/codecall/vm"
)

// newTestHost answers a plan's calls: echo returns its input, sleep waits
// for its context, any other tool fails with a policy error.
func newTestHost() *mcptest.Host {
	return &mcptest.Host{
		Tools: map[string]string{"echo": `{"name":"echo","description":"Echo.","appId":"t","inputSchema":{"type":"object"}}`},
		Call: func(ctx context.Context, name string, input map[string]any) (json.RawMessage, error) {
			switch name {
			case "echo":
				return json.Marshal(input)
			case "sleep":
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return nil, &toolerr.Error{Code: toolerr.NotFound, Tool: name, Message: "no tool " + name}
		},
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newTestPool starts a pool or skips the test where the kernel refuses the
// worker's namespaces.
func newTestPool(t testing.TB, opts ...Option) *Pool {
	t.Helper()
	p, err := New(context.Background(), append([]Option{WithLogger(quietLogger())}, opts...)...)
	if err != nil {
		if !supported || strings.Contains(err.Error(), "refused new namespaces") {
			t.Skipf("sandbox workers are not available here: %v", err)
		}
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func limits(t testing.TB) presets.Limits {
	l, _ := presets.LimitsFor(presets.Secure)
	return l
}

// run validates script under the secure rules and runs it in p.
func run(t testing.TB, p *Pool, host vm.Host, script string, l presets.Limits) *vm.Result {
	t.Helper()
	rules := ast.RulesFor(l)
	checked, err := ast.Validate(script, rules)
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	return p.Run(context.Background(), script, checked, rules, host, vm.Options{RunID: "r1", Limits: l, Context: json.RawMessage(`{"user":"ada"}`)})
}

func TestRun(t *testing.T) {
	p := newTestPool(t)
	tests := []struct {
		name, script string
		status       vm.Status
		result       string
	}{
		{"trivial", "return 1+1", vm.StatusOK, "2"},
		{"context", "return codecallContext.user", vm.StatusOK, `"ada"`},
		{"tool", "const r = await callTool('echo', {a: 1}); return r.a", vm.StatusOK, "1"},
		{"parallel", "const rs = await Promise.all([1,2,3].map(i => callTool('echo', {i}))); return rs.map(r => r.i)", vm.StatusOK, "[1,2,3]"},
		{"getTool", "return getTool('echo').name", vm.StatusOK, `"echo"`},
		{"getTool-missing", "return getTool('nope')", vm.StatusOK, "null"},
		{"tool-error", "try { await callTool('nope', {}) } catch (e) { return e.code }", vm.StatusOK, `"NOT_FOUND"`},
		{"uncaught-tool-error", "await callTool('nope', {}); return 1", vm.StatusToolError, ""},
		{"runtime-error", "null.x", vm.StatusRuntimeError, ""},
		{"log", "mcpLog('info', 'hi'); console.log('x'); return 1", vm.StatusOK, "1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, p, newTestHost(), tc.script, limits(t))
			if res.Status != tc.status {
				t.Fatalf("status %s, want %s: %+v", res.Status, tc.status, res.Error)
			}
			if tc.result != "" && string(res.Result) != tc.result {
				t.Errorf("result %s, want %s", res.Result, tc.result)
			}
			if res.RunID != "r1" {
				t.Errorf("runId %q", res.RunID)
			}
		})
	}
}

func TestTimeoutKillsWorker(t *testing.T) {
	p := newTestPool(t)
	l := limits(t)
	l.Timeout = 300 * time.Millisecond
	res := run(t, p, newTestHost(), "await callTool('sleep', {}); return 1", l)
	if res.Status != vm.StatusTimeout && res.Status != vm.StatusToolError {
		t.Fatalf("status %s: %+v", res.Status, res.Error)
	}
	if got := run(t, p, newTestHost(), "return 2", limits(t)); got.Status != vm.StatusOK {
		t.Fatalf("next run: %s %+v", got.Status, got.Error)
	}
}

// TestGenuineRunsWithinBounds runs plans that push the runtime's limits in
// a real worker: the server's checks of the bridge never mistake the
// runtime for a lying worker, and its own trace tells the same story as
// the runtime's, in the order the plan made the calls.
func TestGenuineRunsWithinBounds(t *testing.T) {
	p := newTestPool(t)
	l := limits(t)
	short := l
	short.Timeout = time.Second
	tests := []struct {
		name, script string
		limits       presets.Limits
		status       vm.Status
		result       string
		trace        string // name:ok or name:ERROR of each entry, joined by spaces
	}{
		// HTML characters crossed escaped would be six bytes each.
		{"result at the budget", fmt.Sprintf("return '<'.repeat(%d)", l.MaxResultBytes-2), l, vm.StatusOK, "", ""},
		{"log flood", "Array.from({length: 3000}, (_, i) => console.log('<&>'.repeat(i % 50))); return 1", l, vm.StatusOK, "1", ""},
		{"message flood", "Array.from({length: 100}, (_, i) => { mcpLog('info', '>'.repeat(500), {i}); mcpNotify('e', {s: '<'.repeat(200)}) }); return 1", l, vm.StatusOK, "1", ""},
		{"every call", "await Promise.all(Array.from({length: 100}, (_, i) => callTool('echo', {i}))); return 1", l, vm.StatusOK, "1",
			strings.TrimSpace(strings.Repeat("echo:ok ", 100))},
		{"fire and forget", "Array.from({length: 10}, () => callTool('sleep', {})); return 'left'", l, vm.StatusOK, `"left"`,
			strings.TrimSpace(strings.Repeat("sleep:CANCELLED ", 10))},
		// The sleeping call holds the plan until its timeout, which cuts
		// the call short: TIMEOUT, as in process.
		{"the plan's order", "await Promise.all([callTool('echo', {a: 1}), callTool('nope', {}, {throwOnError: false}), callTool('echo', {b: 2}), callTool('sleep', {})])",
			short, vm.StatusTimeout, "", "echo:ok nope:NOT_FOUND echo:ok sleep:TIMEOUT"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			host := newTestHost()
			res := run(t, p, host, tc.script, tc.limits)
			if res.Status != tc.status {
				t.Fatalf("status %s %+v, want %s", res.Status, res.Error, tc.status)
			}
			if tc.result != "" && string(res.Result) != tc.result {
				t.Errorf("result %.80s, want %s", res.Result, tc.result)
			}
			if tc.name == "result at the budget" && int64(len(res.Result)) != l.MaxResultBytes {
				t.Errorf("result of %d bytes, want %d", len(res.Result), l.MaxResultBytes)
			}
			var trace []string
			for _, e := range res.ToolTrace {
				if e.OK {
					trace = append(trace, e.ToolName+":ok")
				} else {
					trace = append(trace, e.ToolName+":"+e.Error)
				}
			}
			if got := strings.Join(trace, " "); got != tc.trace || res.Metrics.ToolCalls != len(res.ToolTrace) {
				t.Errorf("trace %q (%d tool calls), want %q", got, res.Metrics.ToolCalls, tc.trace)
			}
			if n := len(host.Logs()) + len(host.Notes()); n > 50 {
				t.Errorf("the host got %d messages", n)
			}
		})
	}
	if k := p.Stats().Kills; len(k) != 0 {
		t.Errorf("workers were killed: %v", k)
	}
}

// TestCancelledRun cancels the request of a plan running in a worker: the
// worker is told to stop, the run ends cancelled (or a timeout when the
// request reached its own deadline) with the logs the plan wrote before,
// and a busy plan that cannot stop in time is killed with the same status.
func TestCancelledRun(t *testing.T) {
	p := newTestPool(t)
	for _, tc := range []struct {
		name, script string
		end          func(context.Context) (context.Context, context.CancelFunc)
		status       vm.Status
		logs         int
		message      string
	}{
		{"waiting on a tool", "console.log('before'); await callTool('sleep', {}); return 1",
			func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(ctx)
				time.AfterFunc(300*time.Millisecond, cancel)
				return ctx, cancel
			}, vm.StatusCancelled, 1, "cancelled by the client"},
		{"the client's deadline", "console.log('before'); await callTool('sleep', {}); return 1",
			func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeout(ctx, 300*time.Millisecond)
			}, vm.StatusTimeout, 1, "client's deadline"},
		{"busy in a loop", "console.log('before'); while (true) {}",
			func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(ctx)
				time.AfterFunc(300*time.Millisecond, cancel)
				return ctx, cancel
			}, vm.StatusCancelled, 1, "cancelled by the client"},
		{"busy in a native loop", "console.log('before'); const a = new Array(4e6).fill(1); for (;;) a.forEach(Math.abs)",
			func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(ctx)
				time.AfterFunc(300*time.Millisecond, cancel)
				return ctx, cancel
			}, vm.StatusCancelled, -1, "cancelled"},
		{"busy in a native loop at the client's deadline", "console.log('before'); const a = new Array(4e6).fill(1); for (;;) a.forEach(Math.abs)",
			func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeout(ctx, 300*time.Millisecond)
			}, vm.StatusTimeout, -1, "client's deadline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := presets.LimitsFor(presets.Balanced)
			l.Timeout = 20 * time.Second
			rules := ast.RulesFor(l)
			checked, err := ast.Validate(tc.script, rules)
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			ctx, cancel := tc.end(context.Background())
			defer cancel()
			start := time.Now()
			res := p.Run(ctx, tc.script, checked, rules, newTestHost(), vm.Options{RunID: "c1", Limits: l, Context: json.RawMessage(`{}`)})
			if res.Status != tc.status || res.Error == nil || !strings.Contains(res.Error.Message, tc.message) {
				t.Fatalf("got %s %+v, want %s with %q", res.Status, res.Error, tc.status, tc.message)
			}
			// -1: the worker may be killed before it answers (a native
			// loop the runtime cannot interrupt), losing its logs.
			if tc.logs >= 0 && (len(res.Logs) != tc.logs || res.Logs[0].Message != "before") {
				t.Errorf("logs %+v, want the line written before the end", res.Logs)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the run took %v after its request ended", d)
			}
		})
	}
}
