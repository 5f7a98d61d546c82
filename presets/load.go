package presets

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	kyaml "github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/v2"
	"go.yaml.in/yaml/v3"
)

// Load reads the YAML file at path, applies the CODECALL_ environment
// variables of the running process, and validates the result. See LoadEnv.
func Load(path string) (Config, error) {
	return LoadEnv(path, os.Environ())
}

// LoadEnv is Load with the environment given as "NAME=value" strings, as
// os.Environ returns them. Problems in the file carry its name and line.
// A missing or unreadable file is an error wrapping the os error; every
// problem with the content is reported at once in a *ValidationError.
func LoadEnv(path string, env []string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("presets: read config: %w", err)
	}
	return parseFile(path, data, env)
}

// parseFile parses the contents of the config file at path. Policy paths
// and the embedding model's path in a file are relative to the file, so a
// config and what it names can move together; Load and every reload resolve them the same way.
func parseFile(path string, data []byte, env []string) (Config, error) {
	cfg, err := parse(path, data, env)
	if err != nil {
		return cfg, err
	}
	base := filepath.Dir(path)
	for i, p := range cfg.Policy.Paths {
		if !filepath.IsAbs(p) {
			cfg.Policy.Paths[i] = filepath.Join(base, p)
		}
	}
	if p := cfg.Search.Embeddings.Path; p != "" && !filepath.IsAbs(p) {
		cfg.Search.Embeddings.Path = filepath.Join(base, p)
	}
	return cfg, nil
}

// Parse builds a configuration from YAML data and environment variables
// ("NAME=value", as os.Environ returns them), in this order, each layer
// overriding the one before:
//
//  1. the built-in defaults (Default);
//  2. the limits of the chosen preset, filling vm (the preset is the
//     CODECALL_PRESET variable if set, else the YAML's preset key, else
//     secure);
//  3. the YAML data; empty data means no keys;
//  4. the CODECALL_ environment variables.
//
// It returns a *ValidationError listing every problem: YAML syntax errors
// with their line, unknown keys with the allowed ones, values of the wrong
// type or out of range. Parse(nil, os.Environ()) gives a configuration from
// the environment alone.
func Parse(data []byte, env []string) (Config, error) {
	return parse("", data, env)
}

