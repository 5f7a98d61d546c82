//go:build linux

package sandbox

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

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
	_ = writeFrame(out, &message{T: msgReady, Confinement: &conf})
	_ = out.Flush()
	m, err := readFrame(bufio.NewReader(os.Stdin), maxFrameToWorker)
	if err != nil {
		return 5
	}
	switch {
	case strings.Contains(m.Run.Script, "hang"):
		time.Sleep(time.Hour) // a plan stuck where nothing can interrupt it
	case strings.Contains(m.Run.Script, "oom"):
		fmt.Fprintln(os.Stderr, "fatal error: runtime: out of memory")
		return 2
	case strings.Contains(m.Run.Script, "stack"):
		fmt.Fprintln(os.Stderr, "runtime: goroutine stack exceeds 1000000000-byte limit\nfatal error: stack overflow")
		return 2
	case strings.Contains(m.Run.Script, "huge"):
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], 1<<31)
		_, _ = out.Write(hdr[:])
		_ = out.Flush()
		time.Sleep(time.Hour)
	case strings.Contains(m.Run.Script, "garbage"):
		_, _ = out.Write([]byte{0, 0, 0, 3, 'x', 'y', 'z'})
		_ = out.Flush()
		time.Sleep(time.Hour)
	case strings.Contains(m.Run.Script, "big-result"):
		_ = writeFrame(out, &message{T: msgResult, Result: &vm.Result{Status: vm.StatusOK, Result: []byte(`"` + strings.Repeat("x", 4<<20) + `"`)}})
		_ = out.Flush()
		time.Sleep(time.Hour)
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
	for _, tc := range tests {
		t.Run(strings.Trim(tc.script, "'"), func(t *testing.T) {
			start := time.Now()
			res := run(t, p, newTestHost(), tc.script, l)
			if res.Status != tc.status || res.Error == nil || res.Error.Limit != tc.limit || !strings.Contains(res.Error.Message, tc.msg) {
				t.Fatalf("got %s %+v, want %s %q %q", res.Status, res.Error, tc.status, tc.limit, tc.msg)
			}
			if d := time.Since(start); d > l.Timeout+killGrace+exitGrace {
				t.Errorf("the run took %v", d)
			}
		})
	}
	settle(t, p, 1)
	t.Logf("kills: %v", p.Stats().Kills)
}
