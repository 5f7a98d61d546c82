//go:build !race

package benchmarks

// raceEnabled is true when the race detector is on.
const raceEnabled = false
