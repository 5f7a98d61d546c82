package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/codecall-go/codecall/state"
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

// TestServeHealthAndState: serve --http with a file store answers its
// health endpoints without a token, and is ready once the catalog and the
// store are.
func TestServeHealthAndState(t *testing.T) {
	t.Setenv("STATE_KEY_TEST", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	t.Setenv("SERVE_TOKEN_TEST", "serve-token-0123456789abcdef")
	addr := freeAddr(t, "127.0.0.1")
	db := filepath.Join(t.TempDir(), "state.db")
	config := writeFile(t, "codecall.yaml", fmt.Sprintf("preset: balanced\nvm: {isolation: inprocess}\nstate: {store: file, path: %q, keyEnv: STATE_KEY_TEST}\n", db))
	stderr := serveInBackground(t, "serve", "--http", addr, "--config", config, "--token-env", "SERVE_TOKEN_TEST")
	waitHTTP(t, addr, stderr)
	for path, want := range map[string]string{"/healthz": "ok\n", "/readyz": "ready\n"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(body) != want {
			t.Errorf("GET %s: %d %q, want 200 %q", path, resp.StatusCode, body, want)
		}
	}
	if !strings.Contains(stderr.String(), "kept in the state store") {
		t.Errorf("serve does not say where paused plans are kept:\n%s", stderr.String())
	}
	// The store is the server's: a second process cannot open it, and
	// check says it is in use rather than broken.
	if _, err := state.OpenFile(db); !errors.Is(err, state.ErrLocked) {
		t.Errorf("the file store is not held by the server: %v", err)
	}
	if code, out, _ := runCLI(t, "check", "--config", config); code != 0 || !strings.Contains(out, "state: file "+db+": in use") {
		t.Errorf("check while the server runs: %d\n%s", code, out)
	}
}

func TestReadiness(t *testing.T) {
	var catalog atomic.Bool
	down := pingFunc(func(context.Context) error { return errors.New("dial tcp 10.0.0.1:6379: refused, password=hunter2") })
	for _, tc := range []struct {
		name     string
		catalog  bool
		store    pinger
		draining bool
		want     []string
	}{
		{"ready", true, nil, false, nil},
		{"catalog starting", false, nil, false, []string{"catalog: upstreams are still starting"}},
		{"store down", true, down, false, []string{"state: the state store does not answer"}},
		{"draining", true, nil, true, []string{"draining: the server is stopping"}},
	} {
		catalog.Store(tc.catalog)
		h := &health{catalog: &catalog, store: tc.store}
		h.draining.Store(tc.draining)
		got := h.notReady(context.Background())
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

type pingFunc func(context.Context) error

func (f pingFunc) Ping(ctx context.Context) error { return f(ctx) }
