//go:build linux && !amd64 && !arm64

package sandbox

// archSyscalls are the allowed system calls of this architecture beyond
// the common list.
var archSyscalls = []string{}
