//go:build unix

package proccpu

import (
	"syscall"
	"time"
)

// Used is the user and system CPU time of the whole process so far (every
// thread; not its children). It is 0 where the kernel does not say.
func Used() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
