package presets

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		line int
		key  string
		want string // substring of the message
	}{
		// Malformed YAML. The YAML parser reports the line where the
		// construct it could not finish began.
		{"unclosed flow", "mode: codecall_only\nvm: {timeout: 1s\n", 1, "", "invalid YAML: did not find expected ',' or '}'"},
		{"bad indentation", "vm:\n  timeout: 1s\n maxToolCalls: 3\n", 2, "", "invalid YAML: did not find expected key"},
		{"unclosed quote", "mode: \"codecall_only\n", 2, "", "invalid YAML: found unexpected end of stream"},
		{"tab indentation", "vm:\n\ttimeout: 1s\n", 2, "", "invalid YAML"},
		{"duplicate key", "mode: codecall_only\nmode: metadata_driven\n", 2, "", `mapping key "mode" already defined at line 1`},
		{"two documents", "mode: codecall_only\n---\nmode: x\n", 2, "", "one document"},
		{"top-level list", "- mode\n", 1, "", "the top level must be a mapping of keys (mode, preset"},
		{"top-level scalar", "hello\n", 1, "", `got the value "hello"`},

		// Unknown keys.
		{"unknown top-level key", "mode: codecall_only\ncolour: red\n", 2, "colour", "unknown key; allowed keys: mode, preset, surfaces, metaTools, search, describe, include, exclude, tools, directCalls, audit, redaction, vm"},
		{"wrong case", "Mode: codecall_only\n", 1, "Mode", `did you mean "mode"?`},
		{"unknown vm key", "vm:\n  timout: 1s\n", 2, "vm.timout", "unknown key; allowed keys: timeout, maxToolCalls, maxTimers, maxConcurrency"},
		{"unknown tools entry key", "tools:\n  \"billing.*\":\n    appID: billing\n", 3, `tools["billing.*"].appID`, `allowed keys: visibleInListTools, enabledInCodeCall, appId, tags, source, examples, requiresApproval, timeout (did you mean "appId"?)`},
		{"unknown example key", "tools:\n  a:\n    examples:\n      - input: {}\n        result: 1\n", 5, `tools["a"].examples[0].result`, "allowed keys: description, input, output"},
		{"unknown nested key", "search:\n  top: 3\n", 2, "search.top", "allowed keys: topK, maxTopK, lowRelevance"},

		// Unknown values.
		{"unknown mode", "mode: all\n", 1, "mode", `unknown mode "all"; allowed: codecall_only, codecall_opt_in, metadata_driven`},
		{"unknown preset", "preset: fast\n", 1, "preset", `unknown preset "fast"; allowed: locked_down, secure, balanced, experimental`},
		{"unknown regex", "vm: {regex: pcre}\n", 1, "vm.regex", `unknown regex mode "pcre"; allowed: none, literal, full`},
		{"unknown isolation", "vm: {isolation: vm}\n", 1, "vm.isolation", `unknown isolation "vm"; allowed: process, inprocess`},
		{"policy query not under data", "policy: {query: codecall.decision}\n", 1, "policy.query", `must be a reference under data, e.g. "data.codecall.decision", got "codecall.decision"`},
		{"policy query with a bad part", "policy: {query: data.code-call.decision}\n", 1, "policy.query", `"data.code-call.decision" is not a valid Rego reference: each part after "data." must be a name of letters, digits and underscores`},
		{"empty policy path", "policy: {paths: ['']}\n", 1, "policy.paths[0]", "must name a .rego file, a data file or a directory, got an empty string"},
		{"zero approval timeout", "approval: {timeout: 0s}\n", 1, "approval.timeout", `must be a positive duration such as "2m", got 0s`},
		{"unknown source", "tools:\n  a: {source: grpc}\n", 2, `tools["a"].source`, `unknown source "grpc"; allowed: inline, openapi, upstream`},
		{"negative tool timeout", "tools:\n  \"github.*\": {timeout: -1s}\n", 2, `tools["github.*"].timeout`, `must be a duration of at least 1ms such as "30s"`},
		{"tool timeout under a millisecond", "tools:\n  a: {timeout: 10us}\n", 2, `tools["a"].timeout`, "at least 1ms"},
		{"tool timeout without a unit", "tools:\n  a: {timeout: 30}\n", 2, `tools["a"].timeout`, `want a duration with a unit`},

		// Wrong types.
		{"section as scalar", "vm: fast\n", 1, "vm", "want a mapping with keys timeout, maxToolCalls"},
		{"tools as list", "tools: [a]\n", 1, "tools", "want a mapping from tool names or globs to settings, got a list"},
		{"examples as mapping", "tools:\n  a: {examples: {input: {}}}\n", 2, `tools["a"].examples`, "want a list, got a mapping"},
		{"int as string", "vm: {maxToolCalls: lots}\n", 1, "vm.maxToolCalls", `want an integer, got "lots"`},
		{"fractional int", "search: {topK: 2.5}\n", 1, "search.topK", "want an integer, got 2.5"},
		{"int as bool", "vm: {maxToolCalls: true}\n", 1, "vm.maxToolCalls", "want an integer, got true"},
		{"huge int", "vm: {maxToolCalls: 1e30}\n", 1, "vm.maxToolCalls", "want an integer"},
		{"bare number duration", "vm: {timeout: 5}\n", 1, "vm.timeout", `want a duration with a unit such as "3.5s"`},
		{"bad duration", "vm: {timeout: 5 seconds}\n", 1, "vm.timeout", `invalid duration "5 seconds"`},
		{"bad byte size", "vm: {memoryBytes: 12QB}\n", 1, "vm.memoryBytes", `unknown unit "QB"`},
		{"fractional byte size", "vm: {memoryBytes: 1.5B}\n", 1, "vm.memoryBytes", "not a whole number of bytes"},
		{"request cap", "transport: {maxRequestBytes: 100B}\n", 1, "transport.maxRequestBytes", "must be between 1KiB and 1GiB, got 100 bytes"},
		{"bool as string", "tools:\n  a: {appId: true}\n", 2, `tools["a"].appId`, "want a string, got true (quote it)"},
		{"bool", "vm: {allowLoops: sometimes}\n", 1, "vm.allowLoops", `want true or false, got "sometimes"`},
		{"list item", "include:\n  - a\n  - {x: 1}\n", 3, "include[1]", "want a string, got a mapping"},
		{"empty list item", "tools:\n  a:\n    examples:\n      -\n", 4, `tools["a"].examples[0]`, "empty list item"},

		// Numbers out of range.
		{"topK zero", "search: {topK: 0}\n", 1, "search.topK", "must be at least 1, got 0"},
		{"maxTopK below topK", "search: {topK: 20, maxTopK: 10}\n", 1, "search.maxTopK", "must be at least search.topK (20), got 10"},
		{"maxTopK zero", "search: {topK: 1, maxTopK: 0}\n", 1, "search.maxTopK", "must be at least 1"},
		{"lowRelevance above 1", "search: {lowRelevance: 1.5}\n", 1, "search.lowRelevance", "between 0 and 1"},
		{"lowRelevance negative", "search: {lowRelevance: -0.1}\n", 1, "search.lowRelevance", "between 0 and 1"},
		{"lowRelevance NaN", "search: {lowRelevance: .nan}\n", 1, "search.lowRelevance", "between 0 and 1"},
		{"unknown embeddings provider", "search: {embeddings: {provider: onnx}}\n", 1, "search.embeddings.provider", `unknown provider "onnx"; allowed: "" (off), openai, model2vec`},
		{"openai without url", "search: {embeddings: {provider: openai, model: m}}\n", 1, "search.embeddings.url", "provider openai needs the base URL"},
		{"openai bad url", "search: {embeddings: {provider: openai, url: 'localhost:11434', model: m}}\n", 1, "search.embeddings.url", `must be an http:// or https:// URL with a host, got "localhost:11434"`},
		{"openai without model", "search: {embeddings: {provider: openai, url: 'http://localhost:11434'}}\n", 1, "search.embeddings.model", "provider openai needs the server's model name"},
		{"openai key in apiKeyEnv", "search: {embeddings: {provider: openai, url: 'http://h', model: m, apiKeyEnv: 'sk-abc123'}}\n", 1, "search.embeddings.apiKeyEnv", "must name an environment variable"},
		{"openai with path", "search: {embeddings: {provider: openai, url: 'http://h', model: m, path: models}}\n", 1, "search.embeddings.path", `is not used by provider "openai"`},
		{"model2vec without path", "search: {embeddings: {provider: model2vec}}\n", 1, "search.embeddings.path", "provider model2vec needs the model directory"},
		{"model2vec with url", "search: {embeddings: {provider: model2vec, path: m, url: 'http://h'}}\n", 1, "search.embeddings.url", `is not used by provider "model2vec"`},
		{"embeddings weight above 1", "search: {embeddings: {weight: 1.5}}\n", 1, "search.embeddings.weight", "must be between 0 and 1, got 1.5"},
		{"embeddings weight NaN", "search: {embeddings: {weight: .nan}}\n", 1, "search.embeddings.weight", "must be between 0 and 1"},
		{"embeddings weight zero", "search: {embeddings: {provider: model2vec, path: m, weight: 0}}\n", 1, "search.embeddings.weight", "must be above 0 when a provider is set"},
		{"maxDefinitions zero", "describe: {maxDefinitions: 0}\n", 1, "describe.maxDefinitions", "must be at least 1"},
		{"timeout zero", "vm: {timeout: 0s}\n", 1, "vm.timeout", "must be positive"},
		{"timeout negative", "vm: {timeout: -1s}\n", 1, "vm.timeout", "must be positive"},
		{"maxToolCalls zero", "vm: {maxToolCalls: 0}\n", 1, "vm.maxToolCalls", "must be at least 1"},
		{"maxConcurrency negative", "vm: {maxConcurrency: -2}\n", 1, "vm.maxConcurrency", "must be at least 1"},
		{"regexTimeout negative", "preset: balanced\nvm: {regexTimeout: -1ms}\n", 2, "vm.regexTimeout", "must not be negative"},
		{"full regex without timeout", "preset: secure\nvm: {regex: full}\n", 2, "vm.regexTimeout", `must be positive when vm.regex is "full"`},
		{"maxLogBytes zero", "vm: {maxLogBytes: 0}\n", 1, "vm.maxLogBytes", "must be a positive byte size"},
		{"maxResultBytes negative", "vm: {maxResultBytes: -1}\n", 1, "vm.maxResultBytes", "must be a positive byte size"},
		{"memoryBytes zero", "vm: {memoryBytes: 0KiB}\n", 1, "vm.memoryBytes", "must be a positive byte size"},
		{"maxScriptBytes zero", "vm: {maxScriptBytes: 0}\n", 1, "vm.maxScriptBytes", "must be a positive byte size"},

		// Globs and names.
		{"bad include glob", "include: [\"a.{b\"]\n", 1, "include[0]", `invalid glob "a.{b"`},
		{"bad exclude glob", "exclude:\n  - ok.*\n  - \"[a\"\n", 3, "exclude[1]", `invalid glob "[a"`},
		{"empty glob", "exclude: [\"\"]\n", 1, "exclude[0]", "empty glob pattern"},
		{"bad tools key", "tools:\n  \"a.{b\": {appId: x}\n", 2, `tools["a.{b"]`, `invalid glob "a.{b"`},
		{"bad allowedTools glob", "directCalls:\n  allowedTools: [\"x[\"]\n", 2, "directCalls.allowedTools[0]", "invalid glob"},
		{"prefix with space", "metaTools: {prefix: \"code call.\"}\n", 1, "metaTools.prefix", `contains ' '`},
		{"prefix with slash", "metaTools: {prefix: \"cc/\"}\n", 1, "metaTools.prefix", "only ASCII letters, digits"},
		{"prefix too long", "metaTools: {prefix: " + strings.Repeat("p", 57) + "}\n", 1, "metaTools.prefix", "limit is 64"},
		{"empty tag", "tools:\n  a: {tags: [ok, \" \"]}\n", 2, `tools["a"].tags[1]`, "empty tag"},
		{"example without input", "tools:\n  a:\n    examples:\n      - output: 1\n", 4, `tools["a"].examples[0].input`, "required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), nil)
			p := onlyProblem(t, err)
			if p.Line != tt.line || p.Key != tt.key || !strings.Contains(p.Message, tt.want) {
				t.Errorf("problem = %+v\nwant line %d key %q message containing %q", p, tt.line, tt.key, tt.want)
			}
		})
	}
}

