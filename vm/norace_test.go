//go:build !race

package vm

// raceEnabled is set in test binaries built with the race detector.
const raceEnabled = false
