package presets

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// maxToolNameLen is the longest tool name CodeCall produces; some clients
// reject longer names.
const maxToolNameLen = 64

// Validate checks a configuration the way Load does after decoding, so a
// Config built in Go is held to the same rules as a file. It returns nil or a
// *ValidationError listing every problem.
func (c Config) Validate() error {
	var problems []Problem
	for _, is := range c.issues() {
		problems = append(problems, Problem{Key: is.path.String(), Message: is.msg})
	}
	return validationError(problems)
}

// issues lists the semantic problems of c in key order.
func (c Config) issues() []issue {
	var out []issue
	add := func(p keyPath, format string, args ...any) {
		out = append(out, newIssue(p, format, args...))
	}
	root := keyPath{}

	if !slices.Contains(Modes, c.Mode) {
		add(root.field("mode"), "unknown mode %q; allowed: %s", c.Mode, list(Modes))
	}
	if _, ok := LimitsFor(c.Preset); !ok {
		add(root.field("preset"), "unknown preset %q; allowed: %s", c.Preset, list(Names))
	}
	switch {
	case len(c.Surfaces) == 0:
		add(root.field("surfaces"), "must name at least one surface; allowed: %s", list(Surfaces))
	default:
		for i, s := range c.Surfaces {
			switch {
			case !slices.Contains(Surfaces, s):
				add(root.field("surfaces").index(i), "unknown surface %q; allowed: %s", s, list(Surfaces))
			case slices.Index(c.Surfaces, s) < i:
				add(root.field("surfaces").index(i), "%q is listed twice", s)
			}
		}
	}
	if msg := checkPrefix(c.MetaTools.Prefix); msg != "" {
		add(root.field("metaTools").field("prefix"), "%s", msg)
	}

	search := root.field("search")
	if c.Search.TopK < 1 {
		add(search.field("topK"), "must be at least 1, got %d", c.Search.TopK)
	}
	switch {
	case c.Search.MaxTopK < 1:
		add(search.field("maxTopK"), "must be at least 1, got %d", c.Search.MaxTopK)
	case c.Search.MaxTopK < c.Search.TopK:
		add(search.field("maxTopK"), "must be at least search.topK (%d), got %d", c.Search.TopK, c.Search.MaxTopK)
	}
	// Written as a negated range so that NaN fails too.
	if !(c.Search.LowRelevance >= 0 && c.Search.LowRelevance <= 1) {
		add(search.field("lowRelevance"), "must be between 0 and 1, got %v", c.Search.LowRelevance)
	}
	out = append(out, c.Search.Embeddings.issues(search.field("embeddings"))...)
	if c.Describe.MaxDefinitions < 1 {
		add(root.field("describe").field("maxDefinitions"), "must be at least 1, got %d", c.Describe.MaxDefinitions)
	}

	out = append(out, globIssues(root.field("include"), c.Include)...)
	out = append(out, globIssues(root.field("exclude"), c.Exclude)...)

	names := make([]string, 0, len(c.Tools))
	for name := range c.Tools {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := root.field("tools").key(name)
		if _, err := CompileGlob(name); err != nil {
			add(p, "%v", err)
		}
		out = append(out, c.Tools[name].issues(p)...)
	}

	out = append(out, globIssues(root.field("directCalls").field("allowedTools"), c.DirectCalls.AllowedTools)...)
	out = append(out, c.Audit.issues(root.field("audit"))...)
	out = append(out, c.Redaction.issues(root.field("redaction"))...)
	out = append(out, c.VM.issues(root.field("vm"))...)

	pol := root.field("policy")
	for i, path := range c.Policy.Paths {
		if strings.TrimSpace(path) == "" {
			add(pol.field("paths").index(i), "must name a .rego file, a data file or a directory, got an empty string")
		}
	}
	if msg := checkQuery(c.Policy.Query); msg != "" {
		add(pol.field("query"), "%s", msg)
	}
	if c.Approval.Timeout <= 0 {
		add(root.field("approval").field("timeout"), "must be a positive duration such as \"2m\", got %v", c.Approval.Timeout)
	}
	out = append(out, c.Upstreams.issues(root.field("upstreams"))...)
	out = append(out, c.Sandbox.issues(root.field("sandbox"))...)
	out = append(out, c.Transport.issues(root.field("transport"))...)
	out = append(out, c.Console.issues(root.field("console"))...)
	out = append(out, c.State.issues(root.field("state"))...)
	return out
}

