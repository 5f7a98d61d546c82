package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
)

func TestHTTPGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	tests := []struct {
		name, addr, token, host, origin, auth string
		allow                                 []string
		want                                  int
	}{
		{"loopback, no origin", "127.0.0.1:8080", "", "127.0.0.1:8080", "", "", nil, http.StatusNoContent},
		{"localhost host", "127.0.0.1:8080", "", "localhost:8080", "", "", nil, http.StatusNoContent},
		{"rebound host", "127.0.0.1:8080", "", "evil.example:8080", "", "", nil, http.StatusForbidden},
		{"foreign origin", "127.0.0.1:8080", "", "127.0.0.1:8080", "https://evil.example", "", nil, http.StatusForbidden},
		{"loopback origin", "127.0.0.1:8080", "", "127.0.0.1:8080", "http://localhost:3000", "", nil, http.StatusNoContent},
		{"allowed origin", "127.0.0.1:8080", "", "127.0.0.1:8080", "https://app.example", "", []string{"https://app.example"}, http.StatusNoContent},
		{"public bind, any host", "0.0.0.0:8080", "", "gw.example:8080", "", "", nil, http.StatusNoContent},
		{"public bind, foreign origin", "0.0.0.0:8080", "", "gw.example:8080", "https://evil.example", "", nil, http.StatusForbidden},
		{"token missing", "127.0.0.1:8080", "t0k", "127.0.0.1:8080", "", "", nil, http.StatusUnauthorized},
		{"token wrong", "127.0.0.1:8080", "t0k", "127.0.0.1:8080", "", "Bearer nope", nil, http.StatusUnauthorized},
		{"token right", "127.0.0.1:8080", "t0k", "127.0.0.1:8080", "", "Bearer t0k", nil, http.StatusNoContent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newHTTPGuard(ok, tt.addr, tt.token, tt.allow)
			r := httptest.NewRequest(http.MethodPost, "http://"+tt.host+"/mcp", nil)
			r.Host = tt.host
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			if tt.auth != "" {
				r.Header.Set("Authorization", tt.auth)
			}
			w := httptest.NewRecorder()
			g.ServeHTTP(w, r)
			if w.Code != tt.want {
				t.Errorf("status %d, want %d (%s)", w.Code, tt.want, w.Body)
			}
		})
	}
}

