package presets

import (
	"slices"
	"time"
)

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
	// IsolationProcess runs every plan in a sandboxed worker process (Linux).
	// Where the platform cannot start one, the locked_down preset refuses
	// to start and the others fall back to IsolationInProcess with a
	// warning.
	IsolationProcess Isolation = "process"
	// IsolationInProcess runs plans in the server's own process.
	IsolationInProcess Isolation = "inprocess"
)

// Isolations lists every valid isolation level.
var Isolations = []Isolation{IsolationProcess, IsolationInProcess}

// Limits are the sandbox limits of one preset; every field can be
// overridden under `vm:` in YAML. Fields tagged unit:"bytes" accept byte
// sizes such as 65536 or "64KiB" (see ParseByteSize).
type Limits struct {
	// Timeout is the wall-clock budget of one run.
	Timeout time.Duration `koanf:"timeout" json:"timeout"`
	// MaxToolCalls caps the callTool invocations of one run.
	MaxToolCalls int `koanf:"maxToolCalls" json:"maxToolCalls"`
	// MaxTimers caps the setTimeout calls of one run.
	MaxTimers int `koanf:"maxTimers" json:"maxTimers"`
	// MaxConcurrency caps the tool calls of one run that are in flight at once.
	MaxConcurrency int `koanf:"maxConcurrency" json:"maxConcurrency"`
	// AllowLoops permits for, while and do statements.
	AllowLoops bool `koanf:"allowLoops" json:"allowLoops"`
	// AllowConsole injects console.log and its siblings.
	AllowConsole bool `koanf:"allowConsole" json:"allowConsole"`
	// Regex says which regular expressions a plan may use.
	Regex RegexMode `koanf:"regex" json:"regex"`
	// RegexTimeout bounds one regular-expression match; it must be positive
	// when Regex is RegexFull, because backtracking patterns ignore the run's
	// own deadline.
	RegexTimeout time.Duration `koanf:"regexTimeout" json:"regexTimeout"`
	// MaxLogBytes caps the console and mcpLog output kept from one run.
	MaxLogBytes int64 `koanf:"maxLogBytes" json:"maxLogBytes" unit:"bytes"`
	// MaxResultBytes caps the JSON size of a run's result.
	MaxResultBytes int64 `koanf:"maxResultBytes" json:"maxResultBytes" unit:"bytes"`
	// MemoryBytes is the heap budget of one run.
	MemoryBytes int64 `koanf:"memoryBytes" json:"memoryBytes" unit:"bytes"`
	// MaxScriptBytes caps the size of a plan's source.
	MaxScriptBytes int64 `koanf:"maxScriptBytes" json:"maxScriptBytes" unit:"bytes"`
	// MaxScriptLines caps the number of lines of a plan's source.
	MaxScriptLines int `koanf:"maxScriptLines" json:"maxScriptLines"`
	// MaxNestingDepth caps how deeply a plan's syntax may nest (blocks,
	// calls, literals); it is checked before compiling, because deeply
	// nested source overflows the Go stack of the compiler.
	MaxNestingDepth int `koanf:"maxNestingDepth" json:"maxNestingDepth"`
	// MaxStackDepth caps the JavaScript call stack of a run.
	MaxStackDepth int `koanf:"maxStackDepth" json:"maxStackDepth"`
	// BannedIdentifiers are identifiers a plan may not use, on top of the
	// always-banned set (eval, Function, require, process, ...).
	BannedIdentifiers []string `koanf:"bannedIdentifiers" json:"bannedIdentifiers,omitempty"`
	// Isolation says where a plan runs.
	Isolation Isolation `koanf:"isolation" json:"isolation"`
	// Languages lists the plan languages codecall.execute takes:
	// javascript (which includes TypeScript) always, python when listed.
	// Python plans run only in sandboxed worker processes, so python
	// needs isolation process. Empty means [javascript].
	Languages []string `koanf:"languages" json:"languages,omitempty"`
}

// Plan languages of vm.languages.
const (
	LanguageJavaScript = "javascript"
	LanguagePython     = "python"
)

// Languages are the values vm.languages may list.
var Languages = []string{LanguageJavaScript, LanguagePython}

const (
	kib = 1 << 10
	mib = 1 << 20
)

