//go:build linux

package sandbox

import (
	"os"
	"syscall"
	"time"
)

// supported says whether this platform can run sandbox workers at all.
const supported = true

// sysProcAttr puts a worker in new user, pid, net, mount, ipc and uts
// namespaces, as root of its user namespace mapped to the server's own
// user (so it has no power outside its namespaces), in its own process
// group (so a kill reaches everything it runs), and kills it when the
// server dies. With a cgroup descriptor (cgroupFD >= 0) the kernel starts
// it in that cgroup (CLONE_INTO_CGROUP): it never runs outside its caps.
func sysProcAttr(cgroupFD int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		UseCgroupFD: cgroupFD >= 0,
		CgroupFD:    max(cgroupFD, 0),
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET | syscall.CLONE_NEWNS |
			syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
		Setpgid:                    true,
		Pdeathsig:                  syscall.SIGKILL,
	}
}

// endingOf reads how a reaped process ended from its wait status and its
// resource usage.
func endingOf(st *os.ProcessState) ending {
	e := ending{code: -1}
	if st == nil {
		return e
	}
	e.code = st.ExitCode()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.sigkill = ws.Signal() == syscall.SIGKILL
	}
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		e.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		e.maxRSS = ru.Maxrss << 10 // kilobytes on Linux
	}
	return e
}
