package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/codecall-go/codecall/toolerr"
	"github.com/codecall-go/codecall/vm"
)

// Kill causes: why a worker ended without a result, as Stats, the metrics
// and the logs name them.
const (
	causeTimeout   = "timeout"         // the server killed it past its deadline
	causeCancelled = "cancelled"       // the server killed it when the request was cancelled
	causeProtocol  = "protocol"        // the server killed it for breaking the bridge protocol
	causeCPU       = "cpu"             // it spent its CPU-time cap (RLIMIT_CPU)
	causeMemory    = "memory"          // it ran out of memory, or the kernel killed it grown past its budget
	causeStack     = "stack"           // its Go stack overflowed
	causeKilled    = "killed"          // a SIGKILL from outside the server, within its caps
	causeCrashed   = "crashed"         // any other end
	causeDiedWarm  = "died while warm" // it died before it took a plan
)

// LimitWorker is the limit a limit_exceeded result names when a worker
// process ended abnormally for a reason no other limit describes, or
// broke the bridge protocol.
const LimitWorker = "worker"

// frameRate is the bridge's rate limit: a worker may send at most this
// many frames at once, and this many a second after that, whatever they
// are. A runtime stays well below it: each of its frames waits for the
// server (a call for a free slot, a getTool for its answer; a plan calling
// getTool in a loop makes about 20,000 a second) or is capped by count
// (logs, notifications, cancellations).
const frameRate = 100_000

// runOn serves the calls of a worker that was sent its run until it
// reports a result, dies, or outlives its deadline. clean says the worker
// sent its result by itself, within the protocol, and was neither asked
// to stop nor killed: only then may it serve another run (mayReuse checks
// the rest once the calls still in flight have ended).
func (p *Pool) runOn(ctx context.Context, w *worker, req *runRequest, host vm.Host, start time.Time) (res *vm.Result, clean bool) {
	s := &session{w: w, host: host, bounds: vm.BoundsFor(req.Options.Limits), req: req, start: start,
		open: map[uint64]*openRequest{}, frames: newFrameBudget(p.cfg.frameRate)}
	callCtx, cancelCalls := context.WithCancel(ctx)
	defer func() {
		// Calls still in flight are cancelled; one whose reply cannot be
		// written because the worker stopped reading ends when the worker
		// is killed and its pipe breaks.
		cancelCalls()
		done := make(chan struct{})
		go func() {
			s.wg.Wait()
			close(done)
		}()
		t := time.NewTimer(exitGrace)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			w.kill("stuck after its result")
			<-done
		}
	}()
	hard := newKillTimer(req.Options.Limits.Timeout + killGrace)
	defer hard.stop()
	s.kill = hard

	done := make(chan struct{})
	defer close(done)
	// The deadline and the client's cancellation kill the worker from here,
	// not only from the loop below, which may be blocked writing to a
	// worker that stopped reading: the kill breaks the pipe. A cancelled
	// request first gives the worker stopGrace to stop its plan and send
	// the result so far (its logs), which the loop below reads.
	go func() {
		select {
		case <-hard.fired:
			w.kill(causeTimeout)
		case <-ctx.Done():
			grace := time.NewTimer(stopGrace)
			defer grace.Stop()
			select {
			case <-grace.C:
				w.kill(causeCancelled)
			case <-hard.fired:
				w.kill(causeTimeout)
			case <-done:
			}
		case <-done:
		}
	}()

	frames := make(chan *message)
	var readErr string // set before frames is closed
	go func() {
		defer close(frames)
		for {
			m, err := readFrame(w.out, maxFrameFromWorker)
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, os.ErrClosed) {
					// Too large or malformed: the worker is not speaking the
					// protocol, and is not trusted to go on.
					readErr = "a frame too large or malformed"
					w.kill(causeProtocol)
				}
				return
			}
			select {
			case frames <- m:
			case <-done:
				return
			}
			if m.T == msgResult {
				// The run's last frame: a worker that serves another run
				// is read by that run's own reader, and nothing must read
				// its frames in between.
				return
			}
		}
	}()

	cancelled, stopped := ctx.Done(), (<-chan time.Time)(nil)
	for {
		select {
		case m, ok := <-frames:
			if !ok {
				if ctx.Err() != nil {
					return killedAtEnd(ctx, s.abnormal(p, causeCancelled, "")), false
				}
				return s.abnormal(p, "", readErr), false
			}
			res, broke := s.handle(ctx, callCtx, m)
			if broke != "" {
				w.kill(causeProtocol)
				return s.abnormal(p, causeProtocol, broke), false
			}
			if res != nil {
				return stoppedResult(ctx, res), stopped == nil && ctx.Err() == nil
			}
		case <-hard.fired:
			w.kill(causeTimeout)
			return s.abnormal(p, causeTimeout, ""), false
		case <-cancelled:
			// Ask the worker to stop and send what it has; the write may
			// block on a worker that stopped reading, which the kill
			// after stopGrace unblocks.
			cancelled = nil
			code := codeCanceled
			if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
				code = codeDeadline
			}
			go func() { _ = w.send(&message{T: msgStop, Code: code}) }()
			t := time.NewTimer(stopGrace)
			defer t.Stop()
			stopped = t.C
		case <-stopped:
			w.kill(causeCancelled)
			return killedAtEnd(ctx, s.abnormal(p, causeCancelled, "")), false
		}
	}
}