// presetLimits are DESIGN.md's preset table. The map is never written.
var presetLimits = map[Name]Limits{
	LockedDown: {
		Timeout: 2 * time.Second, MaxToolCalls: 20, MaxTimers: 20, MaxConcurrency: 2,
		AllowLoops: false, AllowConsole: false, Regex: RegexNone, RegexTimeout: 0,
		MaxLogBytes: 16 * kib, MaxResultBytes: 64 * kib, MemoryBytes: 64 * mib, MaxScriptBytes: 16 * kib,
		MaxScriptLines: 500, MaxNestingDepth: 32, MaxStackDepth: 128,
		Isolation: IsolationProcess,
	},
	Secure: {
		Timeout: 3500 * time.Millisecond, MaxToolCalls: 100, MaxTimers: 100, MaxConcurrency: 4,
		AllowLoops: false, AllowConsole: true, Regex: RegexLiteral, RegexTimeout: 0,
		MaxLogBytes: 64 * kib, MaxResultBytes: 256 * kib, MemoryBytes: 128 * mib, MaxScriptBytes: 64 * kib,
		MaxScriptLines: 2000, MaxNestingDepth: 48, MaxStackDepth: 256,
		Isolation: IsolationProcess,
	},
	Balanced: {
		Timeout: 5 * time.Second, MaxToolCalls: 500, MaxTimers: 500, MaxConcurrency: 8,
		AllowLoops: true, AllowConsole: true, Regex: RegexFull, RegexTimeout: 100 * time.Millisecond,
		MaxLogBytes: 256 * kib, MaxResultBytes: 1 * mib, MemoryBytes: 256 * mib, MaxScriptBytes: 128 * kib,
		MaxScriptLines: 4000, MaxNestingDepth: 64, MaxStackDepth: 512,
		Isolation: IsolationInProcess,
	},
	Experimental: {
		Timeout: 10 * time.Second, MaxToolCalls: 2000, MaxTimers: 2000, MaxConcurrency: 16,
		AllowLoops: true, AllowConsole: true, Regex: RegexFull, RegexTimeout: 250 * time.Millisecond,
		MaxLogBytes: 1 * mib, MaxResultBytes: 4 * mib, MemoryBytes: 512 * mib, MaxScriptBytes: 256 * kib,
		MaxScriptLines: 8000, MaxNestingDepth: 96, MaxStackDepth: 1024,
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
	// Description says what the example shows.
	Description string `koanf:"description" json:"description,omitempty"`
	// Input is the tool's arguments; required (use {} for a tool without
	// arguments).
	Input map[string]any `koanf:"input" json:"input"`
	// Output is what the call returns, when worth showing.
	Output any `koanf:"output" json:"output,omitempty"`
}

// ToolOverride is the operator's per-tool setting under `tools:`, keyed by an
// exact tool name or a glob. Unset fields leave the tool's own metadata alone.
type ToolOverride struct {
	// VisibleInListTools shows the tool itself in tools/list.
	VisibleInListTools *bool `koanf:"visibleInListTools" json:"visibleInListTools,omitempty"`
	// EnabledInCodeCall puts the tool in (true) or keeps it out of (false)
	// CodeCall's index; see the modes.
	EnabledInCodeCall *bool `koanf:"enabledInCodeCall" json:"enabledInCodeCall,omitempty"`
	// AppID groups the tool for search filters.
	AppID string `koanf:"appId" json:"appId,omitempty"`
	// Tags are free-form labels search can filter on.
	Tags []string `koanf:"tags" json:"tags,omitempty"`
	// Source says where the tool comes from: "inline", "openapi" or
	// "upstream".
	Source string `koanf:"source" json:"source,omitempty"`
	// Examples are shown by codecall.describe.
	Examples []ToolExample `koanf:"examples" json:"examples,omitempty"`
	// RequiresApproval asks the user before every call of the tool.
	RequiresApproval *bool `koanf:"requiresApproval" json:"requiresApproval,omitempty"`
	// Timeout bounds one call of the tool on every path (direct, invoke,
	// plans); it replaces the tool's own timeout (an upstream's timeout,
	// for a gateway's tool), shorter or longer. Zero leaves it alone.
	Timeout time.Duration `koanf:"timeout" json:"timeout,omitempty"`
}

// toolSources are the valid values of ToolOverride.Source.
var toolSources = []string{"inline", "openapi", "upstream"}

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
	// which a result set carries a low-relevance warning (default 0.34).
	LowRelevance float64 `koanf:"lowRelevance" json:"lowRelevance"`
	// Embeddings turns on optional dense retrieval with an embedding
	// model (off by default: search is lexical and needs no model).
	Embeddings EmbeddingsConfig `koanf:"embeddings" json:"embeddings"`
}

