package attacks

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

// soakPlans are memory-heavy hostile plans, cycled through by
// TestSoakServer (a string doubling in a loop is left out, as in package
// vm's soak).
var soakPlans = []string{
	`const a = new Array(3e6).fill(0); return a.map(x => x + 1).length`,
	`const a = []; for (;;) a.push('x'.repeat(1e5) + a.length)`,
	`const m = new Map(); for (let i = 0; ; i++) m.set(i, {i, s: 'v' + i})`,
	`return Array.from({length: 40}, (_, i) => 'x'.repeat(2e6) + i).length`,
	`return '\ufdfa'.repeat(2e6).normalize('NFKD').length`,
	`return encodeURI('\u0800'.repeat(3e6)).length`,
	`return new Float64Array(8e6)`,
	`return Object.entries(new Array(2e6).fill(0)).length`,
}

// serverFigures are what the soak records of the server's process.
type serverFigures struct{ rssKB, threads, goroutines, fds, children int64 }

func (f serverFigures) String() string {
	return fmt.Sprintf("rss=%dMiB threads=%d goroutines=%d fds=%d children=%d", f.rssKB>>10, f.threads, f.goroutines, f.fds, f.children)
}

func measureServer() serverFigures {
	f := serverFigures{goroutines: int64(runtime.NumGoroutine())}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
				f.rssKB, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			}
			if rest, ok := strings.CutPrefix(sc.Text(), "Threads:"); ok {
				f.threads, _ = strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			}
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		f.fds = int64(len(fds))
	}
	entries, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(fields) > 1 && fields[1] == self {
			f.children++
		}
	}
	return f
}

// TestSoakServer runs CODECALLTEST_SOAK (1 means 200) memory-heavy hostile
// plans through a wrapped server under balanced, in each isolation, and
// reports the server's RSS, OS threads, goroutines, descriptors and child processes
// before, at the highest RSS, and after. Only with CODECALLTEST_SOAK set:
//
//	CODECALLTEST_SOAK=1 go test ./attacks -run TestSoakServer -v -timeout 60m
func TestSoakServer(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CODECALLTEST_SOAK"))
	if n == 0 {
		t.Skip("set CODECALLTEST_SOAK=1 (or a number of plans) to run the soak")
	}
	if n == 1 {
		n = 200
	}
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			c := attackCase{preset: presets.Balanced, limits: func(l *presets.Limits) { l.Timeout = 3 * time.Second }}
			h := newHost(t, config(c, mode, viaExecute))
			h.followUp(t, c, "warm-up")
			h.settlePool(t)
			runtime.GC()
			before := measureServer()
			peak := make(chan int64)
			quit := make(chan struct{})
			go func() {
				top := before.rssKB
				for {
					select {
					case <-quit:
						peak <- top
						return
					case <-time.After(5 * time.Millisecond):
						top = max(top, measureServer().rssKB)
					}
				}
			}()
			statuses := map[vm.Status]int{}
			start := time.Now()
			for i := range n {
				r := h.execute(t, map[string]any{"script": soakPlans[i%len(soakPlans)]})
				statuses[r.Status]++
			}
			elapsed := time.Since(start)
			close(quit)
			top := <-peak
			// Let a pending memory return happen, and the pool refill.
			time.Sleep(1100 * time.Millisecond)
			h.followUp(t, c, "after the soak")
			h.settlePool(t)
			after := measureServer()
			t.Logf("%d plans in %v %v; before: %v | peak: rss=%dMiB | after: %v", n, elapsed.Round(time.Second), statuses, before, top>>10, after)
			if after.children != before.children || after.fds > before.fds+4 {
				t.Errorf("the server kept child processes or descriptors: before %v, after %v", before, after)
			}
		})
	}
}
