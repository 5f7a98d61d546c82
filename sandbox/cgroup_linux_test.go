//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
	"golang.org/x/sys/unix"
)

func TestOwnCgroupDir(t *testing.T) {
	const unified = "35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n"
	const hybrid = "30 25 0:26 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n" +
		"40 25 0:35 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
	tests := []struct {
		name, cgroup, mountinfo, want, err string
	}{
		{"unified root", "0::/\n", unified, "/sys/fs/cgroup", ""},
		{"systemd service", "0::/system.slice/codecall.service\n", unified, "/sys/fs/cgroup/system.slice/codecall.service", ""},
		{"hybrid", "4:memory:/x\n1:cpu:/\n0::/\n", hybrid, "/sys/fs/cgroup/unified", ""},
		{"a mount of a subtree", "0::/docker/abc/sub\n", "50 40 0:30 /docker/abc /cg rw - cgroup2 cgroup2 rw\n", "/cg/sub", ""},
		{"not under the subtree", "0::/docker/abcd\n", "50 40 0:30 /docker/abc /cg rw - cgroup2 cgroup2 rw\n", "", "no cgroup2 file system mounted"},
		{"escaped mount point", "0::/w\n", `50 40 0:30 / /tmp/my\040cg rw - cgroup2 cgroup2 rw` + "\n", "/tmp/my cg/w", ""},
		{"cgroup v1 only", "4:memory:/x\n1:cpu:/\n", hybrid, "", "cgroup v1 only"},
		{"no cgroup2 mount", "0::/\n", "30 25 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n", "", "no cgroup2 file system mounted"},
		{"another namespace's cgroup", "0::/../other\n", unified, "", "cannot be reached"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ownCgroupDir(tc.cgroup, tc.mountinfo)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %q, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// fakeCgroup lays out a directory as cgroupfs shows a cgroup, with the
// given controllers and processes, and returns it with file operations
// that write as the kernel would, refusing the first change of
// cgroup.subtree_control with EBUSY when busy is set (the cgroup holds
// processes).
func fakeCgroup(t *testing.T, controllers string, procs []int, busy bool) (string, cgroupFiles) {
	t.Helper()
	dir := t.TempDir()
	var ps []string
	for _, p := range procs {
		ps = append(ps, strconv.Itoa(p))
	}
	for name, v := range map[string]string{
		"cgroup.controllers": controllers + "\n", "cgroup.subtree_control": "\n", "cgroup.procs": strings.Join(ps, "\n") + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := cgroupFiles{write: func(path, value string) error {
		if busy && path == filepath.Join(dir, "cgroup.subtree_control") {
			busy = false
			return unix.EBUSY
		}
		if strings.HasSuffix(path, "cgroup.subtree_control") {
			value = strings.NewReplacer("+", "").Replace(value)
		}
		return os.WriteFile(path, []byte(value), 0o644)
	}}
	return dir, files
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestDelegate(t *testing.T) {
	self := os.Getpid()
	t.Run("controllers handed down", func(t *testing.T) {
		dir, files := fakeCgroup(t, "cpuset cpu io memory hugetlb pids", []int{self}, false)
		stale := filepath.Join(dir, cgroupWorkerPrefix+"1-1")
		if err := os.Mkdir(stale, 0o755); err != nil {
			t.Fatal(err)
		}
		g, err := delegate(dir, self, files)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(g.controllers, []string{"cpu", "memory", "pids"}) {
			t.Errorf("controllers %v", g.controllers)
		}
		if got := readFile(t, filepath.Join(dir, "cgroup.subtree_control")); got != "cpu memory pids" {
			t.Errorf("subtree_control %q", got)
		}
		if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a stale worker cgroup was left: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, cgroupServerLeaf)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the server moved without need: %v", err)
		}

		cg, lim, err := g.newWorker(384 << 20)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"memory.max": "402653184", "memory.swap.max": "0", "pids.max": "64", "cpu.max": "100000 100000"}
		for f, v := range want {
			if got := readFile(t, filepath.Join(cg.dir, f)); got != v {
				t.Errorf("%s is %q, want %q", f, got, v)
			}
		}
		if lim != (CgroupLimits{Parent: dir, MemoryBytes: 384 << 20, NoSwap: true, Pids: 64, CPUs: 1}) {
			t.Errorf("limits %+v", lim)
		}
		if cg.fd < 0 {
			t.Error("no descriptor to start the worker in its cgroup with")
		}
		if err := os.WriteFile(filepath.Join(cg.dir, "memory.events"), []byte("low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if n := cg.oomKills(); n != 1 {
			t.Errorf("oom kills %d, want 1", n)
		}
		cg.remove()
		if _, err := os.Stat(cg.dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the worker's cgroup was not removed: %v", err)
		}
	})
	t.Run("the server moves into a leaf", func(t *testing.T) {
		dir, files := fakeCgroup(t, "memory pids", []int{self}, true)
		g, err := delegate(dir, self, files)
		if err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, filepath.Join(dir, cgroupServerLeaf, "cgroup.procs")); got != strconv.Itoa(self) {
			t.Errorf("the leaf holds %q, want the server %d", got, self)
		}
		if !slices.Equal(g.controllers, []string{"memory", "pids"}) {
			t.Errorf("controllers %v", g.controllers)
		}
		cg, lim, err := g.newWorker(0)
		if err != nil {
			t.Fatal(err)
		}
		defer cg.remove()
		if _, err := os.Stat(filepath.Join(cg.dir, "memory.max")); err == nil || lim.MemoryBytes != 0 || lim.CPUs != 0 || lim.Pids != 64 {
			t.Errorf("limits %+v (memory.max: %v)", lim, err)
		}
	})
	t.Run("other processes in the cgroup", func(t *testing.T) {
		dir, files := fakeCgroup(t, "memory pids", []int{self, 1}, true)
		_, err := delegate(dir, self, files)
		if err == nil || !strings.Contains(err.Error(), "holds other processes (1)") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("no controller to hand down", func(t *testing.T) {
		dir, files := fakeCgroup(t, "hugetlb", []int{self}, false)
		_, err := delegate(dir, self, files)
		if err == nil || !strings.Contains(err.Error(), "none of the cpu, memory and pids controllers (it has: hugetlb") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("not a cgroup", func(t *testing.T) {
		_, err := delegate(t.TempDir(), self, cgroupFiles{})
		if err == nil || !strings.Contains(err.Error(), "not delegated") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestCgroupModes(t *testing.T) {
	if g, none, err := cgroupsFor(CgroupOff); g != nil || err != nil || none != "sandbox.cgroup is off" {
		t.Errorf("off: %v %q %v", g, none, err)
	}
	if _, _, err := cgroupsFor("sometimes"); err == nil {
		t.Error("an unknown mode was accepted")
	}
	g, none, err := cgroupsFor(CgroupAuto)
	if err != nil || (g == nil) == (none == "") {
		t.Errorf("auto: %v %q %v", g, none, err)
	}
	t.Logf("here: cgroup %v, or none because %s", g, none)
	if g == nil || !slices.Contains(g.controllers, "memory") {
		if _, _, err := cgroupsFor(CgroupRequired); err == nil {
			t.Error("required: no error without a cgroup with the memory controller")
		}
	}
}

// liveCgroup returns the cgroup this process may make workers' cgroups
// in: its delegated cgroup, or, where that has no controller to hand
// down, its own cgroup if it may write there, so that placement and
// removal can still be checked. It skips, saying why, where there is
// none.
func liveCgroup(t *testing.T) *cgroupParent {
	g, err := delegatedCgroup()
	if err == nil {
		return g
	}
	pc, _ := os.ReadFile("/proc/self/cgroup")
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	dir, derr := ownCgroupDir(string(pc), string(mi))
	if derr != nil {
		t.Skipf("no cgroup v2 here: %v", derr)
	}
	for _, p := range []string{dir, filepath.Join(dir, "cgroup.procs")} {
		if err := unix.Faccessat(unix.AT_FDCWD, p, unix.W_OK, unix.AT_EACCESS); err != nil {
			t.Skipf("this process's cgroup v2 %s is not writable (%v): %v", dir, err, derr)
		}
	}
	t.Logf("no delegated cgroup with controllers (%v); checking placement in %s without caps", err, dir)
	return &cgroupParent{dir: dir}
}

// TestCgroupPlacement starts workers in cgroups of their own, as the
// kernel reports it, and checks each cgroup is removed once its worker
// has been reaped.
func TestCgroupPlacement(t *testing.T) {
	g := liveCgroup(t)
	p := newTestPool(t, withCgroupParent(g), WithSize(1))
	if c := p.Confinement(); c.Cgroup == nil || c.Cgroup.Parent != g.dir {
		t.Fatalf("confinement %+v", c)
	}
	w, tk, _, err := p.acquire(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	dir := w.cgroup.dir
	b, err := os.ReadFile("/proc/" + strconv.Itoa(w.pid) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "0::") || !strings.HasSuffix(strings.TrimSpace(string(b)), "/"+filepath.Base(dir)) {
		t.Errorf("the worker is in %q, want %s", b, dir)
	}
	if slices.Contains(g.controllers, "pids") {
		if got := readFile(t, filepath.Join(dir, "pids.max")); got != "64" {
			t.Errorf("pids.max %q", got)
		}
	}
	if slices.Contains(g.controllers, "memory") {
		if got := readFile(t, filepath.Join(dir, "memory.max")); got != strconv.FormatInt(p.Confinement().Cgroup.MemoryBytes, 10) {
			t.Errorf("memory.max %q, want %d", got, p.Confinement().Cgroup.MemoryBytes)
		}
	}
	w.kill("test")
	p.retire(w)
	p.release(tk)
	<-w.exited
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the worker's cgroup %s is left after it was reaped: %v", dir, err)
	}
	if res := run(t, p, newTestHost(), "return 1 + 1", limits(t)); res.Status != vm.StatusOK {
		t.Fatalf("run: %s %+v", res.Status, res.Error)
	}
}

// TestCgroupMemoryCap lets a plan keep what it allocates, with the
// runtime's budget out of the way (16 GiB): the worker's cgroup's
// memory.max stops it long before RLIMIT_AS, and the run says the plan
// ran out of memory at the cgroup's cap.
func TestCgroupMemoryCap(t *testing.T) {
	if raceEnabled {
		t.Skip("no memory.max under the race detector (its shadow memory is many times the heap)")
	}
	g := liveCgroup(t)
	if !slices.Contains(g.controllers, "memory") {
		t.Skipf("the cgroup %s has no memory controller to cap a worker with (its controllers: %s)", g.dir,
			orNone(must(readWords(filepath.Join(g.dir, "cgroup.controllers")))))
	}
	pl, _ := presets.LimitsFor(presets.Balanced)
	pl.MemoryBytes = 64 << 20
	pl.Timeout = 30 * time.Second
	p := newTestPool(t, withCgroupParent(g), WithLimits(pl), WithSize(1))
	l := pl
	l.MemoryBytes = 16 << 30
	script := "const keep = []; for (;;) keep.push('x'.repeat(1 << 24) + keep.length)"
	rules := ast.RulesFor(l)
	checked, err := ast.Validate(script, rules)
	if err != nil {
		t.Fatal(err)
	}
	res := p.Run(context.Background(), script, checked, rules, newTestHost(), vm.Options{RunID: "m", Limits: l, Context: json.RawMessage(`{}`)})
	if res.Status != vm.StatusLimitExceeded || res.Error == nil || res.Error.Limit != vm.LimitMemory || !strings.Contains(res.Error.Message, "memory.max") {
		t.Fatalf("status %s %+v, want limit_exceeded memoryBytes at memory.max", res.Status, res.Error)
	}
	t.Logf("%s", res.Error.Message)
	if k := p.Stats().Kills; k[causeMemory] != 1 || len(k) != 1 {
		t.Errorf("kills %v, want one memory kill", k)
	}
}

func withCgroupParent(g *cgroupParent) Option { return func(c *poolConfig) { c.cgroupParent = g } }

func must[T any](v T, _ error) T { return v }