func TestServeUpstreamsErrors(t *testing.T) {
	tests := []struct {
		file, want string
	}{
		{`{"mcpServers": {"a": {"comand": "x"}}}`, `unknown field "comand"`},
		{`{"mcpServers": {"a": {"command": "x", "url": "http://h/"}}}`, "both command and url"},
		{`{"servers": 3}`, "object mapping server ids"},
		{`[]`, "not a JSON object"},
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(t, "serve", "--upstreams", writeFile(t, "servers.json", tt.file))
		if code != 1 || !contains(out+errOut, tt.want) {
			t.Errorf("%s: code %d, output %q, want it to mention %q", tt.file, code, out+errOut, tt.want)
		}
	}
	code, _, errOut := runCLI(t, "serve", "--token", "x")
	if code != 1 || !contains(errOut, "--http only") {
		t.Errorf("--token without --http: code %d, %q", code, errOut)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestCheckUpstreams(t *testing.T) {
	if _, err := exec.LookPath("npx"); err != nil {
		t.Log("npx is not on PATH: the sample examples/servers.json, whose upstreams run with npx, is not checked")
	} else if code, out, _ := runCLI(t, "check", "--upstreams", "../../examples/servers.json"); code != 0 {
		t.Errorf("the sample examples/servers.json does not pass check: %s", out)
	}
	config := writeFile(t, "codecall.yaml", "upstreams: {file: missing-servers.json}\n")
	if code, out, _ := runCLI(t, "check", "--config", config); code != 1 || !contains(out, "missing-servers.json") {
		t.Errorf("a config naming a missing upstreams file: code %d, %s", code, out)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH to stand for an upstream's command")
	}
	code, out, _ := runCLI(t, "check", "--upstreams", writeFile(t, "servers.json", `{"mcpServers": {"a": {"command": "sh"}, "b": {"url": "http://127.0.0.1:9/mcp"}}}`))
	if code != 0 || !contains(out, ": ok (2 servers)") || !contains(out, "a: stdio, command "+sh) {
		t.Errorf("valid file: code %d, %s", code, out)
	}
	// A command that is not on PATH is a problem; an unset ${VAR} is a
	// warning (serve retries the upstream once it is set and reloaded).
	t.Setenv("CODECALLTEST_SET", "x")
	code, out, _ = runCLI(t, "check", "--upstreams", writeFile(t, "servers.json", `{"mcpServers": {
		"a": {"command": "codecall-no-such-command"},
		"b": {"command": "sh", "env": {"K": "${CODECALLTEST_UNSET}", "S": "${CODECALLTEST_SET}"}},
		"c": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${CODECALLTEST_UNSET_TOKEN}"}}}}`))
	if code != 1 || !contains(out, ": 1 PROBLEM (a)") || !contains(out, `a: command "codecall-no-such-command" cannot be started`) ||
		!contains(out, "warning: b: ${CODECALLTEST_UNSET} is not set") || !contains(out, "warning: c: ${CODECALLTEST_UNSET_TOKEN} is not set") ||
		contains(out, "CODECALLTEST_SET}") {
		t.Errorf("missing command and unset variables: code %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "check", "--upstreams", writeFile(t, "servers.json", `{"mcpServers": {"b": {"command": "sh", "env": {"K": "${CODECALLTEST_UNSET}"}}}}`))
	if code != 0 || !contains(out, ": ok with 1 warning (1 server)") {
		t.Errorf("only a warning: code %d\n%s", code, out)
	}
	// A syntax error has its line and column.
	code, out, _ = runCLI(t, "check", "--upstreams", writeFile(t, "servers.json", "{\"mcpServers\": {\n  \"a\": {\"command\": \"sh\",}\n}}"))
	if code != 1 || !contains(out, "line 2, column 25") {
		t.Errorf("syntax error: code %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "check", "--upstreams", writeFile(t, "servers.json", `{"mcpServers": {"a": {"url": "ftp://x"}}}`))
	if code != 1 || !contains(out, `mcpServers["a"].url`) {
		t.Errorf("bad url: code %d, %s", code, out)
	}
}

// serve --http puts the guard in front of the endpoint.
func TestServeHTTPGuarded(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var out, errb mcptest.Buffer
	go func() {
		done <- run(ctx, []string{"serve", "--http", addr, "--token", "s3cret"}, strings.NewReader(""), &out, &errb)
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d: %s", code, errb.String())
		}
	}()
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(auth, origin string) int {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	deadline := time.Now().Add(10 * time.Second)
	for post("", "") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("serve --http never listened: %s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, tt := range []struct {
		auth, origin string
		want         int
	}{
		{"", "", http.StatusUnauthorized},
		{"Bearer wrong", "", http.StatusUnauthorized},
		{"Bearer s3cret", "https://evil.example", http.StatusForbidden},
		{"Bearer s3cret", "", http.StatusOK},
	} {
		if got := post(tt.auth, tt.origin); got != tt.want {
			t.Errorf("auth %q origin %q: status %d, want %d", tt.auth, tt.origin, got, tt.want)
		}
	}
}

// codecall check shows each upstream's sandbox profile and what a
// sandboxed one sees, warns about sandbox: none, and refuses a server
// whose files lie outside its view, naming the setting to change.
func TestCheckShowsSandbox(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on PATH to stand for an upstream's command")
	}
	dir := t.TempDir()
	servers := fmt.Sprintf(`{"mcpServers": {
		"confined": {"command": "sh", "cwd": %q, "paths": [%q]},
		"networked": {"command": "sh", "allowNetwork": true},
		"open": {"command": "sh", "sandbox": "none"},
		"outside": {"command": "sh", "args": [%q]},
		"remote": {"url": "http://127.0.0.1:9/mcp"}}}`, dir, dir+":ro", dir)
	code, out, _ := runCLI(t, "check", "--upstreams", writeFile(t, "servers.json", servers))
	for _, want := range []string{
		"confined: sees the runtime directories read-only, read-write: " + dir + ", read-only:",
		"network off",
		"networked: stdio, command",
		"sandbox default+network",
		"warning: open: sandbox: none runs the server with CodeCall's own rights",
		`outside: sandbox: argument 1 "` + dir + `" is outside the upstream's file-system view (add "` + dir + `" to paths`,
		"remote: http, http://127.0.0.1:9/mcp, sandbox remote",
	} {
		if !contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
	if code == 0 {
		t.Errorf("check passed a server whose argument is outside its view:\n%s", out)
	}
}
