//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// confine applies the worker's sandbox to the running process, in the
// order that keeps each step possible: what needs the file system first,
// then the file system goes, then the limits, then the capabilities, and
// the system-call filter last. Any failure is fatal to the worker: it never
// runs a plan half confined.
func confine(lim workerLimits) (Confinement, error) {
	var c Confinement
	// Time zone data comes from the file system, which is about to go.
	_, _ = time.Now().Zone()
	os.Clearenv()
	runtime.GOMAXPROCS(2)

	if err := closeStrayFiles(); err != nil {
		return c, err
	}
	ns, err := namespaces(lim.serverNS)
	if err != nil {
		return c, err
	}
	c.Namespaces = ns
	if !contains(ns, "mnt") || !contains(ns, "user") {
		return c, fmt.Errorf("the worker is not in its own user and mount namespaces (got %s)", strings.Join(ns, ", "))
	}
	if err := emptyRoot(); err != nil {
		return c, fmt.Errorf("taking away the file system: %w", err)
	}
	c.EmptyRoot = true
	c.Landlock = landlockDenyAll()

	type rlimit struct {
		res      int
		cur, max int64
	}
	rl := []rlimit{
		{unix.RLIMIT_CORE, 0, 0},
		{unix.RLIMIT_FSIZE, 0, 0},
		{unix.RLIMIT_NOFILE, workerOpenFiles, workerOpenFiles},
		{unix.RLIMIT_MEMLOCK, 0, 0},
		{unix.RLIMIT_MSGQUEUE, 0, 0},
	}
	if lim.addressSpace > 0 {
		rl = append(rl, rlimit{unix.RLIMIT_AS, lim.addressSpace, lim.addressSpace})
		c.AddressSpaceBytes = lim.addressSpace
	}
	if lim.cpuSeconds > 0 {
		// The soft limit sends SIGXCPU, which the worker turns into its
		// own exit status (exitCPUTime) so the server can tell a CPU kill
		// from any other; the hard limit, a second of CPU later, is the
		// kernel's SIGKILL for a worker that cannot exit by itself.
		stopOnCPULimit()
		rl = append(rl, rlimit{unix.RLIMIT_CPU, lim.cpuSeconds, lim.cpuSeconds + cpuHardGrace})
		c.CPUSeconds = lim.cpuSeconds
	}
	for _, r := range rl {
		v := &unix.Rlimit{Cur: uint64(r.cur), Max: uint64(r.max)}
		if err := unix.Setrlimit(r.res, v); err != nil {
			return c, fmt.Errorf("setting resource limit %d to %d/%d: %w", r.res, r.cur, r.max, err)
		}
	}
	c.OpenFiles = workerOpenFiles
	if lim.memoryBytes > 0 {
		// The soft limit makes the collector work harder near the budget
		// instead of growing towards the hard one.
		debug.SetMemoryLimit(lim.memoryBytes)
	}

	c.CapabilitiesDropped = dropCapabilities()
	if err := loadSeccomp(); err != nil {
		return c, err
	}
	c.NoNewPrivs, c.Seccomp = true, true
	return c, nil
}

// cpuHardGrace is how many CPU-seconds past the soft RLIMIT_CPU the
// kernel's hard limit lies.
const cpuHardGrace = 1

// stopOnCPULimit makes the worker exit with exitCPUTime when the kernel
// says its CPU time is spent (SIGXCPU, at the soft RLIMIT_CPU). The Go
// runtime ignores SIGXCPU unless it is asked for, and a process the hard
// limit kills says nothing of why.
func stopOnCPULimit() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGXCPU)
	go func() {
		<-ch
		syscall.Exit(exitCPUTime)
	}()
}

// workerOpenFiles is RLIMIT_NOFILE of a worker: its three pipes and the
// runtime's poller, with room to spare, and nothing to open.
const workerOpenFiles = 16

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// namespaces lists the namespaces the process does not share with the
// server, whose namespace identities came on the command line.
func namespaces(server map[string]string) ([]string, error) {
	var out []string
	for _, n := range namespaceKinds {
		self, err := os.Readlink("/proc/self/ns/" + n)
		if err != nil {
			return nil, fmt.Errorf("reading the %s namespace: %w", n, err)
		}
		if server[n] != "" && server[n] != self {
			out = append(out, n)
		}
	}
	return out, nil
}