// The embedding providers of search.embeddings.provider.
const (
	// EmbeddingsOff (the empty string) leaves search lexical only.
	EmbeddingsOff = ""
	// EmbeddingsOpenAI calls a server speaking the OpenAI embeddings API
	// (OpenAI, Ollama, llama.cpp's server, vLLM).
	EmbeddingsOpenAI = "openai"
	// EmbeddingsModel2Vec runs a model2vec static model in process.
	EmbeddingsModel2Vec = "model2vec"
)

// EmbeddingsProviders lists the valid values of search.embeddings.provider.
var EmbeddingsProviders = []string{EmbeddingsOff, EmbeddingsOpenAI, EmbeddingsModel2Vec}

// DefaultEmbeddingsWeight is the default search.embeddings.weight: the
// lexical ranking keeps most of the say, which the low-relevance threshold
// was tuned on.
const DefaultEmbeddingsWeight = 0.3

// EmbeddingsConfig configures search.embeddings, the optional dense
// retrieval of codecall.search. No model is shipped: the user points to a
// server or to a model directory. When the model cannot be reached or
// loaded, CodeCall logs a warning and searches lexically.
type EmbeddingsConfig struct {
	// Provider is "" (off, the default), "openai" or "model2vec".
	Provider string `koanf:"provider" json:"provider"`
	// URL is the base URL of an OpenAI-compatible server (provider
	// openai), such as http://localhost:11434 for Ollama.
	URL string `koanf:"url" json:"url"`
	// Model is the server's model name (provider openai), such as
	// nomic-embed-text.
	Model string `koanf:"model" json:"model"`
	// APIKeyEnv names the environment variable that holds the API key
	// (provider openai); the key itself stays out of the file. Empty for
	// servers that need none.
	APIKeyEnv string `koanf:"apiKeyEnv" json:"apiKeyEnv"`
	// Path is the model2vec model directory (provider model2vec), holding
	// model.safetensors and tokenizer.json; relative to the config file.
	Path string `koanf:"path" json:"path"`
	// Weight (0..1, default 0.3) is the share of a result's score given to
	// embedding similarity.
	Weight float64 `koanf:"weight" json:"weight"`
}

// DescribeConfig tunes codecall.describe.
type DescribeConfig struct {
	// MaxDefinitions caps how many tools one describe call returns (default 8, as in the plugin contract).
	MaxDefinitions int `koanf:"maxDefinitions" json:"maxDefinitions"`
}

// SandboxConfig sizes the pool of sandboxed worker processes that runs
// plans when vm.isolation is process.
type SandboxConfig struct {
	// PoolSize is the number of workers kept started and confined ahead of
	// time (default 2).
	PoolSize int `koanf:"poolSize" json:"poolSize"`
	// MaxWorkers bounds the worker processes alive at once, warm, running
	// and exiting (default 8). Runs beyond it wait.
	MaxWorkers int `koanf:"maxWorkers" json:"maxWorkers"`
	// MaxRunningPerSession bounds the runs of one MCP session that hold a
	// worker at once; its further runs wait while other sessions' runs
	// take free workers. The runs without a session count as one session.
	// 0 (the default) means half of MaxWorkers, at least 1.
	MaxRunningPerSession int `koanf:"maxRunningPerSession" json:"maxRunningPerSession,omitempty"`
	// MaxQueuedPerSession bounds the runs of one session waiting for a
	// worker at once; a run past it ends at once with limit_exceeded,
	// limit "concurrency". 0 (the default) means twice MaxWorkers.
	MaxQueuedPerSession int `koanf:"maxQueuedPerSession" json:"maxQueuedPerSession,omitempty"`
	// QueueTimeout bounds how long a run waits for a worker before it ends
	// with limit_exceeded, limit "concurrency" (default 5s).
	QueueTimeout time.Duration `koanf:"queueTimeout" json:"queueTimeout"`
	// ReuseRuns is how many successive runs of one MCP session a worker
	// may serve, each in a runtime built fresh after the previous run
	// ended (0, the default, means 100); 1 starts a worker for every run. Workers never
	// serve two sessions, runs without a session, or Python plans.
	ReuseRuns int `koanf:"reuseRuns" json:"reuseRuns"`
	// ReuseIdle is how long a worker that served a run waits for its
	// session's next run before it exits (0, the default, means 30s). A waiting worker
	// holds its place among MaxWorkers until a spawn needs it.
	ReuseIdle time.Duration `koanf:"reuseIdle" json:"reuseIdle"`
	// Command is the absolute path of the executable started as a worker,
	// e.g. the codecall-worker command; empty (the default) re-executes the
	// server's own binary.
	Command string `koanf:"command" json:"command,omitempty"`
	// Cgroup says whether each worker gets a cgroup v2 of its own, whose
	// memory.max, pids.max and cpu.max the kernel enforces: "auto" (the
	// default; where a cgroup is delegated to the server), "off" (the
	// rlimits alone), or "required" (refuse to start a pool without one
	// with the memory controller). Empty means auto.
	Cgroup string `koanf:"cgroup" json:"cgroup,omitempty"`
	// Python is the interpreter Python plans run on (vm.languages lists
	// python): a path, or a command looked up in PATH. Empty means
	// python3. It must be CPython 3.11 or later.
	Python string `koanf:"python" json:"python,omitempty"`
}

