package middleware_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/meta"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/state"
)

var testStateKey = bytes.Repeat([]byte{0x42}, state.KeyBytes)

// replicas are approval shops that share one state store, as replicas
// behind a load balancer do.
type replicas struct {
	shops []*approvalShop
	store state.Store
}

func newReplicas(t *testing.T, n int, store state.Store, mut func(i int, cfg *presets.Config)) *replicas {
	t.Helper()
	return newReplicasWith(t, n, store, mut, nil)
}

// newReplicasWith is newReplicas with options of replica i's own.
func newReplicasWith(t *testing.T, n int, store state.Store, mut func(i int, cfg *presets.Config), opts func(i int) []middleware.Option) *replicas {
	t.Helper()
	if store == nil {
		store = state.NewMemory()
	}
	r := &replicas{store: store}
	for i := range n {
		r.shops = append(r.shops, newApprovalShopWith(t, func(cfg *presets.Config) {
			cfg.VM.Isolation = presets.IsolationInProcess
			cfg.Approval.Timeout = 10 * time.Second
			if mut != nil {
				mut(i, cfg)
			}
		}, append([]middleware.Option{middleware.WithStateStore(store, testStateKey)}, optsFor(opts, i)...)...))
	}
	return r
}

func optsFor(opts func(i int) []middleware.Option, i int) []middleware.Option {
	if opts == nil {
		return nil
	}
	return opts(i)
}

// count sums the calls of a tool that reached any replica's upstream.
func (r *replicas) count(name string) int64 {
	var n int64
	for _, s := range r.shops {
		n += s.count(name)
	}
	return n
}

// execute sends a 2026-07-28 codecall.execute to replica i.
func (r *replicas) execute(t *testing.T, i int, script, state, answer string) *mcp.CallToolResult {
	t.Helper()
	return rawModernCall(t, r.shops[i], "codecall.execute", map[string]any{"script": script}, state, answer)
}

