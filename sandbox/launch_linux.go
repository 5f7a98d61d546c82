//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// launchAttr starts the launcher in new user, pid, mount, ipc and uts
// namespaces (and net, without network), as root of its user namespace
// mapped to the caller's user, in its own process group, killed when its
// parent dies. Its pid namespace ends with it: when the launcher exits,
// the kernel kills everything the program started.
func launchAttr(network bool) *syscall.SysProcAttr {
	a := sysProcAttr(-1)
	if network {
		a.Cloneflags &^= syscall.CLONE_NEWNET
	}
	return a
}

func init() { launchMain() }

// launchMain turns the process into a launcher when it was started as one
// (Profile.Command), and returns at once otherwise. A launcher never
// returns: it confines itself, starts the program and exits with its
// status.
func launchMain() {
	if len(os.Args) < 4 || os.Args[1] != launcherArg {
		return
	}
	var p Profile
	if err := json.Unmarshal([]byte(os.Args[2]), &p); err != nil {
		launchFail("reading the profile", err)
	}
	syscall.Exit(launch(p, os.Args[3], os.Args[3:]))
}

// exitLaunch is the launcher's exit status when it could not confine or
// start the program; its stderr says which rule failed.
const exitLaunch = 126

func launchFail(rule string, err error) {
	fmt.Fprintf(os.Stderr, "codecall sandbox: %s: %v\n", rule, err)
	syscall.Exit(exitLaunch)
}

