//go:build linux

package sandbox

import (
	"fmt"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// allowedSyscalls are the system calls a worker may make once it runs a
// plan: what the Go runtime needs to schedule goroutines, manage memory,
// handle signals and keep time, and what the worker needs to read and
// write its pipes. Nothing opens a file or a socket, executes a program,
// mounts, traces, or changes credentials or namespaces. Every other call
// fails with EPERM.
var allowedSyscalls = append([]string{
	// I/O on the descriptors the worker already holds.
	"read", "write", "readv", "writev", "pread64", "pwrite64", "close", "fcntl", "fstat", "newfstatat", "lseek",
	"epoll_create1", "epoll_ctl", "epoll_pwait", "epoll_pwait2", "eventfd2", "pipe2", "ppoll", "pselect6",
	// Memory.
	"mmap", "munmap", "mprotect", "madvise", "mremap", "brk", "mincore", "membarrier",
	// Threads, scheduling and signals.
	"futex", "futex_waitv", "set_robust_list", "get_robust_list", "rseq", "set_tid_address", "gettid", "getpid", "getppid",
	"tgkill", "tkill", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigtimedwait",
	"sigaltstack", "sched_yield", "sched_getaffinity", "sched_getparam", "sched_getscheduler",
	"exit", "exit_group", "restart_syscall", "getrlimit", "prlimit64", "getrusage", "uname",
	"getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",
	// Time.
	"clock_gettime", "clock_getres", "clock_nanosleep", "gettimeofday", "nanosleep",
	"timer_create", "timer_settime", "timer_gettime", "timer_delete", "setitimer", "getitimer",
	"getrandom",
}, archSyscalls...)

// loadSeccomp installs the allowlist on every thread of the process, with
// no_new_privs set. clone is allowed only with CLONE_THREAD: the runtime
// starts threads, the worker never starts a process. Every rule that
// allows lives in one group, because the library ends each group with the
// default action. clone3 fails with ENOSYS instead of EPERM, so a C
// library that tries it first (binaries built with cgo start threads
// through pthread_create) falls back to clone; that one rule is a prefix
// of our own in front of the library's program.
func loadSeccomp() error {
	policy := seccomp.Policy{
		DefaultAction: seccomp.ActionErrno,
		Syscalls: []seccomp.SyscallGroup{{
			Action: seccomp.ActionAllow,
			Names:  allowedSyscalls,
			NamesWithCondtions: []seccomp.NameWithConditions{{
				Name: "clone",
				Conditions: seccomp.ArgumentConditions{{
					Argument: 0, Operation: seccomp.BitsSet, Value: unix.CLONE_THREAD,
				}},
			}},
		}},
	}
	return installFilter(policy, unix.SECCOMP_FILTER_FLAG_TSYNC)
}

// installFilter assembles policy, behind the clone3 prefix (ENOSYS), and
// installs it with no_new_privs set; flags are seccomp(2)'s (TSYNC: every
// thread; 0: the calling thread only).
func installFilter(policy seccomp.Policy, flags uintptr) error {
	info, err := arch.GetInfo("")
	if err != nil {
		return fmt.Errorf("installing the system-call filter: %w", err)
	}
	insts, err := policy.Assemble()
	if err != nil {
		return fmt.Errorf("installing the system-call filter: %w", err)
	}
	var prefix []bpf.Instruction
	if nr, ok := info.SyscallNames["clone3"]; ok {
		prefix = []bpf.Instruction{
			bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(info.ID), SkipTrue: 3},
			bpf.LoadAbsolute{Off: 0, Size: 4}, // seccomp_data.nr
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(nr), SkipFalse: 1},
			bpf.RetConstant{Val: uint32(seccomp.ActionErrno) | uint32(unix.ENOSYS)},
		}
	}
	raw, err := bpf.Assemble(append(prefix, insts...))
	if err != nil {
		return fmt.Errorf("installing the system-call filter: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := seccomp.SetNoNewPrivs(); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
	if e != 0 {
		return fmt.Errorf("installing the system-call filter: %w", e)
	}
	return nil
}