func TestParseAcceptsEdgeValues(t *testing.T) {
	for _, y := range []string{
		"metaTools: {prefix: \"\"}\n",
		"metaTools: {prefix: " + strings.Repeat("p", 56) + "}\n",
		"metaTools: {prefix: cc-1.x_}\n",
		"search: {topK: 50, maxTopK: 50, lowRelevance: 0}\n",
		"search: {lowRelevance: 1}\n",
		"vm: {regexTimeout: 0}\n",
		"preset: balanced\nvm: {regex: none, regexTimeout: 0}\n",
		"vm: {maxToolCalls: \"12\", timeout: \" 3s \"}\n",
		"vm: {maxToolCalls: 12.0}\n",
		"tools:\n  a: {}\n  b:\n  c: {tags: []}\n",
		"tools:\n  \"{a,b}.[!x]*\": {appId: ab}\n",
		"include: []\nexclude: ~\n",
		"vm:\n",
		"base: &b {appId: x}\n"[:0] + "tools:\n  a: &b {appId: x}\n  c: *b\n",
	} {
		if _, err := Parse([]byte(y), nil); err != nil {
			t.Errorf("Parse(%q): %v", y, err)
		}
	}
}

func TestEveryProblemAtOnce(t *testing.T) {
	yaml := `mode: all
preset: fast
colour: red
vm:
  timout: 1s
  maxToolCalls: 0
tools:
  "a.{b": {appID: x}
search: {topK: 0}
`
	_, err := Parse([]byte(yaml), []string{"CODECALL_VM__MAXCONCURRENCY=0", "CODECALL_NOPE=1"})
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v", err)
	}
	want := []string{
		`line 1: mode: unknown mode "all"`,
		`line 2: preset: unknown preset "fast"`,
		`line 3: colour: unknown key`,
		`line 5: vm.timout: unknown key`,
		`line 6: vm.maxToolCalls: must be at least 1`,
		`line 8: tools["a.{b"].appID: unknown key`,
		`line 8: tools["a.{b"]: invalid glob`,
		`line 9: search.topK: must be at least 1`,
		`env CODECALL_NOPE: names no configuration key`,
		`env CODECALL_VM__MAXCONCURRENCY: vm.maxConcurrency: must be at least 1`,
	}
	if len(ve.Problems) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(ve.Problems), len(want), err)
	}
	for i, w := range want {
		if got := ve.Problems[i].String(); !strings.HasPrefix(got, w) {
			t.Errorf("problem %d = %q, want prefix %q", i, got, w)
		}
	}
	lines := strings.Split(err.Error(), "\n")
	if lines[0] != "invalid configuration (10 problems):" || len(lines) != 11 {
		t.Errorf("Error() = %q, want a header and one line per problem", err)
	}
}

