package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// worker is one worker process, from spawn to reap.
type worker struct {
	cmd   *exec.Cmd
	pid   int
	stdin *os.File
	out   *bufio.Reader
	outF  *os.File
	errs  *headBuffer

	wmu sync.Mutex // serialises frames to the worker

	exited  chan struct{} // closed when the process has been reaped
	state   *os.ProcessState
	conf    Confinement
	spawned time.Time
	ready   time.Duration // spawn to ready

	// cpuLimit is the worker's soft RLIMIT_CPU (0: none), to tell a CPU
	// kill by its usage.
	cpuLimit time.Duration
	// cgroup is the worker's own cgroup (nil: none), removed when it has
	// been reaped; oomKills is its memory.events oom_kill count, read
	// then.
	cgroup   *workerCgroup
	oomKills int64

	killMu sync.Mutex
	cause  string // why the server killed it, if it did

	// runs counts the runs it was sent; owned by the run holding it.
	runs int
	// startUsage is its CPU time and address space when it became ready,
	// read when workers may serve more than one run.
	startUsage procUsage
	// idle stops it when it waited too long for its session's next run;
	// guarded by the pool's parkMu, as is parkedAt, when it was parked.
	idle     *time.Timer
	parkedAt time.Time
}

// spawn starts a worker and waits until it reports ready. The worker is
// in its sandbox when it does; a worker that fails to confine itself never
// becomes ready, and its standard error says why. With a cgroup (cg not
// nil), the worker starts in it, and it is removed when the worker has
// been reaped; spawn removes it on failure.
func spawn(ctx context.Context, command string, args []string, env []string, readyTimeout time.Duration, cg *workerCgroup) (*worker, error) {
	if !supported {
		cg.remove()
		return nil, errors.New("sandbox workers need Linux")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		cg.remove()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	w := &worker{stdin: inW, outF: outR, out: bufio.NewReaderSize(outR, 64<<10), errs: &headBuffer{max: 4 << 10},
		exited: make(chan struct{}), spawned: time.Now(), cgroup: cg}
	cmd := exec.Command(command, args...)
	cmd.Env = env
	cmd.Dir = "/"
	cmd.Stdin = inR
	cmd.Stdout = outW
	cmd.Stderr = w.errs
	cmd.SysProcAttr = sysProcAttr(cg.cloneFD())
	cmd.WaitDelay = time.Second
	w.cmd = cmd
	err = cmd.Start()
	placed := cg == nil || err == nil
	if cg != nil && err != nil && startErrorNeedsPlacement(err) {
		// A kernel before 5.7 cannot start a process in a cgroup: start
		// it outside and move it in, before it reads its run.
		cmd = exec.Command(command, args...)
		cmd.Env, cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, "/", inR, outW, w.errs
		cmd.SysProcAttr, cmd.WaitDelay = sysProcAttr(-1), time.Second
		w.cmd = cmd
		err = cmd.Start()
	}
	inR.Close()
	outW.Close()
	cg.started()
	if err != nil {
		inW.Close()
		outR.Close()
		cg.remove()
		return nil, fmt.Errorf("sandbox: starting a worker process: %w", explainStart(err))
	}
	w.pid = cmd.Process.Pid
	go func() {
		_ = cmd.Wait()
		w.state = cmd.ProcessState
		w.oomKills = cg.oomKills()
		cg.remove()
		inW.Close()
		close(w.exited)
	}()
	if !placed {
		if err := cg.place(w.pid); err != nil {
			w.kill("not ready")
			<-w.exited
			return nil, fmt.Errorf("sandbox: moving the worker into its cgroup: %w", err)
		}
	}

	type readyMsg struct {
		m   *message
		err error
	}
	got := make(chan readyMsg, 1)
	go func() {
		m, err := readFrame(w.out, maxFrameFromWorker)
		got <- readyMsg{m, err}
	}()
	t := time.NewTimer(readyTimeout)
	defer t.Stop()
	select {
	case r := <-got:
		if r.err == nil && r.m.T == msgReady && r.m.Confinement != nil {
			w.conf = *r.m.Confinement
			w.ready = time.Since(w.spawned)
			return w, nil
		}
		w.kill("not ready")
		<-w.exited
		return nil, fmt.Errorf("sandbox: the worker process did not start: %s", w.describeExit())
	case <-t.C:
		w.kill("not ready")
		<-w.exited
		return nil, fmt.Errorf("sandbox: the worker process was not ready after %v", readyTimeout)
	case <-ctx.Done():
		w.kill("not ready")
		<-w.exited
		return nil, ctx.Err()
	}
}

// explainStart adds the usual cause to a refused clone.
func explainStart(err error) error {
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS) {
		return fmt.Errorf("%w (the kernel refused new namespaces: unprivileged user namespaces may be disabled, e.g. by "+
			"kernel.unprivileged_userns_clone=0, user.max_user_namespaces=0, an AppArmor restriction, or a container's seccomp profile)", err)
	}
	return err
}

