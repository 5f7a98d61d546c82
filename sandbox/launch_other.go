//go:build !linux

package sandbox

import "syscall"

// launchAttr is never used: Profile.Command refuses on this platform.
func launchAttr(bool) *syscall.SysProcAttr { return nil }