// parse is Parse with the file name used in problems.
func parse(name string, data []byte, environ []string) (Config, error) {
	var issues []issue
	raw, lines, yamlProblems := readYAML(name, data)

	envs := newEnvLayer(environ)
	k := koanf.New(".")
	if raw != nil {
		if err := k.Load(mapProvider(raw), nil); err != nil {
			return Config{}, fmt.Errorf("presets: merge %s: %w", displayName(name), err)
		}
	}
	if err := k.Load(envs.provider, nil); err != nil {
		return Config{}, fmt.Errorf("presets: read environment: %w", err)
	}
	issues = append(issues, envs.issues...)

	merged := k.Raw()
	cfg := Default()
	if p, ok := merged["preset"].(string); ok {
		if limits, ok := LimitsFor(Name(p)); ok {
			cfg.VM = limits
		}
	}
	d := decoder{}
	d.value(merged, reflect.ValueOf(&cfg).Elem(), keyPath{}, false)
	issues = append(issues, d.issues...)

	// A key that failed to decode still holds its default; checking that
	// default, or anything under it, would only repeat the problem under a
	// misleading message.
	failed := map[string]bool{}
	for _, is := range d.issues {
		failed[is.path.lookup()] = true
	}
	underFailed := func(p keyPath) bool {
		for n := len(p); n > 0; n-- {
			if failed[p[:n].lookup()] {
				return true
			}
		}
		return false
	}
	for _, is := range cfg.issues() {
		if !underFailed(is.path) {
			issues = append(issues, is)
		}
	}

	located := make([]Problem, len(issues))
	for i, is := range issues {
		located[i] = locate(is, name, lines, envs)
	}
	// Read like the file: by line, then the problems the file has no line
	// for, then the environment's.
	rank := func(p Problem) int {
		switch {
		case strings.HasPrefix(p.Source, envSource("")):
			return 2
		case p.Line == 0:
			return 1
		}
		return 0
	}
	sort.SliceStable(located, func(i, j int) bool {
		ri, rj := rank(located[i]), rank(located[j])
		if ri != rj {
			return ri < rj
		}
		return located[i].Line < located[j].Line
	})
	problems := append(yamlProblems, located...)
	if err := validationError(problems); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// locate says where an issue's value came from: the environment variable
// that set it, else the file and the line of the key or its nearest parent.
func locate(is issue, name string, lines map[string]int, envs *envLayer) Problem {
	pr := Problem{Source: is.source, Key: is.path.String(), Message: is.msg}
	if pr.Source != "" {
		return pr
	}
	if v, ok := envs.source(is.path); ok {
		pr.Source = envSource(v)
		return pr
	}
	pr.Source = name
	for n := len(is.path); n > 0; n-- {
		if line, ok := lines[is.path[:n].lookup()]; ok {
			pr.Line = line
			break
		}
	}
	return pr
}

// mapProvider hands an already parsed map to koanf.
type mapProvider map[string]any

func (m mapProvider) ReadBytes() ([]byte, error)    { return nil, errors.New("not supported") }
func (m mapProvider) Read() (map[string]any, error) { return m, nil }

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// readYAML parses data into a map, a line index of its keys, and problems.
// The map is nil when data has no keys or cannot be used.
func readYAML(name string, data []byte) (raw map[string]any, lines map[string]int, problems []Problem) {
	lines = map[string]int{}
	problem := func(line int, format string, args ...any) {
		problems = append(problems, Problem{Source: name, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	yamlError := func(err error) {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			for _, msg := range te.Errors {
				line, text := splitYAMLLine(msg)
				problem(line, "invalid YAML: %s", text)
			}
			return
		}
		line, text := splitYAMLLine(err.Error())
		problem(line, "invalid YAML: %s", text)
	}

	// The node tree gives line numbers and checks the document's shape
	// before koanf's parser turns it into a map.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := guard(func() error { return dec.Decode(&root) }); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, lines, nil
		}
		yamlError(err)
		return nil, lines, problems
	}
	var next yaml.Node
	if err := guard(func() error { return dec.Decode(&next) }); err == nil {
		problem(next.Line, "invalid YAML: a config file holds one document; found another after ---")
		return nil, lines, problems
	} else if !errors.Is(err, io.EOF) {
		yamlError(err)
		return nil, lines, problems
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	switch {
	case doc.Kind == yaml.ScalarNode && doc.Tag == "!!null":
		return nil, lines, nil
	case doc.Kind != yaml.MappingNode:
		problem(doc.Line, "the top level must be a mapping of keys (%s), got %s",
			keysOf(fieldsOf(reflect.TypeFor[Config]())), nodeKind(doc))
		return nil, lines, problems
	}
	indexLines(doc, "", lines)

	err := guard(func() error {
		var err error
		raw, err = kyaml.Parser().Unmarshal(data)
		return err
	})
	if err != nil {
		yamlError(err)
		return nil, lines, problems
	}
	return normalize(raw).(map[string]any), lines, nil
}

// normalize gives every mapping under v string keys. YAML allows keys such
// as 1 or true, which the parser returns as map[any]any at any depth; koanf
// converts only some levels, and such maps cannot become JSON (examples are
// sent to clients as JSON).
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = normalize(x)
		}
		return v
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[fmt.Sprint(k)] = normalize(x)
		}
		return out
	case []any:
		for i, x := range v {
			v[i] = normalize(x)
		}
		return v
	default:
		return v
	}
}

// guard runs a YAML parser step, turning a panic into an error: the parser
// re-panics its own runtime failures, and a config file must never take
// the host process down.
func guard(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("YAML parser failed: %v", r)
		}
	}()
	return f()
}

// indexLines records the line of every key and list item under n, keyed as
// keyPath.lookup does. Aliases are not followed: expanding them could take
// exponential time, and a problem inside one is reported at the alias.
func indexLines(n *yaml.Node, prefix string, lines map[string]int) {
	join := func(name string) string {
		if prefix == "" {
			return name
		}
		return prefix + "\x00" + name
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := join(n.Content[i].Value)
			if _, seen := lines[key]; !seen {
				lines[key] = n.Content[i].Line
			}
			indexLines(n.Content[i+1], key, lines)
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			key := join(strconv.Itoa(i))
			lines[key] = item.Line
			indexLines(item, key, lines)
		}
	}
}

func splitYAMLLine(msg string) (int, string) {
	msg = strings.TrimSpace(msg)
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return line, m[2]
	}
	return 0, strings.TrimPrefix(msg, "yaml: ")
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	default:
		return "something else"
	}
}

func displayName(name string) string {
	if name == "" {
		return "config"
	}
	return name
}
