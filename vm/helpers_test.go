package vm

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
)

// compile builds a Checked the way package ast does: the script is the
// body of an async function and the program evaluates to that function.
func compile(tb testing.TB, script string) *ast.Checked {
	tb.Helper()
	p, err := goja.Compile("plan.js", "(async function(){"+script+"\n})", true)
	if err != nil {
		tb.Fatalf("compile %q: %v", script, err)
	}
	return &ast.Checked{Program: p}
}

// hostCall is one call the fake host received.
type hostCall struct {
	Name  string
	Input map[string]any
}

// fakeHost records calls and answers them with a handler. The default
// handler echoes {tool, input}.
type fakeHost struct {
	mu       sync.Mutex
	calls    []hostCall
	logs     []string
	notes    []string
	handler  func(ctx context.Context, name string, input map[string]any) (json.RawMessage, error)
	tools    map[string]string
	delay    time.Duration
	inflight atomic.Int32
	peak     atomic.Int32
	// cancelled counts calls whose context was done when they returned.
	cancelled atomic.Int32
	panicOn   string
}

func (h *fakeHost) CallTool(ctx context.Context, name string, input map[string]any) (json.RawMessage, error) {
	n := h.inflight.Add(1)
	defer h.inflight.Add(-1)
	for {
		p := h.peak.Load()
		if n <= p || h.peak.CompareAndSwap(p, n) {
			break
		}
	}
	h.mu.Lock()
	h.calls = append(h.calls, hostCall{Name: name, Input: input})
	h.mu.Unlock()
	if name == h.panicOn && name != "" {
		panic("host exploded at /secret/path/host.go:42")
	}
	if h.delay > 0 {
		select {
		case <-time.After(h.delay):
		case <-ctx.Done():
			h.cancelled.Add(1)
			return nil, ctx.Err()
		}
	}
	if h.handler != nil {
		raw, err := h.handler(ctx, name, input)
		if ctx.Err() != nil {
			h.cancelled.Add(1)
		}
		return raw, err
	}
	b, _ := json.Marshal(map[string]any{"tool": name, "input": input})
	return b, nil
}

func (h *fakeHost) GetTool(name string) (json.RawMessage, bool) {
	if name == h.panicOn && name != "" {
		panic("GetTool exploded")
	}
	d, ok := h.tools[name]
	return json.RawMessage(d), ok
}

func (h *fakeHost) Log(_ context.Context, level, message string, data json.RawMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, fmt.Sprintf("%s|%s|%s", level, message, data))
}

func (h *fakeHost) Notify(_ context.Context, event string, payload json.RawMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notes = append(h.notes, fmt.Sprintf("%s|%s", event, payload))
}

func (h *fakeHost) callCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.calls)
}

// limits returns a preset's limits; tests start from balanced unless they
// test a preset.
func limits(tb testing.TB, name presets.Name) presets.Limits {
	tb.Helper()
	l, ok := presets.LimitsFor(name)
	if !ok {
		tb.Fatalf("no preset %s", name)
	}
	return l
}

// runScript runs script on the balanced preset with the given changes.
func runScript(tb testing.TB, h Host, script string, change ...func(*presets.Limits)) *Result {
	tb.Helper()
	l := limits(tb, presets.Balanced)
	for _, c := range change {
		c(&l)
	}
	if h == nil {
		h = &fakeHost{}
	}
	return Run(context.Background(), compile(tb, script), h, Options{RunID: "test", Limits: l})
}

// describe renders a result for failure messages.
func describe(res *Result) string {
	b, _ := json.Marshal(res)
	return string(b)
}

func policyErr(code toolerr.Code, msg string) error {
	return &toolerr.Error{Code: code, Message: msg}
}

// settleGoroutines waits until the goroutine count is back to at most
// base; regexp2's shared timeout clock may outlive a run by a second.
func settleGoroutines(tb testing.TB, base int) {
	tb.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			n := runtime.Stack(buf, true)
			tb.Fatalf("goroutines: %d, want at most %d\n%s", runtime.NumGoroutine(), base, buf[:n])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// noLeaks reports Go-internal details in a result.
func noLeaks(tb testing.TB, res *Result) {
	tb.Helper()
	s := describe(res)
	for _, bad := range []string{"goroutine ", ".go:", "/secret/", "github.com/", "runtime.", "panic"} {
		if strings.Contains(s, bad) {
			tb.Errorf("result leaks %q: %s", bad, s)
		}
	}
}

// compileRaw compiles a program as it is, without the plan wrapper.
func compileRaw(tb testing.TB, src string) *ast.Checked {
	tb.Helper()
	p, err := goja.Compile("raw.js", src, true)
	if err != nil {
		tb.Fatal(err)
	}
	return &ast.Checked{Program: p}
}
