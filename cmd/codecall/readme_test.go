package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/examples/demo"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/state/statetest"
)

// TestReadmePlan runs every example plan of the README (its ```js blocks,
// and its ```ts blocks but the declarations codecall.describe returns)
// against the demo server, so the README stays true: each must end ok with
// a result. A block that imports @codemode modules is a Code Mode script
// and runs through codemode.run.
func TestReadmePlan(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, lang := range []string{"js", "ts"} {
		for i, rest := 0, string(readme); ; i++ {
			var ok bool
			if _, rest, ok = strings.Cut(rest, "```"+lang+"\n"); !ok {
				break
			}
			var script string
			script, rest, _ = strings.Cut(rest, "```")
			if strings.Contains(script, "declare function") {
				continue
			}
			n++
			t.Run(fmt.Sprintf("%s-%d", lang, i+1), func(t *testing.T) { runReadmePlan(t, script) })
		}
	}
	if n < 2 {
		t.Fatalf("README has %d example plans; want at least one in JavaScript and one in TypeScript", n)
	}
	py := 0
	for i, rest := 0, string(readme); ; i++ {
		var ok bool
		if _, rest, ok = strings.Cut(rest, "```python\n"); !ok {
			break
		}
		var script string
		script, rest, _ = strings.Cut(rest, "```")
		py++
		t.Run(fmt.Sprintf("python-%d", i+1), func(t *testing.T) { runReadmePython(t, script) })
	}
	if py == 0 {
		t.Fatal("README has no example Python plan")
	}
}

// runReadmePython runs a README Python plan against the demo, with
// Python plans enabled; it skips where no Python worker can start.
func runReadmePython(t *testing.T, script string) {
	srv := demo.New()
	cfg := presets.Default()
	cfg.VM.Isolation = presets.IsolationProcess
	cfg.VM.Languages = []string{presets.LanguageJavaScript, presets.LanguagePython}
	cc, err := middleware.Wrap(srv, middleware.WithConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if py := cc.Isolation().Python; py == nil || py.Off != "" {
		if os.Getenv("CODECALLTEST_PYTHON") == "1" {
			t.Fatalf("CODECALLTEST_PYTHON=1 and Python plans cannot run: %+v", py)
		}
		t.Skipf("Python plans cannot run here: %+v", py)
	}
	c := mcptest.Connect(t, srv, mcptest.Modern())
	req := mcp.CallToolRequest{}
	req.Params.Name = "codecall.execute"
	req.Params.Arguments = map[string]any{"script": script, "language": "python"}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	tc, _ := mcp.AsTextContent(res.Content[0])
	var out struct {
		Status string
		Result map[string]any
	}
	if err := json.Unmarshal([]byte(tc.Text), &out); err != nil {
		t.Fatal(err)
	}
	if out.Status != "ok" || len(out.Result) == 0 || slices.Contains(slices.Collect(maps.Values(out.Result)), any(nil)) {
		t.Errorf("README Python plan:\n%s\nanswer: %s", script, tc.Text)
	}
}

func runReadmePlan(t *testing.T, script string) {
	if strings.Contains(script, `from "@codemode/`) {
		runReadmeModule(t, script)
		return
	}
	srv := demo.New()
	cc, err := middleware.Wrap(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx := context.Background()
	c := mcptest.Connect(t, srv, mcptest.Modern())
	req := mcp.CallToolRequest{}
	req.Params.Name = "codecall.execute"
	req.Params.Arguments = map[string]any{"script": script}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	tc, _ := mcp.AsTextContent(res.Content[0])
	var out struct {
		Status string
		Result map[string]any
	}
	if err := json.Unmarshal([]byte(tc.Text), &out); err != nil {
		t.Fatal(err)
	}
	if out.Status != "ok" || len(out.Result) == 0 || slices.Contains(slices.Collect(maps.Values(out.Result)), any(nil)) {
		t.Errorf("README plan:\n%s\nanswer: %s", script, tc.Text)
	}
}

// runReadmeModule runs a README Code Mode script against the demo: it must
// set a result with no null field and raise no error diagnostic.
func runReadmeModule(t *testing.T, script string) {
	srv := demo.New()
	cc, err := middleware.Wrap(srv, middleware.WithSurfaces(presets.SurfaceCodeMode))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := mcptest.Connect(t, srv)
	req := mcp.CallToolRequest{}
	req.Params.Name = "codemode.run"
	req.Params.Arguments = map[string]any{"code": script}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	tc, _ := mcp.AsTextContent(res.Content[0])
	var out struct {
		Result      map[string]any
		Diagnostics []struct{ Severity string }
	}
	if err := json.Unmarshal([]byte(tc.Text), &out); err != nil {
		t.Fatal(err)
	}
	failed := slices.ContainsFunc(out.Diagnostics, func(d struct{ Severity string }) bool { return d.Severity == "error" })
	if res.IsError || failed || len(out.Result) == 0 || slices.Contains(slices.Collect(maps.Values(out.Result)), any(nil)) {
		t.Errorf("README script:\n%s\nanswer: %s", script, tc.Text)
	}
}

// TestReadmeStateConfig checks the README's state store examples with
// codecall check: the file store as written (at a temporary path), and
// the redis one against a Redis server the test starts, when one is
// installed.
func TestReadmeStateConfig(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "## Running several replicas")
	section, _, _ = strings.Cut(section, "\n## ")
	blocks := map[string]string{}
	for rest := section; ; {
		var block string
		var ok bool
		if _, rest, ok = strings.Cut(rest, "```yaml\n"); !ok {
			break
		}
		block, rest, _ = strings.Cut(rest, "```")
		for _, store := range []string{"file", "redis"} {
			if strings.Contains(block, "store: "+store+"\n") {
				blocks[store] = block
			}
		}
	}
	if len(blocks) != 2 || !strings.Contains(section, "export STATE_KEY=$(openssl rand -base64 32)") {
		t.Fatalf("the README's replica section lost its file and redis examples or its key: %v", blocks)
	}
	t.Setenv("STATE_KEY", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	db := filepath.Join(t.TempDir(), "state.db")
	file := strings.Replace(blocks["file"], "/var/lib/codecall/state.db", db, 1)
	if code, out, _ := runCLI(t, "check", "--config", writeFile(t, "codecall.yaml", file)); code != 0 || !strings.Contains(out, "state: file "+db+": ok") {
		t.Errorf("the README's file store: %d\n%s", code, out)
	}
	if statetest.RedisServer() == "" {
		t.Log("redis-server is not installed: the README's redis example is checked for its shape only")
		return
	}
	url := statetest.StartRedis(t)
	redis := strings.Replace(blocks["redis"], "redis://127.0.0.1:6379/0", url, 1)
	if code, out, _ := runCLI(t, "check", "--config", writeFile(t, "codecall.yaml", redis)); code != 0 || !strings.Contains(out, ": ok (round trip") {
		t.Errorf("the README's redis store: %d\n%s", code, out)
	}
}
