//go:build linux

package sandbox

import (
	"os"
	"syscall"
)

// supported says whether this platform can run sandbox workers at all.
const supported = true

// sysProcAttr puts a worker in new user, pid, net, mount, ipc and uts
// namespaces, as root of its user namespace mapped to the server's own
// user (so it has no power outside its namespaces), in its own process
// group (so a kill reaches everything it runs), and kills it when the
// server dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET | syscall.CLONE_NEWNS |
			syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
		Setpgid:                    true,
		Pdeathsig:                  syscall.SIGKILL,
	}
}

// killedBy reports whether a reaped process ended by SIGXCPU (its CPU time
// limit) or by SIGKILL.
func killedBy(st *os.ProcessState) (xcpu, sigkill bool) {
	if st == nil {
		return false, false
	}
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return false, false
	}
	return ws.Signal() == syscall.SIGXCPU, ws.Signal() == syscall.SIGKILL
}
