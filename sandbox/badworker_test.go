//go:build linux

package sandbox

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/vm"
)

// badWorkerArg starts the test binary as a worker that confines itself,
// reports ready, takes its run, and then misbehaves as its plan's script
// says: the server's hard limits are tested against workers that do what
// no runtime would.
const badWorkerArg = "-codecall-sandbox-bad-worker"

func badWorkerMain() int {
	conf, err := confine(parseWorkerArgs(os.Args[2:]))
	if err != nil {
		fmt.Fprintln(os.Stderr, "confine:", err)
		return 3
	}
	out := bufio.NewWriter(os.Stdout)
	var wmu sync.Mutex
	send := func(m *message) {
		wmu.Lock()
		defer wmu.Unlock()
		_ = writeFrame(out, m)
		_ = out.Flush()
	}
	send(&message{T: msgReady, Confinement: &conf})
	in := bufio.NewReader(os.Stdin)
	m, err := readFrame(in, maxFrameToWorker)
	if err != nil {
		return 5
	}
	// The server's replies, read as they come so that it never blocks on
	// a full pipe; those nobody waits for are dropped.
	replies := make(chan *message, 1024)
	go func() {
		for {
			r, err := readFrame(in, maxFrameToWorker)
			if err != nil {
				close(replies)
				return
			}
			select {
			case replies <- r:
			default:
			}
		}
	}()
	await := func(id uint64) bool {
		for r := range replies {
			if r.T == msgReply && r.ID == id {
				return true
			}
		}
		return false
	}
	call := func(id uint64, name string) {
		send(&message{T: msgCall, ID: id, Name: name, Input: json.RawMessage(`{}`)})
	}
	result := func(res *vm.Result) int {
		send(&message{T: msgResult, Result: res})
		return 0
	}
	okResult := func(v string) *vm.Result {
		return &vm.Result{Status: vm.StatusOK, Result: json.RawMessage(v), ToolTrace: []vm.TraceEntry{}}
	}
	limits := m.Run.Options.Limits
	switch strings.Trim(m.Run.Script, "'") {
	case "hang":
		time.Sleep(time.Hour) // a plan stuck where nothing can interrupt it
	case "oom":
		fmt.Fprintln(os.Stderr, "fatal error: runtime: out of memory")
		return 2
	case "stack":
		fmt.Fprintln(os.Stderr, "runtime: goroutine stack exceeds 1000000000-byte limit\nfatal error: stack overflow")
		return 2
	case "huge":
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], 1<<31)
		_, _ = out.Write(hdr[:])
		_ = out.Flush()
		time.Sleep(time.Hour)
	case "garbage":
		_, _ = out.Write([]byte{0, 0, 0, 3, 'x', 'y', 'z'})
		_ = out.Flush()
		time.Sleep(time.Hour)
	case "big-result":
		send(&message{T: msgResult, Result: &vm.Result{Status: vm.StatusOK, Result: []byte(`"` + strings.Repeat("x", 4<<20) + `"`)}})
		time.Sleep(time.Hour)
	case "spin":
		// Burns CPU and ignores SIGXCPU, as the Go runtime does unless
		// asked: the kernel's hard CPU limit kills it.
		for range 2 {
			go func() {
				for {
				}
			}()
		}
		time.Sleep(time.Hour)

	// Workers that speak the protocol and lie in it.
	case "serial-calls": // 1,000 tool calls, each once the last is answered
		for i := range uint64(1000) {
			call(i+1, "echo")
			if !await(i + 1) {
				return 7
			}
		}
		return result(okResult("1"))
	case "discover-then-calls": // 50 discovery requests, then tool calls
		for i := range uint64(1000) {
			if i < 50 {
				send(&message{T: msgDiscover, ID: i + 1, Name: vm.DiscoverSearch, Input: json.RawMessage(`{"query":"x"}`)})
			} else {
				call(i+1, "echo")
			}
			if !await(i + 1) {
				return 7
			}
		}
		return result(okResult("1"))
	case "burst-calls": // 1,000 tool calls at once
		for i := range uint64(1000) {
			call(i+1, "sleep")
		}
		time.Sleep(time.Hour)
	case "reused-id":
		call(1, "sleep")
		call(1, "sleep")
		time.Sleep(time.Hour)
	case "bad-input":
		send(&message{T: msgCall, ID: 1, Name: "echo", Input: json.RawMessage(`[1]`)})
		time.Sleep(time.Hour)
	case "long-name":
		send(&message{T: msgGet, ID: 1, Name: strings.Repeat("n", 300)})
		time.Sleep(time.Hour)
	case "forged-level":
		send(&message{T: msgLog, Name: "info", Message: "fine"})
		send(&message{T: msgLog, Name: "pwned", Message: "a level no client knows"})
		time.Sleep(time.Hour)
	case "log-flood":
		for range 1000 {
			send(&message{T: msgLog, Name: "info", Message: "again"})
		}
		time.Sleep(time.Hour)
	case "big-notify":
		send(&message{T: msgNotify, Name: "progress", Data: json.RawMessage(`"` + strings.Repeat("x", int(limits.MaxLogBytes)) + `"`)})
		time.Sleep(time.Hour)
	case "cancel-flood":
		for i := range uint64(10) {
			send(&message{T: msgCancel, ID: i + 1})
		}
		time.Sleep(time.Hour)
	case "get-flood":
		for i := range 100000 {
			send(&message{T: msgGet, ID: uint64(i + 1), Name: fmt.Sprint("t", i)})
		}
		time.Sleep(time.Hour)
	case "unexpected":
		send(&message{T: msgReady, Confinement: &conf})
		time.Sleep(time.Hour)
	case "forged-trace":
		call(1, "echo")
		await(1)
		res := okResult("1")
		res.ToolTrace = []vm.TraceEntry{{ToolName: "echo", OK: true}, {ToolName: "wire_money", OK: true, DurationMs: 3}}
		res.Metrics = vm.Metrics{ToolCalls: 2}
		return result(res)
	case "forged-metrics":
		call(1, "echo")
		await(1)
		res := okResult("1")
		res.ToolTrace = []vm.TraceEntry{{ToolName: "never_ran", Error: "CANCELLED"}, {ToolName: "echo", OK: false, Error: "NOT_FOUND", DurationMs: 999999}}
		res.Metrics = vm.Metrics{ToolCalls: 57, DurationMs: 999999}
		return result(res)
	case "big-logs":
		res := okResult("1")
		for range 100 {
			res.Logs = append(res.Logs, vm.LogEntry{Level: "info", Message: strings.Repeat("l", 1<<10)})
		}
		return result(res)
	case "forged-log-level":
		res := okResult("1")
		res.Logs = []vm.LogEntry{{Level: "root", Message: "hello"}}
		return result(res)
	case "result-at-budget":
		return result(okResult(`"` + strings.Repeat("x", int(limits.MaxResultBytes)-2) + `"`))
	case "result-over-budget":
		return result(okResult(`"` + strings.Repeat("x", int(limits.MaxResultBytes)-1) + `"`))
	}
	fmt.Fprintln(os.Stderr, "something else went wrong")
	return 9
}

