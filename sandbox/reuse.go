package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/codecall-go/codecall/vm"
)

// A worker that served a run of a session cleanly may wait for that
// session's next run (Pool's doc, WithReuse). What keeps one run from the
// next is the runtime: the worker builds the next run's runtime after the
// previous run ended, and package vm keeps no state across runs that a plan
// can write. The server side of a run (the session in run.go) is new for
// every run too; what is left between two runs is the process and its
// pipes, and the checks below decide whether it is fit for another run.

// reusableStatus reports whether a run that ended with status may leave
// its worker to the next run of its session: the statuses of a plan that
// ran to its end, returned or threw. Anything else (a limit, the timeout,
// a cancellation, an illegal access) ends the worker, whatever its state.
func reusableStatus(s vm.Status) bool {
	return s == vm.StatusOK || s == vm.StatusRuntimeError || s == vm.StatusToolError
}

// mayReuse reports whether w, whose run for opts ended cleanly with res,
// may serve the next run of the same session.
func (p *Pool) mayReuse(w *worker, opts vm.Options, res *vm.Result) bool {
	switch {
	case p.cfg.reuseRuns <= 1, opts.Session == "", w.runs >= p.cfg.reuseRuns, res == nil, !reusableStatus(res.Status):
		return false
	case !w.alive() || w.killCause() != "", p.ctx.Err() != nil:
		return false
	case w.out.Buffered() > 0:
		// The worker wrote past its result, which no worker does.
		return false
	}
	u, err := readUsage(w.pid)
	if err != nil {
		return false
	}
	return p.fitFor(w, u)
}

// fitFor reports whether a worker using u can take one more run: its CPU
// time cap (RLIMIT_CPU counts the process's whole life) still holds a
// whole run's timeout and kill grace, and its address space has not grown
// by more than a quarter of the memory budget since it was ready (the Go
// runtime keeps address space it once reserved, which would count
// against the next run's cap).
func (p *Pool) fitFor(w *worker, u procUsage) bool {
	if w.cpuLimit > 0 && u.cpu+p.cfg.limits.Timeout+killGrace >= w.cpuLimit {
		return false
	}
	if mem := p.cfg.limits.MemoryBytes; mem > 0 && u.vsize > w.startUsage.vsize+mem/4 {
		return false
	}
	return true
}

// roomToPark reports whether a worker of session may keep its place among
// maxWorkers while it waits for the session's next run: only when no
// other session's run waits for a worker, and the warm pool can still be
// refilled from the places left free. A parked worker serves one session;
// the place it holds would otherwise start a worker for anyone.
func (p *Pool) roomToPark(session string) bool {
	if p.queue.othersWaiting(session) {
		return false
	}
	p.mu.Lock()
	need := p.cfg.size - len(p.warm) - p.starting
	p.mu.Unlock()
	return cap(p.slots)-len(p.slots) >= need
}

// park keeps w for the next run of session, until its idle time runs out.
func (p *Pool) park(w *worker, session string) {
	p.parkMu.Lock()
	if p.ctx.Err() != nil {
		// Closing: Close's sweep of the parked workers may have run.
		p.parkMu.Unlock()
		p.retire(w)
		return
	}
	w.parkedAt = time.Now()
	w.idle = time.AfterFunc(p.cfg.reuseIdle, func() { p.expire(w, session) })
	p.parked[session] = append(p.parked[session], w)
	p.parkMu.Unlock()
}

// unpark takes the most recently parked live worker of session, if any.
// It is the fair queue's own-worker source: it runs under the queue's
// lock and never blocks.
func (p *Pool) unpark(session string) (*worker, bool) {
	p.parkMu.Lock()
	defer p.parkMu.Unlock()
	for ws := p.parked[session]; len(ws) > 0; ws = p.parked[session] {
		w := ws[len(ws)-1]
		p.dropParkedLocked(session, len(ws)-1)
		w.idle.Stop()
		if w.alive() {
			return w, true
		}
		p.retire(w)
	}
	return nil, false
}

// expire stops a parked worker whose session sent no run in time.
func (p *Pool) expire(w *worker, session string) {
	p.parkMu.Lock()
	i := -1
	for j, o := range p.parked[session] {
		if o == w {
			i = j
		}
	}
	if i < 0 {
		// Taken by a run meanwhile.
		p.parkMu.Unlock()
		return
	}
	p.dropParkedLocked(session, i)
	p.parkMu.Unlock()
	p.retire(w)
	p.wake()
}

// evictParked stops the parked worker that has waited longest, so that
// its place among maxWorkers goes to a worker any session can use.
func (p *Pool) evictParked() {
	p.parkMu.Lock()
	var oldest *worker
	var session string
	at := -1
	for s, ws := range p.parked {
		if len(ws) > 0 && (oldest == nil || ws[0].parkedAt.Before(oldest.parkedAt)) {
			oldest, session, at = ws[0], s, 0
		}
	}
	if oldest != nil {
		p.dropParkedLocked(session, at)
		oldest.idle.Stop()
	}
	p.parkMu.Unlock()
	if oldest != nil {
		p.retire(oldest)
	}
}

// unparkAll stops every parked worker (Close).
func (p *Pool) unparkAll() {
	p.parkMu.Lock()
	all := p.parked
	p.parked = map[string][]*worker{}
	p.parkMu.Unlock()
	for _, ws := range all {
		for _, w := range ws {
			w.idle.Stop()
			p.retire(w)
		}
	}
}

// dropParkedLocked removes parked[session][i]; parkMu is held.
func (p *Pool) dropParkedLocked(session string, i int) {
	ws := p.parked[session]
	copy(ws[i:], ws[i+1:])
	ws[len(ws)-1] = nil
	if ws = ws[:len(ws)-1]; len(ws) == 0 {
		delete(p.parked, session)
	} else {
		p.parked[session] = ws
	}
}

// parkedCount is the number of parked workers.
func (p *Pool) parkedCount() int {
	p.parkMu.Lock()
	defer p.parkMu.Unlock()
	n := 0
	for _, ws := range p.parked {
		n += len(ws)
	}
	return n
}

// procUsage is what /proc says of a process: the CPU time of all its
// threads and its address space.
type procUsage struct {
	cpu   time.Duration
	vsize int64
}

// userHZ is the unit of the CPU times in /proc/PID/stat: the kernel's
// USER_HZ, 100 on every Linux architecture this package supports.
const userHZ = 100

// readUsage reads /proc/PID/stat.
func readUsage(pid int) (procUsage, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procUsage{}, err
	}
	return parseStat(b)
}

// parseStat reads utime, stime and vsize from the text of /proc/PID/stat.
// The command name in parentheses may hold spaces and parentheses, so the
// fields are counted from the last ')'.
func parseStat(b []byte) (procUsage, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procUsage{}, errors.New("sandbox: /proc stat without a command name")
	}
	// After ") " come the fields from the third on: state is field 3,
	// utime 14, stime 15, vsize 23.
	f := bytes.Fields(b[i+1:])
	if len(f) < 21 {
		return procUsage{}, fmt.Errorf("sandbox: /proc stat with %d fields after the command name", len(f))
	}
	num := func(k int) (int64, error) { return strconv.ParseInt(string(f[k-3]), 10, 64) }
	utime, err1 := num(14)
	stime, err2 := num(15)
	vsize, err3 := num(23)
	if err := errors.Join(err1, err2, err3); err != nil {
		return procUsage{}, fmt.Errorf("sandbox: /proc stat: %w", err)
	}
	return procUsage{cpu: time.Duration(utime+stime) * time.Second / userHZ, vsize: vsize}, nil
}
