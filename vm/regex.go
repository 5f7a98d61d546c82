package vm

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/presets"
)

// regexBacktrackSlots bounds a backtracking match's stack (8 bytes each).
const regexBacktrackSlots = 1 << 20

// regexEngine runs the plan's regular expressions. goja matches with Go's
// regexp (linear time) only for RE2-compatible patterns matched from the
// start of the input; for lookaround, backreferences, and any match that
// starts at lastIndex > 0 (global and sticky expressions) or at all on
// some non-ASCII inputs, it falls back to regexp2, which backtracks, with no
// time limit and beyond the reach of goja's interrupt. So the sandbox
// replaces RegExp.prototype.exec and test with its own matcher: the same
// two engines, chosen the same way, but regexp2 always runs with a match
// timeout (the preset's regexTimeout, or the time the run has left), and
// a match that times out ends the run with limit_exceeded (regexTimeout).
// Every other RegExp method reaches the matcher through exec.
type regexEngine struct {
	mode     presets.RegexMode
	hardened bool
	byObj    map[*goja.Object]*compiledRegex
	proto    *goja.Object          // RegExp.prototype
	ctor     *goja.Object          // the sandbox's RegExp
	getters  map[string]nativeFunc // the original flag and source accessors
	cache    map[string]*compiledRegex
	input    regexInput
}

// compiledRegex is a pattern compiled for both engines.
type compiledRegex struct {
	source                  string
	global, sticky, unicode bool
	re2                     *regexp.Regexp // nil when the pattern needs regexp2
	rx2                     *regexp2.Regexp
	rx2Err                  error
	multiline, dotAll, fold bool
}

// regexInput is the last string matched, converted to runes once.
type regexInput struct {
	key   string
	lossy bool   // key has U+FFFD, which may stand for a lone surrogate
	units []rune // UTF-16 code units, one rune each
	cps   []rune // code points, for unicode-mode patterns
	pos   []int  // UTF-16 index of each code point, then the length
}

// regexLiteralReporter is implemented by plans that know whether their
// source has regular expression literals. A literal creates a RegExp
// without naming any global, so unless the plan says it has none, the
// RegExp machinery is hardened before the plan runs.
type regexLiteralReporter interface {
	HasRegExpLiterals() bool
}

// installRegex guards the String.prototype methods that build a RegExp
// from a string or take one. They reach the run's regex engine when
// called, so they can be installed before the run has one.
func (r *run) installRegex() {
	sp := r.in.stringProto

	// match, matchAll and search build a RegExp from a string argument.
	r.wrap(sp, "match", r.implicitRegex("String.prototype.match", goja.SymMatch, ""))
	r.wrap(sp, "matchAll", r.implicitRegex("String.prototype.matchAll", goja.SymMatchAll, "g"))
	r.wrap(sp, "search", r.implicitRegex("String.prototype.search", goja.SymSearch, ""))
	r.wrap(sp, "replace", r.stringReplace("String.prototype.replace", false))
	r.wrap(sp, "replaceAll", r.stringReplace("String.prototype.replaceAll", true))
}

// installRegexEngine gives the run its regex engine, in the preset's
// mode, and hardens RegExp before the plan starts when the plan may hold
// regex literals.
func (r *run) installRegexEngine() {
	r.regex = &regexEngine{mode: r.opts.Limits.Regex, cache: make(map[string]*compiledRegex), byObj: make(map[*goja.Object]*compiledRegex)}
	if !r.lazyRegExp {
		r.hardenRegExp()
	}
}

// regexAllowed reports whether the preset allows regular expressions.
func (r *run) regexAllowed() bool {
	return r.regex.mode == presets.RegexLiteral || r.regex.mode == presets.RegexFull
}

