package benchmarks

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/sandbox"
)

// BenchmarkCallers is process isolation's latency against the number of
// concurrent callers: each iteration is one burst in which every caller (a
// session of its own, as separate clients would be) sends one trivial plan
// (`return 1`) at the same moment, against the default pool (2 warm
// workers, at most 8 processes, a 5 s queue timeout). It reports the p50
// and p95 of the plans' latency across all bursts, the runs per second
// while the bursts ran, and how many plans the server refused (a refusal
// is a measured outcome, not a failure: the goal is that there are none).
// It skips when workers cannot start here.
func BenchmarkCallers(b *testing.B) {
	for _, n := range []int{1, 2, 4, 8, 16, 32} {
		b.Run(fmt.Sprintf("callers-%d", n), func(b *testing.B) { benchCallers(b, n) })
	}
}

func benchCallers(b *testing.B, callers int) {
	srv, cc := noopServerWith(b, presets.IsolationProcess)
	msg := toolCall(b, "codecall.execute", plan("return 1"))
	if st, limit, _, _ := executeAs(b, srv, "warm-up", msg); st != "ok" {
		b.Fatalf("the warm-up plan: %s %s", st, limit)
	}
	var (
		mu        sync.Mutex
		latencies []time.Duration
		refused   int
		busy      time.Duration
	)
	b.ResetTimer()
	for burst := 0; b.Loop(); burst++ {
		b.StopTimer()
		waitWarm(b, cc) // every burst starts from the same warm pool
		b.StartTimer()
		start := time.Now()
		var wg sync.WaitGroup
		for c := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t0 := time.Now()
				// New sessions every burst: their first plans, which no
				// parked worker of theirs can take.
				st, limit, _, _ := executeAs(b, srv, fmt.Sprintf("caller-%d-%d", burst, c), msg)
				d := time.Since(t0)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case st == "ok":
					latencies = append(latencies, d)
				case st == "limit_exceeded" && limit == sandbox.LimitConcurrency:
					refused++
				default:
					b.Errorf("a plan ended %q (limit %q), neither ok nor refused", st, limit)
				}
			}()
		}
		wg.Wait()
		busy += time.Since(start)
	}
	b.StopTimer()
	if len(latencies) == 0 {
		b.Fatalf("every one of the %d plans was refused", refused)
	}
	p := percentiles(latencies)
	b.ReportMetric(p[0]/1000, "p50-ms")
	b.ReportMetric(p[1]/1000, "p95-ms")
	b.ReportMetric(float64(len(latencies))/busy.Seconds(), "runs/s")
	b.ReportMetric(float64(refused), "refused")
}
