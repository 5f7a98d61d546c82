package sandbox

import (
	"context"
	"fmt"
	"strings"
)

// CgroupMode says whether each worker gets a cgroup v2 of its own, whose
// caps the kernel enforces on resident memory, processes and CPU share.
type CgroupMode string

// Cgroup modes.
const (
	// CgroupAuto gives each worker a cgroup where a cgroup v2 subtree is
	// delegated to the server (systemd's Delegate=yes, or a container's
	// own writable cgroup namespace) and has at least one of the memory,
	// pids and cpu controllers; elsewhere the rlimits alone cap a worker.
	// It is the default.
	CgroupAuto CgroupMode = "auto"
	// CgroupOff never uses cgroups: the rlimits alone cap a worker.
	CgroupOff CgroupMode = "off"
	// CgroupRequired makes New fail where a worker cannot have a cgroup
	// with the memory controller.
	CgroupRequired CgroupMode = "required"
)

// WithCgroup sets whether each worker gets a cgroup of its own (default
// CgroupAuto).
func WithCgroup(m CgroupMode) Option { return func(c *poolConfig) { c.cgroup = m } }

// CgroupLimits are the caps the kernel enforces on a worker through its
// cgroup. A zero field is a controller the cgroup does not have.
type CgroupLimits struct {
	// Parent is the cgroup directory the workers' cgroups are made in, one
	// per worker, removed when it has been reaped.
	Parent string `json:"parent"`
	// MemoryBytes is memory.max: the resident memory, page cache and
	// kernel memory charged to the worker. Past it the kernel reclaims,
	// then kills the worker, which the server reports as the plan's
	// memory limit.
	MemoryBytes int64 `json:"memoryBytes"`
	// NoSwap is set when memory.swap.max is 0: the worker cannot move
	// past memory.max into swap.
	NoSwap bool `json:"noSwap"`
	// Pids is pids.max: the worker's threads, since it can start no
	// process (the seccomp filter refuses fork).
	Pids int64 `json:"pids"`
	// CPUs is cpu.max as a number of CPUs: the share of CPU time the
	// worker may take, whatever the number of its threads.
	CPUs float64 `json:"cpus"`
}

// Defaults of a worker's cgroup.
const (
	// cgroupPids is pids.max: a Go runtime runs about ten threads, and
	// one blocked in a system call makes the scheduler start another.
	cgroupPids = 64
	// cgroupCPUPeriod and cgroupCPUQuota make cpu.max one CPU.
	cgroupCPUPeriod = 100_000
	cgroupCPUQuota  = 100_000
	// cgroupRuntimeReserve is what memory.max allows beyond the runtime's
	// soft memory limit (twice the budget plus 64 MiB): the runtime's
	// own memory, its stacks, and the binary's pages it touches.
	cgroupRuntimeReserve = 192 << 20
)

// String describes a worker's cgroup caps in one line.
func (l CgroupLimits) String() string {
	var parts []string
	if l.MemoryBytes > 0 {
		m := fmt.Sprintf("memory %d MiB", l.MemoryBytes>>20)
		if l.NoSwap {
			m += " without swap"
		}
		parts = append(parts, m)
	}
	if l.Pids > 0 {
		parts = append(parts, fmt.Sprintf("pids %d", l.Pids))
	}
	if l.CPUs > 0 {
		parts = append(parts, fmt.Sprintf("cpu %g CPU", l.CPUs))
	}
	if len(parts) == 0 {
		return "a cgroup with no caps"
	}
	return "cgroup " + strings.Join(parts, ", ")
}

// KernelCaps says which caps the kernel enforces on a worker: its
// cgroup's, where it has one, and its rlimits.
func (c Confinement) KernelCaps() string {
	var rl []string
	if c.AddressSpaceBytes > 0 {
		rl = append(rl, fmt.Sprintf("address space %d MiB", c.AddressSpaceBytes>>20))
	}
	if c.CPUSeconds > 0 {
		rl = append(rl, fmt.Sprintf("CPU time %d s", c.CPUSeconds))
	}
	rlimits := "none on memory or CPU time"
	if len(rl) > 0 {
		rlimits = strings.Join(rl, ", ")
	}
	if c.Cgroup != nil {
		return c.Cgroup.String() + "; rlimits " + rlimits
	}
	out := "rlimits only: " + rlimits
	if c.NoCgroup != "" {
		out += " (no cgroup: " + c.NoCgroup + ")"
	}
	return out
}

// start spawns a worker with the pool's limits, in a cgroup of its own
// where the pool has a parent for one.
func (p *Pool) start(ctx context.Context, l workerLimits) (*worker, error) {
	args := append([]string{p.cfg.marker}, l.args()...)
	if p.cfg.python != nil {
		args = append(args, p.cfg.python.args()...)
	}
	if p.cgroups == nil {
		return spawn(ctx, p.cfg.command, args, env(), p.cfg.readyTimeout, nil)
	}
	cg, lim, err := p.cgroups.newWorker(cgroupMemory(l))
	if err != nil {
		return nil, err
	}
	w, err := spawn(ctx, p.cfg.command, args, env(), p.cfg.readyTimeout, cg)
	if err != nil {
		return nil, err
	}
	w.conf.Cgroup = &lim
	return w, nil
}

// cgroupMemory is memory.max of a worker: the runtime's soft memory limit
// plus its reserve; none under the race detector, whose shadow memory is
// many times the heap, as for RLIMIT_AS.
func cgroupMemory(l workerLimits) int64 {
	if l.memoryBytes <= 0 || raceEnabled {
		return 0
	}
	return l.memoryBytes + cgroupRuntimeReserve
}

// cgroups returns where the workers' cgroups are made, or why there are
// none; an error only when the mode requires them.
func (c poolConfig) cgroups() (*cgroupParent, string, error) {
	if c.cgroupParent != nil {
		return c.cgroupParent, "", nil
	}
	return cgroupsFor(c.cgroup)
}
