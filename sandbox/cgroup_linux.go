//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupControllers are the controllers a worker's cgroup uses, in the
// order cgroup.subtree_control is asked for them.
var cgroupControllers = []string{"cpu", "memory", "pids"}

// cgroupServerLeaf is the cgroup the server moves itself into when its own
// cgroup must hold no process to hand controllers to its children (the
// cgroup v2 "no internal processes" rule).
const cgroupServerLeaf = "codecall-server"

// cgroupWorkerPrefix starts the name of every worker's cgroup.
const cgroupWorkerPrefix = "codecall-worker-"

// cgroupParent is a cgroup v2 delegated to the server: it may make
// children in it, hand them controllers and move processes into them.
// Each worker gets a child, made before it is spawned and removed when it
// has been reaped.
type cgroupParent struct {
	dir         string
	controllers []string // of cgroupControllers, enabled for the children
	files       cgroupFiles
}

// cgroupFiles reads and writes cgroupfs. Tests replace write to play the
// kernel's refusals against a directory laid out like cgroupfs.
type cgroupFiles struct {
	write func(path, value string) error
}

func (f cgroupFiles) put(path, value string) error {
	if f.write != nil {
		return f.write(path, value)
	}
	fd, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = fd.WriteString(value)
	if cerr := fd.Close(); err == nil {
		err = cerr
	}
	return err
}

// ownCgroupDir finds the directory of the process's cgroup v2 from the
// contents of /proc/self/cgroup and /proc/self/mountinfo: the "0::" line
// names the cgroup, relative to the root of the cgroup2 mount that shows
// it.
func ownCgroupDir(procCgroup, mountinfo string) (string, error) {
	var path string
	found := false
	for _, line := range strings.Split(procCgroup, "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path, found = p, true
			break
		}
	}
	if !found {
		return "", errors.New("the process is in no cgroup v2 hierarchy (/proc/self/cgroup has no 0:: line: cgroup v1 only)")
	}
	// Outside the root of its cgroup namespace a cgroup shows as /../…
	if strings.HasSuffix(path, " (deleted)") || !strings.HasPrefix(path, "/") || strings.Contains(path, "/..") {
		return "", fmt.Errorf("the process's cgroup %q cannot be reached from this namespace", path)
	}
	sc := bufio.NewScanner(strings.NewReader(mountinfo))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS
		f := strings.Fields(sc.Text())
		sep := slices.Index(f, "-")
		if sep < 5 || sep+1 >= len(f) || f[sep+1] != "cgroup2" {
			continue
		}
		root, mountpoint := unescapeMount(f[3]), unescapeMount(f[4])
		rel, ok := strings.CutPrefix(path, root)
		if !ok || (root != "/" && rel != "" && !strings.HasPrefix(rel, "/")) {
			continue
		}
		return filepath.Join(mountpoint, rel), nil
	}
	return "", fmt.Errorf("no cgroup2 file system mounted where the process's cgroup %s shows", path)
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// delegate makes dir, the server's own cgroup, ready to hold one cgroup
// per worker: dir and its interface files must be writable, and at least
// one of the cpu, memory and pids controllers available. Where dir holds
// processes the controllers cannot be handed down (the no-internal-
// processes rule); then, if the server is the only one, it moves itself
// into a leaf of its own, dir/codecall-server, and tries again.
func delegate(dir string, pid int, files cgroupFiles) (*cgroupParent, error) {
	for _, p := range []string{dir, filepath.Join(dir, "cgroup.procs"), filepath.Join(dir, "cgroup.subtree_control")} {
		if err := unix.Faccessat(unix.AT_FDCWD, p, unix.W_OK, unix.AT_EACCESS); err != nil {
			return nil, fmt.Errorf("the server's cgroup %s is not delegated to it (%s: %v); see docs/architecture.md on delegating one", dir, p, err)
		}
	}
	avail, err := readWords(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return nil, fmt.Errorf("reading the controllers of %s: %w", dir, err)
	}
	var want []string
	for _, c := range cgroupControllers {
		if slices.Contains(avail, c) {
			want = append(want, c)
		}
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("the server's cgroup %s has none of the cpu, memory and pids controllers (it has: %s; "+
			"they may be bound to cgroup v1 hierarchies)", dir, orNone(avail))
	}
	enable := func() error {
		enabled, err := readWords(filepath.Join(dir, "cgroup.subtree_control"))
		if err != nil {
			return err
		}
		var add []string
		for _, c := range want {
			if !slices.Contains(enabled, c) {
				add = append(add, "+"+c)
			}
		}
		if len(add) == 0 {
			return nil
		}
		return files.put(filepath.Join(dir, "cgroup.subtree_control"), strings.Join(add, " "))
	}
	err = enable()
	if errors.Is(err, unix.EBUSY) {
		procs, rerr := readWords(filepath.Join(dir, "cgroup.procs"))
		if rerr != nil {
			return nil, fmt.Errorf("reading the processes of %s: %w", dir, rerr)
		}
		self := strconv.Itoa(pid)
		if others := slices.DeleteFunc(procs, func(p string) bool { return p == self }); len(others) > 0 {
			return nil, fmt.Errorf("the server's cgroup %s holds other processes (%s), so it cannot hand controllers to "+
				"the workers' cgroups; give the server a cgroup of its own", dir, strings.Join(clipList(others, 5), " "))
		}
		leaf := filepath.Join(dir, cgroupServerLeaf)
		if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("making a cgroup for the server: %w", err)
		}
		if err := files.put(filepath.Join(leaf, "cgroup.procs"), self); err != nil {
			return nil, fmt.Errorf("moving the server into %s: %w", leaf, err)
		}
		err = enable()
	}
	if err != nil {
		return nil, fmt.Errorf("handing the %s controllers to the workers' cgroups in %s: %w", strings.Join(want, ", "), dir, err)
	}
	removeStaleCgroups(dir)
	return &cgroupParent{dir: dir, controllers: want, files: files}, nil
}

