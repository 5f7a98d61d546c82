package vm

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// checkJSONText checks JSON text before it reaches goja's parser, which
// recurses on the Go stack once per nesting level (deep input overflows it,
// which is fatal) and builds values in proportion to the text. It does not
// check the syntax; the parser does.
func checkJSONText[T ~string | ~[]byte](s T, maxBytes int64, maxDepth int) error {
	if int64(len(s)) > maxBytes {
		return fmt.Errorf("JSON text of %d bytes exceeds the sandbox limit of %d bytes", len(s), maxBytes)
	}
	depth := 0
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
			if depth > maxDepth {
				return fmt.Errorf("JSON text nests deeper than %d levels", maxDepth)
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}

// encodeOptions configure one serialisation.
type encodeOptions struct {
	// what names the value in error messages ("JSON.stringify", "result").
	what string
	// strict refuses what JSON cannot represent (functions, symbols) with
	// a TypeError naming its path, instead of dropping it.
	strict bool
	// rejectProto refuses objects with an own "__proto__" key: such a key
	// pollutes prototypes in hosts that merge the value into an object.
	rejectProto bool
	// keep is how many bytes of output are kept; 0 means the run's string
	// cap. Past it, a strict encoding only counts bytes (so a truncated
	// result can report its size) until measure, and then stops; any
	// other throws a RangeError.
	keep int64
	// measure is how many bytes a strict encoding counts before it stops:
	// at least keep.
	measure  int64
	replacer goja.Value
	space    goja.Value
}

// encoder is JSON.stringify written against goja's public API. It replaces
// goja's own, which recurses without a depth limit and checks for cycles
// by a linear scan (quadratic on deep nesting), and it is what serialises
// results, tool inputs and log metadata, always inside the runtime so that
// toJSON methods, getters and proxies run under the deadline.
type encoder struct {
	r        *run
	opts     encodeOptions
	replacer goja.Callable
	props    []string
	hasProps bool
	gap      string

	buf       []byte
	keep      int64
	measure   int64
	total     int64
	truncated bool // past keep: bytes are counted, not kept
	stopped   bool // past measure: nothing more is encoded

	stack []*goja.Object
	// onPath maps the objects on the stack to their place in path, for
	// the cycle check. It is made when a second object is entered: a
	// flat value (a tool's input, most often) needs no map, its one
	// object being rootAt.
	onPath map[*goja.Object]int
	rootAt int
	path   []string
	steps  int
}

var boolType = reflect.TypeOf(true)

func (r *run) newEncoder(opts encodeOptions) *encoder {
	e := &encoder{r: r, opts: opts, keep: opts.keep}
	if e.keep <= 0 {
		e.keep = r.caps.stringUnits
	}
	e.measure = max(opts.measure, e.keep)
	if opts.replacer != nil {
		if obj, ok := opts.replacer.(*goja.Object); ok {
			if fn, ok := goja.AssertFunction(obj); ok {
				e.replacer = fn
			} else if r.isArray(obj) {
				e.propertyList(obj)
			}
		}
	}
	if opts.space != nil {
		e.gap = r.gapFrom(opts.space)
	}
	return e
}

// propertyList reads an array replacer once into a list of keys.
func (e *encoder) propertyList(arr *goja.Object) {
	n := toLength(arr.Get("length"))
	if n > e.r.caps.elements {
		e.r.throwRange(fmt.Sprintf("%s: the replacer array is longer than %d elements", e.opts.what, e.r.caps.elements))
	}
	e.hasProps = true
	seen := make(map[string]bool)
	for i := int64(0); i < n; i++ {
		v := arr.Get(strconv.FormatInt(i, 10))
		var key string
		switch {
		case v == nil:
			continue
		case goja.IsString(v), goja.IsNumber(v):
			key = v.String()
		default:
			o, ok := v.(*goja.Object)
			if !ok {
				continue
			}
			if c := o.ClassName(); c != "String" && c != "Number" {
				continue
			}
			key = e.r.toStr(o).String()
		}
		if !seen[key] {
			seen[key] = true
			e.props = append(e.props, key)
		}
	}
}

// gapFrom is JSON.stringify's space argument.
func (r *run) gapFrom(space goja.Value) string {
	if o, ok := space.(*goja.Object); ok {
		switch o.ClassName() {
		case "Number":
			space = o.ToNumber()
		case "String":
			space = r.toStr(o)
		}
	}
	switch {
	case goja.IsNumber(space):
		n := min(toIntegerOrInfinity(space), 10)
		if n < 1 {
			return ""
		}
		return strings.Repeat(" ", int(n))
	case goja.IsString(space):
		s := space.String()
		if utf8.RuneCountInString(s) > 10 {
			s = string([]rune(s)[:10])
		}
		return s
	}
	return ""
}

// encode serialises v. It reports false when v serialises to undefined.
func (e *encoder) encode(v goja.Value) bool {
	var holder *goja.Object
	if e.replacer != nil {
		holder = e.r.rt.NewObject()
		e.r.defineData(holder, "", v)
	}
	e.path = append(e.path, "")
	v, ok := e.prepare(holder, "", v)
	if ok {
		e.emit(v)
	}
	return ok
}

func (e *encoder) write(s string) {
	if e.stopped {
		return
	}
	e.total += int64(len(s))
	if !e.truncated && int64(len(e.buf))+int64(len(s)) > e.keep {
		if !e.opts.strict {
			e.r.throwRange(fmt.Sprintf("%s: the output exceeds the sandbox limit of %d bytes", e.opts.what, e.keep))
		}
		e.buf = append(e.buf, s[:e.keep-int64(len(e.buf))]...)
		e.truncated = true
	}
	switch {
	case e.truncated:
		// Counting what goes past keep costs as much as encoding it: stop
		// at measure, which makes the size a lower bound.
		e.stopped = e.total > e.measure
	default:
		e.buf = append(e.buf, s...)
	}
}

func (e *encoder) step() {
	e.steps++
	if e.steps%checkpointEvery == 0 {
		e.r.checkpoint()
	}
}

// pathString renders the current path for error messages: $.a[3].b
func (e *encoder) pathString() string {
	var b strings.Builder
	b.WriteString("$")
	for _, p := range e.path[1:] {
		switch {
		case p != "" && strings.Trim(p, "0123456789") == "" && (len(p) == 1 || p[0] != '0'):
			b.WriteString("[" + p + "]")
		case isIdentifier(p):
			b.WriteString("." + p)
		default:
			b.WriteString("[" + strconv.Quote(p) + "]")
		}
	}
	return clip(b.String(), 512)
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// refuse throws the TypeError of a strict encoding.
func (e *encoder) refuse(what string) {
	e.r.throwType(fmt.Sprintf("%s is not JSON-serialisable: %s at %s", e.opts.what, what, e.pathString()))
}

// prepare is the first half of SerializeJSONProperty: it applies toJSON and
// the replacer to holder[key] (already read as v), unwraps boxed
// primitives, and reports false when the value serialises to undefined.
// The caller has pushed key on the path.
func (e *encoder) prepare(holder *goja.Object, key string, v goja.Value) (goja.Value, bool) {
	e.step()
	r := e.r
	if o, ok := v.(*goja.Object); ok {
		if tj, ok := o.Get("toJSON").(*goja.Object); ok {
			if fn, ok := goja.AssertFunction(tj); ok {
				v = r.call(fn, o, r.rt.ToValue(key))
			}
		}
	}
	if e.replacer != nil {
		v = r.call(e.replacer, holder, r.rt.ToValue(key), v)
	}
	if o, ok := v.(*goja.Object); ok {
		switch o.ClassName() {
		case "Number":
			v = o.ToNumber()
		case "String":
			v = r.toStr(o)
		case "Boolean", "BigInt":
			v = r.rt.ToValue(o.Export())
		}
	}
	switch {
	case v == nil || goja.IsUndefined(v):
		return nil, false
	case goja.IsBigInt(v):
		if e.opts.strict {
			e.refuse("a BigInt")
		}
		r.throwType(fmt.Sprintf("%s: a BigInt value cannot be serialised to JSON", e.opts.what))
	}
	if o, ok := v.(*goja.Object); ok {
		if _, isFunc := goja.AssertFunction(o); isFunc {
			if e.opts.strict {
				e.refuse("a function")
			}
			return nil, false
		}
		return v, true
	}
	if _, isSym := v.(*goja.Symbol); isSym {
		if e.opts.strict {
			e.refuse("a symbol")
		}
		return nil, false
	}
	return v, true
}

// emit is the second half of SerializeJSONProperty, for a prepared value.
func (e *encoder) emit(v goja.Value) {
	switch {
	case goja.IsNull(v):
		e.write("null")
	case goja.IsString(v):
		e.quote(v.String())
	case goja.IsNumber(v):
		f := v.ToFloat()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			e.write("null")
		} else {
			e.write(v.String())
		}
	case v.ExportType() == boolType:
		if v.ToBoolean() {
			e.write("true")
		} else {
			e.write("false")
		}
	default:
		o := v.(*goja.Object)
		switch {
		case e.r.isArray(o):
			e.array(o)
		case isTypedArray(o) && !e.hasProps:
			e.typedArray(o)
		default:
			e.object(o)
		}
	}
}

// enter checks depth and cycles before serialising o.
func (e *encoder) enter(o *goja.Object) {
	if len(e.stack) >= maxJSONDepth {
		e.r.throwRange(fmt.Sprintf("%s: the value nests deeper than %d levels", e.opts.what, maxJSONDepth))
	}
	if at, ok := e.pathIndex(o); ok {
		if e.opts.strict {
			here := e.pathString()
			saved := e.path
			e.path = e.path[:at+1]
			back := e.pathString()
			e.path = saved
			e.r.throwType(fmt.Sprintf("%s is not JSON-serialisable: cycle at %s (refers back to %s)", e.opts.what, here, back))
		}
		e.r.throwType(fmt.Sprintf("%s: cannot serialise a cyclic structure (at %s)", e.opts.what, e.pathString()))
	}
	if e.onPath == nil && len(e.stack) == 1 {
		e.onPath = map[*goja.Object]int{e.stack[0]: e.rootAt}
	}
	if e.onPath != nil {
		e.onPath[o] = len(e.path) - 1
	} else {
		e.rootAt = len(e.path) - 1 // the stack is empty: o is the root
	}
	e.stack = append(e.stack, o)
}

// pathIndex says whether o is on the stack, and where in path.
func (e *encoder) pathIndex(o *goja.Object) (int, bool) {
	if e.onPath != nil {
		at, ok := e.onPath[o]
		return at, ok
	}
	if len(e.stack) == 1 && e.stack[0] == o {
		return e.rootAt, true
	}
	return 0, false
}

func (e *encoder) leave(o *goja.Object) {
	delete(e.onPath, o)
	e.stack = e.stack[:len(e.stack)-1]
}

// indent writes a newline and the indentation of the current level, when
// pretty-printing.
func (e *encoder) indent(level int) {
	if e.gap == "" {
		return
	}
	e.write("\n")
	for range level {
		e.write(e.gap)
	}
}

func (e *encoder) array(o *goja.Object) {
	e.enter(o)
	defer e.leave(o)
	n := toLength(o.Get("length"))
	if n > e.r.caps.elements {
		e.r.throwRange(fmt.Sprintf("%s: an array of length %d exceeds the sandbox limit of %d elements", e.opts.what, n, e.r.caps.elements))
	}
	level := len(e.stack)
	e.write("[")
	for i := int64(0); i < n && !e.stopped; i++ {
		if i > 0 {
			e.write(",")
		}
		e.indent(level)
		k := strconv.FormatInt(i, 10)
		e.path = append(e.path, k)
		if v, ok := e.prepare(o, k, o.Get(k)); ok {
			e.emit(v)
		} else {
			e.write("null")
		}
		e.path = e.path[:len(e.path)-1]
	}
	if n > 0 {
		e.indent(level - 1)
	}
	e.write("]")
}

func (e *encoder) object(o *goja.Object) {
	e.enter(o)
	defer e.leave(o)
	var keys []string
	if e.hasProps {
		keys = e.props
	} else {
		// Not a String object (prepare unwraps those) nor a typed array
		// (see typedArray), nor a proxy of one (see guardProxy): its keys
		// are its own properties.
		keys = o.Keys()
	}
	level := len(e.stack)
	e.write("{")
	first := true
	for _, k := range keys {
		if e.stopped {
			break
		}
		e.member(o, k, level, &first)
	}
	if !first {
		e.indent(level - 1)
	}
	e.write("}")
}

// member serialises o[k] as a member of the object being written, or
// nothing when it serialises to undefined.
func (e *encoder) member(o *goja.Object, k string, level int, first *bool) {
	e.path = append(e.path, k)
	defer func() { e.path = e.path[:len(e.path)-1] }()
	if k == "__proto__" && e.opts.rejectProto {
		e.r.throwType(fmt.Sprintf("%s may not contain a \"__proto__\" key (at %s)", e.opts.what, e.pathString()))
	}
	v, ok := e.prepare(o, k, o.Get(k))
	if !ok {
		return
	}
	if !*first {
		e.write(",")
	}
	*first = false
	e.indent(level)
	e.quote(k)
	if e.gap != "" {
		e.write(": ")
	} else {
		e.write(":")
	}
	e.emit(v)
}

// typedArray serialises a typed array, which JSON.stringify writes as an
// object: its indices in order, read one at a time (listing its keys would
// make one string per element in one native step, before the first is
// written, and a typed array holds up to the buffer cap), then its other
// keys, which are listed only when every element fitted.
func (e *encoder) typedArray(o *goja.Object) {
	e.enter(o)
	defer e.leave(o)
	n := e.r.typedLength(o)
	level := len(e.stack)
	e.write("{")
	first := true
	for i := int64(0); i < n && !e.stopped; i++ {
		e.member(o, strconv.FormatInt(i, 10), level, &first)
	}
	if !e.stopped {
		e.r.checkIndexKeys(o, e.opts.what)
		keys := o.Keys()
		for _, k := range keys[min(int64(len(keys)), n):] {
			if e.stopped {
				break
			}
			e.member(o, k, level, &first)
		}
	}
	if !first {
		e.indent(level - 1)
	}
	e.write("}")
}

// quote writes s as a JSON string, escaping as JSON.stringify does (and
// not as encoding/json does, which also escapes <, > and &). A long string
// is written a chunk at a time, each a checkpoint, so that an encoding
// that stops or is stopped does not escape the rest (up to six bytes for
// one).
func (e *encoder) quote(s string) {
	e.write(`"`)
	for len(s) > 0 && !e.stopped {
		n := min(len(s), textChunk)
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		if len(s) > textChunk {
			e.r.checkpoint()
		}
		e.write(escapeJSON(s[:n]))
		s = s[n:]
	}
	e.write(`"`)
}

// escapeJSON escapes the characters of a JSON string's contents.
func escapeJSON(s string) string {
	var b strings.Builder
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		if start == 0 {
			b.Grow(len(s) + 16)
		}
		b.WriteString(s[start:i])
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&0xF])
		}
		start = i + 1
	}
	if start == 0 {
		return s
	}
	b.WriteString(s[start:])
	return b.String()
}