// hardenRegExp installs the sandbox's RegExp: in the "none" mode a
// constructor that ends the run; otherwise a validating constructor and
// the sandbox's matcher (see regexEngine). It runs before the plan when
// the plan may hold literals, else when the plan first names RegExp or
// builds one from a string.
func (r *run) hardenRegExp() {
	if r.regex.hardened {
		return
	}
	r.regex.hardened = true
	if !r.regexAllowed() {
		// No regular expressions: the validator refuses literals and the
		// RegExp identifier, and no RegExp object can come into being
		// without them, so the constructor is all there is to lock.
		ctor := r.newConstructor("RegExp", 2, func(goja.ConstructorCall) *goja.Object {
			r.regexViolation("RegExp", "this preset does not allow regular expressions")
			return nil
		})
		r.freeze(ctor)
		r.setGlobal("RegExp", ctor)
		return
	}

	orig := object(r.std, "RegExp")
	proto := object(orig, "prototype")
	r.regex.proto = proto
	r.regex.getters = make(map[string]nativeFunc)
	for _, name := range []string{"source", "flags", "global", "ignoreCase", "multiline", "dotAll", "unicode", "sticky"} {
		d := r.in.describe(goja.FunctionCall{Arguments: []goja.Value{proto, r.rt.ToValue(name)}}).(*goja.Object)
		r.regex.getters[name] = native(d.Get("get"))
	}

	construct, _ := goja.AssertConstructor(orig)
	ctor := r.newConstructor("RegExp", 2, func(call goja.ConstructorCall) *goja.Object {
		args := r.regexArgs(call.Arguments)
		o, err := construct(call.NewTarget, args...)
		if err != nil {
			panic(err)
		}
		return o
	})
	r.regex.ctor = ctor
	// The generic RegExp algorithms construct through rx.constructor's
	// [Symbol.species]; both are locked so they always reach this
	// constructor, whose objects use the sandbox's exec.
	r.lockData(ctor, "prototype", proto)
	get := r.newFunction("get [Symbol.species]", 0, func(call goja.FunctionCall) goja.Value { return call.This })
	if err := ctor.DefineAccessorPropertySymbol(goja.SymSpecies, get, nil, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		panic(err)
	}
	r.freeze(ctor)
	r.lockData(proto, "constructor", ctor)
	r.setGlobal("RegExp", ctor)

	// compile recompiles a RegExp in place from a new pattern.
	if err := proto.Delete("compile"); err != nil {
		panic(err)
	}
	// Redefining exec also turns off goja's fast paths, which match with
	// the pattern directly: every method then calls exec. exec is locked so
	// that it stays the sandbox's.
	r.lockData(proto, "exec", r.newFunction("exec", 1, r.regexpExec))
	r.replaceData(proto, "test", r.newFunction("test", 1, r.regexpTest))
	for _, s := range []struct {
		sym    *goja.Symbol
		name   string
		length int
	}{
		{goja.SymMatch, "[Symbol.match]", 1}, {goja.SymMatchAll, "[Symbol.matchAll]", 1},
		{goja.SymSearch, "[Symbol.search]", 1}, {goja.SymSplit, "[Symbol.split]", 2},
		{goja.SymReplace, "[Symbol.replace]", 2},
	} {
		orig := native(proto.GetSymbol(s.sym))
		replace := s.sym == goja.SymReplace
		fn := r.newFunction(s.name, s.length, func(call goja.FunctionCall) goja.Value {
			r.checkRegexShape(call.This)
			if replace {
				str := r.toStr(call.Argument(0))
				call.Arguments = []goja.Value{str, r.replacement(call.Argument(1), str, -1)}
			}
			return orig(call)
		})
		if err := proto.DefineDataPropertySymbol(s.sym, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			panic(err)
		}
	}
}