// namespaceKinds are the namespaces a worker gets of its own.
var namespaceKinds = []string{"user", "pid", "net", "mnt", "ipc", "uts"}

// serverNamespaces returns this process's namespace identities, as the
// worker's command line carries them.
func serverNamespaces() map[string]string {
	out := map[string]string{}
	for _, n := range namespaceKinds {
		if id, err := os.Readlink("/proc/self/ns/" + n); err == nil {
			out[n] = id
		}
	}
	return out
}

// closeStrayFiles closes every descriptor above stderr that is not the Go
// runtime's own poller: a package initialised before this one in the
// user's binary may have opened files, and the worker must reach none.
func closeStrayFiles() error {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("listing open files: %w", err)
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil {
			continue // the directory's own descriptor, already closed
		}
		if target == "anon_inode:[eventpoll]" || target == "anon_inode:[eventfd]" || strings.HasPrefix(target, "pipe:") && isPollerPipe(fd) {
			continue
		}
		_ = unix.Close(fd)
	}
	return nil
}

// isPollerPipe reports whether fd is non-blocking, as the pipe the runtime's
// poller wakes itself with is on kernels without eventfd.
func isPollerPipe(fd int) bool {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	return err == nil && fl&unix.O_NONBLOCK != 0
}

// emptyRoot makes the root of the worker's mount namespace an empty,
// read-only tmpfs and detaches the host's tree: afterwards no path names a
// host file, whatever the process's credentials.
func emptyRoot() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	var dir string
	for _, d := range []string{"/tmp", "/mnt", "/dev", "/run", "/var", "/"} {
		if st, err := os.Stat(d); err == nil && st.IsDir() && d != "/" {
			dir = d
			break
		}
	}
	if dir == "" {
		return errors.New("no directory to mount the empty root on")
	}
	if err := unix.Mount("codecall-sandbox", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,nr_inodes=2,mode=0555"); err != nil {
		return fmt.Errorf("mounting an empty tmpfs on %s: %w", dir, err)
	}
	if err := unix.Chdir(dir); err != nil {
		return err
	}
	// pivot_root(".", ".") stacks the old root under the new one; the
	// detach below removes it from the namespace.
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching the host's file system: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return err
	}
	// Read-only as well as empty; the remount may be refused for a mount
	// made in a user namespace on some kernels, and the tmpfs holds two
	// inodes at most anyway.
	_ = unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	return nil
}

// landlockDenyAll restricts the process with a Landlock ruleset that
// handles every file access right and allows none, where the kernel has
// Landlock. It reports whether the ruleset is in force.
func landlockDenyAll() bool {
	abi, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 || int(abi) < 1 {
		return false
	}
	access := uint64(unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM)
	if abi >= 2 {
		access |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		access |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	attr := unix.LandlockRulesetAttr{Access_fs: access}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return false
	}
	defer unix.Close(int(fd))
	// restrict_self applies to the calling thread only, so it goes to every
	// thread at once; that needs a binary built without cgo, and where it
	// cannot be had the empty root and the seccomp filter hold the line.
	// No-new-privs is required first.
	if _, _, e := syscall.AllThreadsSyscall(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); e != 0 {
		return false
	}
	_, _, e = syscall.AllThreadsSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0)
	return e == 0
}

// dropCapabilities empties every capability set of every thread. The
// worker is root of its own user namespace, which gives it power over
// nothing but its own namespaces; dropping the capabilities takes even
// that away. It needs a binary built without cgo (the runtime cannot
// change every thread's credentials otherwise); the seccomp filter refuses
// every call a capability would matter for in any case.
func dropCapabilities() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	_, _, e := syscall.AllThreadsSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	return e == 0
}
