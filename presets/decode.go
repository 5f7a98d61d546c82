package presets

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
)

var durationType = reflect.TypeFor[time.Duration]()

// fieldInfo is one configuration key of a struct.
type fieldInfo struct {
	key   string // the koanf tag: the key as written in YAML
	index int
	typ   reflect.Type
	bytes bool // tagged unit:"bytes"
}

// fieldsOf lists the keys of a configuration struct in declaration order.
func fieldsOf(t reflect.Type) []fieldInfo {
	var out []fieldInfo
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("koanf"), ",")
		if key == "" || key == "-" || !f.IsExported() {
			continue
		}
		out = append(out, fieldInfo{key: key, index: i, typ: f.Type, bytes: f.Tag.Get("unit") == "bytes"})
	}
	return out
}

func keysOf(fields []fieldInfo) string {
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.key
	}
	return strings.Join(keys, ", ")
}

// isSection reports whether values of t are mappings of known keys.
func isSection(t reflect.Type) bool { return t.Kind() == reflect.Struct }

// isKeyedSection reports whether t is a mapping from user-chosen keys to
// sections, like tools.
func isKeyedSection(t reflect.Type) bool {
	return t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && isSection(t.Elem())
}

// decoder writes a merged configuration map onto a Config, one key at a time,
// so that each bad key becomes its own issue with its full path. A whole-map
// mapstructure decode would stop at, or merge into one string, the problems
// this reports separately, and could not list the allowed keys.
type decoder struct {
	issues []issue
}

func (d *decoder) add(p keyPath, format string, args ...any) {
	d.issues = append(d.issues, newIssue(p, format, args...))
}

// value decodes raw into v. A nil raw (an absent key, or a YAML key with an
// empty value) leaves v as it is.
func (d *decoder) value(raw any, v reflect.Value, p keyPath, bytes bool) {
	if raw == nil {
		return
	}
	t := v.Type()
	switch {
	case isSection(t):
		d.section(raw, v, p)
	case isKeyedSection(t):
		d.keyedSection(raw, v, p)
	case t.Kind() == reflect.Slice && isSection(t.Elem()):
		d.sectionList(raw, v, p)
	case t.Kind() == reflect.Slice && isList(raw):
		d.list(raw.([]any), v, p)
	default:
		d.leaf(raw, v, p, bytes)
	}
}

