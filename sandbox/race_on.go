//go:build race

package sandbox

// raceEnabled is set in binaries built with the race detector, whose
// shadow memory needs terabytes of address space: RLIMIT_AS cannot be set
// in their workers.
const raceEnabled = true
