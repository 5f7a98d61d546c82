package middleware_test

import (
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/sandbox"
)

// noWorkers makes worker processes impossible, as on a host that refuses
// namespaces: the worker command does not exist.
var noWorkers = middleware.WithSandboxOptions(sandbox.WithCommand("/nonexistent/codecall-worker"))

func presetConfig(name presets.Name) presets.Config {
	cfg := presets.Default()
	cfg.Preset = name
	cfg.VM, _ = presets.LimitsFor(name)
	return cfg
}

func TestLockedDownRefusesToStartWithoutWorkers(t *testing.T) {
	srv := planServer(t, nil)
	_, err := middleware.Wrap(srv, middleware.WithConfig(presetConfig(presets.LockedDown)), noWorkers)
	if err == nil {
		t.Fatal("Wrap started locked_down without worker processes")
	}
	for _, want := range []string{"locked_down", "sandboxed worker process", "vm.isolation: inprocess"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestSecureFallsBackLoudly(t *testing.T) {
	srv := planServer(t, nil)
	var logs mcptest.Buffer
	cc := wrap(t, srv, middleware.WithConfig(presetConfig(presets.Secure)), noWorkers,
		middleware.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "PLANS RUN IN THE SERVER'S OWN PROCESS") {
		t.Errorf("no loud warning at start-up; logs:\n%s", logs.String())
	}
	iso := cc.Isolation()
	if iso.Requested != presets.IsolationProcess || iso.Effective != presets.IsolationInProcess || iso.Fallback == "" {
		t.Errorf("Isolation() = %+v, want requested process, effective inprocess, with the reason", iso)
	}
	s := connect(t, srv)
	out, isErr := s.execute(map[string]any{"script": `return 1+1`})
	if isErr || out["status"] != "ok" {
		t.Errorf("the fallback must still run plans: %v", out)
	}
}

func TestInProcessNeedsNoWorkers(t *testing.T) {
	srv := planServer(t, nil)
	cfg := presetConfig(presets.LockedDown)
	cfg.VM.Isolation = presets.IsolationInProcess
	cc := wrap(t, srv, middleware.WithConfig(cfg), noWorkers)
	if iso := cc.Isolation(); iso.Effective != presets.IsolationInProcess || iso.Fallback != "" {
		t.Errorf("Isolation() = %+v", iso)
	}
}

// wrapIsolated wraps srv under a preset with process isolation, skipping
// where this host cannot start workers.
func wrapIsolated(t *testing.T, name presets.Name, mut func(*presets.Config)) *middleware.CodeCall {
	t.Helper()
	cfg := presetConfig(name)
	if mut != nil {
		mut(&cfg)
	}
	srv := planServer(t, nil)
	cc, err := middleware.Wrap(srv, middleware.WithConfig(cfg), middleware.WithLogger(slog.New(slog.NewTextHandler(discard{}, nil))))
	if err != nil {
		if strings.Contains(err.Error(), "cannot start one") {
			t.Skipf("worker processes are not available here: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// wrapInWorkers wraps srv under cfg, closed when the test ends, and skips
// the test where its plans would not run in worker processes.
func wrapInWorkers(t *testing.T, srv *server.MCPServer, cfg presets.Config) *middleware.CodeCall {
	t.Helper()
	cc, err := middleware.Wrap(srv, middleware.WithConfig(cfg), middleware.WithLogger(slog.New(slog.NewTextHandler(discard{}, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	if iso := cc.Isolation(); iso.Effective != presets.IsolationProcess {
		t.Skipf("worker processes are not available here: %s", iso.Fallback)
	}
	return cc
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestHostKillingPlansInWorkers sends, through codecall.execute in process
// isolation, the one-line plans that end a Go process running goja. The
// runtime's guards, which run in the worker too, answer most of them
// first with a RangeError the plan could catch; whatever gets past them
// ends as limit_exceeded or timeout. In every case the server keeps
// serving, the next plan works, and the pool comes back to its size.
func TestHostKillingPlansInWorkers(t *testing.T) {
	srv := planServer(t, nil)
	cfg := presetConfig(presets.Balanced)
	cfg.VM.Isolation = presets.IsolationProcess
	cfg.VM.Timeout = 2 * time.Second
	cc := wrapInWorkers(t, srv, cfg)
	s := connect(t, srv)
	tests := []struct{ name, script string }{
		{"repeat", `return 'x'.repeat(2 ** 30).length`},
		{"padEnd", `return ''.padEnd(2 ** 30, 'ab').length`},
		{"arraybuffer", `return new ArrayBuffer(2 ** 31).byteLength`},
		{"typed-array", `return new Float64Array(2 ** 28).length`},
		{"deep-json-parse", `return JSON.parse('['.repeat(1000000) + ']'.repeat(1000000))`},
		{"array-like-join", `return [].join.call({length: 2 ** 32 - 1}, ',').length`},
		{"array-like-index-of", `return [].indexOf.call({length: 2 ** 53 - 1}, 1)`},
		{"array-like-fill", `return [].fill.call({length: 2 ** 32 - 1}, 0).length`},
		{"array-from-length", `return Array.from({length: 1e9}).length`},
		{"string-doubling", `let s = 'x'; for (;;) s += s;`},
		{"infinite-loop", `for (;;) {}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, isErr := s.execute(map[string]any{"script": tc.script})
			st := out["status"]
			e, _ := out["error"].(map[string]any)
			msg := fmt.Sprint(e["message"])
			guarded := st == "runtime_error" && (e["name"] == "RangeError" || e["name"] == "SyntaxError") &&
				(strings.Contains(msg, "sandbox limit") || strings.Contains(msg, "deeper than"))
			if !isErr || (st != "limit_exceeded" && st != "timeout" && !guarded) {
				t.Errorf("status %v, want limit_exceeded, timeout, or a sandbox limit's RangeError: %v", st, out)
			}
			out, isErr = s.execute(map[string]any{"script": `return 1+1`})
			if isErr || out["status"] != "ok" || out["result"] != float64(2) {
				t.Fatalf("the next plan failed: %v", out)
			}
		})
	}
	waitFor(t, func() bool {
		p := cc.Isolation().Pool
		// The session's last worker may wait for its next plan (parked).
		return p != nil && p.Warm == cfg.Sandbox.PoolSize && p.Live == cfg.Sandbox.PoolSize+p.Parked
	}, "the worker pool back to its size")
}

// TestWorkerDeathThroughExecute kills the worker processes while a plan
// waits on a tool: the client gets limit_exceeded, and the server goes on.
func TestWorkerDeathThroughExecute(t *testing.T) {
	var sleeps atomic.Int32
	srv := planServer(t, &sleeps)
	wrapInWorkers(t, srv, presetConfig(presets.Secure))
	s := connect(t, srv)
	killed := make(chan []int, 1)
	go func() {
		// Once the plan waits in its tool call, its worker is running.
		for deadline := time.Now().Add(20 * time.Second); sleeps.Load() == 0 && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		pids := childPIDs(t)
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		killed <- pids
	}()
	out, isErr := s.execute(map[string]any{"script": `await callTool("data.sleep", {ms: 3000}); return 1`})
	if sleeps.Load() == 0 {
		t.Fatalf("the plan never reached its tool call: %v", out)
	}
	if e, _ := out["error"].(map[string]any); !isErr || out["status"] != "limit_exceeded" || e["limit"] != "worker" && e["limit"] != "memoryBytes" {
		t.Errorf("status %v, want limit_exceeded: %v", out["status"], out)
	}
	// The warm workers died with it. Once the pool has reaped them it
	// knows, and the next plan runs on a new one (a run handed to a worker
	// killed a moment earlier, before it was reaped, would fail as this
	// one did: that is the cause this test is about, not the next plan's).
	pids := <-killed
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !slices.ContainsFunc(childPIDs(t), func(pid int) bool { return slices.Contains(pids, pid) }) {
			break
		}
	}
	out, isErr = s.execute(map[string]any{"script": `return 1+1`})
	if isErr || out["result"] != float64(2) {
		t.Fatalf("the next plan failed: %v", out)
	}
}

// childPIDs lists this process's children.
func childPIDs(t *testing.T) []int {
	var out []int
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}
