package vm

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
)

// waitReady waits until p has a runtime ready for the hardening it last
// built for, starting the builder if no run has yet.
func (p *Runtimes) waitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p.mu.Lock()
		n, started := len(p.ready), p.started
		p.mu.Unlock()
		if n > 0 {
			return
		}
		if !started {
			return // the first run builds its own and starts the builder
		}
		if time.Now().After(deadline) {
			t.Fatal("no runtime was built ahead in 30 s")
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// runWith runs script under preset name with p supplying the runtime.
func runWith(tb testing.TB, p *Runtimes, name presets.Name, script string, change ...func(*presets.Limits)) *Result {
	tb.Helper()
	l := limits(tb, name)
	for _, c := range change {
		c(&l)
	}
	return Run(context.Background(), compile(tb, script), &mcptest.Host{}, Options{RunID: "test", Limits: l, Runtimes: p})
}

// TestRuntimesAreNeverShared: a plan that tampers with everything it can
// reach (prototypes, globals, built-ins' properties) leaves nothing for
// the next run, which takes a runtime built ahead of it, and no two runs
// get the same runtime.
func TestRuntimesAreNeverShared(t *testing.T) {
	// One ready at a time, and a look at it before every run, so every
	// runtime a run takes was seen ready first.
	p := NewRuntimes(1)
	defer p.Close()
	const tamper = `
		Array.prototype.leak = 'from run one';
		Object.prototype.polluted = true;
		globalThis.kept = 42;
		Math.max = () => 'tampered';
		JSON.stringify = () => 'tampered';
		try { String.prototype.toUpperCase = () => 'tampered'; } catch (e) {}
		return 'tampered';`
	const look = `return {
		leak: [].leak === undefined,
		polluted: ({}).polluted === undefined,
		kept: typeof kept === 'undefined',
		max: Math.max(1, 2) === 2,
		upper: 'a'.toUpperCase() === 'A',
		json: JSON.stringify({a: 1}) === '{"a":1}',
	};`
	// A runtime that left the ready list was taken by a run; it must
	// never be offered again.
	ready, taken := map[*goja.Runtime]bool{}, map[*goja.Runtime]bool{}
	check := func() {
		t.Helper()
		p.mu.Lock()
		now := map[*goja.Runtime]bool{}
		for _, r := range p.ready {
			now[r.rt] = true
		}
		p.mu.Unlock()
		for rt := range now {
			if taken[rt] {
				t.Fatal("a runtime a run took was offered again")
			}
		}
		for rt := range ready {
			if !now[rt] {
				taken[rt] = true
			}
		}
		ready = now
	}
	for i := 0; i < 6; i++ {
		p.waitReady(t)
		check()
		if res := runWith(t, p, presets.Secure, tamper); res.Status != StatusOK {
			t.Fatalf("tampering run: %s", describe(res))
		}
		p.waitReady(t)
		check()
		res := runWith(t, p, presets.Secure, look)
		if res.Status != StatusOK {
			t.Fatalf("looking run: %s", describe(res))
		}
		if want := `{"leak":true,"polluted":true,"kept":true,"max":true,"upper":true,"json":true}`; string(res.Result) != want {
			t.Fatalf("run %d after a tampering run sees %s, want %s", i, res.Result, want)
		}
		check()
	}
	// The first run builds its own and starts the builder.
	if len(taken) < 11 {
		t.Fatalf("runs took %d runtimes built ahead, want 11 of 12", len(taken))
	}
}

// TestRuntimesFollowTheLimits: a run whose limits differ from the runtimes
// ready gets a runtime hardened for its own (console, stack cap, Code Mode
// eval), never one built for other limits.
func TestRuntimesFollowTheLimits(t *testing.T) {
	p := NewRuntimes(2)
	defer p.Close()
	noConsole := func(l *presets.Limits) { l.AllowConsole = false }
	shallow := func(l *presets.Limits) { l.MaxStackDepth = 64 }
	cases := []struct {
		name   string
		change []func(*presets.Limits)
		script string
		want   string
	}{
		{"console allowed", nil, `return typeof console`, `"object"`},
		{"console refused", []func(*presets.Limits){noConsole}, `return typeof console`, `"undefined"`},
		{"console allowed again", nil, `return typeof console`, `"object"`},
		{"shallow stack", []func(*presets.Limits){shallow}, `const f = n => n === 0 ? 0 : 1 + f(n - 1); try { return f(100); } catch (e) { return 'overflow'; }`, ``},
		{"deep stack", nil, `const f = n => n === 0 ? 0 : 1 + f(n - 1); return f(100);`, `100`},
	}
	for round := 0; round < 2; round++ {
		for _, c := range cases {
			p.waitReady(t)
			res := runWith(t, p, presets.Balanced, c.script, c.change...)
			if c.want == "" {
				if res.Status != StatusLimitExceeded {
					t.Fatalf("%s: %s, want limit_exceeded (the stack cap of 64)", c.name, describe(res))
				}
				continue
			}
			if res.Status != StatusOK || string(res.Result) != c.want {
				t.Fatalf("%s (round %d): %s, want %s", c.name, round, describe(res), c.want)
			}
		}
	}
}

// TestRuntimesConcurrent takes runtimes from many goroutines at once (run
// it with -race).
func TestRuntimesConcurrent(t *testing.T) {
	p := NewRuntimes(2)
	defer p.Close()
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 4; i++ {
				res := runWith(t, p, presets.Balanced, fmt.Sprintf(`globalThis.mine = %d; await null; return globalThis.mine`, g))
				if res.Status != StatusOK || string(res.Result) != fmt.Sprint(g) {
					errs <- describe(res)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// TestRuntimesClose: Close stops the builder and drops what is ready;
// runs afterwards build their own runtime and still work, and Close may be
// called twice.
func TestRuntimesClose(t *testing.T) {
	base := runtime.NumGoroutine()
	p := NewRuntimes(2)
	runWith(t, p, presets.Balanced, `return 1`)
	p.waitReady(t)
	p.Close()
	p.Close()
	p.mu.Lock()
	ready := len(p.ready)
	p.mu.Unlock()
	if ready != 0 {
		t.Fatalf("%d runtimes kept after Close", ready)
	}
	if res := runWith(t, p, presets.Balanced, `return 2`); res.Status != StatusOK || string(res.Result) != "2" {
		t.Fatalf("run after Close: %s", describe(res))
	}
	settleGoroutines(t, base)
}

// TestRuntimesWarm: Warm builds on the caller's goroutine for the limits
// it is given; without a builder, a run takes the warmed runtime and
// nothing is built behind it.
func TestRuntimesWarm(t *testing.T) {
	base := runtime.NumGoroutine()
	p := NewRuntimes(1, WithoutBuilder())
	defer p.Close()
	l := limits(t, presets.Secure)
	p.Warm(l, false)
	p.mu.Lock()
	n := len(p.ready)
	p.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d runtimes ready after Warm, want 1", n)
	}
	if res := runWith(t, p, presets.Secure, `return typeof console`); res.Status != StatusOK || string(res.Result) != `"object"` {
		t.Fatalf("run on the warmed runtime: %s", describe(res))
	}
	p.mu.Lock()
	n, started := len(p.ready), p.started
	p.mu.Unlock()
	if n != 0 || started {
		t.Fatalf("after the run: %d ready, builder started %v; want 0 and false", n, started)
	}
	if res := runWith(t, p, presets.Secure, `return 2`); res.Status != StatusOK {
		t.Fatalf("run with nothing ready: %s", describe(res))
	}
	settleGoroutines(t, base)

	// Warming for other limits replaces what was ready.
	p.Warm(l, false)
	l.AllowConsole = false
	p.Warm(l, false)
	if res := runWith(t, p, presets.Secure, `return typeof console`, func(l *presets.Limits) { l.AllowConsole = false }); res.Status != StatusOK || string(res.Result) != `"undefined"` {
		t.Fatalf("run after warming without console: %s", describe(res))
	}
}
