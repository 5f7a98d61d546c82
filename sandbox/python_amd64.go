//go:build linux && amd64

package sandbox

// pythonArchSyscalls are the legacy file calls CPython's C library may
// still make on amd64, the counterparts of pythonSyscalls' *at calls.
var pythonArchSyscalls = []string{"open", "stat", "lstat", "access", "readlink", "mkdir", "rmdir", "unlink", "rename",
	"dup2", "pipe", "alarm", "getdents", "chmod"}