// launch builds the view, confines the calling thread and starts the
// program from it, then serves as the pid namespace's init: it passes
// termination signals on, reaps orphans, and exits as the program did.
//
// The thread is locked because what confines a program is its parent
// thread's credentials (no_new_privs, Landlock domain, capabilities),
// which a child inherits from the thread that clones it: the launcher
// confines one thread and starts the program from that thread only.
func launch(p Profile, path string, argv []string) int {
	runtime.LockOSThread() // for good: the thread is confined below
	if p.CgroupDir != "" {
		if err := joinCgroup(p.CgroupDir); err != nil {
			launchFail("joining its cgroup "+p.CgroupDir+" (set sandbox.cgroup: off to run without one)", err)
		}
	}
	view, err := buildView(p.View())
	if err != nil {
		launchFail("building the file-system view", err)
	}
	dir := "/tmp"
	if p.Dir != "" {
		dir = p.Dir
	}
	if !p.Network {
		if err := loopbackUp(); err != nil {
			launchFail("network off: bringing up the loopback interface", err)
		}
	}
	mem, procs := p.limits()
	for _, r := range []struct {
		name string
		res  int
		v    uint64
	}{
		{"core dumps", unix.RLIMIT_CORE, 0},
		{"open files", unix.RLIMIT_NOFILE, launchOpenFiles},
		{"memory (maxMemory)", unix.RLIMIT_DATA, uint64(mem)},
		{"processes (maxProcesses)", unix.RLIMIT_NPROC, uint64(procs)},
	} {
		if err := unix.Setrlimit(r.res, &unix.Rlimit{Cur: r.v, Max: r.v}); err != nil {
			launchFail("limiting "+r.name, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		launchFail("setting no_new_privs", err)
	}
	if err := landlockView(view, p.Network); err != nil {
		launchFail("Landlock", err)
	}
	if err := dropThreadCapabilities(); err != nil {
		launchFail("dropping capabilities", err)
	}
	// Signals are caught before the program starts, so that none sent in
	// between is lost; the launcher, as init of its pid namespace, would
	// otherwise ignore every one but SIGKILL.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Dir: dir, Env: os.Environ(), Files: []uintptr{0, 1, 2},
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		launchFail(fmt.Sprintf("starting %s in the view", path), err)
	}
	go func() {
		for s := range sigs {
			_ = syscall.Kill(pid, s.(syscall.Signal))
		}
	}()
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return exitLaunch
		}
		if got != pid {
			continue // an orphan, reaped
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

// buildView replaces the root of the launcher's mount namespace with a
// read-only tmpfs holding the view's paths (bind mounts of the host's, at
// the same places, read-only unless writable), a few device files, a
// /proc of the pid namespace's own and a private /tmp. The host's tree is
// detached afterwards: no other path names a host file.
func buildView(view []ViewPath) (bound []ViewPath, err error) {
	// Symbolic links are resolved on the host, before it goes: a path
	// of the view that is or passes through a link (/bin -> usr/bin,
	// /etc/resolv.conf -> /run/...) is shown at its real place, and the
	// link is made again in the view. Parents come before children, so
	// that no bind mount hides another.
	var entries []viewEntry
	for _, v := range view {
		real, err := filepath.EvalSymlinks(v.Path)
		if err != nil {
			continue
		}
		entries = append(entries, viewEntry{ViewPath: ViewPath{Path: real, Write: v.Write}})
		if real != v.Path {
			entries = append(entries, viewEntry{ViewPath: v, link: real})
		}
	}
	sort.SliceStable(entries, func(i, j int) bool {
		if (entries[i].link == "") != (entries[j].link == "") {
			return entries[i].link == "" // binds first, links after
		}
		return entries[i].Path < entries[j].Path
	})
	kept := entries[:0]
	for _, e := range entries {
		if e.link == "" {
			// A path inside an earlier one with the same access is
			// already shown.
			if slices.ContainsFunc(bound, func(b ViewPath) bool { return b.Write == e.Write && inView([]ViewPath{b}, e.Path) }) {
				continue
			}
			bound = append(bound, e.ViewPath)
		}
		kept = append(kept, e)
	}
	entries = kept

	return bound, mountView(entries)
}

// viewEntry is a path of the view as mountView makes it: a bind mount of
// the host's path, or (link set) a symbolic link to another entry.
type viewEntry struct {
	ViewPath
	link string
}

// mountView makes the mounts and links of buildView and moves into them.
func mountView(entries []viewEntry) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	stage := ""
	for _, d := range []string{"/tmp", "/mnt", "/run", "/var/tmp"} {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			stage = d
			break
		}
	}
	if stage == "" {
		return errors.New("no directory to build the view in (/tmp, /mnt, /run)")
	}
	if err := unix.Mount("codecall-stage", stage, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=64k,mode=0700"); err != nil {
		return fmt.Errorf("mounting a tmpfs on %s: %w", stage, err)
	}
	if err := os.Chdir(stage); err != nil {
		return err
	}
	if err := os.Mkdir("host", 0o700); err != nil {
		return err
	}
	// The staging tmpfs becomes the root and the host's tree moves to
	// /host, whole again (stage is no longer covered there).
	if err := unix.PivotRoot(".", "host"); err != nil {
		return fmt.Errorf("pivot_root to the staging tmpfs: %w", err)
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	const root = "/view"
	if err := os.Mkdir(root, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("codecall-view", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("mounting the view's root: %w", err)
	}
	bind := func(src, dst string, write, dev bool) error {
		fi, err := os.Stat(src)
		if err != nil {
			return err
		}
		if _, serr := os.Lstat(dst); serr == nil {
			// Already there: inside an earlier bind mount.
		} else if fi.IsDir() {
			err = os.MkdirAll(dst, 0o755)
		} else if err = os.MkdirAll(filepath.Dir(dst), 0o755); err == nil {
			var f *os.File
			if f, err = os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				err = f.Close()
			}
		}
		if err != nil {
			return err
		}
		if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind-mounting %s: %w", strings.TrimPrefix(src, "/host"), err)
		}
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID}
		if !dev {
			attr.Attr_set |= unix.MOUNT_ATTR_NODEV
		}
		if !write {
			attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
		}
		if err := unix.MountSetattr(-1, dst, unix.AT_RECURSIVE, &attr); err != nil {
			return fmt.Errorf("making %s read-only: %w", strings.TrimPrefix(src, "/host"), err)
		}
		return nil
	}
	// The private /tmp and /dev/shm come first: a path of the view under
	// /tmp (a working directory) is mounted over them, not hidden by them.
	for _, t := range []string{"/tmp", "/dev/shm"} {
		if err := os.MkdirAll(root+t, 0o755); err != nil {
			return err
		}
		if err := unix.Mount("codecall-tmp", root+t, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("size=%d,mode=1777", launchTmpBytes)); err != nil {
			return fmt.Errorf("mounting %s: %w", t, err)
		}
	}
	for _, e := range entries {
		dst := root + e.Path
		if e.link != "" {
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(e.link, dst); err != nil && !errors.Is(err, os.ErrExist) {
				return err
			}
			continue
		}
		if err := bind("/host"+e.Path, dst, e.Write, false); err != nil {
			return err
		}
	}
	for _, d := range devFiles {
		if _, err := os.Stat("/host" + d); err != nil {
			continue
		}
		if err := bind("/host"+d, root+d, true, true); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(root+"/dev", 0o755); err != nil {
		return err
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, root+"/dev/"+name); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(root+"/proc", 0o555); err != nil {
		return err
	}
	if err := unix.Mount("proc", root+"/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc for the pid namespace: %w", err)
	}
	if err := unix.MountSetattr(-1, root, 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("making the view's root read-only: %w", err)
	}
	return pivotInto(root)
}

