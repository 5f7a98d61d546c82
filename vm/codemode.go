package vm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/dop251/goja"

	"github.com/codecall-go/codecall/toolerr"
)

// A Code Mode run (Options.CodeMode) runs a module linked into a plan body
// (see ast.ValidateModule): the body's prelude reads the modules it
// imports from ModulesGlobal, an array of frozen namespace objects the run
// builds from CodeMode.Modules, in the linker's order. Its global object
// holds what the Code Mode specification lists and nothing of CodeCall's
// own bindings (callTool, getTool, codecallContext, mcpLog...): the tools
// are reached through the server modules' exports, discovery through
// @codemode/discovery. Its result is the value of ResultGlobal when the
// module's evaluation ends, not the body's return value.

// SpecVersion is the version of the Code Mode specification the runtime
// implements, as @codemode/discovery's specVersion states it.
const SpecVersion = "1.0.0"

// ModulesGlobal is the global a linked module's prelude reads its imports
// from. Package codemode's linker refuses modules that name it.
const ModulesGlobal = "__codemode_modules__"

// ResultGlobal is the global a Code Mode module sets to its result.
const ResultGlobal = "__codemode_result__"

// Module kinds.
const (
	ModuleServer    = "server"    // @codemode/servers/<path>: one function per tool, and __meta__
	ModuleDiscovery = "discovery" // @codemode/discovery
	ModuleErrors    = "errors"    // @codemode/errors
)

// The Code Mode discovery operations a run asks its host for
// (Host.Discover). Their args are JSON objects; their answers the JSON the
// plan receives. A server the request names that is not connected is a
// *toolerr.Error with code SERVER_NOT_FOUND, a tool that is not there one
// with NOT_FOUND.
const (
	DiscoverListServers   = "codemode.listServers"    // {}
	DiscoverDescribeServe = "codemode.describeServer" // {serverId}
	DiscoverListTools     = "codemode.listTools"      // {serverId, detail}
	DiscoverGetTool       = "codemode.getTool"        // {serverId, toolName}
	DiscoverSearchTools   = "codemode.searchTools"    // {query, detail, serverId?, limit?}
)

// IsDiscoverOp reports whether op is a discovery operation a run may ask
// its host for.
func IsDiscoverOp(op string) bool {
	switch op {
	case DiscoverSearch, DiscoverDescribe, DiscoverCatalog, DiscoverListServers, DiscoverDescribeServe, DiscoverListTools,
		DiscoverGetTool, DiscoverSearchTools:
		return true
	}
	return false
}

// CodeMode is what a Code Mode run needs beyond a plan's: the modules its
// module imports.
type CodeMode struct {
	// Modules are the imported modules; the prelude reads module i as
	// ModulesGlobal[i].
	Modules []Module `json:"modules"`
}

// Module is one importable module.
type Module struct {
	// Specifier is the module's name, such as "@codemode/servers/shop".
	Specifier string `json:"specifier"`
	// Kind is ModuleServer, ModuleDiscovery or ModuleErrors.
	Kind string `json:"kind"`
	// ServerID is a server module's id: its normalised module path.
	ServerID string `json:"serverId,omitempty"`
	// Exports are a server module's tool bindings.
	Exports []Export `json:"exports,omitempty"`
	// Meta is a server module's __meta__, as JSON.
	Meta json.RawMessage `json:"meta,omitempty"`
}

// Export binds one export of a server module to a tool.
type Export struct {
	// Name is the export's identifier.
	Name string `json:"name"`
	// Tool is the tool's canonical name, the one the gate and the trace
	// know.
	Tool string `json:"tool"`
}

// errorClasses are @codemode/errors' classes, in the order classProgram
// returns them.
var errorClasses = []string{"CodemodeError", "SchemaValidationError", "ToolNotFoundError", "ServerNotFoundError",
	"ToolCallError", "AuthenticationError", "SandboxLimitError"}

