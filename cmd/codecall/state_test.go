package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codecall-go/codecall/state/statetest"
)

func TestCheckState(t *testing.T) {
	t.Setenv("STATE_KEY_TEST", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	t.Setenv("STATE_KEY_SHORT", "too-short")
	dbPath := filepath.Join(t.TempDir(), "state.db")
	tests := []struct {
		name, yaml string
		code       int
		want       string
	}{
		{"memory", "preset: balanced\n", 0, "state: memory (this process only"},
		{"file", fmt.Sprintf("preset: balanced\nstate: {store: file, path: %q, keyEnv: STATE_KEY_TEST}\n", dbPath), 0,
			"state: file " + dbPath + ": ok (round trip "},
		{"file, key not set", fmt.Sprintf("preset: balanced\nstate: {store: file, path: %q, keyEnv: STATE_KEY_UNSET}\n", dbPath), 1,
			"state: file " + dbPath + ": UNAVAILABLE: state.keyEnv names STATE_KEY_UNSET, which is not set"},
		{"file, short key", fmt.Sprintf("preset: balanced\nstate: {store: file, path: %q, keyEnv: STATE_KEY_SHORT}\n", dbPath), 1,
			"STATE_KEY_SHORT must hold 32 bytes"},
		{"redis, nobody there", "preset: balanced\nstate: {store: redis, url: \"redis://:pw-secret@127.0.0.1:1/0\", keyEnv: STATE_KEY_TEST}\n", 1,
			"state: redis at 127.0.0.1:1: UNAVAILABLE: state: redis at 127.0.0.1:1 does not answer"},
	}
	if statetest.RedisServer() != "" {
		url := statetest.StartRedis(t)
		tests = append(tests, struct {
			name, yaml string
			code       int
			want       string
		}{"redis", fmt.Sprintf("preset: balanced\nstate: {store: redis, url: %q, keyEnv: STATE_KEY_TEST}\n", url), 0,
			"state: redis at " + strings.TrimSuffix(strings.TrimPrefix(url, "redis://"), "/0") + ": ok (round trip "})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, _ := runCLI(t, "check", "--config", writeFile(t, "codecall.yaml", tc.yaml))
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Fatalf("code %d (want %d), output:\n%s\nwant %q", code, tc.code, out, tc.want)
			}
			if strings.Contains(out, "pw-secret") || strings.Contains(out, "AAECAwQF") {
				t.Fatalf("check repeats a secret:\n%s", out)
			}
		})
	}
}
