package vm

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

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
			return &outcome{status: StatusToolError, err: &ErrorInfo{Source: "tool", ToolName: c.name, Name: c.class,
				ToolInput: c.inputEcho(), Code: c.code, Message: c.message, Reason: c.reason, Hint: c.hint, Retryable: c.retry}}
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
	info.Message = explainBuiltinAssignment(info.Name, info.Message)
	return &outcome{status: StatusRuntimeError, err: info}
}

// explainBuiltinAssignment rewrites the ReferenceError a strict plan gets
// when it assigns to a standard global ("Object is not defined"): the
// built-ins are inherited, not own properties of the plan's global object,
// so the engine's wording points the model the wrong way.
func explainBuiltinAssignment(name, msg string) string {
	global, ok := strings.CutSuffix(msg, " is not defined")
	if name != "ReferenceError" || !ok || (!standardGlobals[global] && lazyGroups[global] == groupNone) {
		return msg
	}
	return fmt.Sprintf("%s: built-in globals cannot be reassigned by a plan; declare a local variable instead (const %s = ...)", msg, global)
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