// classHints are the hints of errors a plan makes itself with new.
var classHints = map[string]string{
	"CodemodeError":         "Read the message; it says what went wrong.",
	"SchemaValidationError": "Fix the input at the JSON Pointer in path to match the tool's input schema (getTool with detail \"full\" shows it).",
	"ToolNotFoundError":     "Tool names are exact: list a server's tools with listTools(serverId) from @codemode/discovery.",
	"ServerNotFoundError":   "Server ids are exact: list the connected servers with listServers() from @codemode/discovery.",
	"ToolCallError":         "The tool ran and failed; read the message, then fix the input or choose another tool.",
	"AuthenticationError":   "The tool's server refused the credentials; tell the user, since a script cannot fix them.",
	"SandboxLimitError":     "Ask for less (filters, pagination) or split the work across several runs.",
}

// classProgram evaluates to a function that defines the error classes on
// the Error constructor it is given. Compiled once; every run that needs
// them evaluates it in its own runtime, calls it with its intrinsic Error
// and freezes what it made. The classes are made on first use, when the
// plan may already have defined an Error of its own on its global object
// (a module has globalThis): the program names no global, so that what
// they extend, and what runs when the host makes one of its errors, is
// the runtime's own.
var classProgram = sync.OnceValue(func() *goja.Program {
	return goja.MustCompile("", `(function (Error) {
	class CodemodeError extends Error { constructor(message) { super(message); } }
	class SchemaValidationError extends CodemodeError {}
	class ToolNotFoundError extends CodemodeError {}
	class ServerNotFoundError extends CodemodeError {}
	class ToolCallError extends CodemodeError {}
	class AuthenticationError extends ToolCallError {}
	class SandboxLimitError extends CodemodeError {}
	return [CodemodeError, SchemaValidationError, ToolNotFoundError, ServerNotFoundError, ToolCallError, AuthenticationError, SandboxLimitError];
})`, true)
})

// codeModeState is a Code Mode run's own state.
type codeModeState struct {
	classes map[string]*goja.Object // built on first use
	errors  *goja.Object            // the @codemode/errors namespace
}

// binding is the server module export a tool call came through.
type binding struct {
	serverID string
	export   string
}

// installCodeMode gives a Code Mode run its globals: the result slot, the
// console when the preset allows it, and the imported modules.
func (r *run) installCodeMode() {
	r.cm = &codeModeState{}
	if err := r.global.DefineDataProperty(ResultGlobal, goja.Undefined(), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
		panic(err)
	}
	if r.opts.Limits.AllowConsole {
		r.lockLazyGlobal("console", r.console)
	}
	mods := make([]any, len(r.opts.CodeMode.Modules))
	for i := range r.opts.CodeMode.Modules {
		mods[i] = r.namespace(&r.opts.CodeMode.Modules[i])
	}
	arr := r.rt.NewArray(mods...)
	r.freeze(arr)
	r.lockGlobal(ModulesGlobal, arr)
}

// namespace builds a module's namespace object: no prototype, its exports
// as enumerable read-only properties, @@toStringTag "Module", frozen.
func (r *run) namespace(m *Module) *goja.Object {
	ns := r.rt.NewObject()
	if err := ns.SetPrototype(nil); err != nil {
		panic(err)
	}
	// Exports are defined in code-unit order, the order a module
	// namespace lists its keys in, enumerable and read-only.
	exports := map[string]goja.Value{}
	export := func(name string, v goja.Value) { exports[name] = v }
	fn := func(name string, length int, f nativeFunc) goja.Value {
		o := r.newFunction(name, length, f)
		r.freeze(o)
		return o
	}
	switch m.Kind {
	case ModuleServer:
		for _, e := range m.Exports {
			export(e.Name, fn(e.Name, 1, r.bindingCall(m.ServerID, e)))
		}
		meta := goja.Value(goja.Null())
		if len(m.Meta) > 0 {
			v, err := r.parseHostJSON(m.Meta)
			if err != nil {
				panic(fmt.Errorf("vm: the __meta__ of %s cannot be used: %w", m.Specifier, err))
			}
			r.deepFreeze(v, 0)
			meta = v
		}
		export("__meta__", meta)
	case ModuleDiscovery:
		export("specVersion", r.rt.ToValue(SpecVersion))
		export("listServers", fn("listServers", 0, r.listServers))
		export("describeServer", fn("describeServer", 1, r.describeServer))
		export("listTools", fn("listTools", 2, r.listToolsCM))
		export("getTool", fn("getTool", 2, r.getToolCM))
		export("searchTools", fn("searchTools", 2, r.searchToolsCM))
	case ModuleErrors:
		for _, name := range errorClasses {
			export(name, r.errorClass(name))
		}
	default:
		panic(fmt.Errorf("vm: unknown module kind %q", m.Kind))
	}
	names := make([]string, 0, len(exports))
	for name := range exports {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := ns.DefineDataProperty(name, exports[name], goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			panic(err)
		}
	}
	if err := ns.DefineDataPropertySymbol(goja.SymToStringTag, r.rt.ToValue("Module"), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		panic(err)
	}
	r.freeze(ns)
	return ns
}

