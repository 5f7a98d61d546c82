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

// Kill causes, as Stats and the logs name them.
const (
	causeTimeout   = "timeout"
	causeCancelled = "cancelled"
	causeProtocol  = "protocol"
)

// LimitWorker is the limit a limit_exceeded result names when a worker
// process ended abnormally for a reason no other limit describes.
const LimitWorker = "worker"

// runOn serves the calls of a worker that was sent its run until it
// reports a result, dies, or outlives its deadline.
func (p *Pool) runOn(ctx context.Context, w *worker, req *runRequest, host vm.Host, start time.Time) *vm.Result {
	s := &session{w: w, host: host, calls: map[uint64]context.CancelFunc{}}
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

	frames := make(chan *message)
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(frames)
		for {
			m, err := readFrame(w.out, maxFrameFromWorker)
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, os.ErrClosed) {
					// Too large or malformed: the worker is not speaking the
					// protocol, and is not trusted to go on.
					w.kill(causeProtocol)
				}
				return
			}
			select {
			case frames <- m:
			case <-done:
				return
			}
		}
	}()

	for {
		select {
		case m, ok := <-frames:
			if !ok {
				return s.abnormal(p, req, start, "")
			}
			switch m.T {
			case msgCall:
				s.call(callCtx, m)
			case msgDiscover:
				s.discover(callCtx, m)
			case msgGet:
				desc, found := host.GetTool(m.Name)
				_ = w.send(&message{T: msgReply, ID: m.ID, OK: found, Value: desc})
			case msgCancel:
				s.cancel(m.ID)
			case msgLog:
				host.Log(ctx, m.Name, m.Message, m.Data)
			case msgNotify:
				host.Notify(ctx, m.Name, m.Data)
			case msgResult:
				// The runtime in the worker caps the result and the logs; a
				// worker sending more is not the runtime speaking.
				if m.Result == nil || int64(len(m.Result.Result)) > 2*req.Options.Limits.MaxResultBytes+1024 {
					w.kill(causeProtocol)
					return s.abnormal(p, req, start, "")
				}
				res := m.Result
				res.RunID = req.Options.RunID
				if res.ToolTrace == nil {
					res.ToolTrace = []vm.TraceEntry{}
				}
				return res
			default:
				w.kill(causeProtocol)
				return s.abnormal(p, req, start, "")
			}
		case <-hard.fired:
			w.kill(causeTimeout)
			return s.abnormal(p, req, start, causeTimeout)
		case <-ctx.Done():
			w.kill(causeCancelled)
			return s.abnormal(p, req, start, causeCancelled)
		}
	}
}

// session is the server's side of one run.
type session struct {
	w    *worker
	host vm.Host
	wg   sync.WaitGroup
	kill *killTimer

	mu    sync.Mutex
	calls map[uint64]context.CancelFunc
	trace []vm.TraceEntry
}

// call runs one callTool of the plan through the host, on its own
// goroutine, and sends the answer back.
func (s *session) call(ctx context.Context, m *message) {
	cctx, cancel := context.WithCancel(ctx)
	id := m.ID
	cctx = vm.ContextWithClock(cctx, &callClock{kill: s.kill, send: func(t string) { _ = s.w.send(&message{T: t, ID: id}) }})
	s.mu.Lock()
	s.calls[m.ID] = cancel
	idx := len(s.trace)
	s.trace = append(s.trace, vm.TraceEntry{ToolName: m.Name})
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.cancel(m.ID)
		start := time.Now()
		reply := &message{T: msgReply, ID: m.ID}
		var input map[string]any
		if err := json.Unmarshal(m.Input, &input); err != nil {
			reply.Code, reply.Error = string(toolerr.Validation), "the tool input is not a JSON object"
		} else if out, err := s.host.CallTool(cctx, m.Name, input); err != nil {
			failReply(reply, err)
		} else {
			reply.OK, reply.Value = true, out
		}
		s.mu.Lock()
		s.trace[idx] = vm.TraceEntry{ToolName: m.Name, DurationMs: ms(time.Since(start)), OK: reply.OK, Error: strings.TrimPrefix(reply.Code, "@")}
		s.mu.Unlock()
		_ = s.w.send(reply)
	}()
}

