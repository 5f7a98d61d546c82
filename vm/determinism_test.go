package vm

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
)

func runReplay(tb testing.TB, h Host, script string, rp *Replay) *Result {
	tb.Helper()
	return Run(context.Background(), compile(tb, script), h, Options{RunID: "test", Limits: limits(tb, presets.Balanced), Replay: rp})
}

// TestReplayClockAndRandom: under Replay, Date and Math.random give the
// same values on every run with the same seed and epoch, whatever the
// tool calls took; time moves only with timers.
func TestReplayClockAndRandom(t *testing.T) {
	script := `
		const t0 = Date.now(), r0 = Math.random();
		await callTool('slow', {});
		const t1 = Date.now(), d1 = new Date().toISOString();
		await new Promise(res => setTimeout(res, 25));
		const t2 = Date.now();
		return {t0, r: [r0, Math.random(), Math.random()], dt1: t1 - t0, dt2: t2 - t0, d1}`
	rp := &Replay{Seed: SeedFrom("run-1"), EpochMs: 1_700_000_000_000}
	fast := runReplay(t, &mcptest.Host{}, script, rp)
	slow := runReplay(t, &mcptest.Host{Delay: 60 * time.Millisecond}, script, rp)
	checkWant(t, fast, want{status: StatusOK})
	if string(fast.Result) != string(slow.Result) {
		t.Fatalf("two runs with one seed and epoch differ:\n%s\n%s", fast.Result, slow.Result)
	}
	var got struct {
		T0       int64
		R        []float64
		Dt1, Dt2 int64
		D1       string
	}
	if err := json.Unmarshal(fast.Result, &got); err != nil {
		t.Fatal(err)
	}
	if got.T0 != rp.EpochMs || got.Dt1 != 0 || got.Dt2 != 25 || got.D1 != "2023-11-14T22:13:20.000Z" {
		t.Errorf("the clock: %s; want t0 = epoch, no time across the call, 25 ms across the timer", fast.Result)
	}
	if got.R[0] == got.R[1] || got.R[0] < 0 || got.R[0] >= 1 {
		t.Errorf("Math.random: %v", got.R)
	}
	other := runReplay(t, &mcptest.Host{}, script, &Replay{Seed: SeedFrom("run-2"), EpochMs: rp.EpochMs})
	if string(other.Result) == string(fast.Result) {
		t.Errorf("another seed drew the same numbers: %s", other.Result)
	}
	// Without Replay, Date is the wall clock.
	live := runScript(t, nil, `return Date.now()`)
	var now int64
	_ = json.Unmarshal(live.Result, &now)
	if d := time.Since(time.UnixMilli(now)); d < 0 || d > time.Minute {
		t.Errorf("without Replay Date.now() is %v off the wall clock", d)
	}
}

// orderHost answers "slow" only once "fast" has answered, so that without
// Replay the later call always settles first.
type orderHost struct {
	mcptest.Host
	fastDone chan struct{}
	once     sync.Once
	mu       sync.Mutex
	indexes  map[string]int
}

func (h *orderHost) CallTool(ctx context.Context, name string, input map[string]any) (json.RawMessage, error) {
	if i, ok := CallIndex(ctx); ok {
		h.mu.Lock()
		h.indexes[name] = i
		h.mu.Unlock()
	}
	switch name {
	case "slow":
		select {
		case <-h.fastDone:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "fast":
		defer h.once.Do(func() { close(h.fastDone) })
	}
	return json.RawMessage(`"` + name + `"`), nil
}

// TestReplaySettlesInCallOrder: the continuations of Promise.all and
// Promise.race run in the order the plan made the calls, and a timer
// never overtakes a call.
func TestReplaySettlesInCallOrder(t *testing.T) {
	all := `const order = [];
		await Promise.all([callTool('slow', {}).then(v => order.push(v)), callTool('fast', {}).then(v => order.push(v))]);
		return order`
	race := `return await Promise.race([callTool('slow', {}), callTool('fast', {}),
			new Promise(res => setTimeout(() => res('timer'), 0))])`
	newHost := func() *orderHost { return &orderHost{fastDone: make(chan struct{}), indexes: map[string]int{}} }
	for _, tc := range []struct {
		name, script string
		replay       *Replay
		want         string
	}{
		{"all, live: completion order", all, nil, `["fast","slow"]`},
		{"all, replay: call order", all, &Replay{Seed: 1}, `["slow","fast"]`},
		{"race, live: the timer is due first", race, nil, `"timer"`},
		{"race, replay: the first call wins", race, &Replay{Seed: 1}, `"slow"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost()
			res := runReplay(t, h, tc.script, tc.replay)
			checkWant(t, res, okWith(tc.want))
			if tc.replay != nil && (h.indexes["slow"] != 0 || h.indexes["fast"] != 1) {
				t.Errorf("CallIndex: %v, want slow 0, fast 1", h.indexes)
			}
		})
	}
}

// TestReplayDivergedEndsRun: a host answering REPLAY_DIVERGED ends the run
// there, whatever the plan does with errors.
func TestReplayDivergedEndsRun(t *testing.T) {
	h := &mcptest.Host{Call: func(_ context.Context, name string, _ map[string]any) (json.RawMessage, error) {
		if name == "b" {
			return nil, &toolerr.Error{Code: toolerr.ReplayDiverged, Tool: name, Message: "call 1 was a at first"}
		}
		return json.RawMessage(`1`), nil
	}}
	res := runReplay(t, h, `await callTool('a', {}); try { await callTool('b', {}) } catch (e) {} await callTool('c', {}); return 1`, &Replay{})
	if res.Status != StatusRuntimeError || res.Error == nil || res.Error.Kind != KindReplayDiverged ||
		!strings.Contains(res.Error.Message, "call 1 was a") || res.Error.ToolName != "b" {
		t.Fatalf("diverged run: %s", describe(res))
	}
	for _, c := range h.Calls() {
		if c.Name == "c" {
			t.Fatalf("the plan went on after the divergence: %v", h.Calls())
		}
	}
}
