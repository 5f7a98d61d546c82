package vm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/codecall-go/codecall/toolerr"
)

// Error codes a tool call can end with besides policy's own.
const (
	codeCancelled = "CANCELLED"
	codeExecution = string(toolerr.Execution)
	codeTimeout   = string(toolerr.Timeout)
	codeLimit     = string(toolerr.Limit)
)

// toolCall is one callTool invocation. The VM goroutine owns it, except
// that between launch and completion the call's goroutine writes raw, err,
// panicked and duration; the completions channel orders the two.
type toolCall struct {
	index        int
	name         string
	op           string         // a discovery operation (Host.Discover) instead of a tool call; name is then the global's
	input        map[string]any // handed to the host; never read again by the VM
	inputJSON    []byte
	throwOnError bool
	binding      *binding // the server module export a Code Mode call came through
	resolve      func(any) error
	reject       func(any) error

	started  bool
	done     bool
	begin    time.Time
	raw      json.RawMessage
	err      error
	panicked bool
	duration time.Duration

	// Set on completion: the outcome as the trace and a tool_error report it.
	ok      bool
	code    string
	message string
	reason  string // the policy's reason, on a policy denial
	hint    string // what to do next, when the gate knows
	retry   bool   // the same call may succeed if made again
	// mismatch locates a validation failure; class is the
	// @codemode/errors class a Code Mode call's failure was given.
	mismatch *toolerr.Mismatch
	class    string

	caller chan *toolCall // the jobs of the goroutine that makes the call
}

// describe names the call in warnings: callTool("crm.get_contact") or
// searchTools.
func (c *toolCall) describe() string {
	if c.op != "" {
		return c.name
	}
	return fmt.Sprintf("callTool(%q)", c.name)
}

// inputEcho is the call's input as a tool_error reports it: the JSON the
// host received, or a marker when it is too large to echo.
func (c *toolCall) inputEcho() json.RawMessage {
	if len(c.inputJSON) <= maxToolInputEcho {
		return json.RawMessage(c.inputJSON)
	}
	return json.RawMessage(fmt.Sprintf(`{"truncated":true,"bytes":%d}`, len(c.inputJSON)))
}

// callTool implements callTool(name, input, opts?): it validates and copies
// its arguments once, queues the call and returns a promise the event loop
// settles.
func (r *run) callTool(call goja.FunctionCall) goja.Value {
	if len(r.calls) >= r.opts.Limits.MaxToolCalls {
		r.stop(limitOutcome(LimitToolCalls, fmt.Sprintf("the plan made more than %d tool calls, this preset's maxToolCalls", r.opts.Limits.MaxToolCalls)))
		r.throwRange("tool-call limit reached")
	}
	name := r.nameArg("callTool", "name", call.Argument(0))
	c := &toolCall{index: len(r.calls), name: name, throwOnError: true}

	switch in := call.Argument(1).(type) {
	case *goja.Object:
		if _, isFunc := goja.AssertFunction(in); isFunc || r.isArray(in) {
			r.throwType("callTool: input must be a plain object")
		}
		c.inputJSON = r.encodeJSON(in, encodeOptions{what: "callTool input", rejectProto: true})
	default:
		if !goja.IsUndefined(in) && !goja.IsNull(in) {
			r.throwType("callTool: input must be an object")
		}
		c.inputJSON = []byte("{}")
	}
	if string(c.inputJSON) == "{}" {
		c.input = map[string]any{} // no arguments, as many calls have: nothing to decode
	} else if err := json.Unmarshal(c.inputJSON, &c.input); err != nil || c.input == nil {
		r.throwType("callTool: input must be a plain object")
	}

	switch opts := call.Argument(2).(type) {
	case *goja.Object:
		if v := opts.Get("throwOnError"); v != nil && !goja.IsUndefined(v) {
			c.throwOnError = v.ToBoolean()
		}
	default:
		if !goja.IsUndefined(opts) {
			r.throwType("callTool: options must be an object such as {throwOnError: false}")
		}
	}

	p, resolve, reject := r.rt.NewPromise()
	c.resolve, c.reject = resolve, reject
	r.calls = append(r.calls, c)
	r.queue = append(r.queue, c) // the event loop starts it (launch)
	return r.rt.ToValue(p)
}