// discover answers a plan's searchTools or describeTools on its own
// goroutine, like a call (the worker may cancel it), but outside the trace:
// toolTrace lists tool calls.
func (s *session) discover(ctx context.Context, m *message) {
	cctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.calls[m.ID] = cancel
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.cancel(m.ID)
		reply := &message{T: msgReply, ID: m.ID}
		if out, err := s.host.Discover(cctx, m.Name, m.Input); err != nil {
			failReply(reply, err)
		} else {
			reply.OK, reply.Value = true, out
		}
		_ = s.w.send(reply)
	}()
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
	case errors.Is(err, context.DeadlineExceeded):
		reply.Code = codeDeadline
	case errors.Is(err, context.Canceled):
		reply.Code = codeCanceled
	default:
		reply.Error = "the tool call failed"
	}
}

func (s *session) cancel(id uint64) {
	s.mu.Lock()
	c := s.calls[id]
	delete(s.calls, id)
	s.mu.Unlock()
	if c != nil {
		c()
	}
}

// abnormal builds the result of a run whose worker gave no result: it
// waits for the worker to be reaped and says why it ended.
func (s *session) abnormal(p *Pool, req *runRequest, start time.Time, cause string) *vm.Result {
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
	s.mu.Lock()
	trace := append([]vm.TraceEntry{}, s.trace...)
	s.mu.Unlock()
	res := &vm.Result{RunID: req.Options.RunID, ToolTrace: trace,
		Metrics: vm.Metrics{DurationMs: ms(time.Since(start)), ToolCalls: len(trace)}}
	status, info, label := classify(cause, s.w, req.Options.Limits.Timeout)
	res.Status, res.Error = status, info
	p.st.kills(label)
	p.log.Warn("codecall: sandbox worker ended without a result", "runId", req.Options.RunID, "cause", label,
		"exit", s.w.describeExit(), "pid", s.w.pid)
	return res
}

// classify maps how a worker ended to the status the client sees, and a
// label for the counters.
func classify(cause string, w *worker, timeout time.Duration) (vm.Status, *vm.ErrorInfo, string) {
	stderr := w.errs.String()
	xcpu, sigkill := killedBy(w.state)
	switch {
	case cause == causeTimeout:
		return vm.StatusTimeout, &vm.ErrorInfo{Message: fmt.Sprintf("the plan ran past its %v timeout and did not stop; its sandbox worker process was killed", timeout)}, causeTimeout
	case cause == causeCancelled:
		return vm.StatusTimeout, &vm.ErrorInfo{Message: "the request was cancelled; the plan's sandbox worker process was killed"}, causeCancelled
	case cause == causeProtocol:
		return vm.StatusLimitExceeded, &vm.ErrorInfo{Limit: LimitWorker, Message: "the plan's sandbox worker broke the bridge protocol (a message too large or malformed) and was killed"}, causeProtocol
	case xcpu:
		return vm.StatusTimeout, &vm.ErrorInfo{Message: "the plan used up its CPU time limit; the kernel stopped its sandbox worker process"}, "cpu"
	case strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory"):
		return vm.StatusLimitExceeded, &vm.ErrorInfo{Limit: vm.LimitMemory, Message: "the plan ran out of memory: its sandbox worker process hit the memory cap and died"}, "memory"
	case strings.Contains(stderr, "stack overflow") || strings.Contains(stderr, "stack exceeds"):
		return vm.StatusLimitExceeded, &vm.ErrorInfo{Limit: vm.LimitStack, Message: "the plan overflowed the stack of its sandbox worker process, which died"}, "stack"
	case sigkill:
		// Nobody in the server killed it: the kernel's OOM killer did, or an
		// operator.
		return vm.StatusLimitExceeded, &vm.ErrorInfo{Limit: vm.LimitMemory, Message: "the plan's sandbox worker process was killed from outside (the kernel's out-of-memory killer or an operator)"}, "killed"
	}
	return vm.StatusLimitExceeded, &vm.ErrorInfo{Limit: LimitWorker, Message: "the plan's sandbox worker process ended abnormally (" + w.describeExit() + ")"}, "crashed"
}
