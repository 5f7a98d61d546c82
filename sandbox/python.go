package sandbox

import (
	"bytes"
	"context"
	"debug/elf"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/vm"
)

// Python plans run in the same workers as JavaScript ones, confined the
// same way, but the confined process is CPython: the worker (this binary,
// started with pythonArg) confines itself on one locked thread, builds a
// read-only view of the file system that holds the interpreter, its
// standard library and the shared libraries they load, and nothing else,
// and then executes python3 on that thread. No Go code is left running:
// Python is the process the kernel confines, and the bootstrap it runs
// (python/bootstrap.py, passed with -c) speaks the bridge protocol itself.
// The server treats its frames exactly as a Go worker's: nothing the
// bootstrap does is trusted, since the plan shares its process and can
// replace any of it.

// pythonArg is argv[1] of a worker that becomes a Python interpreter. It
// must not start with the C pre-confinement's marker prefix
// ("-codecall-sandbox-"): this worker confines itself in Go, on the thread
// that executes Python, and needs the file system until then.
const pythonArg = "-codecall-python-worker"

//go:embed python/bootstrap.py
var pythonBootstrap string

// MinPythonMinor is the oldest Python 3 minor version that runs plans:
// 3.11, for asyncio.TaskGroup-era asyncio, PyCF_ALLOW_TOP_LEVEL_AWAIT and
// exception notes.
const MinPythonMinor = 11

// Python is an interpreter found on the host, and what a worker must see
// of the file system to run it.
type Python struct {
	// Executable is the interpreter's real path (symbolic links resolved).
	Executable string `json:"executable"`
	// Version is its version, such as "3.11.2".
	Version string `json:"version"`
	// Dirs are the directories of its standard library (lib-dynload
	// included), mounted read-only.
	Dirs []string `json:"dirs"`
	// Files are the shared libraries the interpreter and its extension
	// modules load, with the dynamic loader, as their loaders name them;
	// mounted read-only one by one.
	Files []string `json:"files"`
}

// pythonProbe prints what FindPython needs, run with -I -S: no user site,
// no environment, no site module.
const pythonProbe = `import sys, json, sysconfig, os
p = sysconfig.get_paths()
dirs = [d for d in [p.get("stdlib"), p.get("platstdlib")] + sys.path if d and os.path.isdir(d)]
print(json.dumps({"exe": os.path.realpath(sys.executable), "version": list(sys.version_info[:3]), "dirs": dirs}))`

// FindPython finds the interpreter named by name (a path, or a command
// looked up in PATH; "" means python3), runs it once, isolated, to learn
// its version and standard library, and lists the shared libraries it
// needs. It fails when the interpreter is missing, older than 3.11, or
// cannot be read; the error says which.
func FindPython(ctx context.Context, name string) (*Python, error) {
	if name == "" {
		name = "python3"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("no Python interpreter %q: %w (install python3 3.11 or later, or set sandbox.python to its path)", name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, "-I", "-S", "-c", pythonProbe)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("running %s to read its version: %w: %s", path, err, clip(strings.TrimSpace(stderr.String()), 512))
	}
	var probe struct {
		Exe     string   `json:"exe"`
		Version []int    `json:"version"`
		Dirs    []string `json:"dirs"`
	}
	if err := json.Unmarshal(out.Bytes(), &probe); err != nil || len(probe.Version) != 3 || probe.Exe == "" {
		return nil, fmt.Errorf("%s did not describe itself as a Python 3 interpreter does (got %q)", path, clip(out.String(), 200))
	}
	py := &Python{Executable: probe.Exe, Version: fmt.Sprintf("%d.%d.%d", probe.Version[0], probe.Version[1], probe.Version[2])}
	if probe.Version[0] != 3 || probe.Version[1] < MinPythonMinor {
		return nil, fmt.Errorf("%s is Python %s; Python plans need 3.%d or later", path, py.Version, MinPythonMinor)
	}
	for _, d := range probe.Dirs {
		real, err := filepath.EvalSymlinks(d)
		if err != nil || !filepath.IsAbs(real) {
			continue
		}
		py.Dirs = append(py.Dirs, real)
	}
	py.Dirs = outermost(py.Dirs)
	if len(py.Dirs) == 0 {
		return nil, fmt.Errorf("%s reports no standard library directory", path)
	}
	libs := newLibResolver()
	if err := libs.add(py.Executable); err != nil {
		return nil, fmt.Errorf("reading the shared libraries of %s: %w", py.Executable, err)
	}
	for _, d := range py.Dirs {
		// Extension modules live in lib-dynload; their libraries (libffi,
		// libssl, libz...) are loaded when a plan imports them.
		dyn := filepath.Join(d, "lib-dynload")
		if filepath.Base(d) == "lib-dynload" {
			dyn = d
		}
		entries, _ := os.ReadDir(dyn)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".so") {
				_ = libs.add(filepath.Join(dyn, e.Name())) // a module whose library is missing fails to import, as it would outside
			}
		}
	}
	for _, f := range libs.files {
		if !under(f, py.Dirs) {
			py.Files = append(py.Files, f)
		}
	}
	if !under(py.Executable, py.Dirs) {
		py.Files = append(py.Files, py.Executable)
	}
	slices.Sort(py.Files)
	return py, nil
}

