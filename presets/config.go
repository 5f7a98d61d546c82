// Package presets holds CodeCall's configuration: the four sandbox presets,
// the configuration schema, loading from YAML with environment overrides,
// validation with precise errors, and reload on change.
package presets

import "time"

// Mode decides which tools tools/list shows and which tools CodeCall indexes.
type Mode string

// The modes, as DESIGN.md's mode table defines them.
const (
	// ModeCodeCallOnly lists only meta-tools (plus tools marked visible) and
	// indexes every tool that is not explicitly disabled.
	ModeCodeCallOnly Mode = "codecall_only"
	// ModeOptIn indexes only tools with enabledInCodeCall: true.
	ModeOptIn Mode = "codecall_opt_in"
	// ModeMetadataDriven indexes only tools with enabledInCodeCall: true and
	// assumes nothing implicitly.
	ModeMetadataDriven Mode = "metadata_driven"
)

// Modes lists every valid mode, in documentation order.
var Modes = []Mode{ModeCodeCallOnly, ModeOptIn, ModeMetadataDriven}

// Name is the name of a preset.
type Name string

// The presets, from most to least restrictive.
const (
	LockedDown   Name = "locked_down"
	Secure       Name = "secure"
	Balanced     Name = "balanced"
	Experimental Name = "experimental"
)

// Names lists every valid preset name, from most to least restrictive.
var Names = []Name{LockedDown, Secure, Balanced, Experimental}

// RegexMode says what regular expressions a plan may use.
type RegexMode string

// The regex modes.
const (
	RegexNone    RegexMode = "none"    // no regex literals, no RegExp
	RegexLiteral RegexMode = "literal" // literal, RE2-safe patterns only
	RegexFull    RegexMode = "full"    // any pattern, under a time limit
)

// Isolation says where a plan runs.
type Isolation string

// The isolation levels.
const (
	// IsolationProcessRequired runs every plan in a sandboxed worker process
	// and refuses to run when one cannot be started.
	IsolationProcessRequired Isolation = "process_required"
	// IsolationProcess prefers a worker process and falls back to in-process
	// execution where the platform has none.
	IsolationProcess Isolation = "process"
	// IsolationInProcess runs plans in the server's own process.
	IsolationInProcess Isolation = "in_process"
)

// Limits are the sandbox limits of one preset; every field can be
// overridden under `vm:` in YAML.
type Limits struct {
	Timeout        time.Duration `koanf:"timeout" json:"timeout"`
	MaxToolCalls   int           `koanf:"maxToolCalls" json:"maxToolCalls"`
	MaxConcurrency int           `koanf:"maxConcurrency" json:"maxConcurrency"`
	AllowLoops     bool          `koanf:"allowLoops" json:"allowLoops"`
	AllowConsole   bool          `koanf:"allowConsole" json:"allowConsole"`
	Regex          RegexMode     `koanf:"regex" json:"regex"`
	RegexTimeout   time.Duration `koanf:"regexTimeout" json:"regexTimeout"`
	MaxLogBytes    int64         `koanf:"maxLogBytes" json:"maxLogBytes"`
	MaxResultBytes int64         `koanf:"maxResultBytes" json:"maxResultBytes"`
	MemoryBytes    int64         `koanf:"memoryBytes" json:"memoryBytes"`
	MaxScriptBytes int64         `koanf:"maxScriptBytes" json:"maxScriptBytes"`
	Isolation      Isolation     `koanf:"isolation" json:"isolation"`
}

const (
	kib = 1 << 10
	mib = 1 << 20
)

// presetLimits are DESIGN.md's preset table. The map is never written.
var presetLimits = map[Name]Limits{
	LockedDown: {
		Timeout: 2 * time.Second, MaxToolCalls: 20, MaxConcurrency: 2,
		AllowLoops: false, AllowConsole: false, Regex: RegexNone, RegexTimeout: 0,
		MaxLogBytes: 16 * kib, MaxResultBytes: 64 * kib, MemoryBytes: 64 * mib, MaxScriptBytes: 16 * kib,
		Isolation: IsolationProcessRequired,
	},
	Secure: {
		Timeout: 3500 * time.Millisecond, MaxToolCalls: 100, MaxConcurrency: 4,
		AllowLoops: false, AllowConsole: true, Regex: RegexLiteral, RegexTimeout: 0,
		MaxLogBytes: 64 * kib, MaxResultBytes: 256 * kib, MemoryBytes: 128 * mib, MaxScriptBytes: 64 * kib,
		Isolation: IsolationProcess,
	},
	Balanced: {
		Timeout: 5 * time.Second, MaxToolCalls: 500, MaxConcurrency: 8,
		AllowLoops: true, AllowConsole: true, Regex: RegexFull, RegexTimeout: 100 * time.Millisecond,
		MaxLogBytes: 256 * kib, MaxResultBytes: 1 * mib, MemoryBytes: 256 * mib, MaxScriptBytes: 128 * kib,
		Isolation: IsolationInProcess,
	},
	Experimental: {
		Timeout: 10 * time.Second, MaxToolCalls: 2000, MaxConcurrency: 16,
		AllowLoops: true, AllowConsole: true, Regex: RegexFull, RegexTimeout: 250 * time.Millisecond,
		MaxLogBytes: 1 * mib, MaxResultBytes: 4 * mib, MemoryBytes: 512 * mib, MaxScriptBytes: 256 * kib,
		Isolation: IsolationInProcess,
	},
}

