//go:build race

package tsstrip

// The race detector's instrumentation grows stack frames.
const raceEnabled = true
