package sandbox

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

// holdHost answers a plan's "hold" by waiting until the test lets one
// hold go (or all of them), so a plan holds its worker for as long as the
// test wants; "probe" answers with what probe returns at that moment.
type holdHost struct {
	held    atomic.Int32 // holds started
	release chan struct{}
	once    sync.Once
	probe   func() any
}

func newHoldHost(probe func() any) *holdHost {
	return &holdHost{release: make(chan struct{}), probe: probe}
}

func (h *holdHost) host() *mcptest.Host {
	return &mcptest.Host{Call: func(ctx context.Context, name string, input map[string]any) (json.RawMessage, error) {
		switch name {
		case "hold":
			h.held.Add(1)
			select {
			case <-h.release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return json.RawMessage(`"released"`), nil
		case "probe":
			return json.Marshal(h.probe())
		}
		return json.RawMessage(`{}`), nil
	}}
}

// letOne lets one hold go; letAll lets every hold go, now and later.
func (h *holdHost) letOne() { h.release <- struct{}{} }
func (h *holdHost) letAll() { h.once.Do(func() { close(h.release) }) }

// slowLimits are the secure limits with a timeout no test waits for: a
// held plan ends when the test lets it.
func slowLimits() presets.Limits {
	l, _ := presets.LimitsFor(presets.Secure)
	l.Timeout = 2 * time.Minute
	return l
}

// runAs runs script for session in p, in the background; the result comes
// on the returned channel.
func runAs(t *testing.T, p *Pool, session string, host vm.Host, script string) <-chan *vm.Result {
	t.Helper()
	l := slowLimits()
	rules := ast.RulesFor(l)
	checked, err := ast.Validate(script, rules)
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	out := make(chan *vm.Result, 1)
	go func() {
		out <- p.Run(context.Background(), script, checked, rules, host, vm.Options{RunID: session, Limits: l, Session: session})
	}()
	return out
}

// waitUntil polls cond until it holds; the deadline only stops a test
// that would otherwise hang, it is not what the test checks.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// checkConcurrencyRefusal checks a result is a refusal under load:
// limit_exceeded, limit concurrency, retryable, with a hint, and a
// message that says why.
func checkConcurrencyRefusal(t *testing.T, res *vm.Result, why string) {
	t.Helper()
	if res.Status != vm.StatusLimitExceeded || res.Error == nil || res.Error.Limit != LimitConcurrency || !res.Error.Retryable || res.Error.Hint == "" {
		t.Fatalf("want limit_exceeded, limit concurrency, retryable, with a hint; got %s %+v", res.Status, res.Error)
	}
	if !strings.Contains(res.Error.Message, why) {
		t.Errorf("message %q does not say %q", res.Error.Message, why)
	}
}

// TestFairQueueServesTheOtherSessionFirst floods the pool from session a
// and checks the causes, not the timing: a's runs past its queue limit are
// refused at once, retryable; session b's plan, queued after all of a's,
// gets the first worker that frees up, because b has nothing running,
// and runs while a's queued runs still wait; then a's queued runs run.
func TestFairQueueServesTheOtherSessionFirst(t *testing.T) {
	p := newTestPool(t, WithSize(1), WithMaxWorkers(2), WithMaxRunningPerSession(2), WithMaxQueuedPerSession(3),
		WithQueueTimeout(10*time.Minute), WithLimits(slowLimits()))
	a := newHoldHost(nil)
	defer a.letAll()
	const hold = "return await callTool('hold', {})"
	var runs []<-chan *vm.Result
	// Two runs take both workers the pool may have...
	for range 2 {
		runs = append(runs, runAs(t, p, "a", a.host(), hold))
	}
	waitUntil(t, "a's first two plans holding both workers", func() bool { return a.held.Load() == 2 })
	// ...three wait...
	for range 3 {
		runs = append(runs, runAs(t, p, "a", a.host(), hold))
	}
	waitUntil(t, "a's next three plans queued", func() bool { return p.Stats().Queued == 3 })
	// ...and two more find a's queue full.
	for range 2 {
		checkConcurrencyRefusal(t, <-runAs(t, p, "a", a.host(), hold), "this session had 3 plans waiting for a sandbox worker (and 2 running), the most one session may queue")
	}

	type seen struct {
		Held   int32 `json:"held"`
		Queued int64 `json:"queued"`
	}
	b := newHoldHost(func() any { return seen{Held: a.held.Load(), Queued: p.Stats().Queued} })
	bres := runAs(t, p, "b", b.host(), "return await callTool('probe', {})")
	waitUntil(t, "b's plan queued behind a's", func() bool { return p.Stats().Queued == 4 })
	if st := p.Stats(); st.WaitingSessions != 2 || st.LongestSessionQueue != 3 || st.Running != 2 || st.Sessions != 2 {
		t.Errorf("stats while both wait: %+v", st)
	}
	// One of a's plans ends: the worker that replaces it goes to b, whose
	// plan runs while a's three are still queued.
	a.letOne()
	res := <-bres
	if res.Status != vm.StatusOK {
		t.Fatalf("b's plan: %s %+v", res.Status, res.Error)
	}
	var got seen
	if err := json.Unmarshal(res.Result, &got); err != nil {
		t.Fatal(err)
	}
	if got.Held != 2 || got.Queued != 3 {
		t.Errorf("b's plan ran after %d of a's plans started, with %d queued; want 2 started and a's 3 queued", got.Held, got.Queued)
	}
	a.letAll()
	for i, r := range runs {
		if res := <-r; res.Status != vm.StatusOK {
			t.Errorf("a's plan %d: %s %+v", i, res.Status, res.Error)
		}
	}
	st := p.Stats()
	if st.Refusals[RefusedQueueFull] != 2 || len(st.Refusals) != 1 || st.QueueTimeouts != 0 {
		t.Errorf("refusals %v, queue timeouts %d; want 2 %s", st.Refusals, st.QueueTimeouts, RefusedQueueFull)
	}
}

// TestQueueTimeoutSaysWhy makes runs wait past the queue timeout, once
// behind their own session's runs and once because every worker is taken
// by other sessions: both are refused, retryable, and say which it was.
func TestQueueTimeoutSaysWhy(t *testing.T) {
	p := newTestPool(t, WithSize(1), WithMaxWorkers(2), WithMaxRunningPerSession(1),
		WithQueueTimeout(300*time.Millisecond), WithLimits(slowLimits()))
	h := newHoldHost(nil)
	defer h.letAll()
	const hold = "return await callTool('hold', {})"
	// The runs without a session count as one session.
	first := runAs(t, p, "", h.host(), hold)
	waitUntil(t, "the first plan holding its worker", func() bool { return h.held.Load() == 1 })
	checkConcurrencyRefusal(t, <-runAs(t, p, "", h.host(), hold),
		"clients without an MCP session, which count as one session, had 1 plan running, the most one session may run at once")

	second := runAs(t, p, "c", h.host(), hold)
	waitUntil(t, "both workers held", func() bool { return h.held.Load() == 2 })
	checkConcurrencyRefusal(t, <-runAs(t, p, "d", h.host(), "return 1"), "the server is busy: no sandbox worker became free within 300ms")

	h.letAll()
	for _, r := range []<-chan *vm.Result{first, second} {
		if res := <-r; res.Status != vm.StatusOK {
			t.Errorf("held plan: %s %+v", res.Status, res.Error)
		}
	}
	st := p.Stats()
	if st.Refusals[RefusedSessionLimit] != 1 || st.Refusals[RefusedServerBusy] != 1 || st.QueueTimeouts != 2 {
		t.Errorf("refusals %v, queue timeouts %d", st.Refusals, st.QueueTimeouts)
	}
}

// TestSessionLimitOptions checks New's per-session limits: derived from
// maxWorkers when not set, refused when out of range.
func TestSessionLimitOptions(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		want string
	}{
		{[]Option{WithMaxWorkers(2), WithSize(1), WithMaxRunningPerSession(3)}, "between 1 and maxWorkers (2), got 3"},
		{[]Option{WithMaxRunningPerSession(-1)}, "between 1 and maxWorkers"},
		{[]Option{WithMaxQueuedPerSession(-1)}, "at least 1, got -1"},
	} {
		if _, err := New(context.Background(), tc.opts...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New: %v, want an error saying %q", err, tc.want)
		}
	}
	p := newTestPool(t, WithSize(1), WithMaxWorkers(5))
	if p.cfg.maxRunning != 2 || p.cfg.maxQueued != 10 {
		t.Errorf("derived limits: %d running, %d queued; want 2 and 10", p.cfg.maxRunning, p.cfg.maxQueued)
	}
}
