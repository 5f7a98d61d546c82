// Package sandbox runs CodeCall plans in sandboxed worker processes, each
// plan in a runtime of its own and each worker for one MCP session at most
// (a worker may run a session's successive plans, see WithReuse), so that
// the operating system, not the JavaScript runtime, is the wall around
// untrusted code.
//
// # The worker
//
// A worker is the running binary re-executed (or the executable named by
// WithCommand, such as cmd/codecall-worker) with a marker argument. This
// package's init function calls Main, which sees the marker and runs the
// worker instead of the program, so any binary that imports the package,
// directly or through package middleware, serves as its own worker.
//
// The server starts a worker in new user, pid, net, mount, ipc and uts
// namespaces, in its own process group, killed if the server dies, and,
// where a cgroup v2 subtree is delegated to the server, in a cgroup of its
// own that caps its resident memory, threads and CPU share. Before it
// reads anything from the server, the worker closes inherited
// descriptors, replaces its root with an empty read-only tmpfs, sets
// no_new_privs, applies Landlock deny-all where available, empties every
// capability set (the bounding set first), sets rlimits (address space,
// CPU time, no files, no core dumps), and installs a seccomp allowlist: no
// file, socket, exec or fork. The per-thread steps reach every thread in
// every build: through syscall.AllThreadsSyscall without cgo, and in a C
// constructor that runs before the Go runtime starts its threads with
// cgo. It then reports ready with what it applied (Confinement), which
// the server checks against every thread's status in /proc.
//
// # The bridge
//
// Server and worker exchange length-prefixed JSON frames over the worker's
// standard input and output, with a size cap checked before reading. The
// server sends a run (script, validation rules, limits, context); the
// worker validates the script again, runs it with package vm, and turns
// every callTool, getTool, mcpLog and mcpNotify into a frame that the
// server answers through the vm.Host it was given, so every tool call goes
// through CodeCall's gate. Only plain JSON values cross.
//
// The server does not trust the worker, which may be compromised by its
// plan or be the wrong binary: it holds every frame to the promises of
// vm.Bounds (tool calls and discovery requests within maxToolCalls and
// maxConcurrency, logs and notifications within the runtime's caps, a
// result within maxResultBytes and maxLogBytes, a rate limit on frames),
// builds the result's toolTrace and metrics from the calls it served, and
// kills a worker that breaks the protocol.
//
// # Limits and the pool
//
// The server kills a worker that outlives its run's timeout, breaks the
// protocol, or lingers after its result; any end without a result becomes
// a timeout or limit_exceeded result with its true cause: the server's own
// kill, the CPU-time cap (the worker exits with a status of its own on
// SIGXCPU; past the hard limit, its CPU usage says so), memory, a stack
// overflow, a kill from outside, or a crash. A Pool keeps workers
// started ahead of time, bounds the processes alive at once, queues runs
// beyond that for at most a queue timeout, sharing the workers fairly among
// sessions within per-session limits (a run refused under load ends
// limit_exceeded, limit "concurrency", retryable), and replaces each worker
// after its run, unless the run ended cleanly and the worker waits for its
// session's next run (WithReuse). New fails when the platform cannot start workers (not
// Linux, namespaces refused), which is how callers decide to refuse or
// fall back.
//
// # Confined programs
//
// Profile.Command starts another kind of process: a long-running program
// such as a stdio MCP server behind the gateway, through the binary
// re-executed as a launcher. The launcher gives the program namespaces of
// its own (net unless the profile keeps the network), a file-system view
// of the system's runtime directories read-only plus the directories the
// profile names, no_new_privs, a Landlock ruleset over the same view,
// no capabilities and rlimits, then stays as its pid namespace's init.
// It runs no plan and installs no system-call allowlist: the program may
// open the files of its view, start processes and use sockets.
package sandbox