// regexArgs checks the arguments of new RegExp(pattern, flags) and
// returns them converted, so that what was checked is what is compiled. A
// RegExp pattern is a copy of an existing expression and needs no check.
func (r *run) regexArgs(args []goja.Value) []goja.Value {
	pattern, flags := goja.Undefined(), goja.Undefined()
	if len(args) > 0 {
		pattern = args[0]
	}
	if len(args) > 1 {
		flags = args[1]
	}
	if o, ok := pattern.(*goja.Object); ok && !isProxy(o) && o.ClassName() == "RegExp" {
		if !goja.IsUndefined(flags) {
			flags = r.toStr(flags)
		}
		return []goja.Value{o, flags}
	}
	src := ""
	if !goja.IsUndefined(pattern) {
		pattern = r.toStr(pattern)
		src = pattern.String()
	}
	f := ""
	if !goja.IsUndefined(flags) {
		flags = r.toStr(flags)
		f = flags.String()
	}
	r.checkPattern("RegExp", src, f)
	return []goja.Value{pattern, flags}
}

// checkPattern applies the preset's rule to a pattern built at run time:
// none refuses it, literal accepts only what Go's RE2 engine can run (as
// the validator does for literals), and every mode caps its size and
// nesting, because both compilers recurse per nesting level.
func (r *run) checkPattern(what, src, flags string) {
	if !r.regexAllowed() {
		r.regexViolation(what, "this preset does not allow regular expressions")
	}
	if len(src) > maxRegexSourceBytes {
		r.throwRange(fmt.Sprintf("%s: a pattern of %d bytes exceeds the sandbox limit of %d bytes", what, len(src), maxRegexSourceBytes))
	}
	depth := 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '(':
			depth++
			if depth > maxRegexNesting {
				r.throwRange(fmt.Sprintf("%s: the pattern nests groups deeper than %d levels", what, maxRegexNesting))
			}
		case ')':
			depth--
		}
	}
	if r.regex.mode == presets.RegexLiteral && !isRE2(src, flags) {
		r.regexViolation(what, "this preset allows only RE2-compatible regular expressions (no lookaround or backreferences); the pattern built at run time is not one")
	}
}

// isRE2 reports whether goja would run the pattern with Go's regexp.
func isRE2(src, flags string) bool {
	_, err := ast.CompileRE2(src, strings.Contains(flags, "i"), strings.Contains(flags, "m"), strings.Contains(flags, "s"), strings.Contains(flags, "u"))
	return err == nil
}

// regexViolation ends the run with illegal_access (kind regex).
func (r *run) regexViolation(what, why string) {
	r.stop(&outcome{status: StatusIllegalAccess, err: &ErrorInfo{Kind: KindRegex, Location: r.scriptLocation(),
		Message: what + ": " + why}})
	r.throwType(what + ": " + why)
}

// checkRegexShape refuses a RegExp whose exec could be something other
// than the sandbox's: one with own properties besides lastIndex (such as
// an own exec or constructor) or a changed prototype. goja's generic
// RegExp algorithms fall back to its own, unlimited matcher when exec is
// not callable. Objects that are not RegExps are left to those algorithms,
// which call their exec.
func (r *run) checkRegexShape(this goja.Value) {
	o, ok := this.(*goja.Object)
	if !ok || isProxy(o) || o.ClassName() != "RegExp" {
		return
	}
	if o.Prototype() == r.regex.proto {
		names := o.GetOwnPropertyNames()
		if len(names) == 1 && names[0] == "lastIndex" {
			return
		}
	}
	r.throwType("RegExp objects with their own properties or another prototype are not supported in the sandbox")
}

// implicitRegex guards String.prototype.match, matchAll and search, which
// call the argument's matcher method or build a RegExp from it. The method
// is read once and called here; a pattern string is converted once and
// checked against the preset's rule before the built-in compiles it.
func (r *run) implicitRegex(what string, sym *goja.Symbol, flags string) func(nativeFunc) nativeFunc {
	return func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			this := call.This
			if goja.IsUndefined(this) || goja.IsNull(this) {
				r.throwType(what + " called on null or undefined")
			}
			arg := call.Argument(0)
			if !goja.IsUndefined(arg) && !goja.IsNull(arg) {
				if flags == "g" && r.isRegExp(arg) {
					f := arg.(*goja.Object).Get("flags")
					if f == nil || goja.IsUndefined(f) || goja.IsNull(f) || !strings.Contains(f.String(), "g") {
						r.throwType(what + ": the RegExp must have the global flag")
					}
				}
				if m := r.method(arg, sym); m != nil {
					return r.call(m, arg, this)
				}
			}
			src := ""
			if !goja.IsUndefined(arg) {
				arg = r.toStr(arg)
				src = arg.String()
			}
			r.checkPattern(what, src, flags)
			r.hardenRegExp()
			return orig(goja.FunctionCall{This: this, Arguments: []goja.Value{arg}})
		}
	}
}