// outermost drops directories inside others of the list.
func outermost(dirs []string) []string {
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	var out []string
	for _, d := range dirs {
		if !under(d, out) {
			out = append(out, d)
		}
	}
	return out
}

// under reports whether path is one of dirs or inside one.
func under(path string, dirs []string) bool {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// libResolver lists an ELF object's dynamic loader and the shared
// libraries it needs, transitively, as the loader would find them in the
// usual directories (RPATH and RUNPATH, with $ORIGIN, first). It does not
// read ld.so.cache: a library only the cache knows is not found, and the
// module that needs it fails to import in a plan.
type libResolver struct {
	seen  map[string]bool
	files []string
}

func newLibResolver() *libResolver { return &libResolver{seen: map[string]bool{}} }

// libDirs are searched after an object's own RUNPATH.
var libDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
	"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib"}

func (r *libResolver) add(path string) error {
	if r.seen[path] {
		return nil
	}
	r.seen[path] = true
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err == nil {
			interp := strings.TrimRight(string(b), "\x00")
			if !r.seen[interp] {
				r.seen[interp] = true
				r.files = append(r.files, interp)
			}
		}
	}
	needed, _ := f.DynString(elf.DT_NEEDED)
	var search []string
	for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
		paths, _ := f.DynString(tag)
		for _, p := range paths {
			for _, d := range strings.Split(p, ":") {
				search = append(search, strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", filepath.Dir(path)), "$ORIGIN", filepath.Dir(path)))
			}
		}
	}
	search = append(search, filepath.Join(filepath.Dir(filepath.Dir(path)), "lib"))
	search = append(search, libDirs...)
	for _, lib := range needed {
		for _, d := range search {
			p := filepath.Join(d, lib)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				if !r.seen[p] {
					r.files = append(r.files, p)
					if err := r.add(p); err != nil {
						return err
					}
				}
				break
			}
		}
	}
	return nil
}

// args are a Python worker's arguments after the limits.
func (py *Python) args() []string {
	out := []string{"py.exe=" + py.Executable}
	for _, d := range py.Dirs {
		out = append(out, "py.dir="+d)
	}
	for _, f := range py.Files {
		out = append(out, "py.file="+f)
	}
	return out
}

// parsePythonArgs reads what args wrote.
func parsePythonArgs(args []string) (*Python, error) {
	py := &Python{}
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "py.exe":
			py.Executable = v
		case "py.dir":
			py.Dirs = append(py.Dirs, v)
		case "py.file":
			py.Files = append(py.Files, v)
		}
	}
	if py.Executable == "" || len(py.Dirs) == 0 {
		return nil, errors.New("the worker's command line names no Python interpreter")
	}
	return py, nil
}

// WithPython makes the pool's workers Python interpreters (see FindPython):
// the pool runs Python plans (RunPython), and only those.
func WithPython(py *Python) Option {
	return func(c *poolConfig) {
		c.python = py
		c.marker = pythonArg
	}
}

// Python returns the interpreter the pool's workers run, nil for a pool
// of JavaScript workers.
func (p *Pool) Python() *Python { return p.cfg.python }

// RunPython runs a Python plan in a fresh worker of a pool made WithPython
// and returns its result, with the statuses, limits and bounds of a
// JavaScript run: host answers every tool call through the gate, the
// server holds the worker to the run's budgets, and a worker that breaks
// the protocol, outlives the timeout or dies is killed and reported with
// its cause. The interpreter compiles the plan itself: a syntax error comes
// back as syntax_error with its line and column in source. With
// opts.Replay the run is repeatable as a JavaScript one is (vm.Replay):
// each call and discovery reaches host with its vm.CallIndex, and the
// bootstrap seeds random and uuid, gives the plan a virtual clock, settles
// replies in call order, fires timers only with no call in flight and
// fixes the interpreter's hash key (docs/architecture.md, "Python under
// vm.Replay").
func (p *Pool) RunPython(ctx context.Context, source string, host vm.Host, opts vm.Options) *vm.Result {
	if p.cfg.python == nil {
		return &vm.Result{Status: vm.StatusIllegalAccess, RunID: opts.RunID, ToolTrace: []vm.TraceEntry{},
			Error: &vm.ErrorInfo{Kind: vm.KindIsolation, Message: "this sandbox pool runs JavaScript workers, not Python"}}
	}
	// The rules stay empty: the bootstrap reads only the source, options
	// and context of its run request.
	return p.run(ctx, source, ast.Rules{}, host, opts)
}

// pythonAddressReserve is what a Python worker may map beyond the run's
// memory budget: the interpreter, its libraries and modules, and thread
// stacks.
const pythonAddressReserve = 384 << 20

// pythonOpenFiles is RLIMIT_NOFILE of a Python worker: its pipes, the
// modules it is importing, the event loop's descriptors and a plan's
// scratch files.
const pythonOpenFiles = 64

// pythonScratchBytes is the size of the writable /tmp a Python plan gets.
const pythonScratchBytes = 16 << 20
