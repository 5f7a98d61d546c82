//go:build unix

package vm

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the test process has used: a run that burns
// CPU past its deadline is a bug, one that waits on a busy machine is not.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