// method is GetMethod(v, sym): nil when absent, a TypeError when not
// callable.
func (r *run) method(v goja.Value, sym *goja.Symbol) goja.Callable {
	m := v.ToObject(r.rt).GetSymbol(sym)
	if m == nil || goja.IsUndefined(m) || goja.IsNull(m) {
		return nil
	}
	fn, ok := goja.AssertFunction(m)
	if !ok {
		r.throwType("the " + sym.String() + " method is not a function")
	}
	return fn
}

// isRegExp is the specification's IsRegExp.
func (r *run) isRegExp(v goja.Value) bool {
	o, ok := v.(*goja.Object)
	if !ok {
		return false
	}
	if m := o.GetSymbol(goja.SymMatch); m != nil && !goja.IsUndefined(m) {
		return m.ToBoolean()
	}
	return !isProxy(o) && o.ClassName() == "RegExp"
}

// regexpTest replaces RegExp.prototype.test: RegExpExec(R, S) !== null.
func (r *run) regexpTest(call goja.FunctionCall) goja.Value {
	o, ok := call.This.(*goja.Object)
	if !ok {
		r.throwType("RegExp.prototype.test called on a non-object")
	}
	s := r.toStr(call.Argument(0))
	var res goja.Value
	if fn, ok := goja.AssertFunction(o.Get("exec")); ok {
		res = r.call(fn, o, s)
		if _, isObj := res.(*goja.Object); !isObj && !goja.IsNull(res) {
			r.throwType("RegExp exec method returned something other than an Object or null")
		}
	} else {
		res = r.regexpExec(goja.FunctionCall{This: o, Arguments: []goja.Value{s}})
	}
	return r.rt.ToValue(!goja.IsNull(res))
}

// regexpExec replaces RegExp.prototype.exec.
func (r *run) regexpExec(call goja.FunctionCall) goja.Value {
	rx, ok := call.This.(*goja.Object)
	if !ok || isProxy(rx) || rx.ClassName() != "RegExp" {
		r.throwType("RegExp.prototype.exec called on an incompatible receiver")
	}
	// goja's generic replace, split and match loops call exec natively,
	// once per match or position.
	r.checkpoint()
	s := r.toStr(call.Argument(0))
	c := r.compiled(rx)
	lastIndex := toLength(rx.Get("lastIndex"))
	index := int64(0)
	if c.global || c.sticky {
		index = lastIndex
	}
	var idx []int
	var names []string
	if index <= int64(s.Length()) {
		idx, names = r.match(c, s, int(index))
	}
	matched := idx != nil && (!c.sticky || int64(idx[0]) == index)
	if c.global || c.sticky {
		next := 0
		if matched {
			next = idx[1]
		}
		if err := rx.Set("lastIndex", next); err != nil {
			panic(err)
		}
	}
	if !matched {
		return goja.Null()
	}
	values := make([]any, len(idx)/2)
	var groups *goja.Object
	for i := range values {
		v := goja.Undefined()
		if idx[2*i] >= 0 {
			v = s.Substring(idx[2*i], idx[2*i+1])
		}
		values[i] = v
		if i > 0 && i < len(names) && names[i] != "" {
			if groups == nil {
				groups = r.rt.CreateObject(nil)
			}
			r.defineData(groups, names[i], v)
		}
	}
	a := r.rt.NewArray(values...)
	r.defineData(a, "index", r.rt.ToValue(idx[0]))
	r.defineData(a, "input", s)
	if groups != nil {
		r.defineData(a, "groups", groups)
	} else {
		r.defineData(a, "groups", goja.Undefined())
	}
	return a
}