// outcome is the part of an execute result the tests read.
type outcome struct {
	Status string          `json:"status"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Kind, Code, Message, ToolName string
	} `json:"error"`
	Warnings []struct{ Type, Message string } `json:"warnings"`
	Approval string                           `json:"approvalState"`
}

func readOutcome(t *testing.T, res *mcp.CallToolResult) outcome {
	t.Helper()
	if res.ResultType == mcp.ResultTypeInputRequired {
		t.Fatalf("the run paused again: %+v", res)
	}
	var o outcome
	if err := json.Unmarshal([]byte(mcp.GetTextFromContent(res.Content[0])), &o); err != nil {
		t.Fatalf("not an execute result: %v: %s", err, mcp.GetTextFromContent(res.Content[0]))
	}
	return o
}

func hasWarning(o outcome, typ string) bool {
	for _, w := range o.Warnings {
		if w.Type == typ {
			return true
		}
	}
	return false
}

func mustPause(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res.ResultType != mcp.ResultTypeInputRequired || !strings.HasPrefix(res.RequestState, "ccr1.") {
		t.Fatalf("the plan did not pause with a durable requestState: %+v", res)
	}
	return res.RequestState
}

// TestDurableReplay runs plans that pause on one replica and are answered
// on another: the plan runs again from its start there, each call it
// completed answered from its journal, and no tool runs twice.
func TestDurableReplay(t *testing.T) {
	tests := []struct {
		name, script string
		answer       string
		want         string // the result
		counts       map[string]int64
		status       string
	}{
		{"sequential", `
			const before = await callTool('shop.list_orders', {});
			const del = await callTool('shop.delete_order', {id: 'o1'});
			const after = await callTool('shop.list_orders', {});
			return [before.ok, del.ok, after.ok]`,
			"approve", `[true,true,true]`, map[string]int64{"shop.list_orders": 2, "shop.delete_order": 1}, "ok"},
		{"Promise.all", `
			const [a, b, c] = await Promise.all([callTool('shop.list_orders', {}), callTool('shop.delete_order', {id: 'o1'}),
				callTool('shop.update_note', {id: 'n'})]);
			const d = await callTool('shop.update_note', {id: 'm'});
			return [a.ok, b.ok, c.ok, d.ok]`,
			"approve", `[true,true,true,true]`, map[string]int64{"shop.list_orders": 1, "shop.delete_order": 1, "shop.update_note": 2}, "ok"},
		{"Date.now and Math.random", `
			const t = Date.now(), r = Math.random();
			await callTool('shop.list_orders', {});
			await callTool('shop.delete_order', {id: 'o-' + r + '-' + t});
			return typeof r`,
			"approve", `"number"`, map[string]int64{"shop.list_orders": 1, "shop.delete_order": 1}, "ok"},
		{"denied", `
			await callTool('shop.list_orders', {});
			try { await callTool('shop.delete_order', {id: 'o1'}) } catch (e) { return e.code }
			return 'ran'`,
			"deny", `"APPROVAL_DENIED"`, map[string]int64{"shop.list_orders": 1, "shop.delete_order": 0}, "ok"},
		{"two approvals", `
			await callTool('shop.delete_order', {id: 'o1'});
			await callTool('shop.list_orders', {});
			await callTool('shop.charge', {id: 'c1'});
			return 'done'`,
			"approve", `"done"`, map[string]int64{"shop.delete_order": 1, "shop.list_orders": 1, "shop.charge": 1}, "ok"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newReplicas(t, 3, nil, nil)
			res := r.execute(t, 0, tc.script, "", "")
			// Each answer goes to the next replica; a plan that asks again
			// pauses again, wherever it runs.
			for i := 1; res.ResultType == mcp.ResultTypeInputRequired; i++ {
				if i > 3 {
					t.Fatal("the plan keeps pausing")
				}
				res = r.execute(t, i%3, tc.script, mustPause(t, res), tc.answer)
			}
			o := readOutcome(t, res)
			if o.Status != tc.status || string(o.Result) != tc.want {
				t.Fatalf("status %s result %s, want %s %s; error %+v", o.Status, o.Result, tc.status, tc.want, o.Error)
			}
			for tool, want := range tc.counts {
				if got := r.count(tool); got != want {
					t.Errorf("%s ran %d times, want %d", tool, got, want)
				}
			}
			if hasWarning(o, "replay_changed") {
				t.Errorf("nothing changed between pause and answer: %+v", o.Warnings)
			}
			replayed := len(o.Warnings) > 0 && o.Warnings[0].Type == "replayed"
			// Promise.all starts its three calls together: the approval
			// may stop the first run before the other two reach their
			// tools, and then nothing is journaled and nothing replayed
			// (the counts above still hold either way).
			if !replayed && tc.name != "Promise.all" {
				t.Errorf("a resumed run says so in its warnings: %+v", o.Warnings)
			}
		})
	}
}

// TestDurableJournalKeepsFirstValues: a tool that answers differently the
// second time is not asked the second time; the resumed plan sees what
// its first run saw, so the approved call is the one the person saw.
func TestDurableJournalKeepsFirstValues(t *testing.T) {
	r := newReplicas(t, 2, nil, nil)
	var n atomic.Int64
	for _, s := range r.shops {
		s.srv.AddTool(mcp.NewTool("shop.next_id", mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
			mcp.WithOpenWorldHintAnnotation(false)), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(fmt.Sprint(n.Add(1))), nil
		})
	}
	script := `const id = await callTool('shop.next_id', {}); await callTool('shop.delete_order', {id: 'o' + id}); return id`
	first := r.execute(t, 0, script, "", "")
	res := r.execute(t, 1, script, mustPause(t, first), "approve")
	if o := readOutcome(t, res); o.Status != "ok" || string(o.Result) != "1" {
		t.Fatalf("resumed plan: %+v", o)
	}
	if n.Load() != 1 || r.count("shop.delete_order") != 1 {
		t.Fatalf("next_id ran %d times, delete_order %d; want 1 and 1", n.Load(), r.count("shop.delete_order"))
	}
}

// TestDurableDivergence: a replica whose catalog differs makes the resumed
// plan take another path; the run ends with REPLAY_DIVERGED and calls
// nothing twice, nor the approved call with other input.
func TestDurableDivergence(t *testing.T) {
	r := newReplicas(t, 2, nil, nil)
	r.shops[0].srv.AddTool(mcp.NewTool("shop.extra", mcp.WithReadOnlyHintAnnotation(true)), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("{}"), nil
	})
	script := `const t = getTool('shop.extra');
		await callTool(t ? 'shop.list_orders' : 'shop.update_note', {id: 'x'});
		await callTool('shop.delete_order', {id: 'o1'});
		return 'done'`
	first := r.execute(t, 0, script, "", "")
	res := r.execute(t, 1, script, mustPause(t, first), "approve")
	o := readOutcome(t, res)
	if o.Status != "runtime_error" || o.Error == nil || o.Error.Kind != "replay_diverged" ||
		!strings.Contains(o.Error.Message, "differs from its first run") {
		t.Fatalf("diverged run: %+v %+v", o, o.Error)
	}
	if !hasWarning(o, "replay_changed") {
		t.Errorf("the resumed run should say the tools changed since its first run: %+v", o.Warnings)
	}
	if r.count("shop.list_orders") != 1 || r.count("shop.update_note") != 0 || r.count("shop.delete_order") != 0 {
		t.Fatalf("calls: list %d, note %d, delete %d; want 1, 0, 0",
			r.count("shop.list_orders"), r.count("shop.update_note"), r.count("shop.delete_order"))
	}
	// The run is over: the same answer again finds nothing.
	again := r.execute(t, 0, script, mustPause(t, first), "approve")
	if !again.IsError || !strings.Contains(mcp.GetTextFromContent(again.Content[0]), "no plan is waiting") {
		t.Fatalf("answer after the end: %+v", again)
	}
}

// TestDurableAnswersAreFinal: a denied or expired approval cannot be
// answered again, and the tool never runs.
func TestDurableAnswersAreFinal(t *testing.T) {
	script := `try { await callTool('shop.delete_order', {id: 'o1'}) } catch (e) { return e.code } return 'ran'`
	for _, tc := range []struct {
		name, answer, want string
		wait               bool
	}{
		{"denied", "deny", `"APPROVAL_DENIED"`, false},
		{"expired", "approve", `"APPROVAL_EXPIRED"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReplicas(t, 2, nil, func(_ int, cfg *presets.Config) { cfg.Approval.Timeout = 200 * time.Millisecond })
			token := mustPause(t, r.execute(t, 0, script, "", ""))
			if tc.wait {
				time.Sleep(300 * time.Millisecond) // past approval.timeout: the cause, not a race
			}
			o := readOutcome(t, r.execute(t, 1, script, token, tc.answer))
			if o.Status != "ok" || string(o.Result) != tc.want {
				t.Fatalf("result %+v, want %s", o, tc.want)
			}
			again := r.execute(t, 0, script, token, "approve")
			if !again.IsError || !strings.Contains(mcp.GetTextFromContent(again.Content[0]), "no plan is waiting") {
				t.Fatalf("a second answer: %+v", again)
			}
			if n := r.count("shop.delete_order"); n != 0 {
				t.Fatalf("delete_order ran %d times", n)
			}
		})
	}
}

