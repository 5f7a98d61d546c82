package sandbox

import (
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/vm"
)

// TestClassify maps every way a worker can end to its status, limit,
// message and counter label: the server's own reasons first, then what the
// worker's exit says, then what its resource usage says of a SIGKILL the
// server did not send.
func TestClassify(t *testing.T) {
	b := budgets{timeout: 3500 * time.Millisecond, cpu: 5 * time.Second, memory: 128 << 20, cgroupMemory: 384 << 20}
	killed := ending{code: -1, sigkill: true, cpu: 300 * time.Millisecond, maxRSS: 40 << 20}
	tests := []struct {
		name         string
		cause, broke string
		e            ending
		status       vm.Status
		limit        string
		msg          string
		label        string
	}{
		{"our deadline", causeTimeout, "", killed, vm.StatusTimeout, "", "ran past its 3.5s timeout", causeTimeout},
		{"client cancelled", causeCancelled, "", killed, vm.StatusCancelled, "", "request was cancelled", causeCancelled},
		{"protocol", causeProtocol, "more than 100 tool calls", ending{code: 0}, vm.StatusLimitExceeded, LimitWorker,
			"broke the bridge protocol (more than 100 tool calls)", causeProtocol},
		{"protocol, unreadable frame", causeProtocol, "", killed, vm.StatusLimitExceeded, LimitWorker, "a frame too large or malformed", causeProtocol},
		{"SIGXCPU handled", "", "", ending{code: exitCPUTime, cpu: 5 * time.Second}, vm.StatusTimeout, "", "used up its CPU time", causeCPU},
		{"SIGXCPU as our deadline fires", causeTimeout, "", ending{code: exitCPUTime, cpu: 5 * time.Second}, vm.StatusTimeout, "", "used up its CPU time", causeCPU},
		{"hard CPU limit", "", "", ending{code: -1, sigkill: true, cpu: 6 * time.Second, maxRSS: 300 << 20}, vm.StatusTimeout, "", "spent 6.0 s of CPU against a cap of 5s", causeCPU},
		{"runtime out of memory", "", "", ending{code: 2, stderr: "fatal error: runtime: out of memory"}, vm.StatusLimitExceeded, vm.LimitMemory, "ran out of memory", causeMemory},
		{"OOM killer", "", "", ending{code: -1, sigkill: true, cpu: time.Second, maxRSS: 200 << 20}, vm.StatusLimitExceeded, vm.LimitMemory,
			"grew to 200 MiB, past the plan's memory budget of 128 MiB", causeMemory},
		{"cgroup OOM kill", "", "", ending{code: -1, sigkill: true, cpu: 6 * time.Second, maxRSS: 90 << 20, oomKill: true}, vm.StatusLimitExceeded, vm.LimitMemory,
			"at the cap of its cgroup (memory.max, 384 MiB)", causeMemory},
		{"stack overflow", "", "", ending{code: 2, stderr: "runtime: goroutine stack exceeds 1000000000-byte limit"}, vm.StatusLimitExceeded, vm.LimitStack, "overflowed the stack", causeStack},
		{"killed from outside", "", "", killed, vm.StatusLimitExceeded, LimitWorker, "killed from outside", causeKilled},
		{"killed, no CPU cap", "", "", ending{code: -1, sigkill: true, cpu: time.Hour}, vm.StatusLimitExceeded, LimitWorker, "killed from outside", causeKilled},
		{"crashed", "", "", ending{code: 9, exit: "exit status 9: boom"}, vm.StatusLimitExceeded, LimitWorker, "ended abnormally (exit status 9: boom)", causeCrashed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bb := b
			if tc.name == "killed, no CPU cap" {
				bb.cpu = 0
			}
			status, info, label := classify(tc.cause, tc.broke, tc.e, bb)
			if status != tc.status || info.Limit != tc.limit || !strings.Contains(info.Message, tc.msg) || label != tc.label {
				t.Errorf("got %s %q %q (%s), want %s %q %q (%s)", status, info.Limit, info.Message, label, tc.status, tc.limit, tc.msg, tc.label)
			}
		})
	}
}

