package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/codecall-go/codecall/presets"
)

// npmServers returns the node executable and the node_modules directory
// holding the npm reference servers pinned in e2e/client/package.json, as
// the end-to-end tests install them (CODECALLTEST_NODE_CACHE, or the user
// cache keyed by the lock file's hash). It skips when they are not there.
func npmServers(t *testing.T) (node, modules string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the sandbox tests with the npm reference servers start Node.js")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the sandbox tests with the npm reference servers are skipped")
	}
	dir := os.Getenv("CODECALLTEST_NODE_CACHE")
	if dir == "" {
		lock, err := os.ReadFile(filepath.Join("..", "e2e", "client", "package-lock.json"))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(lock)
		base, err := os.UserCacheDir()
		if err != nil {
			t.Skipf("no user cache directory: %v", err)
		}
		dir = filepath.Join(base, "codecall-e2e", hex.EncodeToString(sum[:])[:16])
	}
	modules = filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "@modelcontextprotocol", "server-filesystem", "dist", "index.js")); err != nil {
		t.Skipf("the npm reference servers are not installed in %s (go test ./e2e installs them; or set CODECALLTEST_NODE_CACHE)", dir)
	}
	return node, modules
}

// sandboxable skips when this host cannot confine an upstream.
func sandboxable(t *testing.T) {
	t.Helper()
	u := presets.Upstream{Command: "true"}
	prof, err := sandboxProfileOf(u)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := prof.Command("true", nil, []string{"PATH=/usr/bin:/bin"})
	if err != nil {
		t.Skipf("this platform cannot confine upstreams: %v", err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("this host cannot confine upstreams (%v: %s)", err, out)
	}
}

// The filesystem server under sandbox default reads and writes its
// allowed directory and cannot read the gateway's files, even in a
// directory it was told it may serve: the sandbox, not the server's own
// check, refuses.
func TestSandboxedFilesystemServer(t *testing.T) {
	sandboxable(t)
	node, modules := npmServers(t)
	base := t.TempDir()
	files := filepath.Join(base, "files")
	if err := os.Mkdir(files, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(base, "gateway-secret.txt")
	if err := os.WriteFile(secret, []byte("the gateway's own file"), 0o600); err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(modules, "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	// The server may serve files and /tmp; the gateway's files are under
	// the host's /tmp, which the sandbox replaces with a private one.
	fs := presets.Upstream{Command: node, Args: []string{entry, files, "/tmp"}, Paths: []string{modules + ":ro", files}}
	g, _ := newGateway(t, map[string]presets.Upstream{"fs": fs})
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := g.Status(); len(st) != 1 || st[0].State != stateReady || st[0].Sandbox != presets.SandboxDefault {
		t.Fatalf("status: %+v", st)
	}
	s := connect(t, g.Server())
	if res := call(t, s, "fs.write_file", map[string]any{"path": filepath.Join(files, "note.txt"), "content": "inside"}); res.IsError {
		t.Fatalf("writing in the allowed directory: %s", text(res))
	}
	if b, err := os.ReadFile(filepath.Join(files, "note.txt")); err != nil || string(b) != "inside" {
		t.Fatalf("the file written through the sandboxed server: %q, %v", b, err)
	}
	res := call(t, s, "fs.read_text_file", map[string]any{"path": secret})
	if !res.IsError || strings.Contains(text(res), "the gateway's own file") || !strings.Contains(text(res), "ENOENT") {
		t.Fatalf("reading the gateway's file: %s (want the sandbox's ENOENT)", text(res))
	}
}

// The everything server cannot reach a socket of the host with the
// network off, and can with allowNetwork.
func TestSandboxedServerNetwork(t *testing.T) {
	sandboxable(t)
	node, modules := npmServers(t)
	var hits atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("hello from the host"))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	url := "http://" + ln.Addr().String() + "/file.txt"
	entry := filepath.Join(modules, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	for _, tc := range []struct {
		name    string
		network bool
	}{{"network off", false}, {"allowNetwork", true}} {
		t.Run(tc.name, func(t *testing.T) {
			before := hits.Load()
			u := presets.Upstream{Command: node, Args: []string{entry, "stdio"}, Paths: []string{modules + ":ro"}, AllowNetwork: tc.network}
			g, _ := newGateway(t, map[string]presets.Upstream{"ev": u})
			if err := g.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			s := connect(t, g.Server())
			res := call(t, s, "ev.gzip-file-as-resource", map[string]any{"name": "f.gz", "data": url, "outputType": "resource"})
			reached := hits.Load() > before
			if tc.network != reached || tc.network == res.IsError {
				t.Fatalf("network %v: the host's server was reached: %v; result (error %v): %.300s", tc.network, reached, res.IsError, text(res))
			}
		})
	}
}

// A server that needs a path outside its view fails at start, and the
// reason names the rule and the setting that would change it; with
// sandbox none it runs.
func TestSandboxRefusalsNameTheRule(t *testing.T) {
	sandboxable(t)
	node, modules := npmServers(t)
	entry := filepath.Join(modules, "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	outside := t.TempDir()
	tests := []struct {
		name  string
		u     presets.Upstream
		want  string // in the upstream's error; "" for ready
		state string
	}{
		{"the server's script outside the view", presets.Upstream{Command: node, Args: []string{entry, outside}},
			`argument 1 "` + entry + `" is outside the upstream's file-system view (add "` + entry + `" to paths`, stateFailed},
		{"the served directory outside the view", presets.Upstream{Command: node, Args: []string{entry, outside}, Paths: []string{modules + ":ro"}},
			`argument 2 "` + outside + `" is outside the upstream's file-system view`, stateFailed},
		{"a path it reads at start outside the view", presets.Upstream{Command: node, Args: []string{"-e", "require('fs').readFileSync(" + jsString(filepath.Join(outside, "config.json")) + ")"}},
			"it runs under sandbox: default", stateFailed},
		{"sandbox none", presets.Upstream{Command: node, Args: []string{entry, outside}, Sandbox: presets.SandboxNone}, "", stateReady},
	}
	if err := os.WriteFile(filepath.Join(outside, "config.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := newGateway(t, map[string]presets.Upstream{"up": tc.u})
			_ = g.Start(context.Background())
			st := g.Status()
			if len(st) != 1 || st[0].State != tc.state || !strings.Contains(st[0].Error, tc.want) {
				t.Fatalf("status %+v; want state %s and %q in the error", st, tc.state, tc.want)
			}
		})
	}
}

func jsString(s string) string { return "'" + strings.ReplaceAll(s, "'", "\\'") + "'" }

func TestParseServersSandboxKeys(t *testing.T) {
	tests := []struct {
		name, file string
		want       presets.Upstream // compared on the sandbox keys
		err        string
	}{
		{"every key", `{"mcpServers": {"a": {"command": "x", "sandbox": "default", "allowNetwork": true, "paths": ["/srv:ro"], "maxMemory": "512MiB", "maxProcesses": 64}}}`,
			presets.Upstream{Sandbox: "default", AllowNetwork: true, Paths: []string{"/srv:ro"}, MaxMemory: 512 << 20, MaxProcesses: 64}, ""},
		{"memory in bytes", `{"mcpServers": {"a": {"command": "x", "maxMemory": 1048576}}}`, presets.Upstream{MaxMemory: 1 << 20}, ""},
		{"bad memory", `{"mcpServers": {"a": {"command": "x", "maxMemory": true}}}`, presets.Upstream{}, `mcpServers["a"]: maxMemory: true is not a byte size`},
		{"bad sandbox", `{"mcpServers": {"a": {"command": "x", "sandbox": "off"}}}`, presets.Upstream{}, `mcpServers["a"].sandbox: unknown sandbox "off"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			servers, err := ParseServers([]byte(tc.file))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseServers: %v; want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := servers["a"]
			if got.Sandbox != tc.want.Sandbox || got.AllowNetwork != tc.want.AllowNetwork || strings.Join(got.Paths, ",") != strings.Join(tc.want.Paths, ",") ||
				got.MaxMemory != tc.want.MaxMemory || got.MaxProcesses != tc.want.MaxProcesses {
				t.Errorf("got %+v, want the sandbox keys of %+v", got, tc.want)
			}
		})
	}
}

func TestSandboxStartHint(t *testing.T) {
	tests := []struct {
		name    string
		profile string
		err     error
		want    bool
	}{
		{"namespaces refused", presets.SandboxDefault, fmt.Errorf("failed to start command: fork/exec /proc/self/exe: %w", syscall.EPERM), true},
		{"namespace limit reached", presets.SandboxDefaultNetwork, fmt.Errorf("fork/exec: %w", syscall.ENOSPC), true},
		{"unconfined server", presets.SandboxNone, fmt.Errorf("fork/exec: %w", syscall.EPERM), false},
		{"another error", presets.SandboxDefault, errors.New("exec: no such file"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := sandboxStartHint(tc.profile, tc.err)
			if (got != "") != tc.want || (tc.want && !strings.Contains(got, "sandbox: none")) {
				t.Errorf("hint %q; want one: %v", got, tc.want)
			}
		})
	}
}
