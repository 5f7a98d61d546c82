package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Profile is how the sandbox confines a long-running program it launches
// for its caller, such as a stdio MCP server a gateway starts: in new user,
// pid, mount, ipc and uts namespaces (and net, unless Network), seeing
// only a view of the file system (the system's runtime directories read-only,
// Dir and Paths), with no_new_privs, no capabilities, a Landlock ruleset
// matching the view where the kernel has Landlock, and rlimits. Unlike a
// plan's worker, the program may open files inside its view, start
// processes and use the system calls it needs: the walls are the
// namespaces, the view and the limits, not a system-call allowlist.
//
// The zero Profile is the strictest: no network, a view without a
// writable directory but its own /tmp, and the default limits.
type Profile struct {
	// Network keeps the host's network (no net namespace). Without it the
	// program has a loopback interface of its own and no route out.
	Network bool `json:"network,omitempty"`
	// Dir is the program's working directory, read-write in its view; ""
	// is none (the working directory is then its own /tmp).
	Dir string `json:"dir,omitempty"`
	// Paths are further files and directories in the view.
	Paths []ViewPath `json:"paths,omitempty"`
	// MaxMemoryBytes caps the program's writable private memory (RLIMIT_DATA),
	// per process; 0 is DefaultLaunchMemory.
	MaxMemoryBytes int64 `json:"maxMemoryBytes,omitempty"`
	// MaxProcesses caps the processes and threads of the program's user
	// (RLIMIT_NPROC, counted within its user namespace); 0 is
	// DefaultLaunchProcesses.
	MaxProcesses int64 `json:"maxProcesses,omitempty"`
	// Home is the user's home directory, whose package caches (npm, pip,
	// uv, nvm) are read-only in the view; "" leaves them out.
	Home string `json:"home,omitempty"`
	// Name names the program's cgroup (an upstream's name): a program
	// started again under the same name reuses it.
	Name string `json:"name,omitempty"`
	// Cgroup says whether the program gets a cgroup v2 of its own, as
	// sandbox.cgroup does for plan workers: under auto (""), where one is
	// delegated to the server, memory.max is MaxMemoryBytes for the whole
	// program, pids.max MaxProcesses (enforced for every user, root in its
	// namespace included) and cpu.max one CPU, on top of the rlimits;
	// under required, Command fails without one; off uses none.
	Cgroup CgroupMode `json:"-"`
	// CgroupDir is a cgroup v2 directory the launcher joins before it
	// confines itself: one the caller made, or, when empty, the one
	// Command makes under Cgroup.
	CgroupDir string `json:"cgroupDir,omitempty"`
}

// ViewPath is a file or directory of the host shown in a launched
// program's view at the same path.
type ViewPath struct {
	Path string `json:"path"`
	// Write makes it writable; otherwise it is read-only.
	Write bool `json:"write,omitempty"`
}

// The default limits of a launched program.
const (
	DefaultLaunchMemory    = 4 << 30
	DefaultLaunchProcesses = 512
	// launchOpenFiles is RLIMIT_NOFILE of a launched program.
	launchOpenFiles = 4096
	// launchTmpBytes is the size of the program's own /tmp.
	launchTmpBytes = 256 << 20
)

// runtimeDirs are the system directories every view holds read-only, so
// that interpreters (node, python3) and their libraries run. /etc is not
// among them: only the files of etcFiles are.
var runtimeDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix/store"}

// etcFiles are the files of /etc in every view, read-only: name service
// and TLS configuration, the dynamic linker's cache, the time zone, and
// the alternatives that /usr/bin links to. Not shadow, not ssh keys.
var etcFiles = []string{
	"/etc/alternatives", "/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/etc/resolv.conf", "/etc/hosts",
	"/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/localtime", "/etc/ld.so.cache", "/etc/ld.so.conf",
	"/etc/ld.so.conf.d", "/etc/mime.types", "/etc/os-release",
}

// homeCaches are the directories under the home directory that hold
// package managers' caches and user-installed runtimes, read-only.
var homeCaches = []string{".npm", ".nvm", ".cache/pip", ".cache/uv", ".local/lib", ".local/share/uv", ".pyenv", ".volta"}