// loopbackUp brings up the net namespace's own loopback interface, so
// that a program may still talk to itself over 127.0.0.1.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// landlockFileRights are the Landlock rights that apply to a file (not a
// directory); a rule on a file may grant only these.
const landlockFileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
	unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

// landlockView restricts the calling thread, where the kernel has
// Landlock, to the view: reading and executing its read-only paths,
// everything in its writable ones, /tmp and /dev/shm, the device files,
// and reading /proc; without network (ABI 4 and later), no TCP bind or
// connect either. A kernel without Landlock leaves the mount view as the
// wall; a kernel with it that refuses the ruleset fails the launch.
func landlockView(view []ViewPath, network bool) error {
	abi := landlockABI()
	if abi < 1 {
		return nil
	}
	fs, netRights := landlockAccess(abi)
	if network {
		netRights = 0
	}
	attr := unix.LandlockRulesetAttr{Access_fs: fs, Access_net: netRights}
	size := unsafe.Sizeof(attr.Access_fs)
	if abi >= 4 {
		size = unsafe.Offsetof(attr.Scoped)
	}
	rfd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return fmt.Errorf("creating the ruleset: %w", e)
	}
	defer unix.Close(int(rfd))
	read := uint64(unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_EXECUTE)
	allow := func(path string, rights uint64) error {
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil // not in this view
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return err
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			rights &= landlockFileRights
		}
		rule := unix.LandlockPathBeneathAttr{Allowed_access: rights & fs, Parent_fd: int32(fd)}
		if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, rfd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); e != 0 {
			return fmt.Errorf("allowing %s: %w", path, e)
		}
		return nil
	}
	for _, v := range view {
		rights := read
		if v.Write {
			rights = fs
		}
		if err := allow(v.Path, rights); err != nil {
			return err
		}
	}
	for _, t := range []string{"/tmp", "/dev/shm"} {
		if err := allow(t, fs); err != nil {
			return err
		}
	}
	for _, d := range devFiles {
		if err := allow(d, unix.LANDLOCK_ACCESS_FS_READ_FILE|unix.LANDLOCK_ACCESS_FS_WRITE_FILE|unix.LANDLOCK_ACCESS_FS_IOCTL_DEV); err != nil {
			return err
		}
	}
	if err := allow("/proc", unix.LANDLOCK_ACCESS_FS_READ_FILE|unix.LANDLOCK_ACCESS_FS_READ_DIR); err != nil {
		return err
	}
	if err := allow("/dev", unix.LANDLOCK_ACCESS_FS_READ_DIR); err != nil {
		return err
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, rfd, 0, 0); e != 0 {
		return fmt.Errorf("restricting the launcher: %w", e)
	}
	return nil
}

// dropThreadCapabilities empties every capability set of the calling
// thread, the bounding set first, so that the program it starts holds
// none and no exec can give one back.
func dropThreadCapabilities() error {
	for c := 0; c < 64; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if errors.Is(err, unix.EINVAL) {
				break // past the kernel's last capability
			}
			return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clearing the ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return err
	}
	return capabilitiesEmpty()
}
