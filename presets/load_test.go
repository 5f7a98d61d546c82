package presets

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// parseOK parses YAML with the given environment and fails the test on error.
func parseOK(t *testing.T, yaml string, env ...string) Config {
	t.Helper()
	cfg, err := Parse([]byte(yaml), env)
	if err != nil {
		t.Fatalf("Parse(%q): %v", yaml, err)
	}
	return cfg
}

// The numbers are spelled out again here, from DESIGN.md, so a typo in the
// preset table cannot pass unnoticed.
func TestPresetLimits(t *testing.T) {
	tests := []struct {
		name Name
		want Limits
	}{
		{LockedDown, Limits{
			Timeout: 2 * time.Second, MaxToolCalls: 20, MaxTimers: 20, MaxConcurrency: 2,
			AllowLoops: false, AllowConsole: false, Regex: RegexNone, RegexTimeout: 0,
			MaxLogBytes: 16384, MaxResultBytes: 65536, MemoryBytes: 67108864, MaxScriptBytes: 16384, MaxScriptLines: 500, MaxNestingDepth: 32, MaxStackDepth: 128,
			Isolation: IsolationProcess,
		}},
		{Secure, Limits{
			Timeout: 3500 * time.Millisecond, MaxToolCalls: 100, MaxTimers: 100, MaxConcurrency: 4,
			AllowLoops: false, AllowConsole: true, Regex: RegexLiteral, RegexTimeout: 0,
			MaxLogBytes: 65536, MaxResultBytes: 262144, MemoryBytes: 134217728, MaxScriptBytes: 65536, MaxScriptLines: 2000, MaxNestingDepth: 48, MaxStackDepth: 256,
			Isolation: IsolationProcess,
		}},
		{Balanced, Limits{
			Timeout: 5 * time.Second, MaxToolCalls: 500, MaxTimers: 500, MaxConcurrency: 8,
			AllowLoops: true, AllowConsole: true, Regex: RegexFull, RegexTimeout: 100 * time.Millisecond,
			MaxLogBytes: 262144, MaxResultBytes: 1048576, MemoryBytes: 268435456, MaxScriptBytes: 131072, MaxScriptLines: 4000, MaxNestingDepth: 64, MaxStackDepth: 512,
			Isolation: IsolationInProcess,
		}},
		{Experimental, Limits{
			Timeout: 10 * time.Second, MaxToolCalls: 2000, MaxTimers: 2000, MaxConcurrency: 16,
			AllowLoops: true, AllowConsole: true, Regex: RegexFull, RegexTimeout: 250 * time.Millisecond,
			MaxLogBytes: 1048576, MaxResultBytes: 4194304, MemoryBytes: 536870912, MaxScriptBytes: 262144, MaxScriptLines: 8000, MaxNestingDepth: 96, MaxStackDepth: 1024,
			Isolation: IsolationInProcess,
		}},
	}
	if len(tests) != len(Names) {
		t.Fatalf("test covers %d presets, Names has %d", len(tests), len(Names))
	}
	for _, tt := range tests {
		t.Run(string(tt.name), func(t *testing.T) {
			got, ok := LimitsFor(tt.name)
			if !ok || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("LimitsFor = %+v, %v; want %+v", got, ok, tt.want)
			}
			if cfg := parseOK(t, "preset: "+string(tt.name)); !reflect.DeepEqual(cfg.VM, tt.want) || cfg.Preset != tt.name {
				t.Errorf("from YAML: preset %q, vm %+v", cfg.Preset, cfg.VM)
			}
			if cfg := parseOK(t, "", "CODECALL_PRESET="+string(tt.name)); !reflect.DeepEqual(cfg.VM, tt.want) || cfg.Preset != tt.name {
				t.Errorf("from env: preset %q, vm %+v", cfg.Preset, cfg.VM)
			}
			cfg := Default()
			cfg.Preset, cfg.VM = tt.name, tt.want
			if err := cfg.Validate(); err != nil {
				t.Errorf("preset limits do not validate: %v", err)
			}
		})
	}
	if _, ok := LimitsFor("fast"); ok {
		t.Error(`LimitsFor("fast") reported a preset`)
	}
}