// CgroupModes are the values of sandbox.cgroup.
var CgroupModes = []string{"auto", "off", "required"}

// DirectCallsConfig controls codecall.invoke.
type DirectCallsConfig struct {
	// Enabled registers codecall.invoke (default false).
	Enabled bool `koanf:"enabled" json:"enabled"`
	// AllowedTools are globs of tools codecall.invoke may call; empty means
	// every tool CodeCall can reach.
	AllowedTools []string `koanf:"allowedTools" json:"allowedTools,omitempty"`
}

// AuditConfig controls the audit log: one JSON line per event (see the
// policy/audit package).
type AuditConfig struct {
	// Path is where audit events are written: "" writes none, "-" writes to
	// standard error, anything else is a file appended to (created with
	// mode 0600 when missing). A relative path is relative to the process's
	// working directory.
	Path string `koanf:"path" json:"path,omitempty"`
}

// RedactionPattern is an operator-defined value pattern: every match in a
// string that is logged, audited, shown in an approval prompt or returned to
// the client is replaced by the placeholder.
type RedactionPattern struct {
	// Name identifies the pattern in errors and documentation; letters,
	// digits, '_' and '-'; unique, and not the name of a built-in pattern.
	Name string `koanf:"name" json:"name"`
	// Regex is an RE2 regular expression (Go regexp syntax). When it has a
	// group named "secret", only that group is replaced, so
	// `token=(?P<secret>\S+)` keeps "token=" readable. It must not match the
	// empty string.
	Regex string `koanf:"regex" json:"regex"`
}

// RedactionConfig controls how secrets are removed from values before they
// are logged, audited, shown in approval prompts or returned to the client
// (see the policy/redact package). The built-in rules always apply; these
// keys add to them.
type RedactionConfig struct {
	// Keys are extra object keys whose values are always redacted, as
	// globs matched case-insensitively against the key in snake_case
	// (apiKey, api-key and API_KEY are all api_key): "ssn", "*_pin".
	Keys []string `koanf:"keys" json:"keys,omitempty"`
	// Patterns are extra value patterns, applied to every string after the
	// built-in ones.
	Patterns []RedactionPattern `koanf:"patterns" json:"patterns,omitempty"`
	// DisabledPatterns names built-in value patterns to turn off (see
	// RedactionBuiltinPatterns), for data on which they misfire, such as
	// numeric identifiers that pass the card-number check.
	DisabledPatterns []string `koanf:"disabledPatterns" json:"disabledPatterns,omitempty"`
	// Placeholder replaces every redacted value or match (default
	// "[REDACTED]").
	Placeholder string `koanf:"placeholder" json:"placeholder"`
}

// DefaultRedactionPlaceholder is what redacted values become unless
// redaction.placeholder says otherwise.
const DefaultRedactionPlaceholder = "[REDACTED]"

// redactionBuiltinPatterns are the names of the built-in value patterns.
// The slice is never written; RedactionBuiltinPatterns hands out copies.
var redactionBuiltinPatterns = []string{
	"privateKey", "jwt", "bearer", "urlCredentials", "awsAccessKey",
	"githubToken", "slackToken", "secretAssignment", "cardNumber",
}

