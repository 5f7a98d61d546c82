package vm

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dop251/goja"

	"github.com/codecall-go/codecall/internal/whatwg"
)

// URL and URLSearchParams follow the WHATWG URL Standard (see package
// whatwg for the parsing). Strings given to them are refused over
// caps.urlUnits, and URL strings with more than maxURLSlashes slashes
// (each starts a path segment, a Go string of its own); a URLSearchParams
// list holds at most caps.elements pairs and caps.urlUnits bytes, and sort
// checks the stop flag as it compares, so no call allocates or loops
// beyond the caps.

// maxURLSlashes bounds the slashes of a string parsed as a URL.
const maxURLSlashes = 1 << 16

// urlState is a URL object's record and its searchParams object, made on
// first use.
type urlState struct {
	u      *whatwg.URL
	params *goja.Object
}

// paramsState is a URLSearchParams object's list; url is the URL whose
// query the list is, or nil.
type paramsState struct {
	list  []whatwg.Pair
	bytes int64
	url   *urlState
}

// paramsIter is a URLSearchParams iterator: live, as the standard's
// "value pairs to iterate" are.
type paramsIter struct {
	params *paramsState
	kind   string // keys, values or entries
	index  int
}

// installURL defines URL and URLSearchParams, on first use.
func (r *run) installURL() {
	w := r.webObjects()
	r.installParams(w)

	c := r.newWebClass("URL", 1, func(call goja.ConstructorCall) {
		u, why := r.parseURLArgs(call.Arguments, "URL")
		if u == nil {
			r.throwType(why)
		}
		w.urls[call.This] = &urlState{u: u}
	})
	w.urlProto = c.proto
	p := c.proto

	str := func(s string) goja.Value { return r.rt.ToValue(s) }
	type component struct {
		name string
		get  func(*whatwg.URL) string
		set  func(*whatwg.URL, string)
	}
	for _, m := range []component{
		{"origin", (*whatwg.URL).Origin, nil},
		{"protocol", func(u *whatwg.URL) string { return u.Scheme + ":" }, (*whatwg.URL).SetProtocol},
		{"username", func(u *whatwg.URL) string { return u.Username }, (*whatwg.URL).SetUsername},
		{"password", func(u *whatwg.URL) string { return u.Password }, (*whatwg.URL).SetPassword},
		{"host", (*whatwg.URL).HostPort, (*whatwg.URL).SetHost},
		{"hostname", func(u *whatwg.URL) string { return u.Host }, (*whatwg.URL).SetHostname},
		{"port", func(u *whatwg.URL) string {
			if u.Port < 0 {
				return ""
			}
			return strconv.Itoa(u.Port)
		}, (*whatwg.URL).SetPort},
		{"pathname", (*whatwg.URL).Pathname, (*whatwg.URL).SetPathname},
		{"hash", func(u *whatwg.URL) string {
			if u.Fragment == "" {
				return ""
			}
			return "#" + u.Fragment
		}, (*whatwg.URL).SetHash},
	} {
		what := "URL." + m.name
		var set nativeFunc
		if m.set != nil {
			set = func(call goja.FunctionCall) goja.Value {
				st := r.urlThis(call, what)
				m.set(st.u, r.urlInput(call.Argument(0), what))
				return goja.Undefined()
			}
		}
		r.webAccessor(p, m.name, func(call goja.FunctionCall) goja.Value {
			return str(m.get(r.urlThis(call, what).u))
		}, set)
	}
	href := func(call goja.FunctionCall) goja.Value { return str(r.urlThis(call, "URL.href").u.String()) }
	r.webAccessor(p, "href", href, func(call goja.FunctionCall) goja.Value {
		st := r.urlThis(call, "URL.href")
		v := r.urlInput(call.Argument(0), "URL.href")
		if !st.u.SetHref(v) {
			r.throwType("Invalid URL: " + clip(v, 200))
		}
		r.syncParams(st)
		return goja.Undefined()
	})
	r.webAccessor(p, "search", func(call goja.FunctionCall) goja.Value {
		u := r.urlThis(call, "URL.search").u
		if u.Query == "" {
			return str("")
		}
		return str("?" + u.Query)
	}, func(call goja.FunctionCall) goja.Value {
		st := r.urlThis(call, "URL.search")
		st.u.SetSearch(r.urlInput(call.Argument(0), "URL.search"))
		r.syncParams(st)
		return goja.Undefined()
	})
	r.webAccessor(p, "searchParams", func(call goja.FunctionCall) goja.Value {
		st := r.urlThis(call, "URL.searchParams")
		if st.params == nil {
			ps := &paramsState{url: st}
			ps.list, ps.bytes = r.parseQuery(st.u.Query, "URL.searchParams")
			st.params = r.rt.CreateObject(w.paramsProto)
			w.params[st.params] = ps
		}
		return st.params
	}, nil)
	r.webMethod(p, "toString", 0, href)
	r.webMethod(p, "toJSON", 0, href)

	r.webMethod(c.ctor, "canParse", 1, func(call goja.FunctionCall) goja.Value {
		r.requireArgs(call, 1, "URL.canParse")
		u, _ := r.parseURLArgs(call.Arguments, "URL.canParse")
		return r.rt.ToValue(u != nil)
	})
	r.webMethod(c.ctor, "parse", 1, func(call goja.FunctionCall) goja.Value {
		r.requireArgs(call, 1, "URL.parse")
		u, _ := r.parseURLArgs(call.Arguments, "URL.parse")
		if u == nil {
			return goja.Null()
		}
		o := r.rt.CreateObject(w.urlProto)
		w.urls[o] = &urlState{u: u}
		return o
	})
	r.lockClass(c)
	r.setGlobal("URL", c.ctor)
}

