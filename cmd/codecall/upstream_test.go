package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/gateway"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
)

// upstreamVar makes the test binary an upstream MCP server on stdio with
// one tool, <value>_echo.
const upstreamVar = "CODECALLTEST_CMD_UPSTREAM"

// cliVar makes the test binary the codecall command: it runs run with
// its arguments. With chainVar set to a file, it also appends a line with
// its gateway nesting depth when it starts and its exit code when it ends.
const (
	cliVar   = "CODECALLTEST_CMD_CLI"
	chainVar = "CODECALLTEST_CMD_CHAIN"
)

func TestMain(m *testing.M) {
	if os.Getenv(cliVar) != "" {
		os.Exit(runAsCLI())
	}
	if path := os.Getenv(countedVar); path != "" {
		serveCounted(path)
		os.Exit(0)
	}
	if name := os.Getenv(upstreamVar); name != "" {
		srv := server.NewMCPServer(name, "1")
		srv.AddTool(mcp.NewTool(name+"_echo", mcp.WithDescription("Echo the text."), mcp.WithString("text"), mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false)),
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(req.GetString("text", "")), nil
			})
		_ = server.ServeStdio(srv)
		os.Exit(0)
	}
	os.Exit(mcptest.RunWithStateDir(m.Run))
}

func runAsCLI() int {
	note := func(format string, args ...any) {
		if path := os.Getenv(chainVar); path != "" {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err == nil {
				fmt.Fprintf(f, format+"\n", args...)
				f.Close()
			}
		}
	}
	depth := os.Getenv(presets.EnvGatewayDepth)
	note("start depth=%s", depth)
	// As main does: a gateway stopping its upstreams sends SIGTERM to
	// those that do not exit within a moment of their stdin closing.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	note("exit depth=%s code=%d", depth, code)
	return code
}