// nameArg converts a name argument once: it must be a string primitive, so
// no toString or valueOf of the plan's runs, and the Go copy is what is
// checked and used.
func (r *run) nameArg(fn, what string, v goja.Value) string {
	if !goja.IsString(v) {
		r.throwType(fmt.Sprintf("%s: %s must be a string", fn, what))
	}
	s := v.String()
	switch {
	case s == "":
		r.throwType(fmt.Sprintf("%s: %s must not be empty", fn, what))
	case len(s) > maxNameBytes:
		r.throwType(fmt.Sprintf("%s: %s is longer than %d bytes", fn, what, maxNameBytes))
	case !utf8.ValidString(s):
		r.throwType(fmt.Sprintf("%s: %s is not valid Unicode", fn, what))
	}
	return s
}

// launch starts queued calls while fewer than MaxConcurrency are in flight.
// It runs on the event loop, between the plan's steps: a call the plan
// makes is queued and starts when the plan yields, as an event loop would.
// A call that is the only thing the loop could wait for (nothing else in
// flight or queued, no timer pending) is made on the loop's own goroutine:
// the loop would only block until it completes, and handing it to another
// goroutine and back costs two wake-ups per call.
func (r *run) launch() {
	for r.inflight < r.caps.concurrency && len(r.queue) > 0 && !r.stopping.Load() {
		c := r.queue[0]
		r.queue[0] = nil
		r.queue = r.queue[1:]
		r.startCall(c, r.inflight == 0 && len(r.queue) == 0 && !r.pendingTimers())
	}
}

// startCall makes c on the loop's goroutine (inline), or hands it to an
// idle caller goroutine of the run, or starts one. Callers live until the
// run ends, so a plan's concurrent calls run on goroutines whose stacks
// have already grown to what a call through the server needs (a fresh
// goroutine grows it again, copying, on every call).
func (r *run) startCall(c *toolCall, inline bool) {
	r.inflight++
	c.started = true
	c.begin = time.Now()
	switch n := len(r.idle); {
	case inline:
		r.runCall(c) // its completion waits in r.completions for the loop
	case n > 0:
		c.caller = r.idle[n-1]
		r.idle = r.idle[:n-1]
		c.caller <- c // never blocks: an idle caller's channel is empty
	default:
		c.caller = make(chan *toolCall, 1)
		r.toolWG.Add(1)
		go r.serveCalls(c.caller, c)
	}
}

// serveCalls runs calls on one goroutine: first, then each one the run
// hands it on jobs, until the run ends.
func (r *run) serveCalls(jobs chan *toolCall, first *toolCall) {
	defer r.toolWG.Done()
	for c := first; ; {
		r.runCall(c)
		select {
		case c = <-jobs:
		case <-r.callersDone:
			return
		}
	}
}

// runCall makes one call and reports its completion.
func (r *run) runCall(c *toolCall) {
	defer func() {
		if x := recover(); x != nil {
			c.panicked = true
			c.raw, c.err = nil, errors.New("tool call panicked")
		}
		c.duration = time.Since(c.begin)
		// Never blocks: the buffer holds one slot per call in flight.
		r.completions <- c
	}()
	ctx := r.callContext(c)
	if c.op != "" {
		c.raw, c.err = r.host.Discover(ctx, c.op, c.inputJSON)
	} else {
		c.raw, c.err = r.host.CallTool(ctx, c.name, c.input)
	}
	if c.err != nil && errors.Is(c.err, context.Canceled) && errors.Is(context.Cause(r.ctx), errDeadline) {
		c.err = context.DeadlineExceeded // hosts report the run's own deadline as a cancellation
	}
}