// TestDurableRefusals: forged, foreign and stale requestStates are
// refused without running anything.
func TestDurableRefusals(t *testing.T) {
	r := newReplicas(t, 2, nil, nil)
	script := `await callTool('shop.delete_order', {id: 'o1'}); await callTool('shop.charge', {id: 'c1'}); return 1`
	token := mustPause(t, r.execute(t, 0, script, "", ""))
	other := newReplicas(t, 1, state.NewMemory(), nil) // another fleet: another store
	for _, tc := range []struct {
		name   string
		res    *mcp.CallToolResult
		reason string
	}{
		{"forged signature", r.execute(t, 1, script, token[:len(token)-4]+"0000", "approve"), "not issued by this server"},
		{"other script", r.execute(t, 1, "return 2", token, "approve"), "another session or another script"},
		{"unknown to the store", other.execute(t, 0, script, token, "approve"), "no plan is waiting"},
	} {
		if !tc.res.IsError || !strings.Contains(mcp.GetTextFromContent(tc.res.Content[0]), tc.reason) {
			t.Errorf("%s: %+v, want %q", tc.name, tc.res, tc.reason)
		}
	}
	second := mustPause(t, r.execute(t, 1, script, token, "approve")) // the genuine answer: the plan asks for charge
	stale := r.execute(t, 0, script, token, "approve")
	if !stale.IsError || !strings.Contains(mcp.GetTextFromContent(stale.Content[0]), "already answered") {
		t.Fatalf("the first prompt's requestState again: %+v", stale)
	}
	if o := readOutcome(t, r.execute(t, 0, script, second, "approve")); o.Status != "ok" {
		t.Fatalf("second answer: %+v", o)
	}
	if r.count("shop.delete_order") != 1 || r.count("shop.charge") != 1 {
		t.Fatalf("delete %d, charge %d; want 1 and 1", r.count("shop.delete_order"), r.count("shop.charge"))
	}
}

