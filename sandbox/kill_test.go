//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

// TestWorkerKilledFromOutside kills every worker process while a plan
// waits on a tool: the run ends with limit_exceeded, the pool replaces the
// dead warm workers, and the next plan works.
func TestWorkerKilledFromOutside(t *testing.T) {
	p := newTestPool(t)
	killed := make(chan []int, 1)
	host := newTestHost()
	go func() {
		// Once the plan waits in its tool call, its worker is running.
		for deadline := time.Now().Add(20 * time.Second); len(host.Calls()) == 0 && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		var pids []int
		for pid := range children(t) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			pids = append(pids, pid)
		}
		killed <- pids
	}()
	res := run(t, p, host, "await callTool('sleep', {}); return 1", limits(t))
	// The warm workers died too; once they are reaped the pool knows.
	pids := <-killed
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		kids, gone := children(t), true
		for _, pid := range pids {
			if _, ok := kids[pid]; ok {
				gone = false
			}
		}
		if gone {
			break
		}
	}
	if res.Status != vm.StatusLimitExceeded || res.Error == nil || res.Error.Limit != LimitWorker || !strings.Contains(res.Error.Message, "killed from outside") {
		t.Fatalf("status %s %+v, want limit_exceeded worker (killed from outside)", res.Status, res.Error)
	}
	if len(res.ToolTrace) != 1 || res.ToolTrace[0].ToolName != "sleep" {
		t.Errorf("the server's own trace of the dead run: %+v", res.ToolTrace)
	}
	if got := run(t, p, newTestHost(), "return 2", limits(t)); got.Status != vm.StatusOK {
		t.Fatalf("next run: %s %+v", got.Status, got.Error)
	}
	if k := p.Stats().Kills; k[causeKilled] != 1 || len(k) != 1 {
		t.Errorf("kills %v", k)
	}
}

// TestKernelMemoryCap gives the runtime's own memory budget no say (16 GiB)
// and lets the kernel's cap on the worker (RLIMIT_AS from a 64 MiB pool
// budget) stop a plan that keeps what it allocates.
func TestKernelMemoryCap(t *testing.T) {
	if raceEnabled {
		t.Skip("RLIMIT_AS is not set in race-detector builds (their shadow memory needs terabytes of address space)")
	}
	pl, _ := presets.LimitsFor(presets.Balanced)
	pl.MemoryBytes = 64 << 20
	pl.Timeout = 30 * time.Second
	p := newTestPool(t, WithLimits(pl))
	l := pl
	l.MemoryBytes = 16 << 30
	script := "const keep = []; for (;;) keep.push('x'.repeat(1 << 24) + keep.length)"
	rules := ast.RulesFor(l)
	checked, err := ast.Validate(script, rules)
	if err != nil {
		t.Fatal(err)
	}
	res := p.Run(context.Background(), script, checked, rules, newTestHost(), vm.Options{RunID: "m", Limits: l, Context: json.RawMessage(`{}`)})
	if res.Status != vm.StatusLimitExceeded || res.Error == nil || res.Error.Limit != vm.LimitMemory {
		t.Fatalf("status %s %+v, want limit_exceeded memoryBytes", res.Status, res.Error)
	}
	t.Logf("%s", res.Error.Message)
	if got := run(t, p, newTestHost(), "return 2", limits(t)); got.Status != vm.StatusOK {
		t.Fatalf("next run: %s %+v", got.Status, got.Error)
	}
	if k := p.Stats().Kills; k[causeMemory] != 1 || len(k) != 1 {
		t.Errorf("kills %v, want one memory kill", k)
	}
}

// cpuCappedPool is a pool whose workers get the smallest CPU-time cap (2
// CPU-seconds, from a 100 ms pool timeout), with runs that may take 30 s
// of wall-clock time: a plan that burns CPU meets the kernel's cap long
// before its own deadline or the server's.
func cpuCappedPool(t *testing.T, opts ...Option) (*Pool, presets.Limits) {
	pl, _ := presets.LimitsFor(presets.Balanced)
	pl.Timeout = 100 * time.Millisecond
	p := newTestPool(t, append([]Option{WithLimits(pl), WithSize(1)}, opts...)...)
	if c := p.Confinement().CPUSeconds; c != 2 {
		t.Fatalf("the workers' CPU cap is %d s, want 2", c)
	}
	l, _ := presets.LimitsFor(presets.Balanced) // loops allowed
	l.Timeout = 30 * time.Second
	return p, l
}

// TestCPUTimeCap runs plans that spend their CPU time in real workers: the
// soft RLIMIT_CPU sends SIGXCPU, the worker exits with exitCPUTime, and
// the run says the plan used up its CPU time, whether the CPU went into
// the plan's own loop or into the garbage collector. It is not a memory
// kill, and not a kill from outside.
func TestCPUTimeCap(t *testing.T) {
	p, l := cpuCappedPool(t)
	for _, script := range []string{
		"for (;;) {}",
		"for (;;) { const a = []; for (let i = 0; i < 1000; i++) a.push({i, s: 'x' + i}) }",
	} {
		start := time.Now()
		res := run(t, p, newTestHost(), script, l)
		if res.Status != vm.StatusTimeout || res.Error == nil || !strings.Contains(res.Error.Message, "used up its CPU time") {
			t.Fatalf("%s: got %s %+v, want timeout (CPU time)", script, res.Status, res.Error)
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("%s: the run took %v; the CPU cap is 2 s", script, d)
		}
		t.Logf("%s: %s", script, res.Error.Message)
	}
	if k := p.Stats().Kills; k[causeCPU] != 2 || len(k) != 1 {
		t.Errorf("kills %v, want two CPU kills", k)
	}
}

// TestCPUTimeHardCap runs a worker that ignores SIGXCPU: the kernel kills
// it at the hard limit, and the server tells the CPU kill from a kill from
// outside by the CPU time the dead process used.
func TestCPUTimeHardCap(t *testing.T) {
	p, l := cpuCappedPool(t, withMarker(badWorkerArg))
	res := run(t, p, newTestHost(), "'spin'", l)
	if res.Status != vm.StatusTimeout || res.Error == nil || !strings.Contains(res.Error.Message, "used up its CPU time") {
		t.Fatalf("got %s %+v, want timeout (CPU time)", res.Status, res.Error)
	}
	if k := p.Stats().Kills; k[causeCPU] != 1 || len(k) != 1 {
		t.Errorf("kills %v, want one CPU kill", k)
	}
}
