//go:build linux && !cgo

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// confineThreads takes the file system away and confines every thread of
// the process: Landlock, no_new_privs and no capabilities. In a binary
// built without cgo the Go runtime changes them on all its threads at once
// (syscall.AllThreadsSyscall), and no other thread exists. A binary built
// with cgo does the same before its runtime starts (confine_cgo_linux.go).
func confineThreads(lim workerLimits) (Confinement, error) {
	var c Confinement
	// Time zone data comes from the file system, which is about to go.
	_, _ = time.Now().Zone()
	if err := closeStrayFiles(); err != nil {
		return c, err
	}
	ns, err := ownNamespaces(lim.serverNS)
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
	if _, _, e := syscall.AllThreadsSyscall(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); e != 0 {
		return c, fmt.Errorf("setting no_new_privs: %w", e)
	}
	c.NoNewPrivs = true
	c.LandlockABI = landlockDenyAll()
	c.Landlock = c.LandlockABI > 0
	if err := dropCapabilities(); err != nil {
		return c, err
	}
	c.CapabilitiesDropped = true
	return c, nil
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
	if err := pivotInto(dir); err != nil {
		return err
	}
	// Read-only as well as empty; the remount may be refused for a mount
	// made in a user namespace on some kernels, and the tmpfs holds two
	// inodes at most anyway.
	_ = unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	return nil
}

// landlockDenyAll restricts every thread with a Landlock ruleset that
// handles every access right the kernel knows and allows none, where the
// kernel has Landlock, and checks that it is in force. It returns the ABI
// of the domain, 0 when none is. From ABI 8 the kernel restricts every
// thread itself, in one domain (LANDLOCK_RESTRICT_SELF_TSYNC); before it,
// each thread gets its own, which for a ruleset that allows nothing is the
// same wall. no_new_privs must be set on every thread first.
func landlockDenyAll() int {
	abi := landlockABI()
	if abi < 1 {
		return 0
	}
	fs, net := landlockAccess(abi)
	attr := unix.LandlockRulesetAttr{Access_fs: fs, Access_net: net}
	size := unsafe.Sizeof(attr.Access_fs)
	if abi >= 4 {
		size = unsafe.Offsetof(attr.Scoped)
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return 0
	}
	defer unix.Close(int(fd))
	if abi >= 8 {
		_, _, e = unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, unix.LANDLOCK_RESTRICT_SELF_TSYNC, 0)
	} else {
		_, _, e = syscall.AllThreadsSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0)
	}
	if e != 0 || !inLandlockDomain() {
		return 0
	}
	return abi
}

// dropCapabilities empties every capability set of every thread: the
// bounding set first (dropping from it needs CAP_SETPCAP, which goes
// next), then the ambient set, then the inheritable, permitted and
// effective sets. The worker is root of its own user namespace, which
// gives it power over nothing but its own namespaces; dropping the
// capabilities takes even that away, and an empty bounding set means no
// exec could ever give one back. It checks the result on this thread;
// the server checks every thread from outside (observeThreads).
func dropCapabilities() error {
	for c := uintptr(0); c < 64; c++ {
		if _, _, e := syscall.AllThreadsSyscall(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, c, 0); e != 0 {
			if e == unix.EINVAL {
				break // past the kernel's last capability
			}
			return fmt.Errorf("dropping capability %d from the bounding set: %w", c, e)
		}
	}
	if _, _, e := syscall.AllThreadsSyscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); e != 0 && e != unix.EINVAL {
		return fmt.Errorf("clearing the ambient capabilities: %w", e)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if _, _, e := syscall.AllThreadsSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("dropping the capabilities: %w", e)
	}
	return capabilitiesEmpty()
}