func (t TransportConfig) issues(p keyPath) []issue {
	if n := t.MaxRequestBytes; n < minRequestBytes || n > maxRequestBytes {
		return []issue{newIssue(p.field("maxRequestBytes"), "must be between 1KiB and 1GiB, got %d bytes", n)}
	}
	return nil
}

// maxSandboxWorkers caps sandbox.maxWorkers: each worker is a process with
// its own runtime, and the pool is a bound, not a target.
const maxSandboxWorkers = 256

// maxSandboxQueue caps sandbox.maxQueuedPerSession: each waiting run holds
// a request open.
const maxSandboxQueue = 4096

// maxReuseRuns bounds sandbox.reuseRuns: past a few thousand runs the
// CPU-time cap of the worker ends it anyway.
const maxReuseRuns = 10000

func (s SandboxConfig) issues(p keyPath) []issue {
	var out []issue
	switch {
	case s.PoolSize < 1:
		out = append(out, newIssue(p.field("poolSize"), "must be at least 1, got %d", s.PoolSize))
	case s.PoolSize > maxSandboxWorkers:
		out = append(out, newIssue(p.field("poolSize"), "must be at most %d, got %d", maxSandboxWorkers, s.PoolSize))
	}
	switch {
	case s.MaxWorkers > maxSandboxWorkers:
		out = append(out, newIssue(p.field("maxWorkers"), "must be at most %d, got %d", maxSandboxWorkers, s.MaxWorkers))
	case s.MaxWorkers < s.PoolSize:
		out = append(out, newIssue(p.field("maxWorkers"), "must be at least sandbox.poolSize (%d), got %d", s.PoolSize, s.MaxWorkers))
	}
	switch {
	case s.MaxRunningPerSession < 0:
		out = append(out, newIssue(p.field("maxRunningPerSession"), "must not be negative (0 means half of sandbox.maxWorkers), got %d", s.MaxRunningPerSession))
	case s.MaxRunningPerSession > s.MaxWorkers:
		out = append(out, newIssue(p.field("maxRunningPerSession"), "must be at most sandbox.maxWorkers (%d), got %d", s.MaxWorkers, s.MaxRunningPerSession))
	}
	switch {
	case s.MaxQueuedPerSession < 0:
		out = append(out, newIssue(p.field("maxQueuedPerSession"), "must not be negative (0 means twice sandbox.maxWorkers), got %d", s.MaxQueuedPerSession))
	case s.MaxQueuedPerSession > maxSandboxQueue:
		out = append(out, newIssue(p.field("maxQueuedPerSession"), "must be at most %d, got %d", maxSandboxQueue, s.MaxQueuedPerSession))
	}
	if s.QueueTimeout <= 0 {
		out = append(out, newIssue(p.field("queueTimeout"), "must be positive, got %v", s.QueueTimeout))
	}
	switch {
	case s.ReuseRuns < 0:
		out = append(out, newIssue(p.field("reuseRuns"), "must not be negative (1 starts a worker for every run, 0 means 100), got %d", s.ReuseRuns))
	case s.ReuseRuns > maxReuseRuns:
		out = append(out, newIssue(p.field("reuseRuns"), "must be at most %d, got %d", maxReuseRuns, s.ReuseRuns))
	}
	if s.ReuseIdle < 0 {
		out = append(out, newIssue(p.field("reuseIdle"), "must not be negative (0 means 30s), got %v", s.ReuseIdle))
	}
	if s.Cgroup != "" && !slices.Contains(CgroupModes, s.Cgroup) {
		out = append(out, newIssue(p.field("cgroup"), "unknown cgroup mode %q; allowed: %s", s.Cgroup, list(CgroupModes)))
	}
	if s.Command != "" && !filepath.IsAbs(s.Command) {
		out = append(out, newIssue(p.field("command"), "must be an absolute path (a worker starts with an empty environment and no PATH), got %q", s.Command))
	}
	return out
}

