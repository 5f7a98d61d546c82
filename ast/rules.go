package ast

import (
	"errors"
	"regexp/syntax"
	"sort"
	"strings"

	"github.com/dop251/goja/parser"
)

// Why each always-banned identifier is banned, as the fix to suggest.
const (
	hintCode      = "plans cannot create code from strings; write the code directly"
	hintModule    = "plans cannot load modules; call tools with callTool"
	hintHost      = "plans have no access to the host or to the global object; use callTool, getTool, codecallContext and the standard built-ins"
	hintReflect   = "reflection and proxies are not available; use plain objects and functions"
	hintInterval  = "setInterval is not available; repeat with setTimeout, or await new Promise(r => setTimeout(r, ms)) between steps"
	hintImmediate = "setImmediate is not available; use setTimeout(fn, 0) or await Promise.resolve()"
	hintMicrotask = "queueMicrotask is not available; use Promise.resolve().then(fn)"
	hintProto     = "prototypes cannot be reached from a plan; use plain objects, classes or Object.create(null)"
	hintArgs      = "use rest parameters (...args) instead"
	// hintModule and hintHost as a Code Mode module reads them: it has no
	// callTool, getTool or codecallContext.
	hintModuleCodeMode = "modules are imported with static import declarations; call tools through import * as name from \"@codemode/servers/<serverId>\""
	hintHostCodeMode   = "scripts have no access to the host; use the @codemode/* modules and the standard built-ins"
	hintRename         = "rename it"
)

// bannedIdentifiers are refused everywhere, in every preset, as references
// and as names of variables, functions, classes, parameters and labels.
//
// Reflect and Proxy are banned outright: Reflect.get and Reflect.construct
// take property names and constructors as values, which is how a computed
// "constr"+"uctor" would reach the Function constructor, and a Proxy
// intercepts the operations the runtime relies on to hold its invariants.
// Plans have no use for either. setTimeout and clearTimeout are provided
// (package vm bounds them); setInterval, setImmediate and queueMicrotask
// are not: an interval's every firing would count against the timer
// budget, and the other two add nothing over setTimeout and promises.
// arguments is banned because rest parameters
// replace it and its legacy callee/caller properties are the reflective
// surface the member rule closes.
var bannedIdentifiers = map[string]string{
	"eval":                   hintCode,
	"Function":               hintCode,
	"AsyncFunction":          hintCode,
	"GeneratorFunction":      hintCode,
	"AsyncGeneratorFunction": hintCode,
	"WebAssembly":            hintCode,
	"require":                hintModule,
	"module":                 hintModule,
	"exports":                hintModule,
	"process":                hintHost,
	"globalThis":             hintHost,
	"global":                 hintHost,
	"window":                 hintHost,
	"self":                   hintHost + "; if it is your own variable, " + hintRename,
	"Reflect":                hintReflect,
	"Proxy":                  hintReflect,
	"setInterval":            hintInterval,
	"clearInterval":          hintInterval,
	"setImmediate":           hintImmediate,
	"clearImmediate":         hintImmediate,
	"queueMicrotask":         hintMicrotask,
	"__proto__":              hintProto,
	"constructor":            hintProto + "; if it is your own variable, " + hintRename,
	"arguments":              hintArgs,
}

// codeModeGlobals are the always-banned identifiers a Code Mode module may
// use (Rules.CodeMode): the Code Mode specification gives every module
// globalThis (where it leaves its result), Proxy and Reflect. The
// runtime's hardening of Proxy and Reflect, and the plan's own global
// object, are then the only wall, as they are for computed names today.
var codeModeGlobals = map[string]bool{"globalThis": true, "Proxy": true, "Reflect": true}