// errorClass returns one of @codemode/errors' classes, evaluating and
// freezing all of them on first use.
func (r *run) errorClass(name string) *goja.Object {
	if r.cm.classes == nil {
		define, ok := goja.AssertFunction(r.mustRun(classProgram()))
		if !ok {
			panic("vm: the error classes' program is not a function")
		}
		v, err := define(goja.Undefined(), r.builtin("Error"))
		if err != nil {
			panic(err)
		}
		arr := v.(*goja.Object)
		r.cm.classes = make(map[string]*goja.Object, len(errorClasses))
		for i, n := range errorClasses {
			c := object(arr, fmt.Sprint(i))
			proto := object(c, "prototype")
			if err := proto.DefineDataProperty("name", r.rt.ToValue(n), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
				panic(err)
			}
			if err := proto.DefineDataProperty("hint", r.rt.ToValue(classHints[n]), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
				panic(err)
			}
			r.freeze(proto)
			r.freeze(c)
			r.cm.classes[n] = c
		}
	}
	return r.cm.classes[name]
}

// bindingCall is a server module's export: an async function that calls
// its tool with one input, through the host like callTool.
func (r *run) bindingCall(serverID string, e Export) nativeFunc {
	b := &binding{serverID: serverID, export: e.Name}
	return func(call goja.FunctionCall) goja.Value {
		if len(r.calls) >= r.opts.Limits.MaxToolCalls {
			r.stop(limitOutcome(LimitToolCalls, fmt.Sprintf("the script made more than %d tool calls, the limit maxToolCalls", r.opts.Limits.MaxToolCalls)))
			panic(r.codeModeError("SandboxLimitError", "tool-call limit reached", map[string]goja.Value{"limit": r.rt.ToValue("maxToolCalls")}))
		}
		c := &toolCall{index: len(r.calls), name: e.Tool, throwOnError: true, binding: b}
		p, resolve, reject := r.rt.NewPromise()
		c.resolve, c.reject = resolve, reject
		switch arg := call.Argument(0).(type) {
		case *goja.Object:
			if _, isFunc := goja.AssertFunction(arg); isFunc || r.isArray(arg) {
				r.rejectInput(c, arg)
				return r.rt.ToValue(p)
			}
			c.inputJSON = r.encodeJSON(arg, encodeOptions{what: e.Name + " input", rejectProto: true})
		default:
			if !goja.IsUndefined(arg) && !goja.IsNull(arg) {
				r.rejectInput(c, arg)
				return r.rt.ToValue(p)
			}
			c.inputJSON = []byte("{}")
		}
		if err := json.Unmarshal(c.inputJSON, &c.input); err != nil || c.input == nil {
			r.rejectInput(c, call.Argument(0))
			return r.rt.ToValue(p)
		}
		r.calls = append(r.calls, c)
		r.queue = append(r.queue, c) // the event loop starts it (launch)
		return r.rt.ToValue(p)
	}
}

