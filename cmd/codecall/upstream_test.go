package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

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
	os.Exit(m.Run())
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
		servers[n] = map[string]any{"command": exe, "env": map[string]string{upstreamVar: n}}
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
		Tools []struct{ Name, AppID, Source string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(res.Tools) != 1 || res.Tools[0].Name != "beta.beta_echo" || res.Tools[0].AppID != "beta" || res.Tools[0].Source != "upstream" {
		t.Errorf("search --app beta = %+v", res.Tools)
	}
}
