package vm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/codecall-go/codecall/ast"
)

// Run executes a checked plan. It never panics and never returns before
// every goroutine it started has finished.
//
// The plan's program must evaluate to the plan's async function (see
// package ast). Run gives it a fresh, hardened runtime, calls it, runs an
// event loop that settles callTool promises until the function's promise
// settles, serialises the value it resolved to inside the runtime while
// the deadline is still armed, and maps whatever ended the run to a
// Status. Every Result carries the logs captured so far, the tool trace,
// the metrics and the run ID.
//
// Cancelling ctx stops the run promptly with StatusTimeout and cancels the
// context of every tool call in flight. Host.CallTool must honour its
// context: Run waits for every call it started.
//
// With opts.ReturnMemory, a run whose heap grew a lot returns the memory
// the process no longer uses to the operating system before it returns
// (see returnMemory).
func Run(ctx context.Context, plan *ast.Checked, host Host, opts Options) *Result {
	r := newRun(ctx, plan, host, opts)
	r.execute()
	res := r.finish()
	if opts.ReturnMemory {
		grew := r.heapGrowth()
		r = nil // the runtime and everything the plan made become garbage
		returnMemory(grew)
	}
	return res
}

// outcome is how a run ended, before it becomes a Result.
type outcome struct {
	status Status
	err    *ErrorInfo
	result json.RawMessage
}

// run is the state of one Run. Fields are owned by the VM goroutine (the
// caller of Run) unless noted.
type run struct {
	parent context.Context // the caller's context: cancellation by the client
	ctx    context.Context // parent plus the run's deadline; cancelled when the run ends
	cancel context.CancelFunc
	plan   *ast.Checked
	host   Host
	opts   Options
	caps   caps
	start  time.Time

	rt     *goja.Runtime
	in     intrinsics
	std    *goja.Object // goja's own global object, never exposed to the plan
	global *goja.Object // the plan's global object
	lazy   *lazyGlobals

	// Stopping; stop may be called from any goroutine and the first reason
	// wins. Once sealed (the outcome is final), stops are ignored.
	mu       sync.Mutex
	reason   *outcome
	sealed   bool
	stopCh   chan struct{}
	stopping atomic.Bool
	late     atomic.Pointer[ErrorInfo] // an internal error found after sealing

	outcome  *outcome
	warnings []Warning

	// Tool calls.
	calls       []*toolCall
	queue       []*toolCall
	inflight    int
	completions chan *toolCall
	toolWG      sync.WaitGroup
	idle        []chan *toolCall // callers waiting for a call (see startCall)
	callersDone chan struct{}    // closed when the run ends: callers return
	toolErrors  map[*goja.Object]*toolCall
	unhandled   map[*goja.Promise]bool // rejected promises nothing handles yet

	// getTool answers, by name.
	tools map[string]goja.Value

	// Logs, mcpLog and mcpNotify.
	logs     logBook
	messages int
	dropped  bool
	outbox   *outbox

	// The plan's clock (the deadline) and its timers.
	clock  *deadline
	timers *timerQueue
	det    *determinism // set under Options.Replay

	guards guardState
	// own, when a test sets it before setup, collects every function the
	// sandbox makes (see TestBuiltinsGuarded).
	own        map[*goja.Object]bool
	web        *webState // URL, URLSearchParams, TextEncoder, TextDecoder objects
	regex      *regexEngine
	cm         *codeModeState // a Code Mode run's state; nil for a plan
	lazyRegExp bool           // the plan has no regex literals: harden RegExp on first use
	watch      *watchdog
}

