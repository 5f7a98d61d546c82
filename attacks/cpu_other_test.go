//go:build !unix

package attacks

import "time"

// processCPU is not measured here (the sandbox's walls are Linux's): the
// runs cost nothing and prompt passes on the cases' causes alone.
func processCPU() time.Duration { return 0 }
