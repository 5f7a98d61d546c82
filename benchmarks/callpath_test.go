package benchmarks

import (
	"context"
	"strings"
	"testing"

	"github.com/codecall-go/codecall/presets"
)

// maxCallAllocRatio bounds the allocations of one callTool inside a plan,
// in multiples of one direct tools/call of the same tool. A plan's call
// makes the direct call's own trip through the server (the gate sends it
// through srv.HandleMessage) plus the gate, the promise and the result's
// way into the runtime. It was 3.4–3.5 before the call path was trimmed
// and is 2.70 since (BENCHMARKS.md, "Where the time goes"); averaged over
// 200 runs of each plan, runs agree to within 0.01. The bound is low
// enough that losing either of the two largest savings alone fails it
// (without the one-pass result parser about 3.0; without learn's skipping
// of results with nothing to learn, 2.88).
const maxCallAllocRatio = 2.8

// TestCallToolAllocationRatio guards the cost of each additional callTool
// of a plan where a loaded machine cannot blur it: allocations, which
// drive most of the call's CPU time and the collector's. One call's share
// is (a 19-call plan − a 1-call plan) / 18 (the secure preset allows 20), end to end through
// srv.HandleMessage with the secure preset, in process; it is compared
// with one direct tools/call on a server without CodeCall.
func TestCallToolAllocationRatio(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector adds allocations of its own: the ratio is measured without it")
	}
	cc, _ := noopServerWith(t, presets.IsolationInProcess)
	bare := bareNoopServer()
	direct := toolCall(t, "bench.noop", map[string]any{})
	calls := func(n int) []byte {
		return toolCall(t, "codecall.execute", plan(strings.Repeat(`await callTool("bench.noop", {});`+"\n", n)+"return 1"))
	}
	one, many := calls(1), calls(19)
	mustOK(t, cc, one)
	mustOK(t, cc, many)
	mustOK(t, bare, direct)

	ctx := context.Background()
	perDirect := testing.AllocsPerRun(100, func() { bare.HandleMessage(ctx, direct) })
	// Runtimes are prepared for the pool in the background, and their
	// allocations land in either measurement: many calls and many runs
	// keep their share of one call small.
	planOne := testing.AllocsPerRun(200, func() { cc.HandleMessage(ctx, one) })
	planMany := testing.AllocsPerRun(200, func() { cc.HandleMessage(ctx, many) })
	perCall := (planMany - planOne) / 18
	ratio := perCall / perDirect
	t.Logf("allocations: direct tools/call %.0f, 1-call plan %.0f, 19-call plan %.0f, per callTool %.1f = %.2f× direct (bound %.2f×)",
		perDirect, planOne, planMany, perCall, ratio, maxCallAllocRatio)
	if ratio > maxCallAllocRatio {
		t.Errorf("one callTool inside a plan allocates %.1f times per call, %.2f× a direct tools/call (%.0f); the bound is %.2f×: "+
			"profile BenchmarkFloor with -memprofile and look at what the call path allocates anew", perCall, ratio, perDirect, maxCallAllocRatio)
	}
}