// downStore fails every write, as a store that cannot be reached does.
type downStore struct{ state.Store }

var errDown = errors.New("connection refused")

func (downStore) Put(context.Context, string, []byte, time.Duration) error    { return errDown }
func (downStore) PutNew(context.Context, string, []byte, time.Duration) error { return errDown }

// TestDurableStoreDownFailsClosed: a plan that needs approval while the
// store is down is not run past the call, and the call is not made.
func TestDurableStoreDownFailsClosed(t *testing.T) {
	r := newReplicas(t, 1, downStore{state.NewMemory()}, nil)
	res := r.execute(t, 0, `await callTool('shop.list_orders', {}); return await callTool('shop.delete_order', {id: 'o1'})`, "", "")
	o := readOutcome(t, res)
	if o.Status != "tool_error" || o.Error == nil || o.Error.Code != "APPROVAL_REQUIRED" || !strings.Contains(o.Error.Message, "state store") {
		t.Fatalf("store down: %+v %+v", o, o.Error)
	}
	if r.count("shop.delete_order") != 0 {
		t.Fatal("the call ran without an approval on record")
	}
}

// TestDurableProcessIsolation resumes a plan run in a sandboxed worker:
// Replay and call indexes cross the bridge.
func TestDurableProcessIsolation(t *testing.T) {
	r := newReplicas(t, 2, nil, func(_ int, cfg *presets.Config) { cfg.VM.Isolation = presets.IsolationProcess })
	if got := r.shops[0].cc.Isolation().Effective; got != presets.IsolationProcess {
		t.Skipf("plans run %s here: %s", got, r.shops[0].cc.Isolation().Fallback)
	}
	script := `const [a, b] = await Promise.all([callTool('shop.list_orders', {}), callTool('shop.update_note', {id: String(Math.random())})]);
		await callTool('shop.delete_order', {id: 'o' + Date.now()});
		return [a.ok, b.ok]`
	first := r.execute(t, 0, script, "", "")
	o := readOutcome(t, r.execute(t, 1, script, mustPause(t, first), "approve"))
	if o.Status != "ok" || string(o.Result) != "[true,true]" {
		t.Fatalf("resumed in a worker: %+v %+v", o, o.Error)
	}
	if r.count("shop.list_orders") != 1 || r.count("shop.update_note") != 1 || r.count("shop.delete_order") != 1 {
		t.Fatalf("calls: list %d, note %d, delete %d", r.count("shop.list_orders"), r.count("shop.update_note"), r.count("shop.delete_order"))
	}
}

