//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/sys/unix"
)

// The init function runs before package sandbox's own (file order), and
// before main: a Python worker never runs the user's code, nor the Go
// worker's.
func init() { pythonMain() }

// pythonMain turns the process into a confined Python interpreter when it
// was started as a Python worker, and returns at once otherwise.
func pythonMain() {
	if len(os.Args) < 2 || os.Args[1] != pythonArg {
		return
	}
	// Every step below acts on the calling thread (Landlock,
	// no_new_privs, capabilities and the seccomp filter are per thread);
	// execve keeps only that thread, so Python starts with all of them.
	runtime.LockOSThread()
	err := execPython(os.Args[2:])
	fmt.Fprintf(os.Stderr, "codecall sandbox: cannot start the Python worker: %v\n", err)
	syscall.Exit(3)
}

// execPython confines the calling thread and executes Python on it. It
// returns only on failure.
func execPython(args []string) error {
	wl := parseWorkerArgs(args)
	py, err := parsePythonArgs(args)
	if err != nil {
		return err
	}
	c, err := confinePython(wl, py)
	if err != nil {
		return err
	}
	conf, err := json.Marshal(c)
	if err != nil {
		return err
	}
	// -I: no environment, no user site, no script directory on sys.path;
	// -S: no site module; -B: no bytecode written; utf8 mode, whatever
	// the (absent) locale says. The bootstrap reads the confinement it
	// reports from argv[1].
	argv := []string{py.Executable, "-I", "-S", "-B", "-X", "utf8", "-c", pythonBootstrap, string(conf)}
	// Every descriptor above stderr closes on exec: a package initialised
	// before this one may have opened files.
	if _, _, e := unix.Syscall(unix.SYS_CLOSE_RANGE, 3, ^uintptr(0), unix.CLOSE_RANGE_CLOEXEC); e != 0 {
		return fmt.Errorf("marking descriptors close-on-exec: %w", e)
	}
	// Everything execve needs is made before the address-space cap, and
	// nothing is allocated between the two.
	path, err := unix.BytePtrFromString(py.Executable)
	if err != nil {
		return err
	}
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return err
	}
	envp := []*byte{nil}
	if wl.addressSpace > 0 {
		as := unix.Rlimit{Cur: uint64(wl.addressSpace), Max: uint64(wl.addressSpace)}
		if _, _, e := unix.RawSyscall6(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_AS, uintptr(unsafe.Pointer(&as)), 0, 0, 0); e != 0 {
			return fmt.Errorf("setting the address-space limit: %w", e)
		}
	}
	_, _, e := unix.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(path)), uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])))
	return fmt.Errorf("executing %s: %w", py.Executable, e)
}

// confinePython applies the Python worker's sandbox to the calling thread
// and the process: its namespaces checked, the file system replaced by a
// read-only view of the interpreter and a scratch tmpfs, no_new_privs, a
// Landlock domain that allows reading (and executing) that view and
// writing the scratch only, no capabilities, the resource limits, and
// the Python system-call filter.
func confinePython(lim workerLimits, py *Python) (Confinement, error) {
	var c Confinement
	ns, err := ownNamespaces(lim.serverNS)
	if err != nil {
		return c, err
	}
	c.Namespaces = ns
	if !contains(ns, "mnt") || !contains(ns, "user") || !contains(ns, "net") {
		return c, fmt.Errorf("the worker is not in its own user, mount and network namespaces (got %s)", strings.Join(ns, ", "))
	}
	if err := pythonView(py); err != nil {
		return c, fmt.Errorf("building the Python file-system view: %w", err)
	}
	c.PythonView = true
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return c, fmt.Errorf("setting no_new_privs: %w", err)
	}
	c.NoNewPrivs = true
	c.LandlockABI, err = pythonLandlock(py)
	if err != nil {
		return c, err
	}
	c.Landlock = c.LandlockABI > 0
	if err := dropThreadCapabilities(); err != nil {
		return c, err
	}
	c.CapabilitiesDropped = true
	rl := []struct {
		res      int
		cur, max int64
	}{
		{unix.RLIMIT_CORE, 0, 0},
		{unix.RLIMIT_FSIZE, pythonScratchBytes, pythonScratchBytes},
		{unix.RLIMIT_NOFILE, pythonOpenFiles, pythonOpenFiles},
		{unix.RLIMIT_MEMLOCK, 0, 0},
		{unix.RLIMIT_MSGQUEUE, 0, 0},
	}
	// RLIMIT_AS comes last, just before execve (execPython): the Go
	// runtime of this binary reserves more address space than Python's
	// cap, and may not allocate under it.
	c.AddressSpaceBytes = lim.addressSpace
	if lim.cpuSeconds > 0 {
		// The bootstrap turns SIGXCPU into exit status exitCPUTime, as the
		// Go worker does; the hard limit kills a plan stuck in C code.
		rl = append(rl, struct {
			res      int
			cur, max int64
		}{unix.RLIMIT_CPU, lim.cpuSeconds, lim.cpuSeconds + cpuHardGrace})
		c.CPUSeconds = lim.cpuSeconds
	}
	for _, r := range rl {
		if err := unix.Setrlimit(r.res, &unix.Rlimit{Cur: uint64(r.cur), Max: uint64(r.max)}); err != nil {
			return c, fmt.Errorf("setting resource limit %d to %d/%d: %w", r.res, r.cur, r.max, err)
		}
	}
	c.OpenFiles = pythonOpenFiles
	if err := loadPythonSeccomp(); err != nil {
		return c, err
	}
	c.Seccomp = true
	return c, nil
}

