package openapi

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// The serialisation styles of OpenAPI 3 parameters.
const (
	styleSimple         = "simple"
	styleLabel          = "label"
	styleMatrix         = "matrix"
	styleForm           = "form"
	styleSpaceDelimited = "spaceDelimited"
	stylePipeDelimited  = "pipeDelimited"
	styleDeepObject     = "deepObject"
)

// serialize renders a parameter's value as the document declares it and
// escaped for where it goes: for a path parameter the text that replaces
// {name} (never holding '/', '?' or '#'), for a query parameter the
// name=value pairs joined with '&', for a header its value, for a cookie
// name=value. It fails on a value the style cannot carry (an object inside
// an array, a header value with a line break).
func serialize(p param, v any) (string, error) {
	if p.json {
		js, err := jsonText(v)
		if err != nil {
			return "", err
		}
		v = js
	}
	switch p.in {
	case "path":
		return serializePath(p, v)
	case "query":
		return serializeQuery(p, v)
	case "header":
		s, err := serializeSimple(p, v, func(s string) string { return s })
		if err == nil && strings.ContainsAny(s, "\r\n\x00") {
			return "", fmt.Errorf("a header value cannot hold a line break or NUL")
		}
		return s, err
	case "cookie":
		s, err := serializeSimple(p, v, cookieEscape)
		if err != nil {
			return "", err
		}
		return p.name + "=" + s, nil
	}
	return "", fmt.Errorf("parameters in %q are not supported (path, query, header, cookie)", p.in)
}

// scalar renders a JSON scalar; ok is false for arrays and objects.
func scalar(v any) (string, bool, error) {
	switch x := v.(type) {
	case nil:
		return "", true, nil
	case string:
		return x, true, nil
	case bool:
		return strconv.FormatBool(x), true, nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "", true, fmt.Errorf("%v is not a JSON number", x)
		}
		return strconv.FormatFloat(x, 'f', -1, 64), true, nil
	case float32:
		return strconv.FormatFloat(float64(x), 'f', -1, 32), true, nil
	case int:
		return strconv.Itoa(x), true, nil
	case int64:
		return strconv.FormatInt(x, 10), true, nil
	case jsonNumber:
		return x.String(), true, nil
	case []any, map[string]any:
		return "", false, nil
	}
	return "", true, fmt.Errorf("a %T cannot be sent as a parameter", v)
}

// jsonNumber is what encoding/json's UseNumber produces.
type jsonNumber interface{ String() string }

// parts splits a value into its items: an array's scalars, an object's
// keys and scalars in key order. obj says which it was.
func parts(v any) (items []string, keys []string, obj bool, err error) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			s, ok, err := scalar(e)
			if err != nil {
				return nil, nil, false, err
			}
			if !ok {
				return nil, nil, false, fmt.Errorf("item %d is an array or object; a parameter holds only a flat list", i)
			}
			items = append(items, s)
		}
		return items, nil, false, nil
	case map[string]any:
		keys = make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s, ok, err := scalar(x[k])
			if err != nil {
				return nil, nil, false, err
			}
			if !ok {
				return nil, nil, false, fmt.Errorf("property %q is an array or object; a parameter holds only flat objects", k)
			}
			items = append(items, s)
		}
		return items, keys, true, nil
	}
	return nil, nil, false, fmt.Errorf("a %T cannot be sent as a parameter", v)
}

// serializeSimple renders the simple style (path, header, cookie), each
// piece escaped by esc.
func serializeSimple(p param, v any, esc func(string) string) (string, error) {
	if s, ok, err := scalar(v); ok || err != nil {
		return esc(s), err
	}
	items, keys, obj, err := parts(v)
	if err != nil {
		return "", err
	}
	out := make([]string, 0, len(items)*2)
	for i, it := range items {
		switch {
		case obj && p.explode:
			out = append(out, esc(keys[i])+"="+esc(it))
		case obj:
			out = append(out, esc(keys[i]), esc(it))
		default:
			out = append(out, esc(it))
		}
	}
	return strings.Join(out, ","), nil
}

