//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// cgroupUpstreamPrefix starts the name of every launched program's cgroup.
const cgroupUpstreamPrefix = "codecall-upstream-"

// launchCgroup makes (or reuses) the cgroup of a launched program under
// the cgroup delegated to the server, with its caps written, and returns
// its directory; "" and why when there is none (mode off, or no
// delegated cgroup under auto). The directory's name is the server's pid
// and the program's name, so a restarted upstream reuses its cgroup
// rather than leaving one per start; a later server removes those of a
// server that is gone.
func launchCgroup(mode CgroupMode, name string, memory, procs int64) (dir, none string, err error) {
	parent, none, err := cgroupsFor(mode)
	if parent == nil {
		return "", none, err
	}
	return parent.newLaunched(name, memory, procs)
}

func (g *cgroupParent) newLaunched(name string, memory, procs int64) (string, string, error) {
	dir := filepath.Join(g.dir, cgroupUpstreamPrefix+strconv.Itoa(os.Getpid())+"-"+cgroupSafeName(name))
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return "", "", fmt.Errorf("sandbox: making the cgroup of %q: %w", name, err)
	}
	has := func(c string) bool { return slices.Contains(g.controllers, c) }
	var writes [][2]string
	if has("memory") {
		writes = append(writes, [2]string{"memory.max", strconv.FormatInt(memory, 10)})
	}
	if has("pids") {
		writes = append(writes, [2]string{"pids.max", strconv.FormatInt(procs, 10)})
	}
	if has("cpu") {
		writes = append(writes, [2]string{"cpu.max", fmt.Sprintf("%d %d", cgroupCPUQuota, cgroupCPUPeriod)})
	}
	for _, w := range writes {
		if err := g.files.put(filepath.Join(dir, w[0]), w[1]); err != nil {
			return "", "", fmt.Errorf("sandbox: setting %s of %q's cgroup %s: %w", w[0], name, dir, err)
		}
	}
	return dir, "", nil
}

// cgroupSafeName keeps a program's name to the characters a cgroup's
// directory name may safely hold.
func cgroupSafeName(name string) string {
	if name == "" {
		return "program-" + strconv.FormatUint(cgroupSeq.Add(1), 10)
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
}

// joinCgroup moves the launcher, before it confines itself, into the
// cgroup Profile.Command made for it; the program it starts is born there.
// Its pid is the one its pid namespace gives it, which is how cgroupfs
// reads a pid written by a process in that namespace.
func joinCgroup(dir string) error {
	return cgroupFiles{}.put(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(os.Getpid()))
}
