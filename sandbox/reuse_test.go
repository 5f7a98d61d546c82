package sandbox

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

// runIn runs script for session in p and waits for its result.
func runIn(t *testing.T, p *Pool, session, script string, l presets.Limits) *vm.Result {
	t.Helper()
	rules := ast.RulesFor(l)
	checked, err := ast.Validate(script, rules)
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	return p.Run(context.Background(), script, checked, rules, newTestHost(), vm.Options{RunID: "r-" + session, Limits: l,
		Context: json.RawMessage(`{}`), Session: session})
}

// parkedFor returns the workers parked for session, oldest first.
func parkedFor(p *Pool, session string) []*worker {
	p.parkMu.Lock()
	defer p.parkMu.Unlock()
	return append([]*worker(nil), p.parked[session]...)
}

// TestReusedWorkerStartsClean runs a plan that leaves everything it can
// behind in its runtime (globals, polluted prototypes, replaced built-ins,
// a pending timer, a tool call it never awaits) and then a second plan of
// the same session, which the same worker process runs: the second finds
// none of it.
// roomy leaves places among maxWorkers for the parked workers of a test's
// sessions next to the warm pool: a worker parks only where the warm pool
// can still be refilled (roomToPark).
func roomy() Option { return WithMaxWorkers(16) }

func TestReusedWorkerStartsClean(t *testing.T) {
	p := newTestPool(t, roomy())
	l, _ := presets.LimitsFor(presets.Balanced)
	// Each change the sandbox lets a plan make is made (a frozen
	// intrinsic refuses some); run 1 reports which took.
	first := `
		const done = [];
		const change = (name, f) => { try { f(); done.push(name); } catch (e) {} };
		change('array', () => { Object.getPrototypeOf([]).leak = 'run 1'; });
		change('object', () => { Object.getPrototypeOf({}).polluted = 'run 1'; });
		change('string', () => { Object.getPrototypeOf('').trim = function () { return 'run 1'; }; });
		change('math', () => { Math.max = () => 'run 1'; });
		change('json', () => { JSON.stringify = () => 'run 1'; });
		change('timer', () => { setTimeout(() => { Math.min = () => 'run 1'; }, 50); });
		callTool('sleep', {});
		return done;`
	res := runIn(t, p, "s", first, l)
	if res.Status != vm.StatusOK {
		t.Fatalf("first run: %s %+v", res.Status, res.Error)
	}
	var done []string
	if err := json.Unmarshal(res.Result, &done); err != nil || len(done) == 0 {
		t.Fatalf("the first run changed nothing it could leave behind (%s): the test would prove nothing", res.Result)
	}
	t.Logf("the first run changed %v", done)
	parked := parkedFor(p, "s")
	if len(parked) != 1 {
		t.Fatalf("after a clean run, %d workers parked for the session, want 1", len(parked))
	}
	second := `return {
		arr: [].leak, obj: ({}).polluted, trim: ' x '.trim(), max: Math.max(1, 2), min: Math.min(1, 2),
		json: JSON.stringify({a: 1}),
	};`
	res = runIn(t, p, "s", second, l)
	if res.Status != vm.StatusOK {
		t.Fatalf("second run: %s %+v", res.Status, res.Error)
	}
	const want = `{"trim":"x","max":2,"min":1,"json":"{\"a\":1}"}`
	if string(res.Result) != want {
		t.Errorf("the second run saw %s, want %s", res.Result, want)
	}
	if again := parkedFor(p, "s"); len(again) != 1 || again[0] != parked[0] {
		t.Errorf("the second run did not run in the first run's worker")
	}
	if st := p.Stats(); st.Reused != 1 || st.Parked != 1 {
		t.Errorf("stats: reused %d, parked %d; want 1 and 1", st.Reused, st.Parked)
	}
}