// complete settles the promise of a finished call and runs the jobs that
// follow from it, then starts queued calls.
func (r *run) complete(c *toolCall) {
	r.inflight--
	if c.caller != nil && !c.panicked {
		r.idle = append(r.idle, c.caller)
	}
	r.record(c)
	if c.panicked {
		r.stop(internalOutcome())
		return
	}
	if o := divergedOutcome(c); o != nil {
		r.stop(o)
		return
	}
	// A call cut short by the run's own end must not reach the plan as a
	// tool failure: the watchdog may not have reported the deadline yet.
	if r.ctx.Err() != nil {
		r.stopForContext()
	}
	if r.stopping.Load() {
		return
	}
	err := r.try(func() {
		if c.ok {
			v, code, message := r.parseToolResult(c.raw)
			if code == "" {
				r.settle(c, v)
				return
			}
			c.ok, c.code, c.message = false, code, message
		}
		r.settle(c, nil)
	})
	if err != nil {
		r.outcome = r.classifyError(err)
		r.stop(r.outcome)
		return
	}
	r.launch()
}

// record fills a completed call's trace fields from its error.
func (r *run) record(c *toolCall) {
	c.done = true
	if c.err == nil {
		c.ok = true
		return
	}
	c.code, c.message = errorCode(c.err)
	if te := toolerr.As(c.err); te != nil {
		c.reason, c.hint, c.retry = clip(te.Reason, maxErrorMessageBytes), clip(te.Hint, maxErrorMessageBytes), te.Retryable
		c.mismatch = te.Mismatch
	}
}

// settle resolves or rejects the call's promise. v is the parsed result when
// c.ok.
func (r *run) settle(c *toolCall, v goja.Value) {
	var err error
	switch {
	case c.ok && c.throwOnError:
		err = c.resolve(v)
	case c.ok:
		o := r.rt.NewObject()
		r.defineData(o, "ok", r.rt.ToValue(true))
		r.defineData(o, "data", v)
		err = c.resolve(o)
	case c.throwOnError && r.cm != nil:
		var e *goja.Object
		e, c.class = r.failedCallError(c)
		if r.toolErrors == nil {
			r.toolErrors = make(map[*goja.Object]*toolCall)
		}
		r.toolErrors[e] = c
		err = c.reject(e)
	case c.throwOnError:
		e := r.newError(r.builtin("Error"), c.message)
		r.defineData(e, "name", r.rt.ToValue("ToolError"))
		// Enumerable, unlike an Error's own message, so that a plan that
		// returns or logs the caught error keeps what it says.
		r.defineData(e, "message", r.rt.ToValue(c.message))
		r.defineData(e, "toolName", r.rt.ToValue(c.name))
		r.defineData(e, "code", r.rt.ToValue(c.code))
		r.defineErrorDetails(e, c)
		if r.toolErrors == nil {
			r.toolErrors = make(map[*goja.Object]*toolCall)
		}
		r.toolErrors[e] = c
		err = c.reject(e)
	default:
		detail := r.rt.NewObject()
		r.defineData(detail, "code", r.rt.ToValue(c.code))
		r.defineData(detail, "message", r.rt.ToValue(c.message))
		r.defineErrorDetails(detail, c)
		o := r.rt.NewObject()
		r.defineData(o, "ok", r.rt.ToValue(false))
		r.defineData(o, "error", detail)
		err = c.resolve(o)
	}
	if err != nil {
		panic(err)
	}
}

// defineErrorDetails sets the rest of a failed call's error: the policy's
// reason when there is one, a hint (the gate's, else the code's own) and
// retryable.
func (r *run) defineErrorDetails(o *goja.Object, c *toolCall) {
	if c.reason != "" {
		r.defineData(o, "reason", r.rt.ToValue(c.reason))
	}
	hint := c.hint
	if hint == "" {
		hint = toolerr.HintFor(toolerr.Code(c.code))
	}
	if hint != "" {
		r.defineData(o, "hint", r.rt.ToValue(hint))
	}
	r.defineData(o, "retryable", r.rt.ToValue(c.retry))
}