// bannedMembers are property names a plan may not read, call or
// destructure, by dot or by a literal key: they lead from any value to the
// Function constructor (constructor), to the intrinsics' prototypes
// (prototype, __proto__ and the legacy accessors) or to the call stack
// (caller, callee, arguments).
var bannedMembers = map[string]string{
	"constructor":      hintProto,
	"prototype":        hintProto,
	"__proto__":        hintProto,
	"__defineGetter__": "use Object.defineProperty on your own objects",
	"__defineSetter__": "use Object.defineProperty on your own objects",
	"__lookupGetter__": "use Object.getOwnPropertyDescriptor",
	"__lookupSetter__": "use Object.getOwnPropertyDescriptor",
	"caller":           "the call stack cannot be inspected",
	"callee":           "the call stack cannot be inspected",
	"arguments":        "the call stack cannot be inspected",
}

// bannedKeys are the banned member names that also may not be defined as
// keys of object literals and classes: __proto__ as a key sets the
// prototype, and the others are only ever defined to confuse code that
// reads them. caller, callee and arguments are ordinary data keys when
// defined (a tool input may well have an "arguments" field), so they are
// allowed there. A class's own constructor method is class syntax and is
// allowed.
var bannedKeys = map[string]bool{
	"constructor": true, "prototype": true, "__proto__": true,
	"__defineGetter__": true, "__defineSetter__": true, "__lookupGetter__": true, "__lookupSetter__": true,
}

// AlwaysBannedIdentifiers returns the identifiers every preset refuses,
// sorted. Rules.BannedIdentifiers adds to them; console is refused too when
// Rules.AllowConsole is false, and RegExp unless Rules.Regex is full.
func AlwaysBannedIdentifiers() []string { return sortedKeys(bannedIdentifiers) }

// CodeModeBannedIdentifiers returns the identifiers every preset refuses
// in a Code Mode module (Rules.CodeMode), sorted: AlwaysBannedIdentifiers
// without globalThis, Proxy and Reflect.
func CodeModeBannedIdentifiers() []string {
	var out []string
	for _, name := range AlwaysBannedIdentifiers() {
		if !codeModeGlobals[name] {
			out = append(out, name)
		}
	}
	return out
}

// BannedMembers returns the property names no preset lets a plan read,
// sorted.
func BannedMembers() []string { return sortedKeys(bannedMembers) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// errBacktracking marks a pattern that only a backtracking engine can run.
var errBacktracking = errors.New("needs backtracking")

// checkRE2 decides whether goja would run a regular expression literal on
// Go's linear-time regexp engine: the same translation goja applies
// (parser.TransformRegExp) must succeed and the result must compile. goja
// falls back to the backtracking regexp2 engine, which ignores the run's
// deadline, for lookaround, backreferences, named back-references and
// repeat counts over RE2's limit. The sticky flag is refused too. It
// returns nil, errBacktracking with a reason, or another error for a
// pattern that is invalid anyway (the compiler reports those).
func checkRE2(pattern, flags string) (reason string, err error) {
	if strings.ContainsRune(flags, 'y') {
		return "the sticky flag y", errBacktracking
	}
	unicodeMode := strings.ContainsRune(flags, 'u')
	if !unicodeMode {
		pattern = PatternForCodeUnits(pattern)
	}
	_, err = CompileRE2(pattern, strings.ContainsRune(flags, 'i'), strings.ContainsRune(flags, 'm'),
		strings.ContainsRune(flags, 's'), unicodeMode)
	var incompatible parser.RegexpErrorIncompatible
	var se *syntax.Error
	switch {
	case err == nil:
		return "", nil
	case errors.As(err, &incompatible):
		return backtrackingReason(incompatible.Error()), errBacktracking
	case errors.As(err, &se) && se.Code == syntax.ErrInvalidRepeatSize:
		return "a repeat count above 1000", errBacktracking
	}
	return "", err
}

// backtrackingReason names, in words, the feature goja's translation
// refused.
func backtrackingReason(msg string) string {
	switch {
	case strings.Contains(msg, "lookahead"):
		return "a lookahead"
	case strings.Contains(msg, "lookbehind"):
		return "a lookbehind"
	case strings.Contains(msg, "named group back-reference"):
		return "a named backreference"
	case strings.Contains(msg, "backreference"):
		return "a backreference"
	case strings.Contains(msg, "group name"):
		return "a group name RE2 does not accept"
	}
	return msg
}