func serializePath(p param, v any) (string, error) {
	esc := pathEscape
	switch p.style {
	case "", styleSimple:
		return serializeSimple(p, v, esc)
	case styleLabel:
		sep := ","
		if p.explode {
			sep = "."
		}
		s, ok, err := scalar(v)
		if err != nil {
			return "", err
		}
		if ok {
			return "." + esc(s), nil
		}
		items, keys, obj, err := parts(v)
		if err != nil {
			return "", err
		}
		var out []string
		for i, it := range items {
			switch {
			case obj && p.explode:
				out = append(out, esc(keys[i])+"="+esc(it))
			case obj:
				out = append(out, esc(keys[i]), esc(it))
			default:
				out = append(out, esc(it))
			}
		}
		return "." + strings.Join(out, sep), nil
	case styleMatrix:
		name := esc(p.name)
		s, ok, err := scalar(v)
		if err != nil {
			return "", err
		}
		if ok {
			return ";" + name + "=" + esc(s), nil
		}
		items, keys, obj, err := parts(v)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		switch {
		case p.explode:
			for i, it := range items {
				k := name
				if obj {
					k = esc(keys[i])
				}
				b.WriteString(";" + k + "=" + esc(it))
			}
		default:
			var out []string
			for i, it := range items {
				if obj {
					out = append(out, esc(keys[i]))
				}
				out = append(out, esc(it))
			}
			b.WriteString(";" + name + "=" + strings.Join(out, ","))
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("path style %q is not one of simple, label, matrix", p.style)
}

func serializeQuery(p param, v any) (string, error) {
	esc := queryEscape
	if p.reserved {
		esc = reservedEscape
	}
	name := queryEscape(p.name)
	s, ok, err := scalar(v)
	if err != nil {
		return "", err
	}
	if ok && p.style != styleDeepObject {
		return name + "=" + esc(s), nil
	}
	items, keys, obj, err := parts(v)
	if err != nil {
		return "", err
	}
	switch p.style {
	case "", styleForm:
		var out []string
		switch {
		case p.explode && obj:
			for i, it := range items {
				out = append(out, queryEscape(keys[i])+"="+esc(it))
			}
			return strings.Join(out, "&"), nil
		case p.explode:
			for _, it := range items {
				out = append(out, name+"="+esc(it))
			}
			return strings.Join(out, "&"), nil
		}
		for i, it := range items {
			if obj {
				out = append(out, esc(keys[i]))
			}
			out = append(out, esc(it))
		}
		return name + "=" + strings.Join(out, ","), nil
	case styleSpaceDelimited, stylePipeDelimited:
		sep := "%20"
		if p.style == stylePipeDelimited {
			sep = "|"
		}
		if p.explode && !obj {
			var out []string
			for _, it := range items {
				out = append(out, name+"="+esc(it))
			}
			return strings.Join(out, "&"), nil
		}
		var out []string
		for i, it := range items {
			if obj {
				out = append(out, esc(keys[i]))
			}
			out = append(out, esc(it))
		}
		return name + "=" + strings.Join(out, sep), nil
	case styleDeepObject:
		if !obj {
			return "", fmt.Errorf("style deepObject takes an object")
		}
		var out []string
		for i, it := range items {
			out = append(out, name+"%5B"+queryEscape(keys[i])+"%5D="+esc(it))
		}
		return strings.Join(out, "&"), nil
	}
	return "", fmt.Errorf("query style %q is not one of form, spaceDelimited, pipeDelimited, deepObject", p.style)
}

// unreserved reports RFC 3986's unreserved characters, which are never
// escaped.
func unreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// percentEscape escapes every byte but the unreserved ones and keep.
func percentEscape(s string, keep func(byte) bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) || (keep != nil && keep(c)) {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// pathEscape escapes a path segment's value: '/', '?', '#' and every other
// reserved character are escaped, so a value cannot change the path.
func pathEscape(s string) string { return percentEscape(s, nil) }

// queryEscape escapes a query name or value.
func queryEscape(s string) string { return percentEscape(s, nil) }

// reservedEscape is queryEscape for allowReserved parameters: RFC 3986's
// reserved characters stay as they are, except those that would end the
// value ('&', '=', '#').
func reservedEscape(s string) string {
	return percentEscape(s, func(c byte) bool {
		return strings.IndexByte(":/?[]@!$'()*+,;", c) >= 0
	})
}

// cookieEscape escapes what a cookie value cannot hold.
func cookieEscape(s string) string {
	return percentEscape(s, func(c byte) bool { return strings.IndexByte("!#$&'()*+/:<>?@[]^`{|}", c) >= 0 })
}
