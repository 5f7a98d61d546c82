//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codecall-go/codecall/vm"
)

// children lists this process's child processes with their states.
func children(t testing.TB) map[int]string {
	t.Helper()
	out := map[int]string{}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(f)
			out[pid] = procState(pid)
		}
	}
	return out
}

// procState returns the state letter of a process (Z for a zombie).
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "?"
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return "?"
}

func openFDs(t testing.TB) int {
	t.Helper()
	e, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(e)
}

// settle waits until the pool is back to its size with no other child
// process, and no zombie.
func settle(t *testing.T, p *Pool, want int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		kids := children(t)
		zombies := 0
		for _, st := range kids {
			if st == "Z" {
				zombies++
			}
		}
		st := p.Stats()
		if len(kids) == want && st.Warm == want && st.Live == want && zombies == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pool did not settle: %d children %v (want %d), %d zombies, stats %+v", len(kids), kids, want, zombies, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestNoLeaks(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 worker processes; not in -short")
	}
	// One session sends every run; its limits are the pool's, so that
	// the burst queues rather than being refused.
	p := newTestPool(t, WithSize(2), WithMaxWorkers(4), WithQueueTimeout(time.Minute), WithMaxRunningPerSession(4), WithMaxQueuedPerSession(64))
	settle(t, p, 2)
	fds0 := openFDs(t)
	host := newTestHost()
	l := limits(t)

	t.Run("consecutive", func(t *testing.T) {
		for i := range 1000 {
			res := run(t, p, host, "const r = await callTool('echo', {i: 1}); return r.i + 1", l)
			if res.Status != vm.StatusOK || string(res.Result) != "2" {
				t.Fatalf("run %d: %s %s %+v", i, res.Status, res.Result, res.Error)
			}
		}
		settle(t, p, 2)
	})
	t.Run("burst", func(t *testing.T) {
		const n = 64
		var wg sync.WaitGroup
		errs := make(chan string, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := run(t, p, host, fmt.Sprintf("return %d", i), l)
				if res.Status != vm.StatusOK || string(res.Result) != strconv.Itoa(i) {
					errs <- fmt.Sprintf("run %d: %s %s %+v", i, res.Status, res.Result, res.Error)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		settle(t, p, 2)
	})
	if fds := openFDs(t); fds > fds0 {
		t.Errorf("open descriptors: %d before, %d after", fds0, fds)
	}
	st := p.Stats()
	t.Logf("stats: %+v", st)
	if len(st.Kills) != 0 {
		t.Errorf("workers were killed or lost: %v", st.Kills)
	}
}

func TestCloseLeavesNoProcess(t *testing.T) {
	before := len(children(t))
	p := newTestPool(t, WithSize(3))
	if got := run(t, p, newTestHost(), "return 1", limits(t)); got.Status != vm.StatusOK {
		t.Fatal(got.Status)
	}
	_ = p.Close()
	if n := len(children(t)); n != before {
		t.Errorf("%d child processes after Close, %d before: %v", n, before, children(t))
	}
	if res := run(t, p, newTestHost(), "return 1", limits(t)); res.Status != vm.StatusIllegalAccess {
		t.Errorf("run after Close: %s %+v", res.Status, res.Error)
	}
}