func (o ToolOverride) issues(p keyPath) []issue {
	var out []issue
	if o.Source != "" && !slices.Contains(toolSources, o.Source) {
		out = append(out, newIssue(p.field("source"), "unknown source %q; allowed: %s", o.Source, list(toolSources)))
	}
	for i, tag := range o.Tags {
		if strings.TrimSpace(tag) == "" {
			out = append(out, newIssue(p.field("tags").index(i), "empty tag"))
		}
	}
	if o.Timeout < 0 || (o.Timeout > 0 && o.Timeout < time.Millisecond) {
		out = append(out, newIssue(p.field("timeout"), "must be a duration of at least 1ms such as \"30s\" or \"2m\" (or left out for the tool's own), got %v", o.Timeout))
	}
	for i, ex := range o.Examples {
		if ex.Input == nil {
			out = append(out, newIssue(p.field("examples").index(i).field("input"), "required (use {} for a tool without arguments)"))
		}
	}
	return out
}

func (l Limits) issues(p keyPath) []issue {
	var out []issue
	add := func(key, format string, args ...any) {
		out = append(out, newIssue(p.field(key), format, args...))
	}
	if l.Timeout <= 0 {
		add("timeout", "must be positive, got %v", l.Timeout)
	}
	if l.MaxToolCalls < 1 {
		add("maxToolCalls", "must be at least 1, got %d", l.MaxToolCalls)
	}
	if l.MaxTimers < 1 {
		add("maxTimers", "must be at least 1, got %d", l.MaxTimers)
	}
	if l.MaxConcurrency < 1 {
		add("maxConcurrency", "must be at least 1, got %d", l.MaxConcurrency)
	}
	if !slices.Contains([]RegexMode{RegexNone, RegexLiteral, RegexFull}, l.Regex) {
		add("regex", "unknown regex mode %q; allowed: %s", l.Regex, list([]RegexMode{RegexNone, RegexLiteral, RegexFull}))
	}
	switch {
	case l.RegexTimeout < 0:
		add("regexTimeout", "must not be negative, got %v", l.RegexTimeout)
	case l.Regex == RegexFull && l.RegexTimeout == 0:
		// Backtracking matches ignore the run's deadline, so full regexes
		// are only safe with their own limit.
		add("regexTimeout", "must be positive when vm.regex is %q", RegexFull)
	}
	for _, b := range []struct {
		key string
		n   int64
	}{
		{"maxLogBytes", l.MaxLogBytes},
		{"maxResultBytes", l.MaxResultBytes},
		{"memoryBytes", l.MemoryBytes},
		{"maxScriptBytes", l.MaxScriptBytes},
	} {
		if b.n <= 0 {
			add(b.key, "must be a positive byte size, got %d", b.n)
		}
	}
	for _, n := range []struct {
		key string
		n   int
	}{
		{"maxScriptLines", l.MaxScriptLines},
		{"maxNestingDepth", l.MaxNestingDepth},
		{"maxStackDepth", l.MaxStackDepth},
	} {
		if n.n < 1 {
			add(n.key, "must be at least 1, got %d", n.n)
		}
	}
	for i, id := range l.BannedIdentifiers {
		if id == "" || strings.ContainsAny(id, " \t\r\n.()[]") {
			out = append(out, newIssue(p.field("bannedIdentifiers").index(i), "%q is not a JavaScript identifier", id))
		}
	}
	if !slices.Contains(Isolations, l.Isolation) {
		add("isolation", "unknown isolation %q; allowed: %s", l.Isolation, list(Isolations))
	}
	for i, lang := range l.Languages {
		switch {
		case !slices.Contains(Languages, lang):
			out = append(out, newIssue(p.field("languages").index(i), "unknown plan language %q; allowed: %s (TypeScript plans are javascript)",
				lang, strings.Join(Languages, ", ")))
		case lang == LanguagePython && l.Isolation != IsolationProcess:
			out = append(out, newIssue(p.field("languages").index(i), "python plans run only in sandboxed worker processes, "+
				"and vm.isolation is %q: set vm.isolation: process, or remove python", l.Isolation))
		}
	}
	return out
}