// RedactionBuiltinPatterns returns the names of the value patterns the
// redactor applies by default, in the order it applies them;
// redaction.disabledPatterns may list any of them. The policy/redact package
// documents what each one matches.
func RedactionBuiltinPatterns() []string {
	return slices.Clone(redactionBuiltinPatterns)
}

// Config is CodeCall's whole configuration. The package documentation
// describes every key and its default; build one with Default, Load or Parse,
// and check one built in Go with Validate.
type Config struct {
	// Mode decides what tools/list shows and what CodeCall indexes.
	Mode Mode `koanf:"mode" json:"mode"`
	// Preset names the preset whose limits fill VM before overrides.
	Preset Name `koanf:"preset" json:"preset"`
	// Surfaces are the agent-facing contracts tools/list offers:
	// SurfaceCodeCall (codecall.search, describe, execute and invoke) and
	// SurfaceCodeMode (codemode.run, the Code Mode contract), one or both
	// (default [codecall]).
	Surfaces []Surface `koanf:"surfaces" json:"surfaces"`
	// MetaTools names the meta-tools.
	MetaTools MetaToolsConfig `koanf:"metaTools" json:"metaTools"`
	// Search tunes codecall.search.
	Search SearchConfig `koanf:"search" json:"search"`
	// Describe tunes codecall.describe.
	Describe DescribeConfig `koanf:"describe" json:"describe"`
	// Include are globs of tool names CodeCall may reach; empty means all.
	Include []string `koanf:"include" json:"include,omitempty"`
	// Exclude are globs of tool names CodeCall never reaches; they win over
	// Include.
	Exclude []string `koanf:"exclude" json:"exclude,omitempty"`
	// Tools are per-tool overrides keyed by exact tool name or glob.
	Tools map[string]ToolOverride `koanf:"tools" json:"tools,omitempty"`
	// DirectCalls controls codecall.invoke.
	DirectCalls DirectCallsConfig `koanf:"directCalls" json:"directCalls"`
	// Audit controls the audit log.
	Audit AuditConfig `koanf:"audit" json:"audit"`
	// Redaction controls how secrets are removed from logged, audited and
	// returned values.
	Redaction RedactionConfig `koanf:"redaction" json:"redaction"`
	// VM are the sandbox limits: the preset's, with any overrides applied.
	VM Limits `koanf:"vm" json:"vm"`
	// Policy selects the Rego policy every tool call is decided by.
	Policy PolicyConfig `koanf:"policy" json:"policy"`
	// Approval tunes how a person is asked to approve a call.
	Approval ApprovalConfig `koanf:"approval" json:"approval"`
	// Upstreams are MCP servers CodeCall fronts (codecall serve).
	Upstreams UpstreamsConfig `koanf:"upstreams" json:"upstreams,omitzero"`
	// Sandbox sizes the worker pool of process isolation.
	Sandbox SandboxConfig `koanf:"sandbox" json:"sandbox"`
	// Transport bounds what codecall serve reads from a client.
	Transport TransportConfig `koanf:"transport" json:"transport"`
	// Console is the operator console of codecall serve --http, and
	// approval out of band with it.
	Console ConsoleConfig `koanf:"console" json:"console"`
	// State is where paused runs, journals and session trust are kept.
	State StateConfig `koanf:"state" json:"state"`
}

// TransportConfig bounds what the codecall command reads from a client,
// over stdio and streamable HTTP. middleware.Wrap ignores it: a program
// that wraps its own server owns its transport. It is read when the
// command starts; a change takes effect at the next start.
type TransportConfig struct {
	// MaxRequestBytes caps one request: an HTTP request body, or one line
	// (one JSON-RPC message) on stdin (default 4 MiB). A larger HTTP body
	// is answered 413 and a longer stdin line with a JSON-RPC error, both
	// without reading the excess into memory; the server goes on serving.
	MaxRequestBytes int64 `koanf:"maxRequestBytes" json:"maxRequestBytes" unit:"bytes"`
}

// DefaultMaxRequestBytes is transport.maxRequestBytes when it is not set.
const DefaultMaxRequestBytes = 4 * mib

// The bounds of transport.maxRequestBytes: an initialize request alone
// takes a few hundred bytes, and a cap of gigabytes caps nothing.
const (
	minRequestBytes = 1 * kib
	maxRequestBytes = 1 << 30
)

