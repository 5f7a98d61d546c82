package presets

// ConsoleConfig turns on the operator console of codecall serve --http
// (package console) and, with it, approval out of band: a call whose
// client cannot show an approval prompt waits for an operator to answer
// it in the console or with codecall approvals. middleware.Wrap ignores
// it: a program that wraps its own server mounts the console itself. It is
// read when the command starts.
type ConsoleConfig struct {
	// Enabled serves the console under /console (default false).
	Enabled bool `koanf:"enabled" json:"enabled"`
	// TokenEnv names the environment variable holding the console's
	// bearer token (at least 16 bytes); required when Enabled. The token
	// itself never sits in the config file.
	TokenEnv string `koanf:"tokenEnv" json:"tokenEnv,omitempty"`
	// AllowRemote serves the console to clients at any address; by
	// default only loopback clients are served (default false).
	AllowRemote bool `koanf:"allowRemote" json:"allowRemote"`
	// MaxRuns bounds the recent runs kept in memory (default 200; 0 means
	// the default).
	MaxRuns int `koanf:"maxRuns" json:"maxRuns"`
	// MaxEvents bounds the audit events kept in memory for the console's
	// search (default 10000; 0 means the default).
	MaxEvents int `koanf:"maxEvents" json:"maxEvents"`
}

// The bounds of console.maxRuns and console.maxEvents: the store is in
// memory, and a run keeps at most 2,000 events.
const (
	maxConsoleRuns   = 10000
	maxConsoleEvents = 1000000
)

func (c ConsoleConfig) issues(p keyPath) []issue {
	var out []issue
	switch {
	case c.TokenEnv != "" && !envNamePattern.MatchString(c.TokenEnv):
		out = append(out, newIssue(p.field("tokenEnv"), "must be an environment variable name (letters, digits, _), got %q", c.TokenEnv))
	case c.TokenEnv != "" && len(c.TokenEnv) >= len(EnvPrefix) && c.TokenEnv[:len(EnvPrefix)] == EnvPrefix:
		out = append(out, newIssue(p.field("tokenEnv"), "must not start with %s, which is reserved for configuration overrides; use e.g. CONSOLE_TOKEN", EnvPrefix))
	case c.Enabled && c.TokenEnv == "":
		out = append(out, newIssue(p.field("tokenEnv"), "must name the environment variable holding the console's token when console.enabled is true, e.g. CONSOLE_TOKEN"))
	}
	if c.MaxRuns < 0 || c.MaxRuns > maxConsoleRuns {
		out = append(out, newIssue(p.field("maxRuns"), "must be between 1 and %d (0 for the default, 200), got %d", maxConsoleRuns, c.MaxRuns))
	}
	if c.MaxEvents < 0 || c.MaxEvents > maxConsoleEvents {
		out = append(out, newIssue(p.field("maxEvents"), "must be between 1 and %d (0 for the default, 10000), got %d", maxConsoleEvents, c.MaxEvents))
	}
	return out
}