// parseURLArgs parses the (url, base) arguments of the URL constructor,
// URL.parse and URL.canParse, converting each once: url first, then base.
// On failure u is nil and why says what was invalid.
func (r *run) parseURLArgs(args []goja.Value, what string) (u *whatwg.URL, why string) {
	arg := func(i int) goja.Value {
		if i < len(args) {
			return args[i]
		}
		return goja.Undefined()
	}
	in := r.urlInput(arg(0), what)
	var base *whatwg.URL
	if b := arg(1); !goja.IsUndefined(b) {
		s := r.urlInput(b, what)
		var ok bool
		if base, ok = whatwg.Parse(s, nil); !ok {
			return nil, "Invalid base URL: " + clip(s, 200)
		}
	}
	if u, ok := whatwg.Parse(in, base); ok {
		return u, ""
	}
	return nil, "Invalid URL: " + clip(in, 200)
}

// urlInput converts a string to parse as a URL, or a part of one, once.
func (r *run) urlInput(v goja.Value, what string) string {
	s := r.usvString(v, r.caps.urlUnits, what)
	if strings.Count(s, "/")+strings.Count(s, "\\") > maxURLSlashes {
		r.throwRange(fmt.Sprintf("%s: a URL with more than %d slashes exceeds the sandbox limit", what, maxURLSlashes))
	}
	return s
}

// urlThis is the state of the URL `this`.
func (r *run) urlThis(call goja.FunctionCall, what string) *urlState {
	if o, ok := call.This.(*goja.Object); ok {
		if st := r.web.urls[o]; st != nil {
			return st
		}
	}
	r.throwType(what + " called on an object that is not a URL")
	return nil
}

// syncParams resets a URL's searchParams list from its query, after the
// href or search changed.
func (r *run) syncParams(st *urlState) {
	if st.params == nil {
		return
	}
	ps := r.web.params[st.params]
	ps.list, ps.bytes = r.parseQuery(st.u.Query, "URL")
}

