package presets

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestEnvOverrides(t *testing.T) {
	tests := []struct {
		env   string
		check func(c Config) bool
	}{
		{"CODECALL_MODE=codecall_opt_in", func(c Config) bool { return c.Mode == ModeOptIn }},
		{"CODECALL_mode=metadata_driven", func(c Config) bool { return c.Mode == ModeMetadataDriven }},
		{"CODECALL_VM__TIMEOUT=5s", func(c Config) bool { return c.VM.Timeout == 5*time.Second }},
		{"CODECALL_VM__MAXTOOLCALLS=7", func(c Config) bool { return c.VM.MaxToolCalls == 7 }},
		{"CODECALL_VM__MAX_TOOL_CALLS=8", func(c Config) bool { return c.VM.MaxToolCalls == 8 }},
		{"CODECALL_VM__MAXLOGBYTES=2MiB", func(c Config) bool { return c.VM.MaxLogBytes == 2<<20 }},
		{"CODECALL_VM__ALLOWLOOPS=true", func(c Config) bool { return c.VM.AllowLoops }},
		{"CODECALL_SEARCH__TOPK=12", func(c Config) bool { return c.Search.TopK == 12 }},
		{"CODECALL_SEARCH__LOWRELEVANCE=0.5", func(c Config) bool { return c.Search.LowRelevance == 0.5 }},
		{"CODECALL_DIRECTCALLS__ENABLED=true", func(c Config) bool { return c.DirectCalls.Enabled }},
		{"CODECALL_DIRECT_CALLS__ALLOWED_TOOLS=a.*", func(c Config) bool {
			return reflect.DeepEqual(c.DirectCalls.AllowedTools, []string{"a.*"})
		}},
		{"CODECALL_METATOOLS__PREFIX=cc_", func(c Config) bool { return c.MetaTools.Prefix == "cc_" }},
		{"CODECALL_EXCLUDE=a.*,b.*", func(c Config) bool { return reflect.DeepEqual(c.Exclude, []string{"a.*", "b.*"}) }},
		{"CODECALL_INCLUDE= a.* , {b,c}.get,,", func(c Config) bool {
			return reflect.DeepEqual(c.Include, []string{"a.*", "{b,c}.get"})
		}},
		{"CODECALL_EXCLUDE=", func(c Config) bool { return len(c.Exclude) == 0 }},
		{"CODECALL_TRANSPORT__MAX_REQUEST_BYTES=64KiB", func(c Config) bool { return c.Transport.MaxRequestBytes == 64<<10 }},
		{"CODECALL_SANDBOX__MAX_RUNNING_PER_SESSION=3", func(c Config) bool { return c.Sandbox.MaxRunningPerSession == 3 }},
		{"CODECALL_SANDBOX__MAXQUEUEDPERSESSION=5", func(c Config) bool { return c.Sandbox.MaxQueuedPerSession == 5 }},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			c := parseOK(t, "exclude: [x]\n", tt.env)
			if !tt.check(c) {
				t.Errorf("override not applied: %+v", c)
			}
		})
	}
}