// stopGrace is how long a worker whose request was cancelled has to stop
// its plan and send its result (the logs so far) before it is killed.
const stopGrace = time.Second

// stoppedResult is the result a worker sent, as the server reports it once
// the request has ended: a run that finished keeps its status, any other
// is cancelled or a timeout by the request's own end, whatever the worker
// claimed. The worker's logs and warnings (checked against the run's
// bounds) are kept: they are what the plan did before it stopped.
func stoppedResult(ctx context.Context, res *vm.Result) *vm.Result {
	if ctx.Err() == nil || res.Status == vm.StatusOK {
		return res
	}
	res.Status, res.Result, res.Error = cancelledOutcome(ctx)
	return res
}

// killedAtEnd is the result of a worker killed because its request ended
// (classify's cancelled): a timeout, and says so, when the request ended
// at the client's deadline.
func killedAtEnd(ctx context.Context, res *vm.Result) *vm.Result {
	if res.Status == vm.StatusCancelled && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		res.Status = vm.StatusTimeout
		res.Error = &vm.ErrorInfo{Message: "the request reached the client's deadline; the plan's sandbox worker process was killed"}
	}
	return res
}

// cancelledOutcome is the status of a run whose request ended: timeout
// when it ended at the client's deadline, cancelled otherwise.
func cancelledOutcome(ctx context.Context) (vm.Status, json.RawMessage, *vm.ErrorInfo) {
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		return vm.StatusTimeout, nil, &vm.ErrorInfo{Message: "the run reached the client's deadline for the request"}
	}
	return vm.StatusCancelled, nil, &vm.ErrorInfo{Message: "the run was cancelled by the client"}
}

// session is the server's side of one run. The server trusts nothing the
// worker says that it can check: it serves at most the run's tool calls,
// as many at once as the run's concurrency, forwards logs and
// notifications only within the runtime's own caps, and reports the calls
// it served itself. A frame no runtime would send is a protocol violation,
// and the worker is killed for it.
type session struct {
	w      *worker
	host   vm.Host
	bounds vm.Bounds
	req    *runRequest
	start  time.Time
	wg     sync.WaitGroup
	kill   *killTimer

	// Owned by the run loop.
	requests int   // call and discover frames served
	cancels  int   // cancel frames
	messages int   // log and notify frames forwarded
	msgBytes int64 // their bytes (the runtime charges them at least as much)
	frames   frameBudget

	mu     sync.Mutex
	open   map[uint64]*openRequest // calls and discovery requests the worker waits for
	served []servedCall            // the tool calls served, in the order they came
}