// parseQuery parses an application/x-www-form-urlencoded string within
// the caps.
func (r *run) parseQuery(s, what string) ([]whatwg.Pair, int64) {
	if int64(len(s)) > r.caps.urlUnits {
		r.throwRange(what + ": the query is longer than the sandbox allows")
	}
	list, ok := whatwg.ParseForm(s, int(r.caps.elements))
	if !ok {
		r.throwRange(fmt.Sprintf("%s: more than %d pairs exceed the sandbox limit", what, r.caps.elements))
	}
	var n int64
	for _, p := range list {
		n += int64(len(p.Name) + len(p.Value))
	}
	return list, n
}

func (r *run) installParams(w *webState) {
	c := r.newWebClass("URLSearchParams", 0, func(call goja.ConstructorCall) {
		ps := &paramsState{}
		r.paramsInit(ps, call.Argument(0))
		w.params[call.This] = ps
	})
	w.paramsProto = c.proto
	p := c.proto
	const tn = "URLSearchParams.prototype."

	r.webMethod(p, "append", 2, func(call goja.FunctionCall) goja.Value {
		ps := r.paramsThis(call, tn+"append")
		r.requireArgs(call, 2, tn+"append")
		r.addPair(ps, r.pairArgs(call, tn+"append"), tn+"append")
		r.paramsChanged(ps)
		return goja.Undefined()
	})
	// matches reports whether a pair is the one named by delete's and
	// has's arguments: by name, and by value when one is given.
	matches := func(call goja.FunctionCall, what string) func(whatwg.Pair) bool {
		name := r.usvString(call.Argument(0), r.caps.urlUnits, what)
		if v := call.Argument(1); !goja.IsUndefined(v) {
			value := r.usvString(v, r.caps.urlUnits, what)
			return func(p whatwg.Pair) bool { return p.Name == name && p.Value == value }
		}
		return func(p whatwg.Pair) bool { return p.Name == name }
	}
	r.webMethod(p, "delete", 1, func(call goja.FunctionCall) goja.Value {
		ps := r.paramsThis(call, tn+"delete")
		r.requireArgs(call, 1, tn+"delete")
		match := matches(call, tn+"delete")
		ps.list = slices.DeleteFunc(ps.list, func(p whatwg.Pair) bool {
			if match(p) {
				ps.bytes -= int64(len(p.Name) + len(p.Value))
				return true
			}
			return false
		})
		r.paramsChanged(ps)
		return goja.Undefined()
	})
	r.webMethod(p, "has", 1, func(call goja.FunctionCall) goja.Value {
		ps := r.paramsThis(call, tn+"has")
		r.requireArgs(call, 1, tn+"has")
		return r.rt.ToValue(slices.ContainsFunc(ps.list, matches(call, tn+"has")))
	})
	r.webMethod(p, "get", 1, func(call goja.FunctionCall) goja.Value {
		ps := r.paramsThis(call, tn+"get")
		r.requireArgs(call, 1, tn+"get")
		name := r.usvString(call.Argument(0), r.caps.urlUnits, tn+"get")
		for _, p := range ps.list {
			if p.Name == name {
				return r.rt.ToValue(p.Value)
			}
		}
		return goja.Null()
	})
	r.webMethod(p, "getAll", 1, func(call goja.FunctionCall) goja.Value {
		ps := r.paramsThis(call, tn+"getAll")
		r.requireArgs(call, 1, tn+"getAll")
		name := r.usvString(call.Argument(0), r.caps.urlUnits, tn+"getAll")
		var out []any
		for _, p := range ps.list {
			if p.Name == name {
				out = append(out, p.Value)
			}
		}
		return r.rt.NewArray(out...)
	})
	r.webMethod(p, "set", 2, func(call goja.FunctionCall) goja.Value {
		ps := r.paramsThis(call, tn+"set")
		r.requireArgs(call, 2, tn+"set")
		pair := r.pairArgs(call, tn+"set")
		i := slices.IndexFunc(ps.list, func(p whatwg.Pair) bool { return p.Name == pair.Name })
		if i < 0 {
			r.addPair(ps, pair, tn+"set")
		} else {
			// The first pair of that name takes the value; later ones go.
			delta := int64(len(pair.Value) - len(ps.list[i].Value))
			for _, p := range ps.list[i+1:] {
				if p.Name == pair.Name {
					delta -= int64(len(p.Name) + len(p.Value))
				}
			}
			if ps.bytes+delta > r.caps.urlUnits {
				r.throwRange(tn + "set: the list would exceed the sandbox limit")
			}
			ps.list[i].Value = pair.Value
			ps.list = append(ps.list[:i+1], slices.DeleteFunc(ps.list[i+1:], func(p whatwg.Pair) bool { return p.Name == pair.Name })...)
			ps.bytes += delta
		}
		r.paramsChanged(ps)
		return goja.Undefined()
	})
	r.webMethod(p, "sort", 0, func(call goja.FunctionCall) goja.Value {
		ps := r.paramsThis(call, tn+"sort")
		n := 0
		slices.SortStableFunc(ps.list, func(a, b whatwg.Pair) int {
			if n++; n%checkpointEvery == 0 {
				r.checkpoint()
			}
			return whatwg.CompareUTF16(a.Name, b.Name)
		})
		r.paramsChanged(ps)
		return goja.Undefined()
	})
	r.webMethod(p, "toString", 0, func(call goja.FunctionCall) goja.Value {
		return r.rt.ToValue(whatwg.SerializeForm(r.paramsThis(call, tn+"toString").list))
	})
	r.webMethod(p, "forEach", 1, func(call goja.FunctionCall) goja.Value {
		ps := r.paramsThis(call, tn+"forEach")
		fn, ok := goja.AssertFunction(call.Argument(0))
		if !ok {
			r.throwType(tn + "forEach: the callback is not a function")
		}
		for i := 0; i < len(ps.list); i++ {
			if i%checkpointEvery == 0 {
				r.checkpoint()
			}
			pair := ps.list[i]
			r.call(fn, call.Argument(1), r.rt.ToValue(pair.Value), r.rt.ToValue(pair.Name), call.This)
		}
		return goja.Undefined()
	})
	r.webAccessor(p, "size", func(call goja.FunctionCall) goja.Value {
		return r.rt.ToValue(len(r.paramsThis(call, tn+"size").list))
	}, nil)

	// The iterators: keys, values, entries and [Symbol.iterator].
	iterProto := r.rt.CreateObject(r.in.iteratorProto)
	r.toStringTag(iterProto, "URLSearchParams Iterator")
	r.webMethod(iterProto, "next", 0, func(call goja.FunctionCall) goja.Value {
		o, _ := call.This.(*goja.Object)
		it := w.iters[o]
		if it == nil {
			r.throwType("URLSearchParams Iterator.prototype.next called on an object that is not one")
		}
		if it.index >= len(it.params.list) {
			return r.iterResult(goja.Undefined(), true)
		}
		pair := it.params.list[it.index]
		it.index++
		switch it.kind {
		case "keys":
			return r.iterResult(r.rt.ToValue(pair.Name), false)
		case "values":
			return r.iterResult(r.rt.ToValue(pair.Value), false)
		}
		return r.iterResult(r.rt.NewArray(pair.Name, pair.Value), false)
	})
	r.freeze(iterProto)
	w.iterProto = iterProto
	for _, kind := range []string{"keys", "values", "entries"} {
		fn := r.webMethod(p, kind, 0, func(call goja.FunctionCall) goja.Value {
			ps := r.paramsThis(call, tn+kind)
			o := r.rt.CreateObject(iterProto)
			w.iters[o] = &paramsIter{params: ps, kind: kind}
			return o
		})
		if kind == "entries" {
			if err := p.DefineDataPropertySymbol(goja.SymIterator, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
				panic(err)
			}
		}
	}
	r.lockClass(c)
	r.setGlobal("URLSearchParams", c.ctor)
}