// devFiles are the device files every view holds.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// View returns every file and directory of the host the profile shows
// (that exists), with its access; /dev's few device files, a /proc of the
// program's own and a private /tmp come on top.
func (p Profile) View() []ViewPath {
	var out []ViewPath
	add := func(path string, write bool) {
		if _, err := os.Stat(path); err == nil {
			out = append(out, ViewPath{Path: filepath.Clean(path), Write: write})
		}
	}
	for _, d := range runtimeDirs {
		add(d, false)
	}
	for _, f := range etcFiles {
		add(f, false)
	}
	if p.Home != "" {
		for _, c := range homeCaches {
			add(filepath.Join(p.Home, c), false)
		}
	}
	if p.Dir != "" {
		add(p.Dir, true)
	}
	for _, v := range p.Paths {
		add(v.Path, v.Write)
	}
	return out
}

// ViewError is a launch refused because a file the program needs lies
// outside its view. Rule names the setting that would show it.
type ViewError struct {
	What string // "the command", "argument 2"
	Path string
	Rule string
}

func (e *ViewError) Error() string {
	return fmt.Sprintf("sandbox: %s %q is outside the upstream's file-system view (%s)", e.What, e.Path, e.Rule)
}

// Command returns the command that runs name with args and exactly the
// environment env inside the profile, through this binary re-executed as
// a launcher. name is looked up on env's PATH when it has no slash. It
// fails, with a *ViewError, when the program or an argument that is an
// absolute path of an existing file lies outside the view: such a program
// would fail at start with a less helpful message of its own.
func (p Profile) Command(name string, args, env []string) (*exec.Cmd, error) {
	if !supported {
		return nil, errors.New("sandbox: launching a confined program needs Linux; set sandbox: none to run it unconfined")
	}
	if p.Dir != "" && !filepath.IsAbs(p.Dir) {
		return nil, fmt.Errorf("sandbox: the working directory %q is not an absolute path", p.Dir)
	}
	path, err := lookPathIn(name, env, p.Dir)
	if err != nil {
		return nil, err
	}
	view := p.View()
	if !inView(view, path) {
		return nil, &ViewError{What: "the command", Path: path, Rule: fmt.Sprintf("add %q to paths (read-only: %q), or set sandbox: none", filepath.Dir(path), filepath.Dir(path)+":ro")}
	}
	for i, a := range args {
		if !filepath.IsAbs(a) {
			continue
		}
		// /tmp is in every view, as a private tmpfs of the program's own.
		if _, err := os.Stat(a); err != nil || inView(view, a) || filepath.Clean(a) == "/tmp" {
			continue
		}
		return nil, &ViewError{What: fmt.Sprintf("argument %d", i+1), Path: a, Rule: fmt.Sprintf("add %q to paths (read-only: %q), or set sandbox: none", a, a+":ro")}
	}
	if p.CgroupDir == "" {
		mem, procs := p.limits()
		if p.CgroupDir, _, err = launchCgroup(p.Cgroup, p.Name, mem, procs); err != nil {
			return nil, err
		}
	}
	spec, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/proc/self/exe", append([]string{launcherArg, string(spec), path}, args...)...)
	cmd.Env = env
	cmd.SysProcAttr = launchAttr(p.Network)
	return cmd, nil
}

// launcherArg is argv[1] of the launcher: the binary re-executed to
// confine itself and start the program named after its profile. It must
// not start with "-codecall-sandbox-": in cgo builds a C constructor
// confines every process whose argv[1] does, before Go starts, as a plan's
// worker (preconfine_linux.c), which would leave the launcher no file
// system to build a view from.
const launcherArg = "-codecall-launch-confined"

// inView reports whether path, its symbolic links resolved, lies inside
// one of the view's paths.
func inView(view []ViewPath, path string) bool {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	return slices.ContainsFunc(view, func(v ViewPath) bool {
		root := v.Path
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real
		}
		return path == root || strings.HasPrefix(path, strings.TrimSuffix(root, "/")+"/")
	})
}

// lookPathIn finds name as execve would with env's PATH: a name with a
// slash is a path (relative to dir), a bare name is searched on PATH.
func lookPathIn(name string, env []string, dir string) (string, error) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) && dir != "" {
			name = filepath.Join(dir, name)
		}
		abs, err := filepath.Abs(name)
		if err != nil {
			return "", err
		}
		if st, err := os.Stat(abs); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("sandbox: the command %q is not an executable file", abs)
		}
		return abs, nil
	}
	var pathVar string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	for _, d := range filepath.SplitList(pathVar) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("sandbox: the command %q is not on the upstream's PATH (%s)", name, pathVar)
}

// limits are the program's memory and process caps, defaults applied.
func (p Profile) limits() (memory, processes int64) {
	memory, processes = p.MaxMemoryBytes, p.MaxProcesses
	if memory <= 0 {
		memory = DefaultLaunchMemory
	}
	if processes <= 0 {
		processes = DefaultLaunchProcesses
	}
	return memory, processes
}