// removeStaleCgroups removes the empty cgroups of workers and launched
// programs of an earlier server in the same cgroup (one that died before
// it could, or, for launched programs, that leaves them to its successor).
func removeStaleCgroups(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() && (strings.HasPrefix(e.Name(), cgroupWorkerPrefix) || strings.HasPrefix(e.Name(), cgroupUpstreamPrefix)) {
			_ = removeCgroupDir(filepath.Join(dir, e.Name()), 1)
		}
	}
}

// serverCgroup is the process's delegated cgroup, found once: moving the
// server into its leaf is done once for all its pools.
var serverCgroup struct {
	once   sync.Once
	parent *cgroupParent
	err    error
}

// delegatedCgroup returns the cgroup delegated to this process, or why it
// has none.
func delegatedCgroup() (*cgroupParent, error) {
	serverCgroup.once.Do(func() {
		pc, err := os.ReadFile("/proc/self/cgroup")
		if err != nil {
			serverCgroup.err = fmt.Errorf("reading /proc/self/cgroup: %w", err)
			return
		}
		mi, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			serverCgroup.err = fmt.Errorf("reading /proc/self/mountinfo: %w", err)
			return
		}
		dir, err := ownCgroupDir(string(pc), string(mi))
		if err != nil {
			serverCgroup.err = err
			return
		}
		serverCgroup.parent, serverCgroup.err = delegate(dir, os.Getpid(), cgroupFiles{})
	})
	return serverCgroup.parent, serverCgroup.err
}

// cgroupsFor returns where the workers' cgroups are made under mode, or
// why there are none; an error only when mode requires them.
func cgroupsFor(mode CgroupMode) (parent *cgroupParent, none string, err error) {
	switch mode {
	case CgroupOff:
		return nil, "sandbox.cgroup is off", nil
	case CgroupAuto, "", CgroupRequired:
	default:
		return nil, "", fmt.Errorf("sandbox: unknown cgroup mode %q (auto, off or required)", mode)
	}
	parent, err = delegatedCgroup()
	if err == nil && mode == CgroupRequired && !slices.Contains(parent.controllers, "memory") {
		err = fmt.Errorf("the server's cgroup %s has no memory controller", parent.dir)
	}
	if err != nil {
		if mode == CgroupRequired {
			return nil, "", fmt.Errorf("sandbox: sandbox.cgroup is required, and workers cannot have a cgroup of their own here: %w", err)
		}
		return nil, err.Error(), nil
	}
	return parent, "", nil
}

// workerCgroup is the cgroup of one worker.
type workerCgroup struct {
	dir string
	fd  int // open on dir until the worker is started in it (CLONE_INTO_CGROUP); -1 after
}