// paramsThis is the state of the URLSearchParams `this`.
func (r *run) paramsThis(call goja.FunctionCall, what string) *paramsState {
	if o, ok := call.This.(*goja.Object); ok {
		if ps := r.web.params[o]; ps != nil {
			return ps
		}
	}
	r.throwType(what + " called on an object that is not a URLSearchParams")
	return nil
}

// pairArgs converts a method's name and value arguments once.
func (r *run) pairArgs(call goja.FunctionCall, what string) whatwg.Pair {
	return whatwg.Pair{
		Name:  r.usvString(call.Argument(0), r.caps.urlUnits, what),
		Value: r.usvString(call.Argument(1), r.caps.urlUnits, what),
	}
}

// addPair appends a pair within the caps.
func (r *run) addPair(ps *paramsState, p whatwg.Pair, what string) {
	n := int64(len(p.Name) + len(p.Value))
	if int64(len(ps.list)) >= r.caps.elements || ps.bytes+n > r.caps.urlUnits {
		r.throwRange(what + ": the list would exceed the sandbox limit")
	}
	ps.list = append(ps.list, p)
	ps.bytes += n
}

// paramsChanged is the standard's update steps: the URL the list belongs
// to gets the list's serialisation as its query.
func (r *run) paramsChanged(ps *paramsState) {
	if ps.url != nil {
		ps.url.u.SetQuery(whatwg.SerializeForm(ps.list))
	}
}