// rejectInput rejects a binding's promise for an input that is not an
// object: MCP carries a tool's arguments as a JSON object, so no other
// input can reach a tool.
func (r *run) rejectInput(c *toolCall, v goja.Value) {
	typ := typeOf(v)
	received := "a " + typ
	if strings.ContainsRune("aeiou", rune(typ[0])) {
		received = "an " + typ
	}
	e := r.codeModeError("SchemaValidationError",
		fmt.Sprintf("%s: the input must be an object (MCP sends a tool's arguments as a JSON object), not %s", c.binding.export, received),
		map[string]goja.Value{
			"code": r.rt.ToValue(string(toolerr.Validation)), "toolName": r.rt.ToValue(c.name),
			"exportName": r.rt.ToValue(c.binding.export), "serverId": r.rt.ToValue(c.binding.serverID),
			"path": r.rt.ToValue(""), "expected": r.rt.ToValue("object"), "received": r.rt.ToValue(received),
			"hint": r.rt.ToValue("Pass one object with the tool's arguments, or nothing for a tool without arguments."),
		})
	if err := c.reject(e); err != nil {
		panic(err)
	}
}

// typeOf names a value's type as typeof would, with arrays and null told
// apart.
func typeOf(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	case goja.IsString(v):
		return "string"
	case goja.IsNumber(v):
		return "number"
	}
	if o, ok := v.(*goja.Object); ok {
		if _, isFunc := goja.AssertFunction(o); isFunc {
			return "function"
		}
		if o.ClassName() == "Array" {
			return "array"
		}
		return "object"
	}
	if _, ok := v.(*goja.Symbol); ok {
		return "symbol"
	}
	return "boolean"
}

// codeModeError makes an instance of one of @codemode/errors' classes with
// message and the given own properties (enumerable, so that a script that
// returns or logs the error keeps them); hint defaults to the class's.
func (r *run) codeModeError(class, message string, fields map[string]goja.Value) *goja.Object {
	e := r.newError(r.errorClass(class), message)
	r.defineData(e, "message", r.rt.ToValue(message))
	if _, ok := fields["hint"]; !ok {
		r.defineData(e, "hint", r.rt.ToValue(classHints[class]))
	}
	for _, k := range sortedFieldNames(fields) {
		r.defineData(e, k, fields[k])
	}
	return e
}

