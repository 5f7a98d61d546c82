//go:build race

package attacks

// raceEnabled is true when the race detector is on; it slows goja down
// tenfold, so time bounds scale with it.
const raceEnabled = true
