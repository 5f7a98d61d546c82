//go:build !unix

package vm

import "time"

// processCPU is not measured here; callers fall back to wall time.
func processCPU() time.Duration { return 0 }