// openRequest is a call or discovery request being served.
type openRequest struct{ cancel context.CancelFunc }

// servedCall is the server's record of one tool call it served.
type servedCall struct {
	name  string
	begin time.Time
	took  time.Duration
	done  bool
	ok    bool
	code  string
}

// handle serves one frame of the worker. It returns the run's result when
// the frame is the result, and what was wrong when the frame breaks the
// protocol.
func (s *session) handle(ctx, callCtx context.Context, m *message) (res *vm.Result, broke string) {
	if !s.frames.take(time.Now()) {
		return nil, fmt.Sprintf("more than %.0f frames a second", s.frames.rate)
	}
	switch m.T {
	case msgCall:
		var input map[string]any
		if err := json.Unmarshal(m.Input, &input); err != nil || input == nil {
			return nil, "a tool input that is not a JSON object"
		}
		if broke := s.admit(m, s.bounds.CheckName(m.Name)); broke != "" {
			return nil, broke
		}
		s.call(callCtx, m, input)
	case msgDiscover:
		var bad error
		switch {
		case !vm.IsDiscoverOp(m.Name):
			bad = errors.New("an unknown discovery operation")
		case len(m.Input) > s.bounds.DiscoverArgsBytes:
			bad = fmt.Errorf("discovery arguments of %d bytes", len(m.Input))
		}
		if broke := s.admit(m, bad); broke != "" {
			return nil, broke
		}
		s.discover(callCtx, m)
	case msgGet:
		if err := s.bounds.CheckName(m.Name); err != nil {
			return nil, "getTool with " + err.Error()
		}
		desc, found := s.host.GetTool(m.Name)
		_ = s.w.send(&message{T: msgReply, ID: m.ID, OK: found, Value: desc})
	case msgCancel:
		// A runtime withdraws each request at most once; a request already
		// answered is no longer open, and its cancel is a no-op.
		if s.cancels++; s.cancels > s.requests {
			return nil, "more cancellations than requests"
		}
		s.cancel(m.ID)
	case msgLog:
		if !vm.IsLogLevel(m.Name) {
			return nil, fmt.Sprintf("mcpLog at level %q, which is not an MCP logging level", clipped(m.Name))
		}
		if broke := s.admitMessage(int64(len(m.Name) + len(m.Message) + len(m.Data))); broke != "" {
			return nil, broke
		}
		s.host.Log(ctx, m.Name, m.Message, m.Data)
	case msgNotify:
		if err := s.bounds.CheckName(m.Name); err != nil {
			return nil, "mcpNotify with " + err.Error()
		}
		if broke := s.admitMessage(int64(len(m.Name) + len(m.Data))); broke != "" {
			return nil, broke
		}
		s.host.Notify(ctx, m.Name, m.Data)
	case msgResult:
		return s.result(m)
	default:
		return nil, fmt.Sprintf("an unexpected %q message", clipped(m.T))
	}
	return nil, ""
}

// admit applies the run's budgets to a call or discovery request before
// anything serves it: at most ToolCalls of them in all (maxToolCalls,
// discovery included, as in the runtime), at most Concurrency open at
// once, each with an id of its own. bad is what is wrong with its
// arguments, if anything.
func (s *session) admit(m *message, bad error) string {
	what := "a tool call"
	if m.T == msgDiscover {
		what = "a discovery request"
	}
	if bad != nil {
		return what + " with " + bad.Error()
	}
	if s.requests >= s.bounds.ToolCalls {
		return fmt.Sprintf("more than %d tool calls, this preset's maxToolCalls", s.bounds.ToolCalls)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.open) >= s.bounds.Concurrency {
		return fmt.Sprintf("more than %d tool calls in flight at once, this preset's maxConcurrency", s.bounds.Concurrency)
	}
	if _, busy := s.open[m.ID]; busy || m.ID == 0 {
		return what + " with an id already in use"
	}
	s.requests++
	return ""
}

