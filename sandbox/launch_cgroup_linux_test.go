//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLaunchedCgroup covers the cgroup a launched program gets under a
// delegated cgroup: its caps, its name, and its reuse when the program
// starts again under the same name.
func TestLaunchedCgroup(t *testing.T) {
	dir, files := fakeCgroup(t, "cpu memory pids", []int{os.Getpid()}, false)
	stale := filepath.Join(dir, cgroupUpstreamPrefix+"1-fs")
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	g, err := delegate(dir, os.Getpid(), files)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("an earlier server's upstream cgroup was left: %v", err)
	}
	tests := []struct {
		name        string
		memory      int64
		procs       int64
		wantDirName string
	}{
		{"fs", 1 << 30, 32, cgroupUpstreamPrefix + strconv.Itoa(os.Getpid()) + "-fs"},
		{"../../escape me", 2 << 30, 8, cgroupUpstreamPrefix + strconv.Itoa(os.Getpid()) + "-______escape_me"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, none, err := g.newLaunched(tc.name, tc.memory, tc.procs)
			if err != nil || none != "" {
				t.Fatalf("newLaunched: %q, %q, %v", got, none, err)
			}
			if got != filepath.Join(dir, tc.wantDirName) {
				t.Errorf("cgroup %s, want %s under %s", got, tc.wantDirName, dir)
			}
			for f, v := range map[string]string{"memory.max": strconv.FormatInt(tc.memory, 10), "pids.max": strconv.FormatInt(tc.procs, 10), "cpu.max": "100000 100000"} {
				if b := readFile(t, filepath.Join(got, f)); b != v {
					t.Errorf("%s is %q, want %q", f, b, v)
				}
			}
			// Started again: the same cgroup, its caps written anew.
			again, _, err := g.newLaunched(tc.name, tc.memory/2, tc.procs)
			if err != nil || again != got {
				t.Errorf("started again: %q, %v; want %q", again, err, got)
			}
			if b := readFile(t, filepath.Join(got, "memory.max")); b != strconv.FormatInt(tc.memory/2, 10) {
				t.Errorf("memory.max after the restart is %q", b)
			}
		})
	}
}

// TestLaunchJoinsCgroup runs the launcher with a cgroup directory of the
// caller's: it writes its pid there (the pid its namespace gives it, as
// cgroupfs reads it) before it confines itself and starts the program.
func TestLaunchJoinsCgroup(t *testing.T) {
	launchable(t)
	dir := t.TempDir()
	procs := filepath.Join(dir, "cgroup.procs")
	if err := os.WriteFile(procs, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runLaunched(t, Profile{Cgroup: CgroupOff, CgroupDir: dir}, "echo started")
	if err != nil || !strings.Contains(out, "started") {
		t.Fatalf("err %v, output %q", err, out)
	}
	if got := readFile(t, procs); got != "1" {
		t.Errorf("cgroup.procs holds %q, want the launcher's pid in its namespace, 1", got)
	}

	// A cgroup it cannot join stops it before the program starts, saying
	// which rule and how to do without.
	out, err = runLaunched(t, Profile{Cgroup: CgroupOff, CgroupDir: filepath.Join(dir, "missing")}, "echo started")
	if err == nil || strings.Contains(out, "started") || !strings.Contains(out, "joining its cgroup") || !strings.Contains(out, "sandbox.cgroup: off") {
		t.Errorf("err %v, output %q; want a refusal naming the cgroup rule", err, out)
	}
}