// TestReuseStaysInItsSession checks that a worker serves one session
// only: another session's run gets another worker, and runs without a
// session never leave a worker behind.
func TestReuseStaysInItsSession(t *testing.T) {
	p := newTestPool(t, roomy())
	l := limits(t)
	for _, s := range []string{"a", "b", ""} {
		if res := runIn(t, p, s, "return 1", l); res.Status != vm.StatusOK {
			t.Fatalf("session %q: %s %+v", s, res.Status, res.Error)
		}
	}
	a, b := parkedFor(p, "a"), parkedFor(p, "b")
	if len(a) != 1 || len(b) != 1 || a[0] == b[0] {
		t.Fatalf("parked: a %v, b %v; want one worker each, not the same", a, b)
	}
	if n := len(parkedFor(p, "")); n != 0 {
		t.Errorf("%d workers parked for runs without a session, want 0", n)
	}
	if res := runIn(t, p, "b", "return 2", l); res.Status != vm.StatusOK {
		t.Fatal(res.Status, res.Error)
	}
	if got := parkedFor(p, "b"); len(got) != 1 || got[0] != b[0] {
		t.Errorf("b's second run did not run in b's worker")
	}
	if got := parkedFor(p, "a"); len(got) != 1 || got[0] != a[0] {
		t.Errorf("a's worker was taken by another session")
	}
}

// TestReuseOnlyAfterACleanEnd checks which ends leave the worker to the
// session's next run: a plan that returned or threw does; one stopped by
// a limit, the timeout or the client does not, and the next run gets a
// new worker.
func TestReuseOnlyAfterACleanEnd(t *testing.T) {
	p := newTestPool(t, roomy())
	short, _ := presets.LimitsFor(presets.Balanced)
	short.Timeout = 300 * time.Millisecond
	oneCall := limits(t)
	oneCall.MaxToolCalls = 1
	for _, tc := range []struct {
		name, script string
		l            presets.Limits
		cancel       bool
		status       vm.Status
		reused       bool
	}{
		{"returned", "return 1", limits(t), false, vm.StatusOK, true},
		{"threw", "null.x", limits(t), false, vm.StatusRuntimeError, true},
		{"a tool error", "await callTool('nope', {}); return 1", limits(t), false, vm.StatusToolError, true},
		{"timed out", "while (true) {}", short, false, vm.StatusTimeout, false},
		{"over a limit", "await callTool('echo', {}); await callTool('echo', {}); return 1", oneCall, false, vm.StatusLimitExceeded, false},
		{"cancelled", "await callTool('sleep', {}); return 1", limits(t), true, vm.StatusCancelled, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			session := "clean-" + tc.name
			rules := ast.RulesFor(tc.l)
			checked, err := ast.Validate(tc.script, rules)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				time.AfterFunc(200*time.Millisecond, cancel)
			}
			res := p.Run(ctx, tc.script, checked, rules, newTestHost(), vm.Options{RunID: "x", Limits: tc.l, Context: json.RawMessage(`{}`), Session: session})
			if res.Status != tc.status {
				t.Fatalf("status %s, want %s: %+v", res.Status, tc.status, res.Error)
			}
			if got := len(parkedFor(p, session)) == 1; got != tc.reused {
				t.Errorf("worker parked for the session's next run: %v, want %v", got, tc.reused)
			}
		})
	}
}

// TestReuseBounds checks the bounds of reuse: a worker serves at most
// reuseRuns runs, and a parked worker exits after the idle time.
func TestReuseBounds(t *testing.T) {
	p := newTestPool(t, roomy(), WithReuse(2, 300*time.Millisecond))
	l := limits(t)
	for i := range 3 {
		if res := runIn(t, p, "s", "return 1", l); res.Status != vm.StatusOK {
			t.Fatalf("run %d: %s %+v", i, res.Status, res.Error)
		}
	}
	if st := p.Stats(); st.Reused != 1 {
		t.Errorf("reused %d times, want 1: a worker serves at most 2 runs", st.Reused)
	}
	waitUntil(t, "the parked worker to reach its idle time", func() bool { return p.Stats().Parked == 0 })
	waitUntil(t, "its process to be reaped", func() bool { st := p.Stats(); return st.Live == st.Warm })
}