// compiled returns rx's pattern compiled for the sandbox's matcher, read
// through the original accessors (which read rx's internal slots and run
// no script code).
func (r *run) compiled(rx *goja.Object) *compiledRegex {
	e := r.regex
	// A RegExp's pattern and flags never change (compile is removed).
	if c := e.byObj[rx]; c != nil {
		return c
	}
	get := func(name string) goja.Value { return e.getters[name](goja.FunctionCall{This: rx}) }
	src := get("source").String()
	c := &compiledRegex{
		source: src,
		global: get("global").ToBoolean(), sticky: get("sticky").ToBoolean(), unicode: get("unicode").ToBoolean(),
		fold: get("ignoreCase").ToBoolean(), multiline: get("multiline").ToBoolean(), dotAll: get("dotAll").ToBoolean(),
	}
	key := fmt.Sprintf("%t%t%t%t%t%t/%s", c.global, c.sticky, c.unicode, c.fold, c.multiline, c.dotAll, src)
	if cached := e.cache[key]; cached != nil {
		e.byObj[rx] = cached
		return cached
	}
	if c.unicode {
		src = convertRegexpToUnicode(src)
	} else {
		src = ast.PatternForCodeUnits(src)
	}
	c.source = src
	c.re2, _ = ast.CompileRE2(src, c.fold, c.multiline, c.dotAll, c.unicode)
	e.cache[key] = c
	e.byObj[rx] = c
	return c
}

// backtracking returns the pattern compiled for regexp2.
func (c *compiledRegex) backtracking() (*regexp2.Regexp, error) {
	if c.rx2 != nil || c.rx2Err != nil {
		return c.rx2, c.rx2Err
	}
	opts := regexp2.ECMAScript
	if c.multiline {
		opts |= regexp2.Multiline
	}
	if c.dotAll {
		opts |= regexp2.Singleline
	}
	if c.fold {
		opts |= regexp2.IgnoreCase
	}
	if c.unicode {
		opts |= regexp2.Unicode
	}
	c.rx2, c.rx2Err = regexp2.Compile(c.source, opts, regexp2.OptionMaxBacktrackingStackSize(regexBacktrackSlots))
	return c.rx2, c.rx2Err
}

// match finds the first match of c in s at or after start (a UTF-16
// index). It returns the UTF-16 start and end of the match and of each
// group (-1 for a group that did not take part), and the group names, or
// nil. A match that exceeds its time limit ends the run.
func (r *run) match(c *compiledRegex, s goja.String, start int) ([]int, []string) {
	in := r.regex.prepare(s)
	runes := in.units
	rstart := start
	if c.unicode {
		in.codePoints()
		runes = in.cps
		rstart = in.codePointAt(start)
	}
	toUnits := func(i int) int {
		if c.unicode && i >= 0 {
			return in.pos[i]
		}
		return i
	}
	if start == 0 && c.re2 != nil {
		idx := c.re2.FindReaderSubmatchIndex(&runeReader{runes: runes})
		if idx == nil {
			return nil, nil
		}
		for i, v := range idx {
			idx[i] = toUnits(v)
		}
		return idx, c.re2.SubexpNames()
	}
	rx, err := c.backtracking()
	if err != nil {
		r.throwType("this regular expression cannot be run in the sandbox")
	}
	rx.MatchTimeout = r.regexTimeout()
	m, err := rx.FindRunesMatchStartingAt(runes, rstart)
	switch {
	case errors.Is(err, regexp2.ErrBacktrackingStackLimit):
		r.throwRange("the regular expression is too complex for this input (backtracking limit reached)")
	case err != nil:
		r.stop(limitOutcome(LimitRegexTime, r.regexTimeoutMessage()))
		r.throwRange("regular expression match timed out")
	case m == nil:
		return nil, nil
	}
	groups := m.Groups()
	idx := make([]int, 0, 2*len(groups))
	names := make([]string, 0, len(groups))
	for _, g := range groups {
		if len(g.Captures) > 0 {
			idx = append(idx, toUnits(g.RuneIndex), toUnits(g.RuneIndex+g.RuneLength))
		} else {
			idx = append(idx, -1, -1)
		}
		name := g.Name
		if strings.Trim(name, "0123456789") == "" {
			name = ""
		}
		names = append(names, name)
	}
	return idx, names
}