// TestDurableCodeMode pauses a codemode.run script on one replica and
// answers it on another: the script runs again there, its journaled calls
// are not made again, and the answer keeps the first run's diagnostics.
func TestDurableCodeMode(t *testing.T) {
	script := `import * as shop from '@codemode/servers/shop';
		const before = await shop.list_orders({});
		let verdict = 'ran';
		try { await shop.delete_order({id: 'o-' + Math.random() + '-' + Date.now()}) } catch (e) { verdict = e.code || e.name }
		globalThis.__codemode_result__ = [before !== undefined, verdict];`
	args := map[string]any{"code": script, "limits": map[string]any{"timeoutMs": 1e12}}
	for _, tc := range []struct {
		answer, want string
		deletes      int64
	}{
		{"approve", `[true,"ran"]`, 1},
		{"deny", `[true,"APPROVAL_DENIED"]`, 0},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			r := newReplicas(t, 2, nil, func(_ int, cfg *presets.Config) {
				cfg.Surfaces = []presets.Surface{presets.SurfaceCodeCall, presets.SurfaceCodeMode}
			})
			first := rawModernCall(t, r.shops[0], "codemode.run", args, "", "")
			res := rawModernCall(t, r.shops[1], "codemode.run", args, mustPause(t, first), tc.answer)
			if res.ResultType == mcp.ResultTypeInputRequired {
				t.Fatalf("paused again: %+v", res)
			}
			var out struct {
				Result      json.RawMessage
				Diagnostics []struct{ Code, Message string }
			}
			text := mcp.GetTextFromContent(res.Content[0])
			if err := json.Unmarshal([]byte(text), &out); err != nil {
				t.Fatalf("not a codemode.run answer: %v: %s", err, text)
			}
			if string(out.Result) != tc.want {
				t.Fatalf("result %s, want %s: %s", out.Result, tc.want, text)
			}
			codes := map[string]bool{}
			for _, d := range out.Diagnostics {
				codes[d.Code] = true
			}
			if !codes["LIMIT_CLAMPED"] || !codes["REPLAYED"] {
				t.Errorf("the answer should keep the first run's clamped limit and say the run was replayed: %s", text)
			}
			if r.count("shop.list_orders") != 1 || r.count("shop.delete_order") != tc.deletes {
				t.Fatalf("list ran %d times, delete %d; want 1 and %d", r.count("shop.list_orders"), r.count("shop.delete_order"), tc.deletes)
			}
		})
	}
}

// TestDurableCallCutShort: a replica that resumed a plan stops while one
// of its calls runs (its lease runs out, as a killed replica's does). The
// next answer does not make that call again, since nobody knows whether it
// took effect: the run ends at it, saying so.
func TestDurableCallCutShort(t *testing.T) {
	// Replica 1's clock jumps past its lease while its call runs, as a
	// replica stalled that long sees it.
	var skew atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	r := newReplicasWith(t, 3, nil, nil, func(i int) []middleware.Option {
		if i != 1 {
			return nil
		}
		return []middleware.Option{middleware.WithDurableOptions(meta.WithDurableClock(clock))}
	})
	entered, unblock := make(chan struct{}), make(chan struct{})
	var slow atomic.Int64
	for i, s := range r.shops {
		s.srv.AddTool(mcp.NewTool("shop.ship", mcp.WithReadOnlyHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false)),
			func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				slow.Add(1)
				if i == 1 {
					close(entered)
					<-unblock
				}
				return mcp.NewToolResultText(`{"shipped":true}`), nil
			})
	}
	script := `await callTool('shop.list_orders', {});
		await callTool('shop.delete_order', {id: 'o1'});
		await callTool('shop.ship', {});
		return 'done'`
	token := mustPause(t, r.execute(t, 0, script, "", ""))
	stuck := make(chan *mcp.CallToolResult, 1)
	go func() { stuck <- r.execute(t, 1, script, token, "approve") }()
	select {
	case <-entered:
	case res := <-stuck:
		t.Fatalf("the resumed plan never reached shop.ship: %+v", res)
	}
	// Replica 1 is inside shop.ship. Its lease running out is what a
	// replica killed (or stalled) at this point leaves behind.
	runID := strings.Split(token, ".")[1]
	if err := r.store.Delete(context.Background(), "lease/"+runID); err != nil {
		t.Fatal(err)
	}
	skew.Store(int64(time.Hour))
	o := readOutcome(t, r.execute(t, 2, script, token, "approve"))
	if o.Status != "runtime_error" || o.Error == nil || o.Error.Kind != "replay_diverged" ||
		!strings.Contains(o.Error.Message, "whether it took effect is unknown") {
		t.Fatalf("the run resumed after a replica stopped mid-call: %+v %+v", o, o.Error)
	}
	close(unblock)
	late := readOutcome(t, <-stuck)
	if late.Status == "ok" {
		t.Errorf("the replica whose lease ran out finished the plan as if it still held it: %+v", late)
	}
	if n := slow.Load(); n != 1 {
		t.Fatalf("shop.ship ran %d times, want 1", n)
	}
	if r.count("shop.delete_order") != 1 || r.count("shop.list_orders") != 1 {
		t.Fatalf("delete ran %d times, list %d; want 1 and 1", r.count("shop.delete_order"), r.count("shop.list_orders"))
	}
	again := r.execute(t, 0, script, token, "approve")
	if !again.IsError || !strings.Contains(mcp.GetTextFromContent(again.Content[0]), "no plan is waiting") {
		t.Fatalf("the plan outlived its end: %+v", again)
	}
}