// pythonView replaces the root of the worker's mount namespace with a
// tmpfs that holds, read-only, the interpreter's directories and files as
// the host names them (symbolic links along their paths recreated), and a
// writable scratch tmpfs at /tmp, and detaches the host's tree.
func pythonView(py *Python) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	const root = "/tmp"
	for _, p := range append(append([]string{}, py.Dirs...), py.Files...) {
		if under(p, []string{root}) {
			return fmt.Errorf("%s is under %s, where the view is built; install Python elsewhere", p, root)
		}
	}
	if err := unix.Mount("codecall-python", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=1m,nr_inodes=4096,mode=0755"); err != nil {
		return fmt.Errorf("mounting the view's tmpfs on %s: %w", root, err)
	}
	for _, d := range py.Dirs {
		if err := bindReadOnly(root, d, true); err != nil {
			return err
		}
	}
	for _, f := range py.Files {
		if err := bindReadOnly(root, f, false); err != nil {
			return err
		}
	}
	scratch := root + "/tmp"
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("codecall-scratch", scratch, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC,
		fmt.Sprintf("size=%d,nr_inodes=256,mode=1777", pythonScratchBytes)); err != nil {
		return fmt.Errorf("mounting the scratch tmpfs: %w", err)
	}
	if err := pivotInto(root); err != nil {
		return err
	}
	if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("making the view's root read-only: %w", err)
	}
	return nil
}

// bindReadOnly makes host path p (a directory when dir is set, else a
// file) appear read-only at the same path under root, recreating the
// symbolic links on the way, as the dynamic loader and the interpreter
// name them.
func bindReadOnly(root, p string, dir bool) error {
	target, err := replicate(root, p, 0)
	if err != nil {
		return fmt.Errorf("recreating %s: %w", p, err)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return err
	}
	if dir {
		err = os.MkdirAll(target, 0o755)
	} else {
		err = os.MkdirAll(filepath.Dir(target), 0o755)
		if err == nil {
			var f *os.File
			f, err = os.OpenFile(target, os.O_CREATE|os.O_RDONLY, 0o444)
			if err == nil {
				f.Close()
			}
		}
	}
	if err != nil {
		return err
	}
	if err := unix.Mount(real, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("binding %s: %w", real, err)
	}
	// A remount must keep the flags the kernel locked on the source mount
	// (nosuid, nodev, noexec, atime), or a user namespace may not make it.
	var st unix.Statfs_t
	if err := unix.Statfs(target, &st); err != nil {
		return err
	}
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV)
	for _, f := range [][2]int64{{unix.ST_NOEXEC, unix.MS_NOEXEC}, {unix.ST_NOATIME, unix.MS_NOATIME},
		{unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME}} {
		if st.Flags&f[0] != 0 {
			flags |= uintptr(f[1])
		}
	}
	if err := unix.Mount("", target, "", flags, ""); err != nil {
		return fmt.Errorf("making %s read-only: %w", p, err)
	}
	return nil
}

// replicate returns where host path p lies under root, after creating
// under root every directory on the way and every symbolic link the host
// has on it (and what those links point to), so that p resolves under
// root as it does on the host.
func replicate(root, p string, depth int) (string, error) {
	if depth > 8 {
		return "", errors.New("too many symbolic links")
	}
	parts := strings.Split(strings.Trim(filepath.Clean(p), "/"), "/")
	host := "/"
	for i, part := range parts {
		host = filepath.Join(host, part)
		st, err := os.Lstat(host)
		if err != nil {
			return "", err
		}
		if st.Mode()&os.ModeSymlink == 0 {
			continue
		}
		link, err := os.Readlink(host)
		if err != nil {
			return "", err
		}
		at := root + host
		if _, err := os.Lstat(at); err != nil {
			if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
				return "", err
			}
			if err := os.Symlink(link, at); err != nil {
				return "", err
			}
		}
		dest := link
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(host), link)
		}
		rest := filepath.Join(append([]string{dest}, parts[i+1:]...)...)
		return replicate(root, rest, depth+1)
	}
	return root + host, nil
}

