//go:build linux && cgo

package sandbox

import "testing"

// TestLandlockAccessTables holds the two tables of the rights a deny-all
// Landlock ruleset handles together: Go's, and the cgo pre-confinement's.
func TestLandlockAccessTables(t *testing.T) {
	for abi := 0; abi <= 9; abi++ {
		gfs, gnet := landlockAccess(abi)
		cfs, cnet := preconfineLandlockAccess(abi)
		if gfs != cfs || gnet != cnet {
			t.Errorf("ABI %d: Go handles fs %#x net %#x, C fs %#x net %#x", abi, gfs, gnet, cfs, cnet)
		}
	}
}