// TestDurablePrompts: the prompt of a direct call or a codecall.invoke is
// answered on another replica than the one that issued it; the call runs
// once, the answer counts once, and only for the call it was issued for.
func TestDurablePrompts(t *testing.T) {
	for _, tc := range []struct {
		name string
		tool string
		args func(id string) map[string]any
	}{
		{"invoke", "codecall.invoke", func(id string) map[string]any {
			return map[string]any{"tool": "shop.delete_order", "input": map[string]any{"id": id}}
		}},
		{"direct call", "shop.delete_order", func(id string) map[string]any { return map[string]any{"id": id} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReplicas(t, 3, nil, nil)
			call := func(i int, id, state, answer string) *mcp.CallToolResult {
				return rawModernCall(t, r.shops[i], tc.tool, tc.args(id), state, answer)
			}
			first := call(0, "o1", "", "")
			if first.ResultType != mcp.ResultTypeInputRequired || first.RequestState == "" {
				t.Fatalf("no prompt: %+v", first)
			}
			if res := call(1, "o1", first.RequestState, "approve"); res.IsError || res.ResultType == mcp.ResultTypeInputRequired {
				t.Fatalf("answered on another replica: %+v", res)
			}
			if n := r.count("shop.delete_order"); n != 1 {
				t.Fatalf("delete ran %d times, want 1", n)
			}
			// The same answer again counts for nothing: the call is asked
			// about anew and does not run.
			if res := call(2, "o1", first.RequestState, "approve"); res.ResultType != mcp.ResultTypeInputRequired {
				t.Fatalf("an answer counted twice: %+v", res)
			}
			// An answer is for the call it was issued for.
			other := call(0, "o2", "", "")
			if res := call(1, "o3", other.RequestState, "approve"); !res.IsError {
				t.Fatalf("an approval of o2 ran o3: %+v", res)
			}
			if n := r.count("shop.delete_order"); n != 1 {
				t.Fatalf("delete ran %d times, want 1", n)
			}
		})
	}
	t.Run("store down", func(t *testing.T) {
		r := newReplicas(t, 1, downStore{state.NewMemory()}, nil)
		res := rawModernCall(t, r.shops[0], "codecall.invoke", map[string]any{"tool": "shop.delete_order", "input": map[string]any{"id": "o1"}}, "", "")
		if !res.IsError || res.ResultType == mcp.ResultTypeInputRequired || !strings.Contains(mcp.GetTextFromContent(res.Content[0]), "APPROVAL") {
			t.Fatalf("a prompt the store could not keep: %+v", res)
		}
		if r.count("shop.delete_order") != 0 {
			t.Fatal("the call ran")
		}
	})
}

