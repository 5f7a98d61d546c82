//go:build linux && arm64

package sandbox

// archSyscalls are the allowed system calls that exist on arm64 only.
var archSyscalls = []string{}