func TestEnvErrors(t *testing.T) {
	tests := []struct {
		env    string
		source string // Problem.Source
		key    string
		want   string // substring of the message
	}{
		{"CODECALL_VM__TIMOUT=1s", "env CODECALL_VM__TIMOUT", "", `vm has no key "TIMOUT"; allowed keys: timeout, maxToolCalls`},
		{"CODECALL_COLOUR=red", "env CODECALL_COLOUR", "", `the top level has no key "COLOUR"; allowed keys: mode, preset`},
		{"CODECALL_VM_TIMEOUT=1s", "env CODECALL_VM_TIMEOUT", "", `use "__" between levels`},
		{"CODECALL_=x", "env CODECALL_", "", "names no configuration key"},
		{"CODECALL_VM=fast", "env CODECALL_VM", "", "vm is a section; set one of its keys"},
		{"CODECALL_MODE__X=1", "env CODECALL_MODE__X", "", "mode is a single value, not a section"},
		{"CODECALL_TOOLS__HEALTH__APPID=x", "env CODECALL_TOOLS__HEALTH__APPID", "", "tools cannot be set from the environment"},
		{"CODECALL_REDACTION__PATTERNS=x", "env CODECALL_REDACTION__PATTERNS", "", "redaction.patterns cannot be set from the environment"},
		{"CODECALL_REDACTION__DISABLED_PATTERNS=jwt,nope", "env CODECALL_REDACTION__DISABLED_PATTERNS", "redaction.disabledPatterns[1]", `unknown built-in pattern "nope"`},
		{"CODECALL_VM__TIMEOUT=soon", "env CODECALL_VM__TIMEOUT", "vm.timeout", `invalid duration "soon"`},
		{"CODECALL_VM__TIMEOUT=0s", "env CODECALL_VM__TIMEOUT", "vm.timeout", "must be positive"},
		{"CODECALL_SEARCH__TOPK=many", "env CODECALL_SEARCH__TOPK", "search.topK", `want an integer, got "many"`},
		{"CODECALL_SEARCH__TOPK=012x", "env CODECALL_SEARCH__TOPK", "search.topK", "want an integer"},
		{"CODECALL_DIRECTCALLS__ENABLED=maybe", "env CODECALL_DIRECTCALLS__ENABLED", "directCalls.enabled", `want true or false, got "maybe"`},
		{"CODECALL_SEARCH__LOWRELEVANCE=lots", "env CODECALL_SEARCH__LOWRELEVANCE", "search.lowRelevance", "want a number"},
		{"CODECALL_PRESET=fast", "env CODECALL_PRESET", "preset", `unknown preset "fast"`},
		{"CODECALL_EXCLUDE=a.{b", "env CODECALL_EXCLUDE", "exclude[0]", "invalid glob"},
		{"CODECALL_TRANSPORT__MAXREQUESTBYTES=10", "env CODECALL_TRANSPORT__MAXREQUESTBYTES", "transport.maxRequestBytes", "must be between 1KiB and 1GiB, got 10 bytes"},
		{"CODECALL_GATEWAY_DEPTHS=1", "env CODECALL_GATEWAY_DEPTHS", "", "names no configuration key"},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			_, err := Parse(nil, []string{"PATH=/bin", tt.env})
			p := onlyProblem(t, err)
			if p.Source != tt.source || p.Key != tt.key || !strings.Contains(p.Message, tt.want) {
				t.Errorf("problem = %+v\nwant source %q key %q message containing %q", p, tt.source, tt.key, tt.want)
			}
		})
	}
}

// The gateway's nesting depth lives in the CODECALL_ namespace without
// being a key: loading skips it, whatever its value, and no key is named
// so that a variable could set it.
func TestEnvGatewayDepthIsNotConfiguration(t *testing.T) {
	c, err := Parse(nil, []string{EnvGatewayDepth + "=3", "CODECALL_SEARCH__TOPK=9"})
	if err != nil {
		t.Fatalf("Parse with %s: %v", EnvGatewayDepth, err)
	}
	if c.Search.TopK != 9 {
		t.Errorf("the other variables are not applied: topK %d", c.Search.TopK)
	}
	if _, _, msg := resolveEnvKey(strings.TrimPrefix(EnvGatewayDepth, EnvPrefix)); msg == "" {
		t.Errorf("%s names a configuration key; it must not", EnvGatewayDepth)
	}
}

func TestEnvSetTwice(t *testing.T) {
	_, err := Parse(nil, []string{"CODECALL_VM__TIMEOUT=1s", "CODECALL_vm__timeout=2s"})
	p := onlyProblem(t, err)
	if p.Source != "env CODECALL_vm__timeout" || !strings.Contains(p.Message, "also set by CODECALL_VM__TIMEOUT") {
		t.Errorf("problem = %+v", p)
	}
}

func TestSplitList(t *testing.T) {
	tests := map[string][]any{
		"":                {},
		"a":               {"a"},
		"a,b":             {"a", "b"},
		" a , b ,":        {"a", "b"},
		"{a,b}.*,c":       {"{a,b}.*", "c"},
		"{a,{b,c}}.x,d":   {"{a,{b,c}}.x", "d"},
		`a\,b,c`:          {`a\,b`, "c"},
		"}a,b":            {"}a", "b"},
		"billing.*":       {"billing.*"},
		"x.{unclosed,y":   {"x.{unclosed,y"},
		",,,":             {},
		"trailing\\":      {"trailing\\"},
		"a.{b,c},d.{e,f}": {"a.{b,c}", "d.{e,f}"},
	}
	for in, want := range tests {
		if got := splitList(in); !reflect.DeepEqual(got, want) {
			t.Errorf("splitList(%q) = %q, want %q", in, got, want)
		}
	}
}

// onlyProblem asserts err is a *ValidationError with exactly one problem.
func onlyProblem(t *testing.T, err error) Problem {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want a *ValidationError", err)
	}
	if len(ve.Problems) != 1 {
		t.Fatalf("want one problem, got %d:\n%v", len(ve.Problems), err)
	}
	return ve.Problems[0]
}
