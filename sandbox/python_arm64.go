//go:build linux && arm64

package sandbox

// pythonArchSyscalls are empty on arm64, which has only the *at calls.
var pythonArchSyscalls = []string{}