// admitMessage applies the runtime's caps on mcpLog and mcpNotify: a
// number of messages, and their bytes within the log budget.
func (s *session) admitMessage(n int64) string {
	if s.messages >= s.bounds.HostMessages {
		return fmt.Sprintf("more than %d mcpLog and mcpNotify messages", s.bounds.HostMessages)
	}
	if s.msgBytes+n > s.bounds.MessageBytes {
		return fmt.Sprintf("mcpLog and mcpNotify messages over this preset's maxLogBytes (%d)", s.bounds.MessageBytes)
	}
	s.messages++
	s.msgBytes += n
	return ""
}

// call runs one callTool of the plan through the host, on its own
// goroutine, and sends the answer back.
func (s *session) call(ctx context.Context, m *message, input map[string]any) {
	cctx, cancel := context.WithCancel(ctx)
	id := m.ID
	cctx = vm.ContextWithClock(cctx, &callClock{kill: s.kill, send: func(t string) { _ = s.w.send(&message{T: t, ID: id}) }})
	cctx = s.withIndex(cctx, m)
	req := &openRequest{cancel: cancel}
	s.mu.Lock()
	s.open[id] = req
	idx := len(s.served)
	s.served = append(s.served, servedCall{name: m.Name, begin: time.Now()})
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		reply := &message{T: msgReply, ID: id}
		if out, err := s.host.CallTool(cctx, m.Name, input); err != nil {
			failReply(reply, err)
		} else {
			reply.OK, reply.Value = true, out
		}
		s.mu.Lock()
		c := &s.served[idx]
		c.took, c.done, c.ok, c.code = time.Since(c.begin), true, reply.OK, traceCode(reply)
		// Closed before the reply is sent: the worker may start its next
		// call as soon as it reads it.
		s.close(id, req)
		s.mu.Unlock()
		_ = s.w.send(reply)
	}()
}

// withIndex passes on the index a worker gave a call of a run under
// vm.Replay (vm.CallIndex); the host's journal, not this bridge, decides
// whether the index is one it expects. Outside Replay an index is ignored.
func (s *session) withIndex(ctx context.Context, m *message) context.Context {
	if m.Index == nil || s.req.Options.Replay == nil || *m.Index < 0 {
		return ctx
	}
	return vm.ContextWithCallIndex(ctx, *m.Index)
}

// discover answers a plan's searchTools or describeTools on its own
// goroutine, like a call (the worker may cancel it), but outside the trace:
// toolTrace lists tool calls.
func (s *session) discover(ctx context.Context, m *message) {
	cctx, cancel := context.WithCancel(ctx)
	cctx = s.withIndex(cctx, m)
	req := &openRequest{cancel: cancel}
	s.mu.Lock()
	s.open[m.ID] = req
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		reply := &message{T: msgReply, ID: m.ID}
		if out, err := s.host.Discover(cctx, m.Name, m.Input); err != nil {
			failReply(reply, err)
		} else {
			reply.OK, reply.Value = true, out
		}
		s.mu.Lock()
		s.close(m.ID, req)
		s.mu.Unlock()
		_ = s.w.send(reply)
	}()
}

// close forgets an open request, if id still names it; s.mu is held.
func (s *session) close(id uint64, req *openRequest) {
	if s.open[id] == req {
		delete(s.open, id)
	}
}

// cancel withdraws an open request: the worker stopped waiting for it.
func (s *session) cancel(id uint64) {
	s.mu.Lock()
	req := s.open[id]
	delete(s.open, id)
	s.mu.Unlock()
	if req != nil {
		req.cancel()
	}
}