func newRun(ctx context.Context, plan *ast.Checked, host Host, opts Options) *run {
	if ctx == nil {
		ctx = context.Background()
	}
	caps := capsFor(opts.Limits)
	var r *run
	if opts.Runtimes != nil {
		r = opts.Runtimes.take(hardeningFor(opts.Limits, opts.CodeMode != nil))
	}
	if r == nil {
		r = &run{}
	}
	r.parent, r.plan, r.host, r.opts, r.caps = ctx, plan, host, opts, caps
	r.start = time.Now()
	r.stopCh = make(chan struct{})
	r.callersDone = make(chan struct{})
	if rl, ok := any(plan).(regexLiteralReporter); ok && !rl.HasRegExpLiterals() {
		r.lazyRegExp = true
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	d := newDeadline(r.caps.timeout, cancel)
	r.clock = d
	r.ctx, r.cancel = ContextWithClock(runCtx, d), d.stop
	r.logs.limit = r.caps.logBytes
	// One slot per call that can be in flight, so a finishing call never
	// blocks on the channel.
	r.completions = make(chan *toolCall, min(r.caps.concurrency, max(opts.Limits.MaxToolCalls, 1)))
	return r
}

// stop ends the run for reason o: it interrupts the script at its next
// instruction and makes every guard checkpoint throw. Safe from any
// goroutine; the first reason wins.
func (r *run) stop(o *outcome) {
	r.mu.Lock()
	if r.reason != nil || r.sealed {
		r.mu.Unlock()
		return
	}
	r.reason = o
	r.mu.Unlock()
	r.stopping.Store(true)
	close(r.stopCh)
	if r.rt != nil {
		r.rt.Interrupt(o)
	}
}

// stopReason returns the reason the run was stopped, or nil.
func (r *run) stopReason() *outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reason
}

// seal makes the outcome final: later stops are ignored.
func (r *run) seal() {
	r.mu.Lock()
	r.sealed = true
	r.mu.Unlock()
}

// execute runs the plan to an outcome. A panic inside goja or a handler is
// recovered here; the runtime is then abandoned without running any more
// script code.
func (r *run) execute() {
	defer func() {
		if x := recover(); x != nil {
			r.outcome = internalOutcome()
		}
	}()
	switch {
	case r.plan == nil || r.plan.Program == nil:
		r.outcome = &outcome{status: StatusRuntimeError, err: &ErrorInfo{Source: "script", Name: "InternalError", Message: "no compiled plan to run"}}
		return
	case r.host == nil:
		r.outcome = &outcome{status: StatusRuntimeError, err: &ErrorInfo{Source: "script", Name: "InternalError", Message: "no host to run the plan against"}}
		return
	}
	r.setup()
	r.startReplay()
	r.watch = startWatchdog(r)

	v, err := r.rt.RunProgram(r.plan.Program)
	if err != nil {
		r.outcome = r.classifyError(err)
		return
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		r.outcome = &outcome{status: StatusRuntimeError, err: &ErrorInfo{Source: "script", Name: "InternalError", Message: errNotAFunction}}
		return
	}
	ret, err := fn(goja.Undefined())
	if err != nil {
		r.outcome = r.classifyError(err)
		return
	}
	p := asPromise(ret)
	if p == nil {
		r.export(ret)
		return
	}
	r.loop(p)
	delete(r.unhandled, p)
	r.warnUnhandled()
}

// errNotAFunction reports a program that is not a validated plan.
const errNotAFunction = "the plan did not compile to a function"

// promiseType is what goja exports a promise object as.
var promiseType = reflect.TypeOf((*goja.Promise)(nil))

// asPromise returns v's promise, or nil when v is not a promise. Only a
// promise is exported: exporting another object would run its getters.
func asPromise(v goja.Value) *goja.Promise {
	o, ok := v.(*goja.Object)
	if !ok || o.ExportType() != promiseType {
		return nil
	}
	p, _ := o.Export().(*goja.Promise)
	return p
}

