package vm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dop251/goja"
)

var errNotSerialisable = errors.New("not serialisable")

// mcpLevels are the MCP logging levels mcpLog accepts.
var mcpLevels = map[string]bool{
	"debug": true, "info": true, "notice": true, "warning": true,
	"error": true, "critical": true, "alert": true, "emergency": true,
}

// installBridge defines the globals a plan reaches the host through. Each
// function is frozen and bound as a non-writable, non-configurable global,
// so the plan can neither replace nor extend them. Everything crossing the
// boundary is a JSON copy: no Go value is ever handed to the runtime.
// console is bound when the preset allows it.
func (r *run) installBridge(console bool) {
	define := func(name string, v *goja.Object) {
		r.freeze(v)
		r.lockGlobal(name, v)
	}
	define("callTool", r.newFunction("callTool", 2, r.callTool))
	define("getTool", r.newFunction("getTool", 1, r.getTool))
	define("searchTools", r.newFunction("searchTools", 2, r.searchTools))
	define("describeTools", r.newFunction("describeTools", 1, r.describeTools))
	define("mcpLog", r.newFunction("mcpLog", 2, r.mcpLog))
	define("mcpNotify", r.newFunction("mcpNotify", 2, r.mcpNotify))

	r.lockLazyGlobal("codecallContext", r.planContext)
	if console {
		r.lockLazyGlobal("console", r.console)
	}
}

// lockLazyGlobal binds name on the plan's global object to a value built
// on first use: a non-configurable accessor with no setter, so the
// binding is as locked as a non-writable data property, and plans that
// never use it do not pay for it.
func (r *run) lockLazyGlobal(name string, build func() goja.Value) {
	var v goja.Value
	get := r.newFunction("get "+name, 0, func(goja.FunctionCall) goja.Value {
		if v == nil {
			v = build()
		}
		return v
	})
	r.freeze(get)
	if err := r.global.DefineAccessorProperty(name, get, nil, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		panic(err)
	}
	r.lazy.cache[name] = nil
}

// planContext is codecallContext: Options.Context parsed inside the
// runtime and deep-frozen.
func (r *run) planContext() goja.Value {
	ctxJSON := strings.TrimSpace(string(r.opts.Context))
	var v goja.Value
	var err error
	if ctxJSON == "" || ctxJSON == "{}" {
		v = r.rt.NewObject()
	} else {
		v, err = r.parseHostJSON([]byte(ctxJSON))
	}
	if err != nil {
		// The request's context is the host's to get right; a plan should
		// not fail for it, so it sees an empty context.
		v = r.rt.NewObject()
		r.warn(WarningContextDropped, "the request context could not be given to the plan: "+err.Error())
	}
	r.deepFreeze(v, 0)
	return v
}

// console is the frozen console object.
func (r *run) console() goja.Value {
	console := r.rt.NewObject()
	for _, level := range []string{"log", "info", "warn", "error", "debug"} {
		fn := r.newFunction(level, 0, r.consoleMethod(level))
		r.freeze(fn)
		r.lockData(console, level, fn)
	}
	r.freeze(console)
	return console
}

// getTool implements getTool(name): the host's description of a tool the
// plan may call, parsed inside the runtime and frozen, or null.
func (r *run) getTool(call goja.FunctionCall) goja.Value {
	name := r.nameArg("getTool", "name", call.Argument(0))
	if v, ok := r.tools[name]; ok {
		return v
	}
	var desc json.RawMessage
	var found bool
	func() {
		defer func() {
			if x := recover(); x != nil {
				r.stop(internalOutcome())
				r.throwType("getTool failed")
			}
		}()
		desc, found = r.host.GetTool(name)
	}()
	v := goja.Null()
	if found {
		var err error
		if v, err = r.parseHostJSON(desc); err != nil {
			r.throwType("getTool: the description of " + name + " cannot be used: " + err.Error())
		}
		r.deepFreeze(v, 0)
	}
	if r.tools == nil {
		r.tools = make(map[string]goja.Value)
	}
	r.tools[name] = v
	return v
}