// regexTimeout is the time limit of one backtracking match: the preset's
// regexTimeout, but never beyond the run's deadline.
func (r *run) regexTimeout() time.Duration {
	left := time.Until(r.start.Add(r.caps.timeout))
	if left <= 0 {
		r.checkpoint()
		left = time.Millisecond
	}
	if t := r.opts.Limits.RegexTimeout; t > 0 && t < left {
		return t
	}
	return left
}

func (r *run) regexTimeoutMessage() string {
	if t := r.opts.Limits.RegexTimeout; t > 0 {
		return fmt.Sprintf("a regular expression match ran longer than this preset's regexTimeout (%v)", t)
	}
	return "a regular expression match ran until the run's deadline"
}

// prepare converts s to runes, reusing the conversion of the last input:
// global expressions match the same string over and over.
func (e *regexEngine) prepare(s goja.String) *regexInput {
	key := s.String()
	in := &e.input
	if in.units != nil && len(in.units) == s.Length() && in.key == key && (!in.lossy || sameUnits(in.units, s)) {
		return in
	}
	n := s.Length()
	units := make([]rune, n)
	for i := range n {
		units[i] = rune(s.CharAt(i))
	}
	*in = regexInput{key: key, units: units, lossy: strings.ContainsRune(key, utf8.RuneError)}
	return in
}

func sameUnits(units []rune, s goja.String) bool {
	for i, u := range units {
		if rune(s.CharAt(i)) != u {
			return false
		}
	}
	return true
}

// codePoints fills in the code points of the input and their positions.
func (in *regexInput) codePoints() {
	if in.pos != nil {
		return
	}
	in.cps = make([]rune, 0, len(in.units))
	in.pos = make([]int, 0, len(in.units)+1)
	for i := 0; i < len(in.units); i++ {
		in.pos = append(in.pos, i)
		u := in.units[i]
		if utf16.IsSurrogate(u) && u < 0xDC00 && i+1 < len(in.units) && in.units[i+1] >= 0xDC00 && in.units[i+1] <= 0xDFFF {
			in.cps = append(in.cps, utf16.DecodeRune(u, in.units[i+1]))
			i++
			continue
		}
		in.cps = append(in.cps, u)
	}
	in.pos = append(in.pos, len(in.units))
}