// A problem the file has no line for (maxTopK keeps its default) points at
// the nearest key the file does have.
func TestProblemLineOfParent(t *testing.T) {
	_, err := Parse([]byte("mode: codecall_only\nsearch:\n  topK: 60\n"), nil)
	p := onlyProblem(t, err)
	if p.Key != "search.maxTopK" || p.Line != 2 {
		t.Errorf("problem = %+v, want search.maxTopK at line 2", p)
	}
}

func TestValidate(t *testing.T) {
	yes := true
	tests := []struct {
		name   string
		modify func(c *Config)
		keys   []string
	}{
		{"default", func(*Config) {}, nil},
		{"zero config", func(c *Config) { *c = Config{} }, []string{
			"mode", "preset", "surfaces", "search.topK", "search.maxTopK", "describe.maxDefinitions",
			"vm.timeout", "vm.maxToolCalls", "vm.maxTimers", "vm.maxConcurrency", "vm.regex",
			"vm.maxLogBytes", "vm.maxResultBytes", "vm.memoryBytes", "vm.maxScriptBytes", "vm.maxScriptLines", "vm.maxNestingDepth", "vm.maxStackDepth", "vm.isolation",
			"policy.query", "approval.timeout", "sandbox.poolSize", "sandbox.queueTimeout", "transport.maxRequestBytes",
		}},
		{"request cap too small", func(c *Config) { c.Transport.MaxRequestBytes = 512 }, []string{"transport.maxRequestBytes"}},
		{"request cap too large", func(c *Config) { c.Transport.MaxRequestBytes = 2 << 30 }, []string{"transport.maxRequestBytes"}},
		{"request cap at the bounds", func(c *Config) { c.Transport.MaxRequestBytes = 1 << 10 }, nil},
		{"sandbox", func(c *Config) {
			c.Sandbox = SandboxConfig{PoolSize: 4, MaxWorkers: 2, QueueTimeout: -1, Command: "codecall-worker", Cgroup: "sometimes"}
		},
			[]string{"sandbox.maxWorkers", "sandbox.queueTimeout", "sandbox.cgroup", "sandbox.command"}},
		{"sandbox too large", func(c *Config) { c.Sandbox = SandboxConfig{PoolSize: 300, MaxWorkers: 300, QueueTimeout: 1} },
			[]string{"sandbox.poolSize", "sandbox.maxWorkers"}},
		{"per-session limits", func(c *Config) { c.Sandbox.MaxRunningPerSession, c.Sandbox.MaxQueuedPerSession = 9, -1 },
			[]string{"sandbox.maxRunningPerSession", "sandbox.maxQueuedPerSession"}},
		{"per-session limits too low or too high", func(c *Config) { c.Sandbox.MaxRunningPerSession, c.Sandbox.MaxQueuedPerSession = -1, 5000 },
			[]string{"sandbox.maxRunningPerSession", "sandbox.maxQueuedPerSession"}},
		{"per-session limits at the bounds", func(c *Config) { c.Sandbox.MaxRunningPerSession, c.Sandbox.MaxQueuedPerSession = 8, 4096 }, nil},
		{"banned identifiers", func(c *Config) { c.VM.BannedIdentifiers = []string{"ok", "", "a.b"} },
			[]string{"vm.bannedIdentifiers[1]", "vm.bannedIdentifiers[2]"}},
		{"mode", func(c *Config) { c.Mode = "x" }, []string{"mode"}},
		{"both surfaces", func(c *Config) { c.Surfaces = []Surface{SurfaceCodeMode, SurfaceCodeCall} }, nil},
		{"no surface", func(c *Config) { c.Surfaces = []Surface{} }, []string{"surfaces"}},
		{"unknown and repeated surfaces", func(c *Config) { c.Surfaces = []Surface{"codemode", "mcp", "codemode"} },
			[]string{"surfaces[1]", "surfaces[2]"}},
		{"NaN", func(c *Config) { c.Search.LowRelevance = math.NaN() }, []string{"search.lowRelevance"}},
		{"globs", func(c *Config) {
			c.Include = []string{"ok", "[x"}
			c.DirectCalls.AllowedTools = []string{"{"}
			c.Tools = map[string]ToolOverride{"b[": {}, "ok.*": {Source: "ftp", RequiresApproval: &yes}}
		}, []string{"include[1]", `tools["b["]`, `tools["ok.*"].source`, "directCalls.allowedTools[0]"}},
		{"examples", func(c *Config) {
			c.Tools = map[string]ToolOverride{"t": {Examples: []ToolExample{{Input: map[string]any{}}, {Description: "x"}}}}
		}, []string{`tools["t"].examples[1].input`}},
		{"regex timeout", func(c *Config) { c.VM.Regex, c.VM.RegexTimeout = RegexFull, 0 }, []string{"vm.regexTimeout"}},
		{"regex timeout set", func(c *Config) { c.VM.Regex, c.VM.RegexTimeout = RegexFull, time.Millisecond }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.modify(&c)
			err := c.Validate()
			var keys []string
			var ve *ValidationError
			if errors.As(err, &ve) {
				for _, p := range ve.Problems {
					if p.Source != "" || p.Line != 0 {
						t.Errorf("problem from Go has a source: %+v", p)
					}
					keys = append(keys, p.Key)
				}
			} else if err != nil {
				t.Fatalf("err = %v", err)
			}
			if strings.Join(keys, " ") != strings.Join(tt.keys, " ") {
				t.Errorf("problem keys = %q, want %q\n%v", keys, tt.keys, err)
			}
		})
	}
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{Source: "c.yaml", Line: 3, Key: "vm.timeout", Message: "bad"}, "c.yaml:3: vm.timeout: bad"},
		{Problem{Source: "c.yaml", Key: "vm.timeout", Message: "bad"}, "c.yaml: vm.timeout: bad"},
		{Problem{Line: 3, Message: "invalid YAML: x"}, "line 3: invalid YAML: x"},
		{Problem{Source: "env CODECALL_X", Message: "names no key"}, "env CODECALL_X: names no key"},
		{Problem{Key: "mode", Message: "bad"}, "mode: bad"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
	one := &ValidationError{Problems: []Problem{{Key: "mode", Message: "bad"}}}
	if got := one.Error(); got != "invalid configuration: mode: bad" {
		t.Errorf("Error() = %q", got)
	}
}

func TestMetaToolName(t *testing.T) {
	c := Default()
	for short, want := range map[string]string{
		MetaSearch: "codecall.search", MetaDescribe: "codecall.describe",
		MetaExecute: "codecall.execute", MetaInvoke: "codecall.invoke",
	} {
		if got := c.MetaToolName(short); got != want {
			t.Errorf("MetaToolName(%q) = %q, want %q", short, got, want)
		}
	}
}
