package presets

import (
	"strings"
	"testing"
	"time"
)

func TestStateConfig(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		key, want  string // "" when the config is valid
	}{
		{"default", "mode: codecall_only\n", "", ""},
		{"memory", "state: {store: memory}\n", "", ""},
		{"file", "state: {store: file, path: /var/lib/codecall/state.db, keyEnv: STATE_KEY}\n", "", ""},
		{"redis", "state: {store: redis, url: \"redis://127.0.0.1:6379/0\", keyEnv: STATE_KEY}\n", "", ""},
		{"unknown store", "state: {store: etcd}\n", "state.store", `must be memory, file or redis, got "etcd"`},
		{"file without path", "state: {store: file, keyEnv: STATE_KEY}\n", "state.path", "must name the store's file"},
		{"redis without url", "state: {store: redis, keyEnv: STATE_KEY}\n", "state.url", "must be a redis://"},
		{"redis url not repeated", "state: {store: redis, url: \"http://u:hunter2@h\", keyEnv: STATE_KEY}\n", "state.url", "e.g. redis://127.0.0.1:6379/0"},
		{"durable without key", "state: {store: file, path: s.db}\n", "state.keyEnv", "encrypts journals at rest"},
		{"bad key name", "state: {keyEnv: \"STATE KEY\"}\n", "state.keyEnv", "must be an environment variable name"},
		{"reserved key name", "state: {keyEnv: CODECALL_STATE_KEY}\n", "state.keyEnv", "reserved for configuration overrides"},
		{"unknown state key", "state: {stroe: file}\n", "state.stroe", `did you mean "store"?`},
		{"resume lease", "state: {resumeLease: 90s}\n", "", ""},
		{"resume lease too short", "state: {resumeLease: 1s}\n", "state.resumeLease", "must be between 10s and 1h0m0s"},
		{"resume lease too long", "state: {resumeLease: 48h}\n", "state.resumeLease", "a little longer than the longest plan"},
		{"resume lease not a duration", "state: {resumeLease: soon}\n", "state.resumeLease", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.yaml), nil)
			if tc.name == "resume lease" && err == nil && cfg.State.ResumeLease != 90*time.Second {
				t.Fatalf("resumeLease read as %v", cfg.State.ResumeLease)
			}
			if tc.want == "" && tc.key == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse accepted %q", tc.yaml)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.key) || !strings.Contains(msg, tc.want) {
				t.Fatalf("Parse: %v\nwant %s: ...%s...", err, tc.key, tc.want)
			}
			if strings.Contains(msg, "hunter2") {
				t.Fatalf("the error repeats the URL's password: %v", err)
			}
		})
	}
}