func globIssues(p keyPath, patterns []string) []issue {
	var out []issue
	for i, pat := range patterns {
		if _, err := CompileGlob(pat); err != nil {
			out = append(out, newIssue(p.index(i), "%v", err))
		}
	}
	return out
}

// checkPrefix returns why prefix cannot start MCP tool names, or "".
func checkPrefix(prefix string) string {
	for _, r := range prefix {
		if !isToolNameRune(r) {
			return fmt.Sprintf("%q contains %q; tool names may use only ASCII letters, digits, '_', '-' and '.'", prefix, r)
		}
	}
	if longest := prefix + MetaDescribe; len(longest) > maxToolNameLen {
		return fmt.Sprintf("is too long: the meta-tool name %q has %d characters, the limit is %d", longest, len(longest), maxToolNameLen)
	}
	return ""
}

func isToolNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.'
}

// list joins allowed values for a message.
func list[T ~string](values []T) string {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// checkQuery checks that q is a Rego reference under data, such as
// data.codecall.decision. The policy package compiles it for real; this
// catches the common slips with a message that says how to write it.
func checkQuery(q string) string {
	if q == "" {
		return "must name the decision rule, e.g. \"data.codecall.decision\""
	}
	parts := strings.Split(q, ".")
	if parts[0] != "data" || len(parts) < 2 {
		return fmt.Sprintf("must be a reference under data, e.g. \"data.codecall.decision\", got %q", q)
	}
	for _, p := range parts[1:] {
		if p == "" || !isRegoName(p) {
			return fmt.Sprintf("%q is not a valid Rego reference: each part after \"data.\" must be a name of letters, digits and underscores", q)
		}
	}
	return ""
}

func isRegoName(s string) bool {
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// issues checks search.embeddings. Keys of the other provider are
// reported rather than ignored: a config that sets url for model2vec
// probably meant the other provider.
func (e EmbeddingsConfig) issues(p keyPath) []issue {
	var out []issue
	add := func(p keyPath, format string, args ...any) {
		out = append(out, newIssue(p, format, args...))
	}
	unused := func(key, value string) {
		if value != "" {
			add(p.field(key), "is not used by provider %q; remove it or change the provider", e.Provider)
		}
	}
	switch e.Provider {
	case EmbeddingsOff:
	case EmbeddingsOpenAI:
		switch u, err := url.Parse(e.URL); {
		case strings.TrimSpace(e.URL) == "":
			add(p.field("url"), "provider openai needs the base URL of an OpenAI-compatible embeddings server, e.g. http://localhost:11434 for Ollama")
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			add(p.field("url"), "must be an http:// or https:// URL with a host, got %q", e.URL)
		}
		if strings.TrimSpace(e.Model) == "" {
			add(p.field("model"), "provider openai needs the server's model name, e.g. nomic-embed-text")
		}
		if e.APIKeyEnv != "" && !isEnvName(e.APIKeyEnv) {
			add(p.field("apiKeyEnv"), "must name an environment variable (letters, digits and _, not starting with a digit), not hold the key itself")
		}
		unused("path", e.Path)
	case EmbeddingsModel2Vec:
		if strings.TrimSpace(e.Path) == "" {
			add(p.field("path"), "provider model2vec needs the model directory (with model.safetensors and tokenizer.json)")
		}
		unused("url", e.URL)
		unused("model", e.Model)
		unused("apiKeyEnv", e.APIKeyEnv)
	default:
		add(p.field("provider"), "unknown provider %q; allowed: \"\" (off), %s, %s", e.Provider, EmbeddingsOpenAI, EmbeddingsModel2Vec)
	}
	// Written as a negated range so that NaN fails too.
	switch {
	case !(e.Weight >= 0 && e.Weight <= 1):
		add(p.field("weight"), "must be between 0 and 1, got %v", e.Weight)
	case e.Weight == 0 && e.Provider != EmbeddingsOff:
		add(p.field("weight"), "must be above 0 when a provider is set (default %v); set provider to \"\" to turn embeddings off", DefaultEmbeddingsWeight)
	}
	return out
}

// isEnvName reports whether s is a portable environment variable name.
func isEnvName(s string) bool {
	for i, r := range s {
		switch {
		case r == '_', 'A' <= r && r <= 'Z', 'a' <= r && r <= 'z':
		case '0' <= r && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}
