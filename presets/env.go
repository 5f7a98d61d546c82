package presets

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/knadh/koanf/providers/env/v2"
)

// EnvPrefix starts every environment variable that overrides a key. The
// whole CODECALL_ namespace belongs to configuration keys (EnvGatewayDepth
// aside): a variable with the prefix that names no key is an error, so a
// typo cannot be silently ignored.
const EnvPrefix = "CODECALL_"

// EnvGatewayDepth is the one CODECALL_ variable that is not a key. A
// gateway (package gateway) sets it in the environment of every stdio
// upstream it starts, to the number of gateways above that upstream, so
// that a chain of gateways starting one another stops (gateway.MaxDepth).
// It carries state from one process to the next, not configuration, so
// loading skips it; no key can be spelled this way, since there is no
// top-level key gatewayDepth.
const EnvGatewayDepth = EnvPrefix + "GATEWAY_DEPTH"

// envNesting separates nesting levels in a variable name; a single
// underscore is allowed inside a key name (MAX_TOOL_CALLS), so it cannot.
const envNesting = "__"

// envLayer reads the CODECALL_ variables of env into a nested map and
// remembers which variable set which key, so problems can name it.
type envLayer struct {
	provider *env.Env
	sources  map[string]string // keyPath.lookup() -> variable name
	issues   []issue
}

func newEnvLayer(environ []string) *envLayer {
	l := &envLayer{sources: map[string]string{}}
	l.provider = env.Provider(".", env.Opt{
		Prefix:        EnvPrefix,
		EnvironFunc:   func() []string { return environ },
		TransformFunc: l.transform,
	})
	return l
}

// transform maps CODECALL_VM__TIMEOUT=5s to ("vm.timeout", "5s"). Keys are
// matched case-insensitively, ignoring single underscores, against the real
// camelCase keys, so that the value lands where the YAML key would.
func (l *envLayer) transform(name, value string) (string, any) {
	if name == EnvGatewayDepth {
		return "", nil
	}
	p, t, msg := resolveEnvKey(strings.TrimPrefix(name, EnvPrefix))
	if msg != "" {
		l.issues = append(l.issues, issue{source: envSource(name), msg: msg})
		return "", nil
	}
	if prev, dup := l.sources[p.lookup()]; dup {
		l.issues = append(l.issues, issue{source: envSource(name), path: p,
			msg: fmt.Sprintf("also set by %s; set it once", prev)})
		return "", nil
	}
	l.sources[p.lookup()] = name
	dotted := make([]string, len(p))
	for i, s := range p {
		dotted[i] = s.name
	}
	if t.Kind() == reflect.Slice {
		return strings.Join(dotted, "."), splitList(value)
	}
	return strings.Join(dotted, "."), value
}

// source returns the variable that set p or one of its parents.
func (l *envLayer) source(p keyPath) (string, bool) {
	for n := len(p); n > 0; n-- {
		if name, ok := l.sources[p[:n].lookup()]; ok {
			return name, true
		}
	}
	return "", false
}

// resolveEnvKey finds the key a variable name (without the prefix) names,
// and the key's type; msg says why when it names none.
func resolveEnvKey(rest string) (p keyPath, t reflect.Type, msg string) {
	t = reflect.TypeFor[Config]()
	parts := strings.Split(rest, envNesting)
	for i, part := range parts {
		fields := fieldsOf(t)
		f, ok := findEnvField(fields, part)
		if !ok {
			where := "the top level"
			if len(p) > 0 {
				where = p.String()
			}
			msg = fmt.Sprintf("names no configuration key: %s has no key %q; allowed keys: %s (use %q between levels)",
				where, part, keysOf(fields), envNesting)
			if near, ok := nearest(part, fieldKeys(fields)); ok {
				fixed := make([]string, 0, len(parts))
				for _, s := range p {
					fixed = append(fixed, envName(s.name))
				}
				fixed = append(fixed, envName(near))
				fixed = append(fixed, parts[i+1:]...)
				msg += fmt.Sprintf(" (did you mean %s%s?)", EnvPrefix, strings.Join(fixed, envNesting))
			}
			return nil, nil, msg
		}
		p = p.field(f.key)
		t = f.typ
		switch last := i == len(parts)-1; {
		case isKeyedSection(t), t.Kind() == reflect.Slice && isSection(t.Elem()):
			return nil, nil, fmt.Sprintf("%s cannot be set from the environment; set it in the config file", p)
		case isSection(t) && last:
			return nil, nil, fmt.Sprintf("%s is a section; set one of its keys (%s) as %s%s%s<KEY>",
				p, keysOf(fieldsOf(t)), EnvPrefix, strings.ToUpper(p.String()), envNesting)
		case !isSection(t) && !last:
			return nil, nil, fmt.Sprintf("%s is a single value, not a section", p)
		}
	}
	return p, t, ""
}

func findEnvField(fields []fieldInfo, part string) (fieldInfo, bool) {
	norm := strings.ReplaceAll(part, "_", "")
	if norm == "" {
		return fieldInfo{}, false
	}
	for _, f := range fields {
		if strings.EqualFold(f.key, norm) {
			return f, true
		}
	}
	return fieldInfo{}, false
}

// splitList splits a comma-separated list, leaving commas inside {...}
// alone because they separate glob alternatives. Items are trimmed and empty
// ones dropped, so an empty value gives an empty list.
func splitList(s string) []any {
	out := []any{}
	depth, start := 0, 0
	flush := func(end int) {
		if item := strings.TrimSpace(s[start:end]); item != "" {
			out = append(out, item)
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++ // an escaped character is never a separator
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				flush(i)
				start = i + 1
			}
		}
	}
	flush(len(s))
	return out
}

// envSource is the Problem.Source of a value set by the named variable.
func envSource(name string) string { return "env " + name }