// pythonLandlock restricts the calling thread with a Landlock ruleset that
// handles every access right of the kernel's ABI and allows reading the
// interpreter's view (and executing in it) and using the scratch
// directory, nothing else; no TCP bind or connect. It checks the domain
// is in force, and returns its ABI (0: the kernel has no Landlock).
func pythonLandlock(py *Python) (int, error) {
	abi := landlockABI()
	if abi < 1 {
		return 0, nil
	}
	fs, net := landlockAccess(abi)
	attr := unix.LandlockRulesetAttr{Access_fs: fs, Access_net: net}
	size := unsafe.Sizeof(attr.Access_fs)
	if abi >= 4 {
		size = unsafe.Offsetof(attr.Scoped)
	}
	rfd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return 0, fmt.Errorf("creating the Landlock ruleset: %w", e)
	}
	defer unix.Close(int(rfd))
	read := uint64(unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_EXECUTE)
	scratch := uint64(unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG)
	if abi >= 3 {
		scratch |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	add := func(path string, access uint64) error {
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("opening %s for a Landlock rule: %w", path, err)
		}
		defer unix.Close(fd)
		rule := unix.LandlockPathBeneathAttr{Allowed_access: access & fs, Parent_fd: int32(fd)}
		if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, rfd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); e != 0 {
			return fmt.Errorf("adding the Landlock rule for %s: %w", path, e)
		}
		return nil
	}
	for _, d := range py.Dirs {
		if err := add(d, read|unix.LANDLOCK_ACCESS_FS_READ_DIR); err != nil {
			return 0, err
		}
	}
	for _, f := range py.Files {
		if err := add(f, read); err != nil {
			return 0, err
		}
	}
	if err := add("/tmp", scratch); err != nil {
		return 0, err
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, rfd, 0, 0); e != 0 {
		return 0, fmt.Errorf("entering the Landlock domain: %w", e)
	}
	if !inLandlockDomain() {
		return 0, errors.New("the Landlock domain is not in force: the view's root is readable")
	}
	return abi, nil
}

// pythonSyscalls are what CPython needs beyond the Go worker's list: it
// opens and reads its modules, lists and stats directories, uses the
// scratch directory, and asyncio's event loop wakes itself through a
// local socket pair. Nothing opens a network socket, starts a process
// (clone only with CLONE_THREAD, as for the Go worker), mounts, traces or
// changes credentials. execve is allowed because the worker itself needs
// it to become Python; Landlock allows executing nothing but the files of
// the view, and the view holds no program but the interpreter, so an exec
// can only start the interpreter again, in the same sandbox.
var pythonSyscalls = []string{
	"openat", "openat2", "statx", "readlinkat", "faccessat", "faccessat2", "getdents64", "getcwd", "chdir", "fchdir",
	"dup", "dup3", "ftruncate", "fsync", "fdatasync", "mkdirat", "unlinkat", "renameat", "renameat2", "utimensat",
	"fchmod", "fchmodat", "umask", "close_range", "getpgid", "getsid", "sysinfo", "kill",
	"sendto", "recvfrom", "sendmsg", "recvmsg", "shutdown", "getsockname", "getpeername", "getsockopt",
	"execve",
}

// pythonIoctls are the ioctl requests CPython makes on its descriptors:
// non-blocking and close-on-exec switches (sockets use FIONBIO), and the
// terminal query behind isatty.
var pythonIoctls = []uint64{0x5421, 0x5451, 0x5450, unix.TCGETS} // FIONBIO, FIOCLEX, FIONCLEX (the same on amd64 and arm64)

// loadPythonSeccomp installs the Python allowlist on the calling thread.
func loadPythonSeccomp() error {
	names := append(append(append([]string{}, allowedSyscalls...), pythonSyscalls...), pythonArchSyscalls...)
	conds := []seccomp.NameWithConditions{
		{Name: "clone", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: unix.CLONE_THREAD}}},
		{Name: "socketpair", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: unix.AF_UNIX}}},
	}
	for _, req := range pythonIoctls {
		conds = append(conds, seccomp.NameWithConditions{Name: "ioctl",
			Conditions: seccomp.ArgumentConditions{{Argument: 1, Operation: seccomp.Equal, Value: req}}})
	}
	policy := seccomp.Policy{
		DefaultAction: seccomp.ActionErrno,
		Syscalls: []seccomp.SyscallGroup{{
			Action:             seccomp.ActionAllow,
			Names:              names,
			NamesWithCondtions: conds,
		}},
	}
	return installFilter(policy, 0)
}