// sortedFieldNames orders an error's fields, so that they enumerate the
// same way on every run.
func sortedFieldNames(m map[string]goja.Value) []string {
	order := []string{"code", "hint", "serverId", "toolName", "exportName", "path", "expected", "received", "example", "limit", "retryable"}
	out := make([]string, 0, len(m))
	for _, k := range order {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// failedCallError is the error a failed Code Mode call rejects with: the
// class its code calls for, with what the script needs to correct itself.
func (r *run) failedCallError(c *toolCall) (*goja.Object, string) {
	hint := c.hint
	str := func(s string) goja.Value { return r.rt.ToValue(s) }
	fields := map[string]goja.Value{"code": str(c.code)}
	class := "ToolCallError"
	switch toolerr.Code(c.code) {
	case toolerr.Validation:
		class = "SchemaValidationError"
		if m := c.mismatch; m != nil {
			fields["path"], fields["expected"], fields["received"] = str(m.Pointer), str(m.Expected), str(m.Received)
			if len(m.Example) > 0 {
				if v, err := r.parseHostJSON(m.Example); err == nil {
					fields["example"] = v
				}
			}
		} else {
			fields["path"], fields["expected"], fields["received"] = str(""), str("an input the tool's schema accepts"), str("an input it refused")
		}
	case toolerr.NotFound:
		class = "ToolNotFoundError"
	case toolerr.ServerNotFound:
		class = "ServerNotFoundError"
	case toolerr.Unauthenticated:
		class = "AuthenticationError"
	}
	if c.binding != nil {
		fields["serverId"], fields["exportName"] = str(c.binding.serverID), str(c.binding.export)
		fields["toolName"] = str(c.name)
	}
	if class == "ToolCallError" || class == "AuthenticationError" {
		fields["retryable"] = r.rt.ToValue(c.retry)
	}
	if hint == "" || class == "SchemaValidationError" || class == "ToolNotFoundError" {
		// The gate's hints for these name CodeCall's own tools.
		hint = classHints[class]
	}
	c.hint = hint
	fields["hint"] = str(hint)
	return r.codeModeError(class, c.message, fields), class
}

// exportCodeModeResult ends a Code Mode run whose module evaluated: its
// result is ResultGlobal's value (a getter there runs once, under the
// deadline), null when unset.
func (r *run) exportCodeModeResult() {
	var v goja.Value
	if err := r.try(func() { v = r.global.Get(ResultGlobal) }); err != nil {
		r.outcome = r.classifyError(err)
		return
	}
	r.export(v)
}

// The discovery functions. Each checks its arguments once and queues a
// request like a tool call.

func (r *run) listServers(goja.FunctionCall) goja.Value {
	return r.discover("listServers", DiscoverListServers, []byte("{}"))
}

func (r *run) describeServer(call goja.FunctionCall) goja.Value {
	id := r.nameArg("describeServer", "serverId", call.Argument(0))
	return r.discover("describeServer", DiscoverDescribeServe, mustJSON(map[string]string{"serverId": id}))
}

func (r *run) listToolsCM(call goja.FunctionCall) goja.Value {
	id := r.nameArg("listTools", "serverId", call.Argument(0))
	var opts struct {
		Detail string `json:"detail"`
	}
	r.discoveryOptions("listTools", call.Argument(1), &opts, "{detail?: \"name\" | \"description\" | \"full\"}")
	detail := r.detail("listTools", opts.Detail)
	return r.discover("listTools", DiscoverListTools, mustJSON(map[string]string{"serverId": id, "detail": detail}))
}

func (r *run) getToolCM(call goja.FunctionCall) goja.Value {
	id := r.nameArg("getTool", "serverId", call.Argument(0))
	name := r.nameArg("getTool", "toolName", call.Argument(1))
	return r.discover("getTool", DiscoverGetTool, mustJSON(map[string]string{"serverId": id, "toolName": name}))
}

func (r *run) searchToolsCM(call goja.FunctionCall) goja.Value {
	query := r.nameArg("searchTools", "query", call.Argument(0))
	var opts struct {
		Detail   string `json:"detail"`
		ServerID string `json:"serverId"`
		Limit    *int   `json:"limit"`
	}
	r.discoveryOptions("searchTools", call.Argument(1), &opts, "{detail?: \"name\" | \"description\" | \"full\", serverId?: string, limit?: integer}")
	args := map[string]any{"query": query, "detail": r.detail("searchTools", opts.Detail)}
	if opts.ServerID != "" {
		args["serverId"] = opts.ServerID
	}
	if opts.Limit != nil {
		if *opts.Limit < 1 {
			r.throwType("searchTools: limit must be a positive integer")
		}
		args["limit"] = *opts.Limit
	}
	return r.discover("searchTools", DiscoverSearchTools, mustJSON(args))
}

// discoveryOptions decodes a discovery function's options object into
// dst, refusing unknown keys with the shape they must have.
func (r *run) discoveryOptions(fn string, v goja.Value, dst any, shape string) {
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return
	}
	o, ok := v.(*goja.Object)
	if !ok || r.isArray(o) {
		r.throwType(fmt.Sprintf("%s: options must be an object such as %s", fn, shape))
	}
	raw := r.encodeJSON(o, encodeOptions{what: fn + " options", keep: maxDiscoverArgsBytes})
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		r.throwType(fmt.Sprintf("%s: options are %s", fn, shape))
	}
}

// detail checks a detail option, "description" when unset.
func (r *run) detail(fn, d string) string {
	switch d {
	case "":
		return "description"
	case "name", "description", "full":
		return d
	}
	r.throwType(fmt.Sprintf("%s: detail must be \"name\", \"description\" or \"full\", not %q", fn, d))
	return ""
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