func TestDefault(t *testing.T) {
	cfg := Default()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Default() does not validate: %v", err)
	}
	secure, _ := LimitsFor(Secure)
	if cfg.Mode != ModeCodeCallOnly || cfg.Preset != Secure || !reflect.DeepEqual(cfg.VM, secure) ||
		cfg.MetaTools.Prefix != "codecall." || cfg.Search != (SearchConfig{TopK: 8, MaxTopK: 50, LowRelevance: 0.32, Embeddings: EmbeddingsConfig{Weight: 0.3}}) ||
		cfg.Describe.MaxDefinitions != 8 || cfg.DirectCalls.Enabled {
		t.Errorf("Default() = %+v", cfg)
	}
	for _, data := range []string{"", "\n", "# only a comment\n", "---\n", "~\n", "{}\n"} {
		if got := parseOK(t, data); !reflect.DeepEqual(got, cfg) {
			t.Errorf("Parse(%q) = %+v, want the defaults", data, got)
		}
	}
}

func TestOverrides(t *testing.T) {
	secure, _ := LimitsFor(Secure)
	balanced, _ := LimitsFor(Balanced)
	tests := []struct {
		name  string
		yaml  string
		env   []string
		check func(t *testing.T, c Config)
	}{
		{
			name: "one vm key over a preset",
			yaml: "preset: secure\nvm: {timeout: 10s}\n",
			check: func(t *testing.T, c Config) {
				want := secure
				want.Timeout = 10 * time.Second
				if !reflect.DeepEqual(c.VM, want) {
					t.Errorf("vm = %+v, want %+v", c.VM, want)
				}
			},
		},
		{
			name: "every vm key",
			yaml: `preset: locked_down
vm:
  timeout: 1.5s
  maxToolCalls: 7
  maxTimers: 9
  maxConcurrency: 3
  allowLoops: true
  allowConsole: true
  regex: full
  regexTimeout: 50ms
  maxLogBytes: 512KB
  maxResultBytes: 1MiB
  memoryBytes: 1 GiB
  maxScriptBytes: 4096
  maxScriptLines: 40
  maxNestingDepth: 12
  maxStackDepth: 99
  bannedIdentifiers: [fetch, XMLHttpRequest]
  isolation: inprocess
`,
			check: func(t *testing.T, c Config) {
				want := Limits{Timeout: 1500 * time.Millisecond, MaxToolCalls: 7, MaxTimers: 9, MaxConcurrency: 3,
					AllowLoops: true, AllowConsole: true, Regex: RegexFull, RegexTimeout: 50 * time.Millisecond,
					MaxLogBytes: 512000, MaxResultBytes: 1 << 20, MemoryBytes: 1 << 30, MaxScriptBytes: 4096,
					MaxScriptLines: 40, MaxNestingDepth: 12, MaxStackDepth: 99, BannedIdentifiers: []string{"fetch", "XMLHttpRequest"},
					Isolation: IsolationInProcess}
				if !reflect.DeepEqual(c.VM, want) {
					t.Errorf("vm = %+v, want %+v", c.VM, want)
				}
			},
		},
		{
			name: "env preset beats the file's, file vm keys still apply",
			yaml: "preset: secure\nvm: {maxToolCalls: 9}\n",
			env:  []string{"CODECALL_PRESET=balanced"},
			check: func(t *testing.T, c Config) {
				want := balanced
				want.MaxToolCalls = 9
				if c.Preset != Balanced || !reflect.DeepEqual(c.VM, want) {
					t.Errorf("preset %q vm %+v, want balanced with 9 tool calls", c.Preset, c.VM)
				}
			},
		},
		{
			name: "env beats file",
			yaml: "mode: codecall_only\nvm: {timeout: 2s}\nsearch: {topK: 3}\n",
			env:  []string{"CODECALL_MODE=metadata_driven", "CODECALL_VM__TIMEOUT=250ms", "CODECALL_SEARCH__TOPK=12"},
			check: func(t *testing.T, c Config) {
				if c.Mode != ModeMetadataDriven || c.VM.Timeout != 250*time.Millisecond || c.Search.TopK != 12 {
					t.Errorf("got mode %q timeout %v topK %d", c.Mode, c.VM.Timeout, c.Search.TopK)
				}
			},
		},
		{
			name: "the rest of the schema",
			yaml: `mode: codecall_opt_in
metaTools: {prefix: codecall_}
search: {topK: 5, maxTopK: 20, lowRelevance: 0.5}
describe: {maxDefinitions: 3}
include: ["billing.*", users.get]
exclude: "*.delete"
directCalls: {enabled: true, allowedTools: ["billing.*"]}
tools:
  "billing.*": {appId: billing, tags: [payments, 2024], source: openapi}
  users.delete:
    enabledInCodeCall: false
    requiresApproval: true
  health:
    visibleInListTools: true
    examples:
      - description: ping
        input: {}
        output: {ok: true}
      - input: {deep: {1: one}}
`,
			check: func(t *testing.T, c Config) {
				yes, no := true, false
				want := Default()
				want.Mode = ModeOptIn
				want.MetaTools.Prefix = "codecall_"
				want.Search = SearchConfig{TopK: 5, MaxTopK: 20, LowRelevance: 0.5, Embeddings: EmbeddingsConfig{Weight: 0.3}}
				want.Describe.MaxDefinitions = 3
				want.Include = []string{"billing.*", "users.get"}
				want.Exclude = []string{"*.delete"}
				want.DirectCalls = DirectCallsConfig{Enabled: true, AllowedTools: []string{"billing.*"}}
				want.Tools = map[string]ToolOverride{
					"billing.*":    {AppID: "billing", Tags: []string{"payments", "2024"}, Source: "openapi"},
					"users.delete": {EnabledInCodeCall: &no, RequiresApproval: &yes},
					"health": {VisibleInListTools: &yes, Examples: []ToolExample{
						{Description: "ping", Input: map[string]any{}, Output: map[string]any{"ok": true}},
						{Input: map[string]any{"deep": map[string]any{"1": "one"}}},
					}},
				}
				if !reflect.DeepEqual(c, want) {
					t.Errorf("got  %+v\nwant %+v", c, want)
				}
				if got := c.MetaToolName(MetaSearch); got != "codecall_search" {
					t.Errorf("MetaToolName = %q", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, parseOK(t, tt.yaml, tt.env...))
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("preset: balanced\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadEnv(good, []string{"CODECALL_VM__MAX_TOOL_CALLS=42", "HOME=/root", "codecall_mode=ignored"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Preset != Balanced || cfg.VM.MaxToolCalls != 42 {
		t.Errorf("got preset %q maxToolCalls %d", cfg.Preset, cfg.VM.MaxToolCalls)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("mode: codecall_only\nvm:\n  timout: 1s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadEnv(bad, nil)
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 {
		t.Fatalf("err = %v, want one problem", err)
	}
	if p := ve.Problems[0]; p.Source != bad || p.Line != 3 || p.Key != "vm.timout" {
		t.Errorf("problem = %+v", p)
	}
	if !strings.Contains(err.Error(), bad+":3: vm.timout: unknown key") {
		t.Errorf("Error() = %q", err)
	}

	_, err = LoadEnv(filepath.Join(dir, "missing.yaml"), nil)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want os.ErrNotExist", err)
	}
}

// TestLoadUsesProcessEnv checks the thin wrapper; it cannot run in parallel.
func TestLoadUsesProcessEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CODECALL_SEARCH__TOPK", "13")
	cfg, err := Load(path)
	if err != nil || cfg.Search.TopK != 13 {
		t.Errorf("Load = topK %d, %v; want 13", cfg.Search.TopK, err)
	}
}