// paramsInit fills a new list from the constructor's argument: another
// URLSearchParams, an iterable of [name, value] pairs, an object's own
// enumerable properties, or a query string (a leading "?" dropped).
func (r *run) paramsInit(ps *paramsState, init goja.Value) {
	const what = "URLSearchParams"
	o, isObj := init.(*goja.Object)
	switch {
	case goja.IsUndefined(init):
	case isObj && r.web.params[o] != nil:
		src := r.web.params[o]
		ps.list, ps.bytes = slices.Clone(src.list), src.bytes
	case isObj && r.method(o, goja.SymIterator) != nil:
		r.rt.ForOf(o, func(item goja.Value) bool {
			if len(ps.list)%checkpointEvery == 0 {
				r.checkpoint()
			}
			pair, ok := item.(*goja.Object)
			if !ok {
				r.throwType(what + ": each item must be a [name, value] pair")
			}
			var parts []goja.Value
			r.rt.ForOf(pair, func(v goja.Value) bool {
				if len(parts) == 2 {
					r.throwType(what + ": each item must be a [name, value] pair")
				}
				parts = append(parts, v)
				return true
			})
			if len(parts) != 2 {
				r.throwType(what + ": each item must be a [name, value] pair")
			}
			r.addPair(ps, whatwg.Pair{Name: r.usvString(parts[0], r.caps.urlUnits, what), Value: r.usvString(parts[1], r.caps.urlUnits, what)}, what)
			return true
		})
	case isObj:
		if isProxy(o) {
			r.throwType(what + ": a proxy cannot initialise a URLSearchParams in the sandbox")
		}
		r.checkIndexKeys(o, what)
		for i, key := range o.Keys() {
			if i%checkpointEvery == 0 {
				r.checkpoint()
			}
			v := o.Get(key)
			if v == nil {
				v = goja.Undefined()
			}
			r.addPair(ps, whatwg.Pair{Name: key, Value: r.usvString(v, r.caps.urlUnits, what)}, what)
		}
	default:
		s := r.usvString(init, r.caps.urlUnits, what)
		if len(s) > 0 && s[0] == '?' {
			s = s[1:]
		}
		ps.list, ps.bytes = r.parseQuery(s, what)
	}
}