// failReply writes a host error into a reply, as it crosses the bridge: a
// *toolerr.Error whole (code, message, reason, hint, retryable), or a
// marker for cancellation. Other errors carry Go text the plan must not
// see; the runtime gives them a generic message, so only their absence of
// a code crosses. replyError in the worker reads it back.
func failReply(reply *message, err error) {
	switch te := toolerr.As(err); {
	case te != nil:
		reply.Code, reply.Error, reply.Reason, reply.Hint, reply.Retry = string(te.Code), te.Message, te.Reason, te.Hint, te.Retryable
		reply.Mismatch = te.Mismatch
	case errors.Is(err, context.DeadlineExceeded):
		reply.Code = codeDeadline
	case errors.Is(err, context.Canceled):
		reply.Code = codeCanceled
	default:
		reply.Error = "the tool call failed"
	}
}

// traceCode is the error code of a reply as the runtime's trace names it.
func traceCode(reply *message) string {
	switch {
	case reply.OK:
		return ""
	case reply.Code == codeDeadline:
		return string(toolerr.Timeout)
	case reply.Code == codeCanceled:
		return string(toolerr.Cancelled)
	case reply.Code == "":
		return string(toolerr.Execution)
	}
	return reply.Code
}

// trace is the server's record of the tool calls it served, as trace
// entries. A call still being served was withdrawn by the worker or cut
// short by the run's end: it is cancelled.
func (s *session) trace() []vm.TraceEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]vm.TraceEntry, len(s.served))
	for i, c := range s.served {
		e := vm.TraceEntry{ToolName: c.name, DurationMs: ms(time.Since(c.begin)), Error: string(toolerr.Cancelled)}
		if c.done {
			e.DurationMs, e.OK, e.Error = ms(c.took), c.ok, c.code
		}
		out[i] = e
	}
	return out
}

// result checks a worker's result against what the runtime can produce
// and replaces what the server knows better: the tool trace, the metrics
// and the run ID.
func (s *session) result(m *message) (*vm.Result, string) {
	if m.Result == nil {
		return nil, "a result message without a result"
	}
	claimed := m.Result
	if err := s.bounds.CheckResult(claimed); err != nil {
		return nil, "a result no runtime would produce: " + err.Error()
	}
	trace, ok := reconcile(s.trace(), claimed.ToolTrace, s.bounds.ToolCalls)
	if !ok {
		return nil, "a toolTrace that claims tool calls the server did not serve"
	}
	return &vm.Result{Status: claimed.Status, Result: claimed.Result, Error: claimed.Error, Logs: claimed.Logs,
		Warnings: claimed.Warnings, ToolTrace: trace, RunID: s.req.Options.RunID,
		Metrics: vm.Metrics{DurationMs: ms(time.Since(s.start)), ToolCalls: len(trace)}}, ""
}

// reconcile builds a run's toolTrace from the calls the server served
// (served, in the order their frames came), in the order of the worker's
// trace (claimed, the order the plan made them: concurrent calls reach the
// server in the order their goroutines write). Each entry is the server's,
// matched by tool name; the worker adds only two things the server cannot
// see: calls the plan queued that never left the worker, which must be
// failures, and that a call it withdrew was cut short by the run's
// deadline (TIMEOUT for CANCELLED). A claimed success the server did not
// serve is a lie, and reconcile reports false. Served calls the worker
// left out come last.
func reconcile(served, claimed []vm.TraceEntry, maxCalls int) ([]vm.TraceEntry, bool) {
	byName := map[string][]int{}
	for i, e := range served {
		byName[e.ToolName] = append(byName[e.ToolName], i)
	}
	used := make([]bool, len(served))
	out := make([]vm.TraceEntry, 0, max(len(served), len(claimed)))
	for _, c := range claimed {
		if q := byName[c.ToolName]; len(q) > 0 {
			byName[c.ToolName] = q[1:]
			used[q[0]] = true
			e := served[q[0]]
			if e.Error == string(toolerr.Cancelled) && c.Error == string(toolerr.Timeout) {
				e.Error = c.Error
			}
			out = append(out, e)
			continue
		}
		if c.OK {
			return nil, false
		}
		code := c.Error
		if !isCode(code) {
			code = string(toolerr.Cancelled)
		}
		out = append(out, vm.TraceEntry{ToolName: c.ToolName, Error: code})
	}
	for i, e := range served {
		if !used[i] {
			out = append(out, e)
		}
	}
	return out, len(out) <= maxCalls
}

