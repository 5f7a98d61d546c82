//go:build !race

package sandbox

// raceEnabled is set in binaries built with the race detector.
const raceEnabled = false
