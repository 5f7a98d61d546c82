//go:build linux && amd64

package sandbox

// archSyscalls are the allowed system calls that exist on amd64 only.
var archSyscalls = []string{"arch_prctl", "epoll_wait", "poll", "select", "time", "getpgrp", "pause"}