var cgroupSeq atomic.Uint64

// newWorker makes a cgroup for one worker and writes its caps; memory is
// memory.max (0 leaves it unset). It returns the caps the kernel will
// enforce.
func (g *cgroupParent) newWorker(memory int64) (*workerCgroup, CgroupLimits, error) {
	lim := CgroupLimits{Parent: g.dir}
	name := cgroupWorkerPrefix + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(cgroupSeq.Add(1), 10)
	dir := filepath.Join(g.dir, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, lim, fmt.Errorf("sandbox: making the worker's cgroup: %w", err)
	}
	cg := &workerCgroup{dir: dir, fd: -1}
	fail := func(err error) (*workerCgroup, CgroupLimits, error) {
		cg.remove()
		return nil, lim, fmt.Errorf("sandbox: setting the worker's cgroup caps in %s: %w", dir, err)
	}
	has := func(c string) bool { return slices.Contains(g.controllers, c) }
	if has("memory") {
		if memory > 0 {
			if err := g.files.put(filepath.Join(dir, "memory.max"), strconv.FormatInt(memory, 10)); err != nil {
				return fail(err)
			}
			lim.MemoryBytes = memory
		}
		// Absent where the kernel does not account swap: then there is
		// none to cap.
		lim.NoSwap = g.files.put(filepath.Join(dir, "memory.swap.max"), "0") == nil
	}
	if has("pids") {
		if err := g.files.put(filepath.Join(dir, "pids.max"), strconv.Itoa(cgroupPids)); err != nil {
			return fail(err)
		}
		lim.Pids = cgroupPids
	}
	if has("cpu") {
		if err := g.files.put(filepath.Join(dir, "cpu.max"), fmt.Sprintf("%d %d", cgroupCPUQuota, cgroupCPUPeriod)); err != nil {
			return fail(err)
		}
		lim.CPUs = float64(cgroupCPUQuota) / cgroupCPUPeriod
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	cg.fd = fd
	return cg, lim, nil
}

// cloneFD is the descriptor to start the worker in its cgroup with; -1
// for none.
func (cg *workerCgroup) cloneFD() int {
	if cg == nil {
		return -1
	}
	return cg.fd
}

// started closes the descriptor the worker was cloned into the cgroup
// with.
func (cg *workerCgroup) started() {
	if cg != nil && cg.fd >= 0 {
		unix.Close(cg.fd)
		cg.fd = -1
	}
}

// place moves a started process into the cgroup, for kernels without
// CLONE_INTO_CGROUP.
func (cg *workerCgroup) place(pid int) error {
	return cgroupFiles{}.put(filepath.Join(cg.dir, "cgroup.procs"), strconv.Itoa(pid))
}

// oomKills reads how many processes the kernel's OOM killer ended in the
// cgroup (memory.events oom_kill): a worker killed at memory.max.
func (cg *workerCgroup) oomKills() int64 {
	if cg == nil {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(cg.dir, "memory.events"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// remove removes the cgroup of a reaped worker.
func (cg *workerCgroup) remove() {
	if cg == nil {
		return
	}
	cg.started()
	_ = removeCgroupDir(cg.dir, 20)
}

// removeCgroupDir removes an empty cgroup, trying up to tries times 10 ms
// apart while the kernel counts its last process out. On cgroupfs a
// directory goes with its interface files; elsewhere (a test's fake) they
// are removed first.
func removeCgroupDir(dir string, tries int) error {
	var err error
	for range tries {
		if err = unix.Rmdir(dir); err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if errors.Is(err, unix.ENOTEMPTY) {
			if isCgroupFS(dir) {
				return err // a child cgroup: not ours to remove
			}
			return os.RemoveAll(dir)
		}
		if !errors.Is(err, unix.EBUSY) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}

func isCgroupFS(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}

// readWords reads a cgroupfs file of space- or line-separated words.
func readWords(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(b)), nil
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, " ")
}

func clipList(list []string, n int) []string {
	if len(list) > n {
		return append(list[:n:n], "…")
	}
	return list
}

// startErrorNeedsPlacement reports whether starting a process into a
// cgroup failed because the kernel lacks clone3 or CLONE_INTO_CGROUP
// (before Linux 5.7), so the process must be started outside and moved.
func startErrorNeedsPlacement(err error) bool {
	return errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.E2BIG)
}
