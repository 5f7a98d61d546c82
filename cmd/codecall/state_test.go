package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/internal/mcptest"
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

// TestReadinessReusesAPing: the readiness endpoint needs no token, so a
// flood of checks must not become a flood of store round trips.
func TestReadinessReusesAPing(t *testing.T) {
	var catalog atomic.Bool
	catalog.Store(true)
	var pings atomic.Int32
	h := &health{catalog: &catalog, store: pingFunc(func(context.Context) error {
		pings.Add(1)
		return nil
	})}
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if why := h.notReady(context.Background()); why != nil {
				t.Errorf("not ready: %q", why)
			}
		}()
	}
	wg.Wait()
	if n := pings.Load(); n != 1 {
		t.Errorf("50 checks within %v pinged the store %d times, want 1", readyReuse, n)
	}
	// A ping older than readyReuse is not reused.
	h.pingMu.Lock()
	h.pingedAt = time.Now().Add(-2 * readyReuse)
	h.pingMu.Unlock()
	h.notReady(context.Background())
	if n := pings.Load(); n != 2 {
		t.Errorf("a check after %v pinged %d times in all, want 2", readyReuse, n)
	}
}

type pingFunc func(context.Context) error

func (f pingFunc) Ping(ctx context.Context) error { return f(ctx) }

// TestServeDrainsOnShutdown: when serve --http is told to stop (SIGTERM,
// here its context), a plan in flight still finishes, past the 5 s an
// HTTP shutdown used to allow, and the listener closes at once.
func TestServeDrainsOnShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 6 s for a plan")
	}
	t.Setenv("FLEET_TOKEN", fleetToken)
	addr := freeAddr(t, "127.0.0.1")
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	config := writeFile(t, "codecall.yaml", fmt.Sprintf("preset: balanced\nvm: {isolation: inprocess, timeout: 20s}\naudit: {path: %q}\n", auditPath))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr mcptest.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--http", addr, "--config", config, "--token-env", "FLEET_TOKEN"}, strings.NewReader(""), io.Discard, &stderr)
	}()
	waitHTTP(t, addr, &stderr)
	f := &fleet{t: t}
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	got := make(chan answer, 1)
	go func() {
		res, _, err := f.tryPost(addr, `await new Promise(r => setTimeout(r, 6000)); return 'done'`, "", "")
		got <- answer{res, err}
	}()
	// The cause: the run has started (its execute.start is in the audit
	// log) before the server is told to stop.
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(auditPath)
		if strings.Contains(string(b), `"event":"execute.start"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the plan did not start: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	// The listener closes at once: a load balancer sends no more work.
	closedBy := time.Now().Add(5 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(closedBy) {
			t.Fatal("still listening 5 s after shutdown began")
		}
		time.Sleep(20 * time.Millisecond)
	}
	a := <-got
	if a.err != nil {
		t.Fatalf("the plan in flight was cut off: %v\n%s", a.err, stderr.String())
	}
	if _, result, _ := runResult(t, a.res); result != `"done"` {
		t.Fatalf("result %s", result)
	}
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "draining") {
		t.Errorf("serve does not say it drains:\n%s", stderr.String())
	}
}