// TestParkedWorkersGiveWay checks that parked workers never keep another
// session waiting: with every place among maxWorkers held by parked
// workers, a third session's run is served at once, by evicting one.
func TestParkedWorkersGiveWay(t *testing.T) {
	p := newTestPool(t, WithSize(1), WithMaxWorkers(2), WithQueueTimeout(time.Minute))
	l := limits(t)
	for _, s := range []string{"a", "b", "c", "a", "d"} {
		if res := runIn(t, p, s, "return 1", l); res.Status != vm.StatusOK {
			t.Fatalf("session %s: %s %+v", s, res.Status, res.Error)
		}
		if st := p.Stats(); st.Live > 2 {
			t.Fatalf("%d processes alive, above maxWorkers 2", st.Live)
		}
	}
	if st := p.Stats(); st.QueueTimeouts != 0 || st.Parked == 0 {
		t.Errorf("stats %+v: want no queue timeouts and a worker still parked", st)
	}
}

// TestReuseDisabled checks WithReuse(1, …): every run gets a new worker.
func TestReuseDisabled(t *testing.T) {
	p := newTestPool(t, roomy(), WithReuse(1, time.Minute))
	for range 2 {
		if res := runIn(t, p, "s", "return 1", limits(t)); res.Status != vm.StatusOK {
			t.Fatal(res.Status, res.Error)
		}
	}
	if st := p.Stats(); st.Reused != 0 || st.Parked != 0 {
		t.Errorf("stats: reused %d, parked %d; want none", st.Reused, st.Parked)
	}
}

func TestFitFor(t *testing.T) {
	p := &Pool{cfg: poolConfig{limits: presets.Limits{Timeout: 5 * time.Second, MemoryBytes: 64 << 20}}}
	w := &worker{cpuLimit: 7 * time.Second, startUsage: procUsage{vsize: 1 << 30}}
	for _, tc := range []struct {
		name string
		u    procUsage
		fit  bool
	}{
		{"fresh", procUsage{cpu: 20 * time.Millisecond, vsize: 1 << 30}, true},
		{"CPU for one more run", procUsage{cpu: 990 * time.Millisecond, vsize: 1 << 30}, true},
		{"not a whole run of CPU left", procUsage{cpu: time.Second, vsize: 1 << 30}, false},
		{"address space grown a little", procUsage{vsize: 1<<30 + 16<<20}, true},
		{"address space grown by more than a quarter of the budget", procUsage{vsize: 1<<30 + 17<<20}, false},
	} {
		if got := p.fitFor(w, tc.u); got != tc.fit {
			t.Errorf("%s: fit %v, want %v", tc.name, got, tc.fit)
		}
	}
}

func TestParseStat(t *testing.T) {
	fields := func(utime, stime, vsize string) string {
		f := []string{"S", "1", "1", "1", "0", "-1", "4194560", "100", "0", "0", "0", utime, stime, "0", "0", "20", "0", "4", "0", "123", vsize, "100"}
		out := ""
		for _, x := range f {
			out += " " + x
		}
		return out
	}
	for _, tc := range []struct {
		name, text string
		want       procUsage
		ok         bool
	}{
		{"plain", "42 (codecall)" + fields("150", "50", "1048576"), procUsage{cpu: 2 * time.Second, vsize: 1 << 20}, true},
		{"a name with spaces and parentheses", "42 (a) (b c)" + fields("1", "2", "7"), procUsage{cpu: 30 * time.Millisecond, vsize: 7}, true},
		{"no name", "42 codecall S 1", procUsage{}, false},
		{"too few fields", "42 (x) S 1 1", procUsage{}, false},
		{"not a number", "42 (x)" + fields("x", "2", "7"), procUsage{}, false},
	} {
		got, err := parseStat([]byte(tc.text))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v, ok %v", tc.name, got, err, tc.want, tc.ok)
		}
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("42 (codecall) S 1 1 1 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 4 0 123 1048576 100"))
	f.Add([]byte("1 ())) S"))
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := parseStat(b)
		if err == nil && (u.cpu < 0 && u.vsize >= 0) {
			t.Logf("negative CPU time parsed from %q", b)
		}
	})
}
