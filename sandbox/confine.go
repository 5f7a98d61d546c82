package sandbox

import (
	"strconv"
	"strings"
)

// Confinement is what confines a worker: what it applied to itself before
// it took its plan, as it reports it and as far as the server checked it
// in /proc, and the cgroup the server put it in. Every field is a wall: a
// false or empty one is a wall this host did not offer.
type Confinement struct {
	// Namespaces the worker runs in, of user, pid, net, mount, ipc, uts.
	Namespaces []string `json:"namespaces"`
	// EmptyRoot is set when the worker's root is an empty, read-only file
	// system: no file of the host can be named.
	EmptyRoot bool `json:"emptyRoot"`
	// PythonView is set for a Python worker, whose root holds only the
	// interpreter, its standard library and the shared libraries they
	// load, read-only, and a small scratch tmpfs at /tmp.
	PythonView bool `json:"pythonView,omitempty"`
	// Landlock is set when a Landlock ruleset denies every file access
	// (and, from Landlock ABI 4, every TCP bind and connect), and the
	// worker found it in force: its empty root, readable by its mode, is
	// refused.
	Landlock bool `json:"landlock"`
	// LandlockABI is the kernel's Landlock ABI version the ruleset was
	// built for (0: no Landlock).
	LandlockABI int `json:"landlockAbi"`
	// NoNewPrivs is set when the worker can never gain privileges by exec.
	NoNewPrivs bool `json:"noNewPrivs"`
	// Seccomp is set when the system-call allowlist is in force.
	Seccomp bool `json:"seccomp"`
	// CapabilitiesDropped is set when the worker holds no capability, even
	// in its own user namespace: its effective, permitted, inheritable,
	// ambient and bounding sets are empty, on every thread.
	CapabilitiesDropped bool `json:"capabilitiesDropped"`
	// CheckedThreads is how many threads of the worker the server read in
	// /proc (/proc/PID/task/TID/status) once the worker was ready.
	// NoNewPrivs, Seccomp and CapabilitiesDropped hold only where every
	// one of them agreed; 0 means the server could not read them, and
	// those three are the worker's word.
	CheckedThreads int `json:"checkedThreads"`
	// AddressSpaceBytes is RLIMIT_AS, the kernel's cap on the worker's
	// memory (0: none).
	AddressSpaceBytes int64 `json:"addressSpaceBytes"`
	// CPUSeconds is the soft RLIMIT_CPU, in CPU-seconds over all threads
	// (0: none); the hard limit is one second more.
	CPUSeconds int64 `json:"cpuSeconds"`
	// OpenFiles is RLIMIT_NOFILE.
	OpenFiles int64 `json:"openFiles"`
	// Cgroup is the cgroup v2 of its own each worker runs in, with the
	// caps the kernel enforces through it; nil when workers have none,
	// and the rlimits above are the only kernel caps.
	Cgroup *CgroupLimits `json:"cgroup,omitempty"`
	// NoCgroup says why workers have no cgroup of their own, when they
	// have none.
	NoCgroup string `json:"noCgroup,omitempty"`
}

// workerLimits are the kernel limits a worker sets on itself, passed on its
// command line (they are the server's configuration, not the plan's).
type workerLimits struct {
	addressSpace int64 // RLIMIT_AS in bytes; 0 leaves it alone
	cpuSeconds   int64 // RLIMIT_CPU; 0 leaves it alone
	memoryBytes  int64 // the Go runtime's soft memory limit (debug.SetMemoryLimit); 0 leaves it alone
	// stackDepth and console are the pool's plan limits that a run's
	// hardened runtime is built for (vm.Runtimes): the worker builds it
	// before it reports ready. They confine nothing.
	stackDepth int64
	console    bool
	// serverNS are the server's namespace identities by kind, to tell
	// which namespaces the worker does not share.
	serverNS map[string]string
}

func (l workerLimits) args() []string {
	out := []string{
		"as=" + strconv.FormatInt(l.addressSpace, 10),
		"cpu=" + strconv.FormatInt(l.cpuSeconds, 10),
		"mem=" + strconv.FormatInt(l.memoryBytes, 10),
		"stack=" + strconv.FormatInt(l.stackDepth, 10),
		"console=" + strconv.FormatBool(l.console),
	}
	for k, v := range l.serverNS {
		out = append(out, "ns."+k+"="+v)
	}
	return out
}

func parseWorkerArgs(args []string) workerLimits {
	l := workerLimits{serverNS: map[string]string{}}
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		if kind, ok := strings.CutPrefix(k, "ns."); ok {
			l.serverNS[kind] = v
			continue
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "as":
			l.addressSpace = n
		case "cpu":
			l.cpuSeconds = n
		case "mem":
			l.memoryBytes = n
		case "stack":
			l.stackDepth = n
		case "console":
			l.console = v == "true"
		}
	}
	return l
}
