package vm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
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
func Run(ctx context.Context, plan *ast.Checked, host Host, opts Options) *Result {
	r := newRun(ctx, plan, host, opts)
	r.execute()
	return r.finish()
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
	toolErrors  map[*goja.Object]*toolCall
	unhandled   map[*goja.Promise]bool // rejected promises nothing handles yet

	// getTool answers, by name.
	tools map[string]goja.Value

	// Logs, mcpLog and mcpNotify.
	logs     logBook
	messages int
	dropped  bool
	outbox   *outbox

	guards guardState
	regex  *regexEngine
	watch  *watchdog
}

func newRun(ctx context.Context, plan *ast.Checked, host Host, opts Options) *run {
	if ctx == nil {
		ctx = context.Background()
	}
	r := &run{
		parent: ctx,
		plan:   plan,
		host:   host,
		opts:   opts,
		caps:   capsFor(opts.Limits),
		start:  time.Now(),
		stopCh: make(chan struct{}),
	}
	r.ctx, r.cancel = context.WithTimeout(ctx, r.caps.timeout)
	r.logs.limit = r.caps.logBytes
	conc := max(opts.Limits.MaxConcurrency, 1)
	r.completions = make(chan *toolCall, conc)
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

// asPromise returns v's promise, or nil when v is not a promise.
func asPromise(v goja.Value) *goja.Promise {
	o, ok := v.(*goja.Object)
	if !ok {
		return nil
	}
	p, _ := o.Export().(*goja.Promise)
	return p
}

// loop is the event loop: it starts queued tool calls, waits for one to
// complete, settles its promise (which runs the promise jobs), and goes on
// until the plan's promise settles or the run is stopped.
func (r *run) loop(p *goja.Promise) {
	for p.State() == goja.PromiseStatePending {
		if r.stopping.Load() {
			return
		}
		r.launch()
		if r.inflight == 0 {
			// Nothing in flight can settle anything: no timers exist, so the
			// plan awaits a promise that will never settle.
			r.outcome = &outcome{status: StatusRuntimeError, err: &ErrorInfo{Source: "script", Name: "Error",
				Message: "the plan is waiting for a promise that can never settle (no tool call is in flight)"}}
			return
		}
		select {
		case c := <-r.completions:
			r.complete(c)
		case <-r.stopCh:
			return
		}
	}
	if r.stopping.Load() {
		return
	}
	switch p.State() {
	case goja.PromiseStateFulfilled:
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

// classifyError maps an error returned by goja to an outcome.
func (r *run) classifyError(err error) *outcome {
	if o := r.stopReason(); o != nil {
		return o
	}
	var se *goja.StackOverflowError
	var ie *goja.InterruptedError
	var ex *goja.Exception
	switch {
	case errors.As(err, &se):
		return limitOutcome(LimitStack, fmt.Sprintf("the call stack exceeded this preset's maxStackDepth (%d)", r.caps.stackDepth))
	case errors.As(err, &ie):
		// An interrupt without a recorded reason cannot happen; report it
		// as a timeout rather than guess.
		return &outcome{status: StatusTimeout, err: &ErrorInfo{Message: "the run was interrupted"}}
	case errors.As(err, &ex):
		return r.classifyThrown(ex.Value())
	}
	return internalOutcome()
}

// classifyThrown maps a value the plan threw (or its promise rejected with)
// to an outcome: one of the run's own tool errors becomes tool_error with
// the facts recorded in Go, anything else is a runtime_error whose name and
// message are read once, under the deadline.
func (r *run) classifyThrown(v goja.Value) *outcome {
	if o := r.stopReason(); o != nil {
		return o
	}
	if obj, ok := v.(*goja.Object); ok {
		if c := r.toolErrors[obj]; c != nil {
			return &outcome{status: StatusToolError, err: &ErrorInfo{Source: "tool", ToolName: c.name,
				ToolInput: c.inputEcho(), Code: c.code, Message: c.message}}
		}
	}
	info := &ErrorInfo{Source: "script"}
	err := r.try(func() { info.Name, info.Message, info.Location = r.describeThrown(v) })
	if err != nil {
		if o := r.stopReason(); o != nil {
			return o
		}
		if isUncatchable(err) {
			return r.classifyError(err)
		}
		info.Name, info.Message = "Error", "uncaught exception whose message could not be read"
	}
	if info.Message == "" && info.Name == "" {
		info.Message = "uncaught exception"
	}
	return &outcome{status: StatusRuntimeError, err: info}
}

// describeThrown reads the name, message and stack of a thrown value,
// converting each once.
func (r *run) describeThrown(v goja.Value) (name, message string, loc *Location) {
	obj, ok := v.(*goja.Object)
	if !ok {
		return "", clip(r.toStr(v).String(), maxErrorMessageBytes), nil
	}
	if n := obj.Get("name"); n != nil && goja.IsString(n) {
		name = clip(n.String(), maxNameBytes)
	}
	if m := obj.Get("message"); m != nil && !goja.IsUndefined(m) {
		message = clip(r.toStr(m).String(), maxErrorMessageBytes)
	} else if name == "" {
		message = clip(r.toStr(obj).String(), maxErrorMessageBytes)
	}
	if s := obj.Get("stack"); s != nil && goja.IsString(s) {
		loc = r.stackLocation(s.String())
	}
	return name, message, loc
}

// stackFrame matches a script position in a goja stack trace line:
// "\tat f (plan.js:3:5(12))" or "\tat plan.js:3:5(12)".
var stackFrame = regexp.MustCompile(`:(\d+):(\d+)\(\d+\)\)?$`)

// stackLocation is the innermost script position of a stack trace.
func (r *run) stackLocation(stack string) *Location {
	for line := range strings.Lines(clip(stack, 64<<10)) {
		m := stackFrame.FindStringSubmatch(strings.TrimRight(line, "\n"))
		if m == nil {
			continue
		}
		l, err1 := strconv.Atoi(m[1])
		c, err2 := strconv.Atoi(m[2])
		if err1 == nil && err2 == nil && l > 0 {
			return r.locate(l, c)
		}
	}
	return nil
}

func internalOutcome() *outcome {
	return &outcome{status: StatusRuntimeError, err: internalError()}
}

func internalError() *ErrorInfo {
	return &ErrorInfo{Source: "script", Name: "InternalError", Message: "the sandbox failed unexpectedly; the run was abandoned"}
}

func limitOutcome(limit, message string) *outcome {
	return &outcome{status: StatusLimitExceeded, err: &ErrorInfo{Limit: limit, Message: message}}
}

// finish seals the outcome, stops the watchdog, cancels and waits for the
// tool calls still in flight and for the message sender, and builds the
// Result.
func (r *run) finish() *Result {
	r.seal()
	if r.watch != nil {
		r.watch.stop()
	}
	r.cancel()
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
	res.Metrics = Metrics{DurationMs: float64(time.Since(r.start).Microseconds()) / 1000, ToolCalls: len(r.calls)}
	return res
}

// warn adds a warning to the Result.
func (r *run) warn(typ, message string) {
	r.warnings = append(r.warnings, Warning{Type: typ, Message: message})
}

// clip cuts s to at most n bytes on a UTF-8 boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return truncateUTF8(s, n) + "…"
}

// truncateUTF8 returns the longest prefix of s of at most n bytes that does
// not split a UTF-8 sequence.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