// call calls fn and rethrows what it threw, so that exceptions and
// interrupts unwind through the native caller.
func (r *run) call(fn goja.Callable, this goja.Value, args ...goja.Value) goja.Value {
	v, err := fn(this, args...)
	if err != nil {
		panic(err)
	}
	return v
}

// encodeJSON serialises v with the given options and returns the JSON; a
// value that serialises to undefined becomes null.
func (r *run) encodeJSON(v goja.Value, opts encodeOptions) []byte {
	e := r.newEncoder(opts)
	if !e.encode(v) {
		return []byte("null")
	}
	return e.buf
}

// jsonStringify replaces JSON.stringify.
func (r *run) jsonStringify(call goja.FunctionCall) goja.Value {
	e := r.newEncoder(encodeOptions{what: "JSON.stringify", replacer: call.Argument(1), space: call.Argument(2)})
	if !e.encode(call.Argument(0)) {
		return goja.Undefined()
	}
	return r.rt.ToValue(string(e.buf))
}

// jsonParse guards JSON.parse: the text is converted once, checked for size
// and depth, and parsed by goja's parser; a reviver runs in a walk with a
// depth limit here rather than in goja's unbounded recursion.
func (r *run) jsonParse(call goja.FunctionCall) goja.Value {
	text := r.toStr(call.Argument(0))
	if err := checkJSONText(text.String(), r.caps.stringUnits, maxJSONDepth); err != nil {
		panic(r.newError(r.builtin("SyntaxError"), "JSON.parse: "+err.Error()))
	}
	v := r.parseNative()(goja.FunctionCall{Arguments: []goja.Value{text}})
	reviver, ok := call.Argument(1).(*goja.Object)
	if !ok {
		return v
	}
	fn, ok := goja.AssertFunction(reviver)
	if !ok {
		return v
	}
	root := r.rt.NewObject()
	r.defineData(root, "", v)
	w := reviveWalk{r: r, fn: fn}
	return w.walk(root, "", 0)
}