// loop is the event loop: it starts queued tool calls, runs due timers,
// waits for a call to complete or a timer to come due, settles the call's
// promise or runs the timer's callback (each followed by the promise jobs
// they queue), and goes on until the plan's promise settles or the run is
// stopped.
func (r *run) loop(p *goja.Promise) {
	for p.State() == goja.PromiseStatePending {
		if r.stopping.Load() {
			return
		}
		r.launch()
		if r.det != nil {
			if r.fireReplayTimer() {
				continue
			}
		} else if r.fireTimer() {
			continue
		}
		var alarm <-chan time.Time
		var clockChanged <-chan struct{}
		unreachable := false
		if r.pendingTimers() && r.det == nil {
			alarm, clockChanged, unreachable = r.timerWait()
		}
		if r.inflight == 0 {
			switch {
			case clockChanged == nil:
				// Nothing in flight and no timer can settle anything: the plan
				// awaits a promise that will never settle.
				r.outcome = &outcome{status: StatusRuntimeError, err: &ErrorInfo{Source: "script", Name: "Error",
					Message: "the plan is waiting for a promise that can never settle (no tool call is in flight and no timer is pending)"}}
				return
			case unreachable:
				// Only timers due after the deadline are left, and with no
				// tool call in flight nothing can stop the clock: the run
				// would time out waiting for them.
				r.outcome = &outcome{status: StatusTimeout, err: &ErrorInfo{
					Message: fmt.Sprintf("the plan is waiting for a timer due after the run's timeout of %v", r.caps.timeout)}}
				return
			}
		}
		select {
		case c := <-r.completions:
			if r.det != nil {
				r.completeInOrder(c)
			} else {
				r.complete(c)
			}
		case <-r.stopCh:
			return
		case <-alarm:
		case <-clockChanged:
		}
	}
	if r.stopping.Load() {
		return
	}
	switch p.State() {
	case goja.PromiseStateFulfilled:
		if r.cm != nil {
			r.exportCodeModeResult()
			return
		}
		r.export(p.Result())
	case goja.PromiseStateRejected:
		r.outcome = r.classifyThrown(p.Result())
	}
}

// try runs f on the VM goroutine outside a running script. It returns what
// f threw: a *goja.Exception, or goja's uncatchable interrupt and
// stack-overflow errors. Any other panic is not goja's to handle and goes
// on to execute's recover.
func (r *run) try(f func()) (err error) {
	defer func() {
		if x := recover(); x != nil {
			if e, ok := x.(error); ok && isUncatchable(e) {
				err = e
				return
			}
			panic(x)
		}
	}()
	if ex := r.rt.Try(f); ex != nil {
		return ex
	}
	return nil
}

func isUncatchable(err error) bool {
	var ie *goja.InterruptedError
	var se *goja.StackOverflowError
	return errors.As(err, &ie) || errors.As(err, &se)
}

// finish seals the outcome, stops the watchdog, cancels and waits for the
// tool calls still in flight and for the message sender, and builds the
// Result.
func (r *run) finish() *Result {
	r.seal()
	if r.watch != nil {
		r.watch.stop()
	}
	r.stopTimers()
	r.cancel()
	close(r.callersDone)
	r.toolWG.Wait()
	r.drainCompletions()
	if r.outbox != nil {
		r.outbox.close()
	}

	res := &Result{RunID: r.opts.RunID, ToolTrace: r.trace(), Logs: r.logs.entries, Warnings: r.warnings}
	o := r.reason
	if o == nil {
		o = r.outcome
	}
	if o == nil {
		o = internalOutcome()
	}
	if late := r.late.Load(); late != nil {
		o = &outcome{status: StatusRuntimeError, err: late}
	}
	res.Status, res.Error = o.status, o.err
	if o.status == StatusOK {
		res.Result = o.result
	}
	res.Metrics = Metrics{DurationMs: float64(time.Since(r.start).Microseconds()) / 1000, ToolCalls: r.toolCalls()}
	scrubResult(res)
	return res
}

// warn adds a warning to the Result.
func (r *run) warn(typ, message string) {
	r.warnings = append(r.warnings, Warning{Type: typ, Message: message})
}