// LimitsFor returns the limits of the named preset and whether the name is
// known.
func LimitsFor(name Name) (Limits, bool) {
	l, ok := presetLimits[name]
	return l, ok
}

// ToolExample is an example call of a tool, shown by codecall.describe.
type ToolExample struct {
	Description string         `koanf:"description" json:"description,omitempty"`
	Input       map[string]any `koanf:"input" json:"input"`
	Output      any            `koanf:"output" json:"output,omitempty"`
}

// ToolOverride is the operator's per-tool setting under `tools:`, keyed by an
// exact tool name or a glob. Unset fields leave the tool's own metadata alone.
type ToolOverride struct {
	VisibleInListTools *bool         `koanf:"visibleInListTools" json:"visibleInListTools,omitempty"`
	EnabledInCodeCall  *bool         `koanf:"enabledInCodeCall" json:"enabledInCodeCall,omitempty"`
	AppID              string        `koanf:"appId" json:"appId,omitempty"`
	Tags               []string      `koanf:"tags" json:"tags,omitempty"`
	Source             string        `koanf:"source" json:"source,omitempty"`
	Examples           []ToolExample `koanf:"examples" json:"examples,omitempty"`
	RequiresApproval   *bool         `koanf:"requiresApproval" json:"requiresApproval,omitempty"`
}

// MetaToolsConfig names the meta-tools.
type MetaToolsConfig struct {
	// Prefix is put before search, describe, execute and invoke. The default
	// "codecall." gives codecall.search; clients that reject dots can use
	// "codecall_".
	Prefix string `koanf:"prefix" json:"prefix"`
}

// SearchConfig tunes codecall.search.
type SearchConfig struct {
	// TopK is the number of results when a request gives none (default 8).
	TopK int `koanf:"topK" json:"topK"`
	// MaxTopK caps what a request may ask for (default 50).
	MaxTopK int `koanf:"maxTopK" json:"maxTopK"`
	// LowRelevance is the relevance (0..1, relative to an exact match) under
	// which a result set carries a low-relevance warning (default 0.35).
	LowRelevance float64 `koanf:"lowRelevance" json:"lowRelevance"`
}

// DescribeConfig tunes codecall.describe.
type DescribeConfig struct {
	// MaxDefinitions caps how many tools one describe call returns (default 10).
	MaxDefinitions int `koanf:"maxDefinitions" json:"maxDefinitions"`
}

// DirectCallsConfig controls codecall.invoke.
type DirectCallsConfig struct {
	// Enabled registers codecall.invoke (default false).
	Enabled bool `koanf:"enabled" json:"enabled"`
	// AllowedTools are globs of tools codecall.invoke may call; empty means
	// every tool CodeCall can reach.
	AllowedTools []string `koanf:"allowedTools" json:"allowedTools,omitempty"`
}

// Config is CodeCall's whole configuration.
type Config struct {
	Mode        Mode                    `koanf:"mode" json:"mode"`
	Preset      Name                    `koanf:"preset" json:"preset"`
	MetaTools   MetaToolsConfig         `koanf:"metaTools" json:"metaTools"`
	Search      SearchConfig            `koanf:"search" json:"search"`
	Describe    DescribeConfig          `koanf:"describe" json:"describe"`
	Include     []string                `koanf:"include" json:"include,omitempty"`
	Exclude     []string                `koanf:"exclude" json:"exclude,omitempty"`
	Tools       map[string]ToolOverride `koanf:"tools" json:"tools,omitempty"`
	DirectCalls DirectCallsConfig       `koanf:"directCalls" json:"directCalls"`
	VM          Limits                  `koanf:"vm" json:"vm"`
}

// Default returns the configuration used when none is given: codecall_only,
// the secure preset, and the defaults documented on each field.
func Default() Config {
	limits, _ := LimitsFor(Secure)
	return Config{
		Mode:        ModeCodeCallOnly,
		Preset:      Secure,
		MetaTools:   MetaToolsConfig{Prefix: "codecall."},
		Search:      SearchConfig{TopK: 8, MaxTopK: 50, LowRelevance: 0.35},
		Describe:    DescribeConfig{MaxDefinitions: 10},
		DirectCalls: DirectCallsConfig{Enabled: false},
		VM:          limits,
	}
}