// isCode reports whether s looks like an error code: upper-case letters
// and underscores.
func isCode(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if (r < 'A' || r > 'Z') && r != '_' {
			return false
		}
	}
	return true
}

// frameBudget is a token bucket over the frames of one run: a burst of
// rate frames, refilled at rate a second.
type frameBudget struct {
	rate   float64
	tokens float64
	last   time.Time
}

func newFrameBudget(rate float64) frameBudget {
	return frameBudget{rate: rate, tokens: rate, last: time.Now()}
}

func (b *frameBudget) take(now time.Time) bool {
	b.tokens = min(b.tokens+now.Sub(b.last).Seconds()*b.rate, b.rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// clipped cuts a string from the worker for a message.
func clipped(s string) string {
	s = strings.ToValidUTF8(s, "?")
	if len(s) > 64 {
		return clip(s, 64)
	}
	return s
}

// abnormal builds the result of a run whose worker gave no result: it
// waits for the worker to be reaped and says why it ended. cause is the
// server's own reason to kill it, if it had one; broke says how the worker
// broke the protocol.
func (s *session) abnormal(p *Pool, cause, broke string) *vm.Result {
	t := time.NewTimer(exitGrace)
	select {
	case <-s.w.exited:
	case <-t.C:
		s.w.kill("did not exit")
		<-s.w.exited
	}
	t.Stop()
	if cause == "" {
		cause = s.w.killCause()
	}
	trace := s.trace()
	res := &vm.Result{RunID: s.req.Options.RunID, ToolTrace: trace,
		Metrics: vm.Metrics{DurationMs: ms(time.Since(s.start)), ToolCalls: len(trace)}}
	b := budgets{timeout: s.req.Options.Limits.Timeout, cpu: s.w.cpuLimit, memory: s.req.Options.Limits.MemoryBytes}
	if b.memory <= 0 || (p.cfg.limits.MemoryBytes > 0 && p.cfg.limits.MemoryBytes < b.memory) {
		b.memory = p.cfg.limits.MemoryBytes
	}
	if s.w.conf.Cgroup != nil {
		b.cgroupMemory = s.w.conf.Cgroup.MemoryBytes
	}
	e := endingOf(s.w.state)
	e.stderr, e.exit, e.oomKill = s.w.errs.String(), s.w.describeExit(), s.w.oomKills > 0
	status, info, label := classify(cause, broke, e, b)
	res.Status, res.Error = status, info
	p.st.kills(label)
	p.log.Warn("codecall: sandbox worker ended without a result", "runId", s.req.Options.RunID, "cause", label,
		"detail", broke, "exit", e.exit, "cpuSeconds", e.cpu.Seconds(), "maxRSSBytes", e.maxRSS, "cgroupOOMKill", e.oomKill, "pid", s.w.pid)
	return res
}

// ending is how a reaped worker process ended.
type ending struct {
	code    int  // exit status, -1 when a signal ended it
	sigkill bool // SIGKILL ended it
	cpu     time.Duration
	maxRSS  int64 // peak resident memory, in bytes
	oomKill bool  // its cgroup counted an OOM kill (memory.events oom_kill)
	stderr  string
	exit    string // the exit status and the runtime's first line, for messages
}

// budgets are the limits a worker's end is measured against.
type budgets struct {
	timeout time.Duration // the run's wall-clock budget
	cpu     time.Duration // the worker's soft RLIMIT_CPU; 0: none
	memory  int64         // the smaller of the run's and the pool's memoryBytes; 0: none
	// cgroupMemory is memory.max of the worker's cgroup; 0: none.
	cgroupMemory int64
}

// classify maps how a worker ended to the status the client sees, and a
// label for the counters. The server's own reasons come first (it knows
// them), then what the worker's exit says, then what its resource usage
// says of a SIGKILL the server did not send.
func classify(cause, broke string, e ending, b budgets) (vm.Status, *vm.ErrorInfo, string) {
	usedCPU := func() string {
		return fmt.Sprintf("the plan used up its CPU time: its sandbox worker process spent %.1f s of CPU against a cap of %v "+
			"(the timeout plus a grace, counted over all its threads, the garbage collector's included) and was stopped; "+
			"do less work per run, or allocate less", e.cpu.Seconds(), b.cpu)
	}
	switch {
	case cause == causeProtocol:
		if broke == "" {
			broke = "a frame too large or malformed"
		}
		return vm.StatusLimitExceeded, &vm.ErrorInfo{Limit: LimitWorker, Message: "the plan's sandbox worker broke the bridge protocol (" + broke + ") and was killed"}, causeProtocol
	case e.code == exitCPUTime:
		// The worker says so itself, even when the server's deadline fired
		// while it was exiting.
		return vm.StatusTimeout, &vm.ErrorInfo{Message: usedCPU()}, causeCPU
	case cause == causeTimeout:
		return vm.StatusTimeout, &vm.ErrorInfo{Message: fmt.Sprintf("the plan ran past its %v timeout and did not stop; its sandbox worker process was killed", b.timeout)}, causeTimeout
	case cause == causeCancelled:
		return vm.StatusCancelled, &vm.ErrorInfo{Message: "the request was cancelled; the plan's sandbox worker process was killed"}, causeCancelled
	case e.sigkill && e.oomKill:
		// The kernel says so itself: its OOM killer ended the worker at
		// its cgroup's memory.max.
		return vm.StatusLimitExceeded, &vm.ErrorInfo{Limit: vm.LimitMemory, Message: fmt.Sprintf("the plan ran out of memory: "+
			"the kernel killed its sandbox worker process at the cap of its cgroup (memory.max, %d MiB)", b.cgroupMemory>>20)}, causeMemory
	case strings.Contains(e.stderr, "out of memory") || strings.Contains(e.stderr, "cannot allocate memory"):
		return vm.StatusLimitExceeded, &vm.ErrorInfo{Limit: vm.LimitMemory, Message: "the plan ran out of memory: its sandbox worker process hit the memory cap and died"}, causeMemory
	case strings.Contains(e.stderr, "stack overflow") || strings.Contains(e.stderr, "stack exceeds"):
		return vm.StatusLimitExceeded, &vm.ErrorInfo{Limit: vm.LimitStack, Message: "the plan overflowed the stack of its sandbox worker process, which died"}, causeStack
	case e.sigkill && b.cpu > 0 && e.cpu >= b.cpu:
		// The kernel's hard CPU limit: the worker did not exit by itself
		// at the soft one (a Go runtime ignores SIGXCPU unless it asks for
		// it, as a worker does; a worker too busy to act on it, or another
		// binary, does not).
		return vm.StatusTimeout, &vm.ErrorInfo{Message: usedCPU()}, causeCPU
	case e.sigkill && b.memory > 0 && e.maxRSS >= b.memory:
		return vm.StatusLimitExceeded, &vm.ErrorInfo{Limit: vm.LimitMemory, Message: fmt.Sprintf("the plan's sandbox worker process was killed "+
			"by the kernel after it grew to %d MiB, past the plan's memory budget of %d MiB (most likely by the out-of-memory killer)",
			e.maxRSS>>20, b.memory>>20)}, causeMemory
	case e.sigkill:
		// Nobody in the server killed it, and it was within its caps: an
		// operator or another program did.
		return vm.StatusLimitExceeded, &vm.ErrorInfo{Limit: LimitWorker, Message: "the plan's sandbox worker process was killed from outside " +
			"(a SIGKILL the server did not send, while the worker was within its CPU and memory caps)"}, causeKilled
	}
	return vm.StatusLimitExceeded, &vm.ErrorInfo{Limit: LimitWorker, Message: "the plan's sandbox worker process ended abnormally (" + e.exit + ")"}, causeCrashed
}