// TestDurableSweep: a plan whose prompt nobody answers is ended by a sweep
// on any replica once its prompt expired and a late answer's grace ran
// out: its run gets the execute.end it lacked, and it leaves the store.
func TestDurableSweep(t *testing.T) {
	store := state.NewMemory()
	var logs [2]mcptest.Buffer
	var shops [2]*approvalShop
	for i := range shops {
		shops[i] = newApprovalShopWith(t, func(cfg *presets.Config) {
			cfg.VM.Isolation = presets.IsolationInProcess
			cfg.Surfaces = []presets.Surface{presets.SurfaceCodeCall, presets.SurfaceCodeMode}
		}, middleware.WithStateStore(store, testStateKey), middleware.WithAuditHandler(slog.NewJSONHandler(&logs[i], nil)))
	}
	plan := `await callTool('shop.list_orders', {}); await callTool('shop.delete_order', {id: 'o1'}); return 1`
	script := `import * as shop from '@codemode/servers/shop'; await shop.delete_order({id: 'o2'});`
	execToken := mustPause(t, rawModernCall(t, shops[0], "codecall.execute", map[string]any{"script": plan}, "", ""))
	mustPause(t, rawModernCall(t, shops[0], "codemode.run", map[string]any{"code": script}, "", ""))
	// An answered plan leaves nothing for a sweep.
	answered := mustPause(t, rawModernCall(t, shops[0], "codecall.execute", map[string]any{"script": "return await callTool('shop.charge', {id: 'c'})"}, "", ""))
	if res := rawModernCall(t, shops[1], "codecall.execute", map[string]any{"script": "return await callTool('shop.charge', {id: 'c'})"}, answered, "approve"); res.IsError {
		t.Fatalf("answer: %+v", res)
	}

	if n := shops[1].cc.SweepPaused(time.Now()); n != 0 {
		t.Fatalf("a sweep ended %d plans whose prompt has not expired", n)
	}
	if n := shops[1].cc.SweepPaused(time.Now().Add(time.Hour)); n != 2 {
		t.Fatalf("a sweep an hour later ended %d plans, want 2", n)
	}
	if n := shops[0].cc.SweepPaused(time.Now().Add(time.Hour)); n != 0 {
		t.Fatalf("a second sweep ended %d plans again", n)
	}
	var ends []map[string]any
	for _, e := range auditEvents(t, &logs[1], "execute.end") {
		if e["status"] != "ok" { // the answered plan ended ok on this replica
			ends = append(ends, e)
		}
	}
	vias := map[any]bool{}
	for _, e := range ends {
		if e["status"] != "tool_error" || e["errorCode"] != "APPROVAL_EXPIRED" || !strings.Contains(fmt.Sprint(e["error"]), "shop.delete_order") {
			t.Errorf("swept run's end: %v", e)
		}
		vias[e["via"]] = true
	}
	if len(ends) != 2 || !vias["execute"] || !vias["codemode"] {
		t.Fatalf("the sweeping replica logged %d execute.end events (%v), want one per plan and surface", len(ends), vias)
	}
	if left, err := store.Scan(context.Background(), "", state.MaxScan); err != nil || len(left) != 0 {
		keys := []string{}
		for _, e := range left {
			keys = append(keys, e.Key)
		}
		t.Fatalf("the store still holds %v (%v)", keys, err)
	}
	res := rawModernCall(t, shops[1], "codecall.execute", map[string]any{"script": plan}, execToken, "approve")
	if !res.IsError || !strings.Contains(mcp.GetTextFromContent(res.Content[0]), "no plan is waiting") {
		t.Fatalf("an answer after the sweep: %+v", res)
	}
	if shops[0].count("shop.delete_order")+shops[1].count("shop.delete_order") != 0 {
		t.Fatal("a swept plan's call ran")
	}
}

// TestDurableSweepSkipsUnreadable checks that a paused plan sealed with
// another key (a replica configured with another state key) does not stop
// a sweep: each replica ends the plans it can read, and leaves the others.
func TestDurableSweepSkipsUnreadable(t *testing.T) {
	store := state.NewMemory()
	keys := [2][]byte{testStateKey, bytes.Repeat([]byte{0x5a}, state.KeyBytes)}
	var shops [2]*approvalShop
	for i := range shops {
		shops[i] = newApprovalShopWith(t, func(cfg *presets.Config) { cfg.VM.Isolation = presets.IsolationInProcess },
			middleware.WithStateStore(store, keys[i]))
		mustPause(t, rawModernCall(t, shops[i], "codecall.execute",
			map[string]any{"script": `await callTool('shop.delete_order', {id: 'o1'}); return 1`}, "", ""))
	}
	later := time.Now().Add(time.Hour)
	for i, s := range shops {
		if n := s.cc.SweepPaused(later); n != 1 {
			t.Errorf("replica %d's sweep ended %d plans, want its own 1 despite the other replica's, which it cannot read", i, n)
		}
	}
	if left, err := store.Scan(context.Background(), "paused/", state.MaxScan); err != nil || len(left) != 0 {
		t.Errorf("paused records left: %d (%v)", len(left), err)
	}
}