func withMarker(m string) Option { return func(c *poolConfig) { c.marker = m } }

// TestHardLimits runs plans in workers that misbehave: each run ends with
// the status its failure maps to, promptly, the worker is gone, and the
// pool goes on.
func TestHardLimits(t *testing.T) {
	p := newTestPool(t, withMarker(badWorkerArg), WithSize(1))
	l := limits(t)
	l.Timeout = 500 * time.Millisecond
	tests := []struct {
		script string
		status vm.Status
		limit  string
		msg    string
	}{
		{"'hang'", vm.StatusTimeout, "", "did not stop; its sandbox worker process was killed"},
		{"'oom'", vm.StatusLimitExceeded, vm.LimitMemory, "ran out of memory"},
		{"'stack'", vm.StatusLimitExceeded, vm.LimitStack, "overflowed the stack"},
		{"'huge'", vm.StatusLimitExceeded, LimitWorker, "broke the bridge protocol"},
		{"'garbage'", vm.StatusLimitExceeded, LimitWorker, "broke the bridge protocol"},
		{"'big-result'", vm.StatusLimitExceeded, LimitWorker, "broke the bridge protocol"},
		{"'other'", vm.StatusLimitExceeded, LimitWorker, "ended abnormally (exit status 9: something else went wrong)"},
	}
	// Only the hang ends at the deadline; every other failure must be
	// seen for what it is, so it runs under a deadline a loaded machine
	// does not reach first (the status then proves the cause).
	long := l
	long.Timeout = 30 * time.Second
	for _, tc := range tests {
		t.Run(strings.Trim(tc.script, "'"), func(t *testing.T) {
			lim := long
			if tc.status == vm.StatusTimeout {
				lim = l
			}
			start := time.Now()
			res := run(t, p, newTestHost(), tc.script, lim)
			if res.Status != tc.status || res.Error == nil || res.Error.Limit != tc.limit || !strings.Contains(res.Error.Message, tc.msg) {
				t.Fatalf("got %s %+v, want %s %q %q", res.Status, res.Error, tc.status, tc.limit, tc.msg)
			}
			if d := time.Since(start); d > lim.Timeout+killGrace+exitGrace {
				t.Errorf("the run took %v", d)
			}
		})
	}
	settle(t, p, 1)
	want := map[string]int64{causeTimeout: 1, causeMemory: 1, causeStack: 1, causeProtocol: 3, causeCrashed: 1}
	if got := p.Stats().Kills; !maps.Equal(got, want) {
		t.Errorf("kills %v, want %v", got, want)
	}
}

