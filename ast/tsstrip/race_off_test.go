//go:build !race

package tsstrip

const raceEnabled = false