func serversJSON(t *testing.T, names ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	servers := map[string]any{}
	for _, n := range names {
		servers[n] = map[string]any{"command": exe, "env": map[string]string{upstreamVar: n}, "paths": []string{filepath.Dir(exe) + ":ro"}}
	}
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// codecall serve --upstreams serves the upstream's tools behind CodeCall and
// picks up an edit of the upstreams file without a restart.
func TestServeUpstreamsAndReloadOnEdit(t *testing.T) {
	dir := t.TempDir()
	servers := filepath.Join(dir, "servers.json")
	if err := os.WriteFile(servers, []byte(serversJSON(t, "alpha")), 0o600); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "codecall.yaml")
	if err := os.WriteFile(config, []byte("tools:\n  \"*\": {visibleInListTools: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	var out, errb mcptest.Buffer
	done := make(chan int)
	go func() {
		done <- run(context.Background(), []string{"serve", "--upstreams", servers, "--config", config}, inR, &out, &errb)
	}()
	send := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; stdout:\n%s\nstderr:\n%s", what, out.String(), errb.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"alpha.alpha_echo","arguments":{"text":"via gateway"}}}`)
	waitFor("the upstream's answer", func() bool { return strings.Contains(out.String(), `"id":2`) })
	if !strings.Contains(out.String(), "via gateway") {
		t.Fatalf("alpha.alpha_echo did not answer:\n%s", out.String())
	}

	if err := os.WriteFile(servers, []byte(serversJSON(t, "alpha", "beta")), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor("beta to start after the edit", func() bool { return strings.Contains(errb.String(), "upstream=beta") })
	for i := 3; ; i++ {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"beta.beta_echo","arguments":{"text":"reloaded"}}}`, i))
		waitFor("an answer", func() bool { return strings.Contains(out.String(), fmt.Sprintf(`"id":%d`, i)) })
		if strings.Contains(out.String(), "reloaded") {
			break
		}
		if i > 50 {
			t.Fatalf("beta.beta_echo never answered:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d: %s", code, errb.String())
	}
}

func TestSearchUpstreams(t *testing.T) {
	servers := writeFile(t, "servers.json", serversJSON(t, "alpha", "beta"))
	code, out, errOut := runCLI(t, "search", "--upstreams", servers, "--app", "beta", "--json", "echo the text")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Tools []struct{ Name, AppID, Source, SandboxProfile string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(res.Tools) != 1 || res.Tools[0].Name != "beta.beta_echo" || res.Tools[0].AppID != "beta" || res.Tools[0].Source != "upstream" || res.Tools[0].SandboxProfile != "default" {
		t.Errorf("search --app beta = %+v", res.Tools)
	}
}

// A tool whose definition differs from the one pinned in the state
// directory is held back at start, with an upstream.quarantine audit
// event; codecall upstreams accept serves it again.
func TestUpstreamsQuarantineAndAccept(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	auditLog := filepath.Join(dir, "audit.jsonl")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	// alpha's tool was pinned with another definition than it has now.
	pinned := `{"alpha": {"alpha_echo": {"hash": "0000000000000000000000000000000000000000000000000000000000000000"}}}`
	if err := os.WriteFile(filepath.Join(state, gateway.PinsFile), []byte(pinned), 0o600); err != nil {
		t.Fatal(err)
	}
	config := writeFile(t, "codecall.yaml", fmt.Sprintf("audit: {path: %q}\nupstreams: {stateDir: %q}\n", auditLog, state))
	servers := writeFile(t, "servers.json", serversJSON(t, "alpha", "beta"))
	code, out, errOut := runCLI(t, "search", "--config", config, "--upstreams", servers, "--json", "echo the text")
	if code != 0 {
		t.Fatalf("search: exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "alpha.alpha_echo") || !strings.Contains(out, "beta.beta_echo") {
		t.Errorf("search served the held-back tool, or not the other: %s", out)
	}
	b, err := os.ReadFile(auditLog)
	if err != nil || !strings.Contains(string(b), `"upstream.quarantine"`) || !strings.Contains(string(b), "alpha.alpha_echo") {
		t.Errorf("audit log: %s, %v", b, err)
	}

	code, out, errOut = runCLI(t, "upstreams", "accept", "--config", config, "alpha.alpha_echo")
	if code != 0 || !strings.Contains(out, "accepted alpha/alpha_echo") {
		t.Fatalf("accept: exit %d: %s %s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "search", "--config", config, "--upstreams", servers, "--json", "echo the text")
	if code != 0 || !strings.Contains(out, "alpha.alpha_echo") {
		t.Errorf("after accept: exit %d: %s", code, out)
	}
	code, _, errOut = runCLI(t, "upstreams", "accept", "--state-dir", state, "nobody")
	if code != 1 || !strings.Contains(errOut, `no upstream or tool "nobody"`) {
		t.Errorf("accept of an unknown target: exit %d: %s", code, errOut)
	}
}

// An upstream that is down is named in search's warnings, with why, since
// when and when it is retried, instead of its tools silently missing; the
// tools of a running upstream are not flagged.
func TestSearchSaysWhichUpstreamIsDown(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH to stand for a broken upstream")
	}
	var servers map[string]map[string]any
	if err := json.Unmarshal([]byte(serversJSON(t, "alpha")), &servers); err != nil {
		t.Fatal(err)
	}
	servers["mcpServers"]["broken"] = map[string]any{"command": sh, "args": []string{"-c", "echo the server is broken >&2; exit 3"}}
	b, _ := json.Marshal(servers)
	code, out, errOut := runCLI(t, "search", "--upstreams", writeFile(t, "servers.json", string(b)), "--json", "echo the text")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Tools []struct {
			Name        string
			Unavailable bool
		}
		Warnings []struct{ Type, Message string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	var msg string
	for _, w := range res.Warnings {
		if w.Type == "upstream_unavailable" {
			msg = w.Message
		}
	}
	for _, want := range []string{`upstream "broken" is not running since `, "the server is broken", "it is retried at ", "UNAVAILABLE"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the upstream_unavailable warning %q lacks %q; output %s", msg, want, out)
		}
	}
	if len(res.Tools) == 0 || res.Tools[0].Name != "alpha.alpha_echo" || res.Tools[0].Unavailable {
		t.Errorf("the running upstream's tool: %+v", res.Tools)
	}
}