// codePointAt maps a UTF-16 index to the index of the code point that
// starts there or, inside a surrogate pair, the next one.
func (in *regexInput) codePointAt(unit int) int {
	lo, hi := 0, len(in.pos)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if in.pos[mid] < unit {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// runeReader feeds runes to Go's regexp one position each, so that the
// positions it reports are rune indices.
type runeReader struct {
	runes []rune
	pos   int
}

func (rd *runeReader) ReadRune() (rune, int, error) {
	if rd.pos >= len(rd.runes) {
		return 0, 0, io.EOF
	}
	rd.pos++
	return rd.runes[rd.pos-1], 1, nil
}

// stringReplace guards String.prototype.replace and replaceAll: a search
// value with a replace method is called here (read once), anything else
// is converted once, and the replacement is bounded (see replacement).
func (r *run) stringReplace(what string, all bool) func(nativeFunc) nativeFunc {
	return func(orig nativeFunc) nativeFunc {
		return func(call goja.FunctionCall) goja.Value {
			this := call.This
			if goja.IsUndefined(this) || goja.IsNull(this) {
				r.throwType(what + " called on null or undefined")
			}
			search, replaceValue := call.Argument(0), call.Argument(1)
			if !goja.IsUndefined(search) && !goja.IsNull(search) {
				if all && r.isRegExp(search) {
					f := search.(*goja.Object).Get("flags")
					if f == nil || goja.IsUndefined(f) || goja.IsNull(f) || !strings.Contains(r.toStr(f).String(), "g") {
						r.throwType(what + ": the RegExp must have the global flag")
					}
				}
				if m := r.method(search, goja.SymReplace); m != nil {
					return r.call(m, search, this, replaceValue)
				}
			}
			s := r.toStr(this)
			pattern := r.toStr(search)
			occurrences := int64(1)
			if all {
				if pattern.Length() == 0 {
					occurrences = int64(s.Length()) + 1
				} else {
					occurrences = int64(s.Length()/pattern.Length()) + 1
				}
			}
			repl := r.replacement(replaceValue, s, occurrences)
			if occurrences > maxNativeReplacements || searchIsCostly(s.Length(), pattern.Length()) {
				return r.replaceUnits(s, pattern, repl, all)
			}
			return orig(goja.FunctionCall{This: s, Arguments: []goja.Value{pattern, repl}})
		}
	}
}

// maxNativeReplacements is how many matches of a string search value
// goja's replaceAll may find: it lists every match before it replaces any
// (tens of bytes each, in one native step), so past this the sandbox
// replaces them itself.
const maxNativeReplacements = 1 << 12

// replaceUnits is String.prototype.replace and replaceAll for a string
// search value, matching in linear time and building the result as it
// goes, a checkpoint at every match. repl is what replacement returned: a
// string to insert as it is, or a function to call with (matched,
// position, string).
func (r *run) replaceUnits(s, pattern goja.String, repl goja.Value, all bool) goja.Value {
	n, m := s.Length(), pattern.Length()
	fn, isFn := goja.AssertFunction(repl)
	var b goja.StringBuilder
	last, count := 0, 0
	replace := func(at int) bool {
		if count++; count%checkpointEvery == 0 {
			r.checkpoint()
		}
		b.WriteString(s.Substring(last, at))
		if isFn {
			b.WriteString(r.toStr(r.call(fn, goja.Undefined(), pattern, r.rt.ToValue(at), s)))
		} else {
			b.WriteString(repl.(goja.String))
		}
		last = at + m
		return all
	}
	if m == 0 {
		// An empty search value matches at every position, the end included.
		for at := 0; at <= n && replace(at); at++ {
			if at < n {
				b.WriteString(s.Substring(at, at+1))
				last = at + 1
			}
		}
	} else {
		r.matchUnits(r.units(s, 0, n), r.units(pattern, 0, m), replace)
	}
	if last < n {
		b.WriteString(s.Substring(last, n))
	}
	return b.String()
}

// replacement bounds what a replacement can add to s. A function keeps its
// results counted; a string without $ patterns that cannot outgrow the
// string cap is passed as it is; any other string becomes a function that
// expands it ($$, $&, $`, $', $n, $<name>) with its output counted, since
// $` and $' make the output quadratic in the input. occurrences bounds the
// number of matches (-1: one per position of s).
func (r *run) replacement(v goja.Value, s goja.String, occurrences int64) goja.Value {
	budget := r.caps.stringUnits - int64(s.Length())
	if budget < 0 {
		r.checkUnits(int64(s.Length()), "replace")
	}
	used := int64(0)
	count := func(out goja.String) goja.String {
		used += int64(out.Length())
		if used > budget {
			r.throwRange(fmt.Sprintf("replace: the result would exceed the sandbox limit of %d characters", r.caps.stringUnits))
		}
		return out
	}
	if fn, ok := goja.AssertFunction(v); ok {
		return r.newFunction("", 0, func(call goja.FunctionCall) goja.Value {
			return count(r.toStr(r.call(fn, goja.Undefined(), call.Arguments...)))
		})
	}
	tmpl := r.toStr(v)
	if occurrences < 0 {
		occurrences = int64(s.Length()) + 1
	}
	if !strings.Contains(tmpl.String(), "$") && (tmpl.Length() == 0 || occurrences <= budget/int64(tmpl.Length())) {
		return tmpl
	}
	return r.newFunction("", 0, func(call goja.FunctionCall) goja.Value {
		return count(r.substitute(tmpl, call.Arguments))
	})
}

// substitute is GetSubstitution for a replacer called with (matched,
// ...captures, position, string, groups?).
func (r *run) substitute(tmpl goja.String, args []goja.Value) goja.String {
	n := len(args)
	var groups *goja.Object
	if n >= 4 {
		if o, ok := args[n-1].(*goja.Object); ok {
			groups, n = o, n-1
		}
	}
	if n < 3 {
		return tmpl
	}
	matched := r.toStr(args[0])
	str := r.toStr(args[n-1])
	position := int(min(max(toIntegerOrInfinity(args[n-2]), 0), int64(str.Length())))
	captures := args[1 : n-2]
	tail := min(position+matched.Length(), str.Length())

	var b goja.StringBuilder
	l := tmpl.Length()
	last := 0
	flush := func(i int) {
		if i > last {
			b.WriteString(tmpl.Substring(last, i))
		}
	}
	for i := 0; i < l; i++ {
		if tmpl.CharAt(i) != '$' || i+1 >= l {
			continue
		}
		c := tmpl.CharAt(i + 1)
		switch {
		case c == '$':
			flush(i)
			b.WriteRune('$')
			i++
		case c == '&':
			flush(i)
			b.WriteString(matched)
			i++
		case c == '`':
			flush(i)
			b.WriteString(str.Substring(0, position))
			i++
		case c == '\'':
			flush(i)
			b.WriteString(str.Substring(tail, str.Length()))
			i++
		case c >= '0' && c <= '9':
			digits := 1
			index := int(c - '0')
			if i+2 < l {
				if d := tmpl.CharAt(i + 2); d >= '0' && d <= '9' {
					if two := index*10 + int(d-'0'); two >= 1 && two <= len(captures) {
						digits, index = 2, two
					}
				}
			}
			if index < 1 || index > len(captures) {
				continue
			}
			flush(i)
			if v := captures[index-1]; !goja.IsUndefined(v) {
				b.WriteString(r.toStr(v))
			}
			i += digits
		case c == '<' && groups != nil:
			end := -1
			for j := i + 2; j < l; j++ {
				if tmpl.CharAt(j) == '>' {
					end = j
					break
				}
			}
			if end < 0 {
				continue
			}
			flush(i)
			name := tmpl.Substring(i+2, end).String()
			if v := groups.Get(name); v != nil && !goja.IsUndefined(v) {
				b.WriteString(r.toStr(v))
			}
			i = end
		default:
			continue
		}
		last = i + 1
	}
	flush(l)
	return b.String()
}

// convertRegexpToUnicode turns \uXXXX\uXXXX surrogate pair escapes into the
// code point, as goja does before compiling a unicode-mode pattern.
func convertRegexpToUnicode(p string) string {
	var sb strings.Builder
	pos := 0
	for i := 0; i < len(p)-11; {
		c, size := utf8.DecodeRuneInString(p[i:])
		if c != '\\' {
			i += size
			continue
		}
		i++
		if p[i] == 'u' && p[i+5] == '\\' && p[i+6] == 'u' {
			first, err1 := strconv.ParseUint(p[i+1:i+5], 16, 16)
			second, err2 := strconv.ParseUint(p[i+7:i+11], 16, 16)
			if err1 == nil && err2 == nil && first >= 0xD800 && first < 0xDC00 && second >= 0xDC00 && second <= 0xDFFF {
				sb.WriteString(p[pos : i-1])
				sb.WriteRune(utf16.DecodeRune(rune(first), rune(second)))
				i += 11
				pos = i
				continue
			}
		}
		i++
	}
	if pos == 0 {
		return p
	}
	sb.WriteString(p[pos:])
	return sb.String()
}