// send writes one frame to the worker. A dead worker makes it fail, never
// block: its pipe is closed when it is reaped.
func (w *worker) send(m *message) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	return writeFrame(w.stdin, m)
}

// kill ends the worker, recording the first cause. The worker is pid 1 of
// its pid namespace, so the kernel ends every process in it with it (a
// process group kill would miss one that left the group). The signal goes
// through os.Process, which uses a pidfd where the kernel has one: a
// worker already reaped is never confused with a process that got its pid.
func (w *worker) kill(cause string) {
	w.killMu.Lock()
	if w.cause == "" {
		w.cause = cause
	}
	w.killMu.Unlock()
	_ = w.cmd.Process.Kill()
}

func (w *worker) killCause() string {
	w.killMu.Lock()
	defer w.killMu.Unlock()
	return w.cause
}

func (w *worker) alive() bool {
	select {
	case <-w.exited:
		return false
	default:
		return true
	}
}

// reap waits for the worker to exit, killing it if it has not within
// grace, and closes the server's ends of its pipes.
func (w *worker) reap(grace time.Duration) {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-w.exited:
	case <-t.C:
		w.kill("did not exit")
		<-w.exited
	}
	w.outF.Close()
}

// describeExit says how a reaped worker ended, with the first line its
// runtime printed.
func (w *worker) describeExit() string {
	var b strings.Builder
	if w.state != nil {
		b.WriteString(w.state.String())
	} else {
		b.WriteString("unknown exit")
	}
	if line := w.errs.firstLine(); line != "" {
		b.WriteString(": ")
		b.WriteString(line)
	}
	return b.String()
}

// headBuffer keeps the first max bytes written to it and drops the rest:
// a dying Go runtime prints the reason first and goroutine dumps after.
type headBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (h *headBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - len(h.b); room > 0 {
		if len(p) < room {
			room = len(p)
		}
		h.b = append(h.b, p[:room]...)
	}
	return len(p), nil
}

func (h *headBuffer) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return string(h.b)
}

// firstLine returns the first non-empty line written, clipped, past the
// race detector's warnings: in a worker confined before the runtime
// started (a cgo build), it warns first that it could not read its
// executable's name, with no /proc to read it from.
func (h *headBuffer) firstLine() string {
	for _, l := range strings.Split(h.String(), "\n") {
		if l = strings.TrimSpace(l); l != "" && !isSanitizerWarning(l) {
			if len(l) > 200 {
				l = l[:200] + "..."
			}
			return l
		}
	}
	return ""
}

// isSanitizerWarning reports whether a line is a warning of the race
// detector's runtime, which starts with "==PID==WARNING: ".
func isSanitizerWarning(l string) bool {
	rest, ok := strings.CutPrefix(l, "==")
	if !ok {
		return false
	}
	pid, rest, ok := strings.Cut(rest, "==")
	return ok && pid != "" && strings.Trim(pid, "0123456789") == "" && strings.HasPrefix(rest, "WARNING: ")
}

var _ io.Writer = (*headBuffer)(nil)
