package vm

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/presets"
)

// heavyPlans are memory-heavy hostile plans, in the order a soak cycles
// through them: garbage by the hundred megabytes, runs the heap watchdog
// stops, and the bombs the guards refuse. A string doubling in a loop is
// left out: one doubling past the watchdog's check costs gigabytes (see
// the package documentation), which would measure the host, not the soak.
var heavyPlans = []string{
	`const a = new Array(3e6).fill(0); return a.map(x => x + 1).length`,
	`const a = []; for (;;) a.push('x'.repeat(1e5) + a.length)`,
	`const m = new Map(); for (let i = 0; ; i++) m.set(i, {i, s: 'v' + i})`,
	`return Array.from({length: 40}, (_, i) => 'x'.repeat(2e6) + i).length`,
	`return '\ufdfa'.repeat(2e6).normalize('NFKD').length`,
	`return encodeURI('\u0800'.repeat(3e6)).length`,
	`return new Float64Array(8e6)`,
	`return Object.entries(new Array(2e6).fill(0)).length`,
}

// procFigures are what a soak records of its process.
type procFigures struct {
	rssKB, goroutines, fds, children int64
}

func (f procFigures) String() string {
	return fmt.Sprintf("rss=%dMiB goroutines=%d fds=%d children=%d", f.rssKB>>10, f.goroutines, f.fds, f.children)
}

// peakString reports only the RSS of a peak: the other figures are not
// sampled.
func (f procFigures) peakString() string {
	return fmt.Sprintf("rss=%dMiB", f.rssKB>>10)
}

func measureProcess(t testing.TB) procFigures {
	t.Helper()
	f := procFigures{rssKB: procStatus(t, os.Getpid(), "VmRSS:"), goroutines: int64(runtime.NumGoroutine())}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		f.fds = int64(len(fds))
	}
	entries, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces; ppid follows
		// the last ')'.
		if fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(fields) > 1 && fields[1] == self {
			f.children++
		}
	}
	return f
}

// procStatus reads a kB figure from /proc/<pid>/status; 0 where there is
// no /proc.
func procStatus(t testing.TB, pid int, key string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// soak runs n heavy plans in process on balanced, with or without
// ReturnMemory, and returns the process's figures before, at the highest
// RSS seen, and after (once a light run has had the chance to return
// pending memory).
func soak(t testing.TB, plans []string, n int, returnMemory bool) (before, peak, after procFigures) {
	l := limits(t, presets.Balanced)
	l.Timeout = 3 * time.Second
	opts := Options{RunID: "soak", Limits: l, ReturnMemory: returnMemory}
	light := compile(t, `return 1`)
	runtime.GC()
	before = measureProcess(t)
	// The highest RSS, sampled while the plans run.
	peakRSS := make(chan int64)
	quit := make(chan struct{})
	go func() {
		top := before.rssKB
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				peakRSS <- top
				return
			case <-tick.C:
				top = max(top, procStatus(t, os.Getpid(), "VmRSS:"))
			}
		}
	}()
	for i := range n {
		res := Run(context.Background(), compile(t, plans[i%len(plans)]), noopHost{}, opts)
		if res.Status == StatusOK && res.Result == nil {
			t.Errorf("plan %d: %s", i, describe(res))
		}
	}
	close(quit)
	peak = before
	peak.rssKB = <-peakRSS
	// The last heavy run may have ended inside the return interval: a
	// light run after it returns what is pending.
	time.Sleep(returnInterval + 100*time.Millisecond)
	Run(context.Background(), light, noopHost{}, opts)
	after = measureProcess(t)
	return before, peak, after
}

// TestMemoryReturned is the short, always-on soak: heavy plans in process
// with ReturnMemory must have returned memory (the mechanism ran), and the
// process's RSS must come back near where it started.
func TestMemoryReturned(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a few hundred megabytes of plans")
	}
	returns := memoryReturns.Load()
	// The lighter heavy plans: each leaves 50 to 200 MiB of garbage.
	before, peak, after := soak(t, []string{heavyPlans[0], heavyPlans[3], heavyPlans[4], heavyPlans[6]}, 4, true)
	t.Logf("before %v; peak %s; after %v; memory returned %d times", before, peak.peakString(), after, memoryReturns.Load()-returns)
	if memoryReturns.Load() == returns {
		t.Fatal("no run returned memory to the operating system")
	}
	// The race detector's shadow memory is not the Go heap's and is not
	// returned; the figure means nothing there.
	if !raceEnabled && before.rssKB > 0 && after.rssKB > before.rssKB+(192<<10) {
		t.Errorf("RSS %d MiB after the soak, %d MiB before: memory was not returned", after.rssKB>>10, before.rssKB>>10)
	}
}

// envSoak turns on TestSoak; envSoakChild names the variant a child
// process of TestSoak runs.
const (
	envSoak      = "CODECALLTEST_SOAK"
	envSoakChild = "CODECALLTEST_SOAK_CHILD"
)

// TestSoak is the long soak, run only with CODECALLTEST_SOAK=1 (see
// BENCHMARKS.md): 200 heavy plans in process, with and without
// ReturnMemory, each in a fresh child process so that neither inherits the
// other's heap.
func TestSoak(t *testing.T) {
	if v := os.Getenv(envSoakChild); v != "" {
		n, _ := strconv.Atoi(os.Getenv(envSoak))
		before, peak, after := soak(t, heavyPlans, max(n, 1), v == "with")
		fmt.Printf("SOAK %s: plans=%d before: %v | peak: %s | after: %v | returns=%d\n", v, max(n, 1), before, peak.peakString(), after, memoryReturns.Load())
		return
	}
	if os.Getenv(envSoak) == "" {
		t.Skip("set CODECALLTEST_SOAK=1 (or a number of plans, default 200) to run the soak")
	}
	n := 200
	if v, err := strconv.Atoi(os.Getenv(envSoak)); err == nil && v > 1 {
		n = v
	}
	for _, variant := range []string{"without", "with"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSoak$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), envSoakChild+"="+variant, envSoak+"="+strconv.Itoa(n))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("soak %s: %v\n%s", variant, err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "SOAK ") {
				t.Log(line)
			}
		}
	}
}
