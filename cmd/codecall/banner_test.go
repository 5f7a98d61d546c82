package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/codecall-go/codecall/internal/mcptest"
)

func TestBannerText(t *testing.T) {
	tests := []struct {
		name string
		b    banner
		want []string
	}{
		{"stdio", banner{served: "the built-in demo (39 tools)", exe: "/usr/local/bin/codecall", args: []string{"serve", "--config", "/etc/codecall.yaml"}}, []string{
			"serving the built-in demo (39 tools) over stdio.",
			"not a chat: stdin and stdout now carry JSON-RPC for an MCP client",
			`{"mcpServers": {"codecall": {"command": "/usr/local/bin/codecall", "args": ["serve", "--config", "/etc/codecall.yaml"]}}}`,
			"npx @modelcontextprotocol/inspector /usr/local/bin/codecall serve --config /etc/codecall.yaml",
			"Quit with Ctrl-C.",
		}},
		{"go run", banner{served: "x", exe: "/tmp/go-build123/b001/exe/codecall", args: []string{"serve"}}, []string{"go install ./cmd/codecall"}},
		{"http", banner{served: "x", url: "http://127.0.0.1:8080/mcp"}, []string{
			"over streamable HTTP at http://127.0.0.1:8080/mcp",
			`{"servers": {"codecall": {"type": "http", "url": "http://127.0.0.1:8080/mcp"}}}`,
			"Quit with Ctrl-C.",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sb strings.Builder
			tt.b.write(&sb)
			for _, w := range tt.want {
				if !strings.Contains(sb.String(), w) {
					t.Errorf("banner lacks %q:\n%s", w, sb.String())
				}
			}
		})
	}
}

// TestBannerOnTerminal runs serve with a real terminal (a pty) on stdin,
// then with a pipe: the banner is printed for the first only, and the
// sandbox's internals are not logged at the default level either way.
func TestBannerOnTerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty on this machine: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, tc := range []struct {
		name   string
		stdin  *os.File
		banner bool
	}{{"terminal", tty, true}, {"pipe", r, false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			var stdout, stderr mcptest.Buffer
			done := make(chan int, 1)
			go func() { done <- run(ctx, []string{"serve"}, tc.stdin, &stdout, &stderr) }()
			deadline := time.Now().Add(60 * time.Second)
			for !strings.Contains(stderr.String(), "serving on stdio") && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			cancel()
			if code := <-done; code != 0 {
				t.Fatalf("serve exited %d:\n%s", code, stderr.String())
			}
			out := stderr.String()
			if got := strings.Contains(out, "This terminal is not a chat"); got != tc.banner {
				t.Errorf("banner shown: %v, want %v:\n%s", got, tc.banner, out)
			}
			if strings.Contains(out, "addressSpaceBytes") {
				t.Errorf("sandbox internals logged at the default level:\n%s", out)
			}
		})
	}
}