func withFrameRate(r float64) Option { return func(c *poolConfig) { c.frameRate = r } }

// TestUntrustedWorker runs plans in workers that speak the protocol and
// lie in it, as a compromised worker or a wrong binary would: the server
// serves no more than the run's budgets, forwards nothing the runtime
// would not, reports the calls it served itself, and kills the worker for
// the first frame no runtime would send.
func TestUntrustedWorker(t *testing.T) {
	p := newTestPool(t, withMarker(badWorkerArg), WithSize(1), withFrameRate(1000))
	l := limits(t) // secure: 100 tool calls, 4 at once, 64 KiB of logs, 256 KiB of result
	l.Timeout = 2 * time.Second
	broke := func(detail string) func(*testing.T, *vm.Result, *mcptest.Host) {
		return func(t *testing.T, res *vm.Result, _ *mcptest.Host) {
			t.Helper()
			if res.Status != vm.StatusLimitExceeded || res.Error == nil || res.Error.Limit != LimitWorker ||
				!strings.Contains(res.Error.Message, "broke the bridge protocol ("+detail) {
				t.Fatalf("got %s %+v, want limit_exceeded worker, broke the bridge protocol (%s", res.Status, res.Error, detail)
			}
		}
	}
	calls := func(n int) func(*testing.T, *vm.Result, *mcptest.Host) {
		return func(t *testing.T, res *vm.Result, h *mcptest.Host) {
			t.Helper()
			if got := len(h.Calls()); got != n {
				t.Errorf("the host served %d tool calls, want %d", got, n)
			}
			if len(res.ToolTrace) != n || res.Metrics.ToolCalls != n {
				t.Errorf("toolTrace has %d entries and metrics %d tool calls, want the %d the server served", len(res.ToolTrace), res.Metrics.ToolCalls, n)
			}
		}
	}
	violations := 0
	tests := []struct {
		script string
		checks []func(*testing.T, *vm.Result, *mcptest.Host)
	}{
		{"serial-calls", append([]func(*testing.T, *vm.Result, *mcptest.Host){broke("more than 100 tool calls, this preset's maxToolCalls")}, calls(100))},
		{"discover-then-calls", append([]func(*testing.T, *vm.Result, *mcptest.Host){broke("more than 100 tool calls")}, calls(50))},
		{"burst-calls", []func(*testing.T, *vm.Result, *mcptest.Host){broke("more than 4 tool calls in flight at once, this preset's maxConcurrency"),
			func(t *testing.T, res *vm.Result, h *mcptest.Host) {
				if len(h.Calls()) > 4 || h.Peak() > 4 {
					t.Errorf("the host saw %d calls, %d at once; the run allows 4 at once", len(h.Calls()), h.Peak())
				}
			}}},
		{"reused-id", []func(*testing.T, *vm.Result, *mcptest.Host){broke("a tool call with an id already in use")}},
		{"bad-input", []func(*testing.T, *vm.Result, *mcptest.Host){broke("a tool input that is not a JSON object"), calls(0)}},
		{"long-name", []func(*testing.T, *vm.Result, *mcptest.Host){broke("getTool with a name of 300 bytes")}},
		{"forged-level", []func(*testing.T, *vm.Result, *mcptest.Host){broke(`mcpLog at level "pwned", which is not an MCP logging level`),
			func(t *testing.T, _ *vm.Result, h *mcptest.Host) {
				if got := h.Logs(); len(got) != 1 || got[0] != "info|fine|" {
					t.Errorf("the host was sent logs %q, want only the one at a real level", got)
				}
			}}},
		{"log-flood", []func(*testing.T, *vm.Result, *mcptest.Host){broke("more than 50 mcpLog and mcpNotify messages"),
			func(t *testing.T, _ *vm.Result, h *mcptest.Host) {
				if got := len(h.Logs()); got != 50 {
					t.Errorf("the host was sent %d logs, want the runtime's 50", got)
				}
			}}},
		{"big-notify", []func(*testing.T, *vm.Result, *mcptest.Host){broke("mcpLog and mcpNotify messages over this preset's maxLogBytes (65536)"),
			func(t *testing.T, _ *vm.Result, h *mcptest.Host) {
				if got := h.Notes(); len(got) != 0 {
					t.Errorf("the host was sent %d notifications", len(got))
				}
			}}},
		{"cancel-flood", []func(*testing.T, *vm.Result, *mcptest.Host){broke("more cancellations than requests")}},
		{"get-flood", []func(*testing.T, *vm.Result, *mcptest.Host){broke("more than 1000 frames a second")}},
		{"unexpected", []func(*testing.T, *vm.Result, *mcptest.Host){broke(`an unexpected "ready" message`)}},
		{"forged-trace", []func(*testing.T, *vm.Result, *mcptest.Host){broke("a toolTrace that claims tool calls the server did not serve"), calls(1)}},
		{"big-logs", []func(*testing.T, *vm.Result, *mcptest.Host){broke("a result no runtime would produce: logs over maxLogBytes (65536)")}},
		{"forged-log-level", []func(*testing.T, *vm.Result, *mcptest.Host){broke(`a result no runtime would produce: a log entry at an unknown level "root"`)}},
		{"result-over-budget", []func(*testing.T, *vm.Result, *mcptest.Host){broke("a result no runtime would produce: a result of 262145 bytes, over maxResultBytes (262144)")}},
		{"result-at-budget", []func(*testing.T, *vm.Result, *mcptest.Host){func(t *testing.T, res *vm.Result, _ *mcptest.Host) {
			if res.Status != vm.StatusOK || int64(len(res.Result)) != l.MaxResultBytes {
				t.Errorf("got %s with %d bytes of result, want ok with %d", res.Status, len(res.Result), l.MaxResultBytes)
			}
		}}},
		{"forged-metrics", []func(*testing.T, *vm.Result, *mcptest.Host){func(t *testing.T, res *vm.Result, h *mcptest.Host) {
			// The server's own record of the one call it served, and the
			// worker's claim of one it queued and never sent, as a failure.
			want := []vm.TraceEntry{{ToolName: "never_ran", Error: "CANCELLED"}, {ToolName: "echo", OK: true}}
			if res.Status != vm.StatusOK || len(res.ToolTrace) != 2 || res.Metrics.ToolCalls != 2 || len(h.Calls()) != 1 {
				t.Fatalf("got %s, trace %+v, metrics %+v, %d calls served", res.Status, res.ToolTrace, res.Metrics, len(h.Calls()))
			}
			for i, e := range res.ToolTrace {
				if e.ToolName != want[i].ToolName || e.OK != want[i].OK || e.Error != want[i].Error || e.DurationMs > 10000 {
					t.Errorf("trace[%d] = %+v, want %+v with the server's duration", i, e, want[i])
				}
			}
			if res.Metrics.DurationMs > 10000 {
				t.Errorf("metrics %+v: the worker's duration, not the server's", res.Metrics)
			}
		}}},
	}
	for _, tc := range tests {
		t.Run(tc.script, func(t *testing.T) {
			host := newTestHost()
			start := time.Now()
			res := run(t, p, host, "'"+tc.script+"'", l)
			for _, check := range tc.checks {
				check(t, res, host)
			}
			if res.Status == vm.StatusLimitExceeded {
				violations++
			}
			if d := time.Since(start); d > l.Timeout {
				t.Errorf("the run took %v: the violation was not acted on at once", d)
			}
		})
	}
	settle(t, p, 1)
	if got := p.Stats().Kills[causeProtocol]; got != int64(violations) {
		t.Errorf("kills %v: %d protocol violations, want %d", p.Stats().Kills, got, violations)
	}
}
