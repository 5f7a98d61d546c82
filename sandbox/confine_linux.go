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

	"golang.org/x/sys/unix"
)

// confine applies the worker's sandbox to the running process, in the
// order that keeps each step possible: what needs the file system first,
// then the file system goes, then Landlock, then the capabilities (the
// bounding set before the rest), then the limits, and the system-call
// filter last. The steps up to the capabilities act on every thread
// (confineThreads: see there for how, with and without cgo); the limits
// and the filter are the process's. Any failure is fatal to the worker: it
// never runs a plan half confined.
func confine(lim workerLimits) (Confinement, error) {
	runtime.GOMAXPROCS(2)
	c, err := confineThreads(lim)
	if err != nil {
		return c, err
	}
	// The time zone was loaded first, with the file system.
	os.Clearenv()

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

// landlockAccess returns the file-system and network access rights a
// deny-all Landlock ruleset handles at a kernel's Landlock ABI: every one
// the ABI knows. (preconfine_linux.c has the same table for cgo builds.)
func landlockAccess(abi int) (fs, net uint64) {
	fs = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	if abi >= 2 {
		fs |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		fs |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 4 {
		net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if abi >= 5 {
		fs |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return fs, net
}

// landlockABI returns the kernel's Landlock ABI version; 0 when it has no
// Landlock, or it is disabled.
func landlockABI() int {
	abi, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0
	}
	return int(abi)
}

// inLandlockDomain reports whether a Landlock domain refuses this thread
// the empty root, which its mode lets anyone read: the proof that a
// deny-all ruleset is in force.
func inLandlockDomain() bool {
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
		return false
	}
	return errors.Is(err, unix.EACCES)
}

// threadStatus is what the kernel says of a process's threads in
// /proc/PID/task/TID/status, combined over every thread.
type threadStatus struct {
	threads int
	// caps ORs every capability set (CapInh, CapPrm, CapEff, CapBnd,
	// CapAmb) of every thread: 0 when no thread holds anything.
	caps uint64
	// noNewPrivs and seccompFilter hold when every thread has
	// no_new_privs and is in seccomp filter mode (Seccomp: 2).
	noNewPrivs, seccompFilter bool
}

// observeThreads reads the status of every thread of process pid. The
// server checks what a worker says of itself with it: a worker may lie,
// and a thread the confinement missed shows here.
func observeThreads(pid int) (threadStatus, error) {
	st := threadStatus{noNewPrivs: true, seccompFilter: true}
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return st, err
	}
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/status")
		if err != nil {
			continue // the thread ended
		}
		st.threads++
		fields := parseStatus(string(b))
		for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
			v, err := strconv.ParseUint(fields[k], 16, 64)
			if err != nil {
				return st, fmt.Errorf("thread %s: %s is %q", t.Name(), k, fields[k])
			}
			st.caps |= v
		}
		st.noNewPrivs = st.noNewPrivs && fields["NoNewPrivs"] == "1"
		st.seccompFilter = st.seccompFilter && fields["Seccomp"] == "2"
	}
	if st.threads == 0 {
		return st, fmt.Errorf("no thread of process %d found in %s", pid, dir)
	}
	return st, nil
}

// parseStatus splits a /proc status file into its fields.
func parseStatus(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// capabilitiesEmpty checks that the calling thread holds no capability in
// any set, the bounding set included.
func capabilitiesEmpty() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("reading the capabilities back: %w", err)
	}
	for _, d := range data {
		if d.Effective|d.Permitted|d.Inheritable != 0 {
			return errors.New("capabilities are left after dropping them")
		}
	}
	for c := 0; c < 64; c++ {
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
		if err != nil {
			break // past the kernel's last capability
		}
		if in != 0 {
			return fmt.Errorf("capability %d is left in the bounding set", c)
		}
	}
	return nil
}

// checkConfinement holds what a ready worker says of itself to what the
// kernel says of its threads in /proc: a claim of no capabilities,
// no_new_privs or seccomp stands only if every thread bears it out.
func checkConfinement(w *worker) Confinement {
	c := w.conf
	c.CheckedThreads = 0
	st, err := observeThreads(w.pid)
	if err != nil {
		return c
	}
	c.CheckedThreads = st.threads
	c.CapabilitiesDropped = c.CapabilitiesDropped && st.caps == 0
	c.NoNewPrivs = c.NoNewPrivs && st.noNewPrivs
	c.Seccomp = c.Seccomp && st.seccompFilter
	return c
}

// ownNamespaces lists the namespaces the process does not share with the
// server, whose namespace identities came on the command line.
func ownNamespaces(server map[string]string) ([]string, error) {
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

// pivotInto makes dir the root of the mount namespace and detaches the
// old root: pivot_root(".", ".") stacks the old root under the new one,
// and the lazy unmount removes it (and every mount under it) from the
// namespace, so nothing of the host's tree stays reachable.
func pivotInto(dir string) error {
	if err := unix.Chdir(dir); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root to %s: %w", dir, err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching the host's file system: %w", err)
	}
	return unix.Chdir("/")
}