// mcpLog implements mcpLog(level, message, metadata?): a logging message to
// the client, also captured in the run's logs.
func (r *run) mcpLog(call goja.FunctionCall) goja.Value {
	level := r.nameArg("mcpLog", "level", call.Argument(0))
	if !mcpLevels[level] {
		r.throwType("mcpLog: level must be one of debug, info, notice, warning, error, critical, alert, emergency")
	}
	message := r.toStr(call.Argument(1)).String()
	var data json.RawMessage
	if md := call.Argument(2); !goja.IsUndefined(md) {
		data = r.encodeJSON(md, encodeOptions{what: "mcpLog metadata", keep: r.logs.remaining() + 1})
	}
	if !r.admitMessage() {
		return goja.Undefined()
	}
	r.logs.charge(int64(len(data)))
	message, ok := r.log(level, message)
	if !ok {
		return goja.Undefined()
	}
	r.post(func() { r.host.Log(r.parent, level, message, data) })
	return goja.Undefined()
}

// mcpNotify implements mcpNotify(event, payload): a notification to the
// client. It counts against the log budget but is not captured.
func (r *run) mcpNotify(call goja.FunctionCall) goja.Value {
	event := r.nameArg("mcpNotify", "event", call.Argument(0))
	payload := r.encodeJSON(call.Argument(1), encodeOptions{what: "mcpNotify payload", keep: r.logs.remaining() + 1})
	if !r.admitMessage() {
		return goja.Undefined()
	}
	if !r.logs.charge(int64(len(event) + len(payload))) {
		r.logsFull()
		return goja.Undefined()
	}
	r.post(func() { r.host.Notify(r.parent, event, payload) })
	return goja.Undefined()
}

// admitMessage applies the per-run rate limit of mcpLog and mcpNotify.
func (r *run) admitMessage() bool {
	if r.messages >= maxHostMessages {
		if !r.dropped {
			r.dropped = true
			r.warn(WarningMessagesDropped, fmt.Sprintf("mcpLog and mcpNotify are limited to %d calls per run; later calls were dropped", maxHostMessages))
		}
		return false
	}
	r.messages++
	return true
}

// consoleMethod returns console[level]: its arguments are formatted once
// and captured in the run's logs.
func (r *run) consoleMethod(level string) nativeFunc {
	return func(call goja.FunctionCall) goja.Value {
		if r.logs.full {
			return goja.Undefined()
		}
		var b strings.Builder
		for i, arg := range call.Arguments {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(r.formatLogArg(arg))
			if int64(b.Len()) > r.logs.remaining() {
				break
			}
		}
		if r.cm != nil && level == "info" {
			level = "log" // Code Mode's levels are debug, log, warn and error
		}
		_, _ = r.log(level, b.String())
		return goja.Undefined()
	}
}

// formatLogArg renders one console argument: strings as they are, errors
// as "Name: message", other objects as JSON.
func (r *run) formatLogArg(v goja.Value) string {
	if sym, ok := v.(*goja.Symbol); ok {
		return "Symbol(" + sym.String() + ")"
	}
	o, ok := v.(*goja.Object)
	if !ok {
		return v.String()
	}
	if _, isFunc := goja.AssertFunction(o); isFunc {
		return "[Function]"
	}
	var class string
	// A revoked proxy (a module has Proxy) throws when asked for its class.
	if r.tryNested(func() { class = o.ClassName() }) != nil {
		return r.unserialisable()
	}
	if class == "Error" {
		return r.toStr(o).String()
	}
	var out string
	err := r.tryNested(func() {
		out = string(r.encodeJSON(o, encodeOptions{what: "console argument", keep: r.logs.remaining() + 1}))
	})
	if err != nil {
		return r.unserialisable()
	}
	return out
}

// unserialisable is what the console writes for an object it cannot
// serialise.
func (r *run) unserialisable() string {
	if r.cm != nil {
		return "[Unserializable Object]"
	}
	return "[object]"
}

// tryNested runs f inside a native function and returns the JavaScript
// exception it threw; interrupts and other panics go on unwinding.
func (r *run) tryNested(f func()) (err error) {
	defer func() {
		if x := recover(); x != nil {
			if ex, ok := x.(*goja.Exception); ok {
				err = ex
				return
			}
			if _, ok := x.(*goja.Object); ok && r.stopReason() == nil {
				err = errNotSerialisable
				return
			}
			panic(x)
		}
	}()
	f()
	return nil
}
