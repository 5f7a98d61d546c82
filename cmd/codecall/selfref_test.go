package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/gateway"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
)

// writeServers writes {"mcpServers": servers} to path.
func writeServers(t *testing.T, path string, servers map[string]any) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestFilesNamed(t *testing.T) {
	got := filesNamed([]string{"serve", "--upstreams", "a.json", "-config=c.yaml", "--http", ":1", "-upstreams", "b.json", "--config"})
	want := []namedFile{{"--upstreams", "a.json"}, {"--config", "c.yaml"}, {"--upstreams", "b.json"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("filesNamed = %v, want %v", got, want)
	}
}

// An upstream that runs codecall (this executable, or a command named
// codecall) on the gateway's own upstreams file is refused by check and
// at start, with its name; the same command on another file is not.
func TestSelfReferenceIsRefused(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	servers := filepath.Join(dir, "servers.json")
	other := filepath.Join(dir, "other.json")
	writeServers(t, other, map[string]any{})
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(servers, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		entry map[string]any
		loops bool
	}{
		{"this executable, same path", map[string]any{"command": exe, "args": []string{"serve", "--upstreams", servers}}, true},
		{"a command named codecall, a path relative to its cwd", map[string]any{"command": "codecall", "args": []string{"serve", "--upstreams=servers.json"}, "cwd": dir}, true},
		{"through a symlink", map[string]any{"command": exe, "args": []string{"serve", "-upstreams", link}}, true},
		{"another file", map[string]any{"command": exe, "args": []string{"serve", "--upstreams", other}}, false},
		{"another program", map[string]any{"command": "npx", "args": []string{"server", "--upstreams", servers}}, false},
		{"disabled", map[string]any{"command": exe, "args": []string{"serve", "--upstreams", servers}, "disabled": true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeServers(t, servers, map[string]any{"loop": tt.entry})
			code, out, _ := runCLI(t, "check", "--upstreams", servers)
			mentions := strings.Contains(out, `upstream "loop" starts this gateway again`)
			if tt.loops != (code == 1 && mentions) {
				t.Errorf("check: code %d, output %q", code, out)
			}
			if !tt.loops {
				return
			}
			code, _, errOut := runCLI(t, "serve", "--upstreams", servers)
			if code != 1 || !strings.Contains(errOut, `upstream "loop" starts this gateway again`) || !strings.Contains(errOut, "without end") {
				t.Errorf("serve: code %d, %q", code, errOut)
			}
		})
	}

	// The same through the config: upstreams.servers naming the config.
	config := filepath.Join(dir, "codecall.yaml")
	yaml := fmt.Sprintf("upstreams:\n  servers:\n    again: {command: %q, args: [serve, --config, %q]}\n", exe, config)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI(t, "check", "--config", config); code != 1 || !strings.Contains(out, `upstream "again" starts this gateway again`) {
		t.Errorf("check --config: code %d, %q", code, out)
	}
}

// Files that name each other escape selfReference; the nesting depth stops
// the chain at gateway.MaxDepth, and closing the first gateway's stdin
// ends every process of the chain.
func TestGatewayChainStopsAtMaxDepth(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	chain := filepath.Join(dir, "chain.log")
	config := filepath.Join(dir, "codecall.yaml")
	if err := os.WriteFile(config, []byte("preset: balanced\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	entry := func(next string) map[string]any {
		return map[string]any{"next": map[string]any{"command": exe, "args": []string{"serve", "--upstreams", next, "--config", config},
			// A sandboxed server cannot make namespaces of its own, which a
			// gateway needs to confine its upstreams: the chain runs
			// unconfined.
			// XDG_STATE_HOME keeps the nested gateways' pins in the test's
			// state directory (TestMain), not the user's.
			"env": map[string]string{cliVar: "1", chainVar: chain}, "envAllowlist": []string{"XDG_STATE_HOME"}, "sandbox": "none"}}
	}
	writeServers(t, a, entry(b))
	writeServers(t, b, entry(a))

	inR, inW := io.Pipe()
	var out, errb mcptest.Buffer
	done := make(chan int)
	go func() {
		done <- run(context.Background(), []string{"serve", "--upstreams", a, "--config", config}, inR, &out, &errb)
	}()
	read := func() string { b, _ := os.ReadFile(chain); return string(b) }
	waitFor := func(what string, cond func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !cond(read()) {
			if time.Now().After(deadline) {
				inW.Close()
				t.Fatalf("timed out waiting for %s; chain log:\n%s\nstderr:\n%s", what, read(), errb.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	refused := fmt.Sprintf("exit depth=%d code=1", gateway.MaxDepth)
	waitFor("the gateway at the depth limit to refuse", func(s string) bool { return strings.Contains(s, refused) })
	// Let the gateway above it retry once (backoff starts at 1 s): the
	// retry stops at the limit again.
	time.Sleep(1500 * time.Millisecond)
	depths := regexp.MustCompile(`start depth=(\d*)`).FindAllStringSubmatch(read(), -1)
	for _, d := range depths {
		if n, _ := strconv.Atoi(d[1]); n > gateway.MaxDepth {
			t.Errorf("a gateway started at depth %d, past the limit %d:\n%s", n, gateway.MaxDepth, read())
		}
	}
	if len(depths) > gateway.MaxDepth+3 {
		t.Errorf("%d gateways started; the chain should hold %d plus a few retries at the limit:\n%s", len(depths), gateway.MaxDepth, read())
	}

	inW.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("the first gateway exited %d: %s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the first gateway did not exit after its stdin closed:\n%s", errb.String())
	}
	// Each gateway of the chain sees its stdin close (or, when its own
	// upstreams are slow to stop, a SIGTERM) and stops its own upstream
	// in turn.
	waitFor("every gateway of the chain to exit", func(s string) bool {
		for d := 1; d < gateway.MaxDepth; d++ {
			if !strings.Contains(s, fmt.Sprintf("exit depth=%d code=", d)) {
				return false
			}
		}
		return true
	})
}

// A gateway started MaxDepth deep refuses, saying why.
func TestServeRefusesPastMaxDepth(t *testing.T) {
	t.Setenv(presets.EnvGatewayDepth, strconv.Itoa(gateway.MaxDepth))
	code, _, errOut := runCLI(t, "serve", "--upstreams", writeFile(t, "servers.json", serversJSON(t, "alpha")))
	if code != 1 || !strings.Contains(errOut, fmt.Sprintf("at most %d may run nested", gateway.MaxDepth)) || !strings.Contains(errOut, presets.EnvGatewayDepth) {
		t.Errorf("serve at depth %d: code %d, %q", gateway.MaxDepth, code, errOut)
	}
}