// TestReconcile builds toolTraces from the server's record and a worker's
// claims: the server's entries in the worker's order, never-sent calls as
// failures, TIMEOUT for a withdrawn call, and no claimed success the server
// did not serve.
func TestReconcile(t *testing.T) {
	served := []vm.TraceEntry{
		{ToolName: "b", DurationMs: 2, OK: true},
		{ToolName: "a", DurationMs: 1, OK: true},
		{ToolName: "c", DurationMs: 3, Error: "CANCELLED"},
		{ToolName: "a", DurationMs: 4, Error: "NOT_FOUND"},
	}
	tests := []struct {
		name    string
		claimed []vm.TraceEntry
		max     int
		want    []vm.TraceEntry
		ok      bool
	}{
		{"the plan's order", []vm.TraceEntry{{ToolName: "a", OK: true}, {ToolName: "b", OK: true}, {ToolName: "c"}, {ToolName: "a"}}, 100,
			[]vm.TraceEntry{served[1], served[0], served[2], served[3]}, true},
		{"the worker's outcomes and durations are ignored", []vm.TraceEntry{{ToolName: "a", Error: "X", DurationMs: 99}, {ToolName: "a", OK: true}, {ToolName: "b", Error: "Y"}, {ToolName: "c", OK: true}}, 100,
			[]vm.TraceEntry{served[1], served[3], served[0], served[2]}, true},
		{"a withdrawn call cut by the deadline", []vm.TraceEntry{{ToolName: "b"}, {ToolName: "a"}, {ToolName: "c", Error: "TIMEOUT"}, {ToolName: "a"}}, 100,
			[]vm.TraceEntry{served[0], served[1], {ToolName: "c", DurationMs: 3, Error: "TIMEOUT"}, served[3]}, true},
		{"never sent", []vm.TraceEntry{{ToolName: "b"}, {ToolName: "a"}, {ToolName: "c"}, {ToolName: "a"}, {ToolName: "d", Error: "CANCELLED", DurationMs: 50}, {ToolName: "e", Error: "lower case"}}, 100,
			append(append([]vm.TraceEntry{}, served...), vm.TraceEntry{ToolName: "d", Error: "CANCELLED"}, vm.TraceEntry{ToolName: "e", Error: "CANCELLED"}), true},
		{"left out", []vm.TraceEntry{{ToolName: "c"}}, 100, []vm.TraceEntry{served[2], served[0], served[1], served[3]}, true},
		{"a success never served", []vm.TraceEntry{{ToolName: "b"}, {ToolName: "a"}, {ToolName: "c"}, {ToolName: "a"}, {ToolName: "a", OK: true}}, 100, nil, false},
		{"over the budget", []vm.TraceEntry{{ToolName: "x"}}, 4, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := reconcile(served, tc.claimed, tc.max)
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v (%+v)", ok, tc.ok, got)
			}
			if !ok {
				return
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("[%d] = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestFrameBudget(t *testing.T) {
	b := newFrameBudget(10)
	now := b.last
	for i := range 10 {
		if !b.take(now) {
			t.Fatalf("frame %d of the burst refused", i)
		}
	}
	if b.take(now) {
		t.Fatal("a frame past the burst was taken")
	}
	if !b.take(now.Add(100*time.Millisecond)) || b.take(now.Add(100*time.Millisecond)) {
		t.Fatal("a tenth of a second did not refill exactly one frame")
	}
	if !b.take(now.Add(time.Hour)) || b.tokens > 10 {
		t.Fatalf("an idle hour refilled %v frames; the burst is 10", b.tokens+1)
	}
}

// TestFirstLineSkipsSanitizerWarnings: the exit a crashed worker reports
// is the runtime's first line, not the race detector's warning before it.
func TestFirstLineSkipsSanitizerWarnings(t *testing.T) {
	h := &headBuffer{max: 4 << 10}
	_, _ = h.Write([]byte("==1==WARNING: reading executable name failed with errno 2, some stack frames may not be symbolized\n\nfatal error: boom\n"))
	if got := h.firstLine(); got != "fatal error: boom" {
		t.Errorf("first line %q", got)
	}
	h = &headBuffer{max: 4 << 10}
	_, _ = h.Write([]byte("==x==WARNING: not the detector's\n"))
	if got := h.firstLine(); got != "==x==WARNING: not the detector's" {
		t.Errorf("first line %q", got)
	}
}