// reviveWalk is InternalizeJSONProperty with a depth limit: a reviver can
// graft new structure onto the value it is walking.
type reviveWalk struct {
	r     *run
	fn    goja.Callable
	steps int
}

func (w *reviveWalk) walk(holder *goja.Object, key string, depth int) goja.Value {
	r := w.r
	if depth > maxJSONDepth {
		r.throwRange(fmt.Sprintf("JSON.parse: the revived value nests deeper than %d levels", maxJSONDepth))
	}
	w.steps++
	if w.steps%checkpointEvery == 0 {
		r.checkpoint()
	}
	val := holder.Get(key)
	if o, ok := val.(*goja.Object); ok {
		var keys []string
		if r.isArray(o) {
			n := toLength(o.Get("length"))
			if n > r.caps.elements {
				r.throwRange(fmt.Sprintf("JSON.parse: an array of length %d exceeds the sandbox limit of %d elements", n, r.caps.elements))
			}
			keys = make([]string, n)
			for i := range keys {
				keys[i] = strconv.Itoa(i)
			}
		} else {
			// A reviver can graft a String object or a typed array onto
			// the value it walks.
			r.checkIndexKeys(o, "JSON.parse")
			keys = o.Keys()
		}
		for _, k := range keys {
			nv := w.walk(o, k, depth+1)
			if nv == nil || goja.IsUndefined(nv) {
				_ = o.Delete(k)
			} else {
				_ = o.DefineDataProperty(k, nv, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
			}
		}
	}
	if val == nil {
		val = goja.Undefined()
	}
	return r.call(w.fn, holder, r.rt.ToValue(key), val)
}

// parseHostJSON parses JSON the host supplied (a tool description, the
// request context) inside the runtime, after the same checks as tool
// results.
func (r *run) parseHostJSON(raw []byte) (goja.Value, error) {
	if len(raw) == 0 {
		return goja.Null(), nil
	}
	if err := checkJSONText(raw, r.caps.stringUnits, maxJSONDepth); err != nil {
		return nil, err
	}
	var v goja.Value
	if err := r.try(func() { v = r.parseNative()(goja.FunctionCall{Arguments: []goja.Value{r.rt.ToValue(string(raw))}}) }); err != nil {
		if isUncatchable(err) {
			panic(err)
		}
		return nil, errors.New("not valid JSON")
	}
	return v, nil
}

// deepFreeze freezes a value parsed from JSON and everything in it.
func (r *run) deepFreeze(v goja.Value, depth int) {
	o, ok := v.(*goja.Object)
	if !ok || depth > maxJSONDepth {
		return
	}
	for _, k := range o.Keys() {
		r.deepFreeze(o.Get(k), depth+1)
	}
	r.freeze(o)
}