// parseToolResult parses a tool's unwrapped JSON result into runtime
// values, after checking its size and depth: the parser recurses on the Go
// stack. It gives what JSON.parse would, in one pass (see resultParser).
// On failure it returns the error code and message the call fails with.
func (r *run) parseToolResult(raw json.RawMessage) (v goja.Value, code, message string) {
	if len(raw) == 0 {
		return goja.Null(), "", ""
	}
	if err := checkJSONText(raw, r.caps.stringUnits, maxJSONDepth); err != nil {
		return nil, codeLimit, "the tool's result cannot be used in the sandbox: " + err.Error()
	}
	var perr error
	err := r.try(func() { v, perr = parseResultJSON(r.rt, raw) })
	if err != nil && isUncatchable(err) {
		panic(err)
	}
	if err != nil || perr != nil {
		return nil, codeExecution, "the tool returned a result that is not valid JSON"
	}
	return v, "", ""
}

// errorCode maps a tool call's error to the code and message the plan sees.
// Errors other than policy's carry Go text the plan must not see, so they
// get a generic message.
func errorCode(err error) (code, message string) {
	switch te := toolerr.As(err); {
	case te != nil:
		return string(te.Code), clip(te.Message, maxErrorMessageBytes)
	case errors.Is(err, context.DeadlineExceeded):
		return codeTimeout, "the tool call was cancelled: the run ran out of time"
	case errors.Is(err, context.Canceled):
		return codeCancelled, "the tool call was cancelled"
	}
	return codeExecution, "the tool call failed"
}

// trackRejections records which promises are rejected with nothing to
// handle them, so that a tool error the plan never looked at is reported.
func (r *run) trackRejections() {
	r.unhandled = make(map[*goja.Promise]bool)
	r.rt.SetPromiseRejectionTracker(func(p *goja.Promise, op goja.PromiseRejectionOperation) {
		if op == goja.PromiseRejectionReject {
			r.unhandled[p] = true
		} else {
			delete(r.unhandled, p)
		}
	})
}

// warnUnhandled warns about tool calls that failed while nothing in the
// plan handled the failure (a call that was never awaited, say).
func (r *run) warnUnhandled() {
	var calls []*toolCall
	for p := range r.unhandled {
		if o, ok := p.Result().(*goja.Object); ok && r.toolErrors[o] != nil {
			calls = append(calls, r.toolErrors[o])
		}
	}
	slices.SortFunc(calls, func(a, b *toolCall) int { return a.index - b.index })
	for _, c := range calls {
		r.warn(WarningUnhandledToolError, fmt.Sprintf("%s failed with %s and the plan never handled the error: %s", c.describe(), c.code, c.message))
	}
}

// drainCompletions records the calls that completed after the event loop
// stopped listening.
func (r *run) drainCompletions() {
	for {
		select {
		case c := <-r.completions:
			r.record(c)
			if c.panicked {
				r.late.Store(internalError())
			}
			if !c.ok && c.throwOnError && c.code != codeCancelled && c.code != codeTimeout {
				r.warn(WarningLateToolError, fmt.Sprintf("%s failed with %s after the plan had returned, so the plan never saw the failure: %s", c.describe(), c.code, c.message))
			}
		default:
			return
		}
	}
}

// trace lists every accepted call in the order the plan made them.
func (r *run) trace() []TraceEntry {
	out := make([]TraceEntry, 0, len(r.calls))
	for _, c := range r.calls {
		if c.op != "" {
			continue
		}
		e := TraceEntry{ToolName: c.name, DurationMs: float64(c.duration.Microseconds()) / 1000, OK: c.done && c.ok}
		switch {
		case !c.started || !c.done:
			e.Error = codeCancelled
		case !c.ok:
			e.Error = c.code
		}
		out = append(out, e)
	}
	return out
}
