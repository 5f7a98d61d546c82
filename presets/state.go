package presets

import (
	"strings"
	"time"
)

// StateConfig says where CodeCall keeps what outlives a request: plans
// paused for a person's approval with their journals, session trust and
// approval decisions (package state). It is read when the server starts.
type StateConfig struct {
	// Store is memory (the default: one process, a restart forgets), file
	// (a bbolt file at Path: one process, survives restarts) or redis (a
	// Redis or Valkey server at URL, shared by replicas).
	Store string `koanf:"store" json:"store"`
	// Path is the file store's bbolt file.
	Path string `koanf:"path" json:"path,omitempty"`
	// URL is the redis store's redis:// or rediss:// URL. A password in it
	// is better given through CODECALL_STATE_URL than in the file.
	URL string `koanf:"url" json:"url,omitempty"`
	// KeyEnv names the environment variable holding the key (32 bytes,
	// base64 or hex) that encrypts journals at rest; required for file and
	// redis, whose entries outlive the process. Every replica reads the
	// same key.
	KeyEnv string `koanf:"keyEnv" json:"keyEnv,omitempty"`
	// ResumeLease is how long one request that resumes a paused plan holds
	// it against every other (0: DefaultResumeLease). A replica that dies
	// while it resumes a plan leaves it locked this long, so it should be
	// a little longer than the longest plan, and no longer.
	ResumeLease time.Duration `koanf:"resumeLease" json:"resumeLease,omitempty"`
}

// DefaultResumeLease is state.resumeLease's default, and its bounds.
const (
	DefaultResumeLease = 5 * time.Minute
	MinResumeLease     = 10 * time.Second
	MaxResumeLease     = time.Hour
)

// The stores state.store names.
const (
	StateMemory = "memory"
	StateFile   = "file"
	StateRedis  = "redis"
)

// Durable reports whether the store outlives the process.
func (s StateConfig) Durable() bool { return s.Store == StateFile || s.Store == StateRedis }

func (s StateConfig) issues(p keyPath) []issue {
	var out []issue
	switch s.Store {
	case StateMemory, "":
	case StateFile:
		if strings.TrimSpace(s.Path) == "" {
			out = append(out, newIssue(p.field("path"), "must name the store's file when state.store is file, e.g. /var/lib/codecall/state.db"))
		}
	case StateRedis:
		if u := strings.TrimSpace(s.URL); !strings.HasPrefix(u, "redis://") && !strings.HasPrefix(u, "rediss://") && !strings.HasPrefix(u, "unix://") {
			// The value is not repeated: it may hold a password.
			out = append(out, newIssue(p.field("url"), "must be a redis://, rediss:// or unix:// URL when state.store is redis, e.g. redis://127.0.0.1:6379/0"))
		}
	default:
		out = append(out, newIssue(p.field("store"), "must be memory, file or redis, got %q", s.Store))
	}
	if s.ResumeLease != 0 && (s.ResumeLease < MinResumeLease || s.ResumeLease > MaxResumeLease) {
		out = append(out, newIssue(p.field("resumeLease"), "must be between %v and %v (a little longer than the longest plan), got %v", MinResumeLease, MaxResumeLease, s.ResumeLease))
	}
	switch {
	case s.KeyEnv != "" && !envNamePattern.MatchString(s.KeyEnv):
		out = append(out, newIssue(p.field("keyEnv"), "must be an environment variable name (letters, digits, _), got %q", s.KeyEnv))
	case s.KeyEnv != "" && strings.HasPrefix(s.KeyEnv, EnvPrefix):
		out = append(out, newIssue(p.field("keyEnv"), "must not start with %s, which is reserved for configuration overrides; use e.g. STATE_KEY", EnvPrefix))
	case s.Durable() && s.KeyEnv == "":
		out = append(out, newIssue(p.field("keyEnv"), "must name the environment variable holding the key that encrypts journals at rest when state.store is %s, e.g. STATE_KEY (set it with `openssl rand -base64 32`)", s.Store))
	}
	return out
}