// PolicyConfig selects the OPA/Rego policy. With no paths, CodeCall's
// built-in default applies (see package policy).
type PolicyConfig struct {
	// Paths are .rego files, data files (.json, .yaml, .yml) or directories
	// holding them; every matching file under a directory is loaded.
	Paths []string `koanf:"paths" json:"paths,omitempty"`
	// Query is the Rego rule that yields the decision object (default
	// "data.codecall.decision").
	Query string `koanf:"query" json:"query"`
	// FilterDiscovery hides from codecall.search and codecall.describe the
	// tools the policy denies whatever their arguments (default false).
	FilterDiscovery bool `koanf:"filterDiscovery" json:"filterDiscovery"`
}

// ApprovalConfig tunes approval prompts.
type ApprovalConfig struct {
	// Timeout is how long a person has to answer an approval prompt before
	// the call is refused as expired (default 2m).
	Timeout time.Duration `koanf:"timeout" json:"timeout"`
	// AllowSessionTrust offers "approve for this session" in the prompt
	// (default true). Trust never crosses sessions.
	AllowSessionTrust bool `koanf:"allowSessionTrust" json:"allowSessionTrust"`
}

// DefaultPolicyQuery is the rule queried when policy.query is not set.
const DefaultPolicyQuery = "data.codecall.decision"

// Surface is an agent-facing contract a server offers.
type Surface string

// The surfaces.
const (
	// SurfaceCodeCall is the CodeCall contract: codecall.search,
	// codecall.describe, codecall.execute and codecall.invoke.
	SurfaceCodeCall Surface = "codecall"
	// SurfaceCodeMode is the Code Mode contract: one tool, codemode.run,
	// whose scripts are ES modules importing @codemode/* modules.
	SurfaceCodeMode Surface = "codemode"
)

// Surfaces lists the surfaces a config may name.
var Surfaces = []Surface{SurfaceCodeCall, SurfaceCodeMode}

// Offers reports whether the config offers surface s.
func (c Config) Offers(s Surface) bool { return slices.Contains(c.Surfaces, s) }

// CodeModeRun is the name of the Code Mode surface's one tool. The Code
// Mode contract fixes it, so metaTools.prefix does not apply.
const CodeModeRun = "codemode.run"

// The meta-tools' short names; Config.MetaToolName puts the prefix before
// them.
const (
	MetaSearch   = "search"
	MetaDescribe = "describe"
	MetaExecute  = "execute"
	MetaInvoke   = "invoke"
)

// MetaToolName returns the full name of a meta-tool: the configured prefix
// followed by short (one of MetaSearch, MetaDescribe, MetaExecute,
// MetaInvoke), e.g. "codecall.search".
func (c Config) MetaToolName(short string) string {
	return c.MetaTools.Prefix + short
}

// Default returns the configuration used when none is given: codecall_only,
// the secure preset, and the defaults documented on each field.
func Default() Config {
	limits, _ := LimitsFor(Secure)
	return Config{
		Mode:        ModeCodeCallOnly,
		Surfaces:    []Surface{SurfaceCodeCall},
		Preset:      Secure,
		MetaTools:   MetaToolsConfig{Prefix: "codecall."},
		Search:      SearchConfig{TopK: 8, MaxTopK: 50, LowRelevance: 0.32, Embeddings: EmbeddingsConfig{Weight: DefaultEmbeddingsWeight}},
		Describe:    DescribeConfig{MaxDefinitions: 8},
		DirectCalls: DirectCallsConfig{Enabled: false},
		Audit:       AuditConfig{Path: ""},
		Redaction:   RedactionConfig{Placeholder: DefaultRedactionPlaceholder},
		VM:          limits,
		Policy:      PolicyConfig{Query: DefaultPolicyQuery},
		Approval:    ApprovalConfig{Timeout: 2 * time.Minute, AllowSessionTrust: true},
		Upstreams:   UpstreamsConfig{Separator: ".", Start: StartEager, StartTimeout: time.Minute},
		Sandbox:     SandboxConfig{PoolSize: 2, MaxWorkers: 8, QueueTimeout: 5 * time.Second, Cgroup: "auto"},
		Transport:   TransportConfig{MaxRequestBytes: DefaultMaxRequestBytes},
		Console:     ConsoleConfig{MaxRuns: 200, MaxEvents: 10000},
		State:       StateConfig{Store: StateMemory},
	}
}
