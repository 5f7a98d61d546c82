package proccpu

import (
	"runtime"
	"testing"
	"time"
)

func TestUsedGrowsWithWork(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no getrusage here")
	}
	before := Used()
	// Burn CPU until the process has used 20 ms more, or give up after
	// 10 s of wall time (a machine that never schedules us).
	deadline := time.Now().Add(10 * time.Second)
	x := 0
	for Used()-before < 20*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("10 s of busy work added %v of CPU time", Used()-before)
		}
		for i := 0; i < 1e6; i++ {
			x += i
		}
	}
	sink = x
}

// sink keeps the busy loop's result alive.
var sink int