func (d *decoder) section(raw any, v reflect.Value, p keyPath) {
	fields := fieldsOf(v.Type())
	m, ok := raw.(map[string]any)
	if !ok {
		d.add(p, "want a mapping with keys %s, got %s", keysOf(fields), describe(raw))
		return
	}
	for _, k := range sortedKeys(m) {
		f, ok := findField(fields, k)
		if !ok {
			msg := fmt.Sprintf("unknown key; allowed keys: %s", keysOf(fields))
			if near, ok := nearest(k, fieldKeys(fields)); ok {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
			d.add(p.field(k), "%s", msg)
			continue
		}
		d.value(m[k], v.Field(f.index), p.field(k), f.bytes)
	}
}

func (d *decoder) keyedSection(raw any, v reflect.Value, p keyPath) {
	m, ok := raw.(map[string]any)
	if !ok {
		d.add(p, "want a mapping from tool names or globs to settings, got %s", describe(raw))
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	for _, k := range sortedKeys(m) {
		key := reflect.ValueOf(k).Convert(v.Type().Key())
		elem := reflect.New(v.Type().Elem()).Elem()
		if old := v.MapIndex(key); old.IsValid() {
			elem.Set(old)
		}
		d.value(m[k], elem, p.key(k), false)
		v.SetMapIndex(key, elem)
	}
}

func (d *decoder) sectionList(raw any, v reflect.Value, p keyPath) {
	items, ok := raw.([]any)
	if !ok {
		d.add(p, "want a list, got %s", describe(raw))
		return
	}
	out := reflect.MakeSlice(v.Type(), len(items), len(items))
	for i, item := range items {
		if item == nil {
			d.add(p.index(i), "empty list item")
			continue
		}
		d.value(item, out.Index(i), p.index(i), false)
	}
	v.Set(out)
}

// list decodes a list of plain values item by item, so that a bad item is
// reported with its index and line.
func (d *decoder) list(items []any, v reflect.Value, p keyPath) {
	out := reflect.MakeSlice(v.Type(), len(items), len(items))
	for i, item := range items {
		if item == nil {
			d.add(p.index(i), "empty list item")
			continue
		}
		d.leaf(item, out.Index(i), p.index(i), false)
	}
	v.Set(out)
}

func isList(raw any) bool {
	_, ok := raw.([]any)
	return ok
}

func (d *decoder) leaf(raw any, v reflect.Value, p keyPath, bytes bool) {
	out := reflect.New(v.Type())
	hook := mapstructure.DecodeHookFunc(convertHook)
	if bytes {
		// First, so that "64KiB" is a number before convertHook sees it.
		hook = mapstructure.ComposeDecodeHookFunc(byteSizeHook, convertHook)
	}
	// Strict typing: convertHook does the conversions a config needs, and
	// nothing else slips through.
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{DecodeHook: hook, Result: out.Interface()})
	if err == nil {
		err = dec.Decode(raw)
	}
	if err != nil {
		var ce *convError
		if errors.As(err, &ce) {
			d.add(p, "%s", ce.msg)
		} else {
			d.add(p, "want %s, got %s", want(v.Type(), bytes), describe(raw))
		}
		return
	}
	v.Set(out.Elem())
}

func findField(fields []fieldInfo, key string) (fieldInfo, bool) {
	for _, f := range fields {
		if f.key == key {
			return f, true
		}
	}
	return fieldInfo{}, false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// convError is a conversion failure whose message is already complete.
type convError struct{ msg string }

func (e *convError) Error() string { return e.msg }

func convErrorf(format string, args ...any) error {
	return &convError{msg: fmt.Sprintf(format, args...)}
}

// byteSizeHook turns byte-size strings such as "64KiB" into int64.
func byteSizeHook(from, to reflect.Type, data any) (any, error) {
	if from.Kind() != reflect.String || to.Kind() != reflect.Int64 {
		return data, nil
	}
	n, err := ParseByteSize(reflect.ValueOf(data).String())
	if err != nil {
		return nil, &convError{msg: err.Error()}
	}
	return n, nil
}

// convertHook performs the conversions a configuration needs and refuses
// the lossy ones mapstructure's weak typing would allow: environment strings
// become numbers, booleans and durations; floats become integers only when
// whole; a bare number is not a duration (5 would mean 5ns); a boolean is
// not a string or a number.
func convertHook(from, to reflect.Type, data any) (any, error) {
	val := reflect.ValueOf(data)
	switch {
	case to == durationType:
		return toDuration(val)
	case isInt(to.Kind()):
		return toInt(val)
	case isFloat(to.Kind()):
		if from.Kind() == reflect.String {
			f, err := strconv.ParseFloat(strings.TrimSpace(val.String()), 64)
			if err != nil {
				return nil, convErrorf("want a number, got %q", val.String())
			}
			return f, nil
		}
	case to.Kind() == reflect.Bool:
		if from.Kind() == reflect.String {
			b, err := strconv.ParseBool(strings.TrimSpace(val.String()))
			if err != nil {
				return nil, convErrorf("want true or false, got %q", val.String())
			}
			return b, nil
		}
	case to.Kind() == reflect.String:
		switch {
		case isInt(from.Kind()), isUint(from.Kind()), isFloat(from.Kind()):
			// An unquoted YAML number is still a fine tag or appId.
			return fmt.Sprint(data), nil
		case from.Kind() == reflect.Bool:
			return nil, convErrorf("want a string, got %v (quote it)", data)
		}
	case to.Kind() == reflect.Slice && to.Elem().Kind() == reflect.String && from.Kind() == reflect.String:
		// A single pattern where a list is expected.
		return []string{val.String()}, nil
	}
	return data, nil
}

func toDuration(v reflect.Value) (any, error) {
	switch {
	case v.Type() == durationType:
		return v.Interface(), nil
	case v.Kind() == reflect.String:
		d, err := time.ParseDuration(strings.TrimSpace(v.String()))
		if err != nil {
			return nil, convErrorf("invalid duration %q: want a Go duration such as \"3.5s\" or \"250ms\"", v.String())
		}
		return d, nil
	case isInt(v.Kind()) && v.Int() == 0, isUint(v.Kind()) && v.Uint() == 0, isFloat(v.Kind()) && v.Float() == 0:
		return time.Duration(0), nil
	default:
		return nil, convErrorf("want a duration with a unit such as \"3.5s\" or \"250ms\", got %s", describe(v.Interface()))
	}
}

func toInt(v reflect.Value) (any, error) {
	switch {
	case isInt(v.Kind()):
		return v.Int(), nil
	case isUint(v.Kind()):
		if v.Uint() > math.MaxInt64 {
			return nil, convErrorf("%d is too large", v.Uint())
		}
		return int64(v.Uint()), nil
	case isFloat(v.Kind()):
		f := v.Float()
		if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
			return nil, convErrorf("want an integer, got %v", f)
		}
		return int64(f), nil
	case v.Kind() == reflect.String:
		n, err := strconv.ParseInt(strings.TrimSpace(v.String()), 10, 64)
		if err != nil {
			return nil, convErrorf("want an integer, got %q", v.String())
		}
		return n, nil
	default:
		return nil, convErrorf("want an integer, got %s", describe(v.Interface()))
	}
}

func isInt(k reflect.Kind) bool { return k >= reflect.Int && k <= reflect.Int64 }

func isUint(k reflect.Kind) bool { return k >= reflect.Uint && k <= reflect.Uintptr }

func isFloat(k reflect.Kind) bool { return k == reflect.Float32 || k == reflect.Float64 }

// want names what a key of type t accepts.
func want(t reflect.Type, bytes bool) string {
	switch {
	case bytes:
		return `a byte size such as 65536 or "64KiB"`
	case t == durationType:
		return `a duration such as "3.5s" or "250ms"`
	case t.Kind() == reflect.Pointer:
		return want(t.Elem(), false)
	case t.Kind() == reflect.Bool:
		return "true or false"
	case isInt(t.Kind()):
		return "an integer"
	case isFloat(t.Kind()):
		return "a number"
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return "a list of strings"
	case t.Kind() == reflect.Map:
		return "a mapping"
	default:
		return t.String()
	}
}

// describe names what a decoded YAML or environment value is.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "nothing"
	case string:
		return strconv.Quote(v)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	default:
		return fmt.Sprint(v)
	}
}
