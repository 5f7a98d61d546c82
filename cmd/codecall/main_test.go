package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name, config string
		code         int
		want         []string
	}{
		{"valid", "mode: codecall_opt_in\npreset: balanced\n", 0, []string{"ok", "codecall_opt_in", "balanced", "embeddings: off"}},
		{"embeddings unavailable", "search: {embeddings: {provider: model2vec, path: no-such-model}}\n", 0, []string{"embeddings: UNAVAILABLE", "no-such-model"}},
		{"malformed yaml", "mode: [codecall_only\npreset: secure\n", 1, []string{"invalid YAML", "codecall.yaml:1"}},
		{"unknown preset", "preset: paranoid\n", 1, []string{"preset", "locked_down", "experimental"}},
		{"unknown key", "mode: codecall_only\nsearhc: {topK: 3}\n", 1, []string{"searhc"}},
		{"unknown vm key", "vm: {timeot: 2s}\n", 1, []string{"vm.timeot"}},
		{"bad glob", "exclude: [\"[abc\"]\n", 1, []string{"exclude"}},
		{"every problem", "mode: all\npreset: paranoid\n", 1, []string{"mode", "preset"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, _ := runCLI(t, "check", "--config", writeFile(t, "codecall.yaml", tt.config))
			if code != tt.code {
				t.Errorf("exit code %d, want %d; output:\n%s", code, tt.code, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output does not mention %q:\n%s", w, out)
				}
			}
		})
	}
	for _, sample := range []string{"../../examples/codecall.yaml", "../../examples/codecall-policies.yaml"} {
		if code, out, _ := runCLI(t, "check", "--config", sample); code != 0 {
			t.Errorf("the sample config %s does not pass check:\n%s", sample, out)
		}
	}
}

func TestCheckPolicy(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("codecall.yaml", "policy:\n  paths: [policies]\n")
	mcptest.WritePolicy(t, dir, "policies/p.rego", "package codecall\n\nimport rego.v1\n\ndefault decision := {\"allow\": false, \"reason\": \"no\"}\n")
	// Paths are relative to the config file, wherever check runs from.
	code, out, _ := runCLI(t, "check", "--config", filepath.Join(dir, "codecall.yaml"))
	if code != 0 || !strings.Contains(out, "policy: ok (1 modules, query data.codecall.decision)") {
		t.Fatalf("valid policy: code %d, output %s", code, out)
	}
	write("policies/p.rego", "package codecall\n\nimport rego.v1\n\ndecision := {\n")
	code, out, _ = runCLI(t, "check", "--config", filepath.Join(dir, "codecall.yaml"))
	if code != 1 || !strings.Contains(out, "policy: INVALID") || !strings.Contains(out, "p.rego:") {
		t.Fatalf("broken policy: code %d, output %s", code, out)
	}
	// The header speaks for the whole file: not ok when a section is not.
	if header, _, _ := strings.Cut(out, "\n"); strings.Contains(header, "ok") || !strings.HasSuffix(header, ": 1 PROBLEM (policy)") {
		t.Errorf("header of a config whose policy is broken: %q", header)
	}
	code, out, _ = runCLI(t, "check", "--config", writeFile(t, "codecall.yaml", "mode: codecall_only\n"))
	if code != 0 || !strings.Contains(out, "policy: built-in default") {
		t.Fatalf("no policy: code %d, output %s", code, out)
	}
	// The sample uses secure, whose plans run in worker processes: check
	// says whether they can here, and a fallback is spelled out.
	if !strings.Contains(out, "  isolation: process (namespaces ") && !strings.Contains(out, "  isolation: inprocess (FALLBACK: ") {
		t.Errorf("check does not report the isolation:\n%s", out)
	}
	code, out, _ = runCLI(t, "check", "--config", writeFile(t, "codecall.yaml", "preset: balanced\n"))
	if code != 0 || !strings.Contains(out, "  isolation: inprocess (as configured") {
		t.Errorf("check on balanced: %d\n%s", code, out)
	}
}

func TestCheckCatalog(t *testing.T) {
	code, out, _ := runCLI(t, "check", "--catalog", writeFile(t, "tools.json", `[{"name":"a"},{"name":"a"}]`))
	if code != 1 || !strings.Contains(out, "duplicate") {
		t.Errorf("duplicate names: code %d, output %s", code, out)
	}
	code, out, _ = runCLI(t, "check", "--catalog", writeFile(t, "tools.json", `[{"name":"a","description":"A."}]`))
	if code != 0 || !strings.Contains(out, "1 tools") {
		t.Errorf("valid catalog: code %d, output %s", code, out)
	}
}

func TestSearchDemo(t *testing.T) {
	code, out, errOut := runCLI(t, "search", "--json", "--top", "3", "give a customer their money back")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Tools []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, out)
	}
	if len(res.Tools) == 0 || res.Tools[0].Name != "billing.refund_payment" {
		t.Errorf("top result = %+v, want billing.refund_payment", res.Tools)
	}
	code, out, _ = runCLI(t, "search", "--app", "support", "close a ticket")
	if code != 0 || !strings.Contains(out, "support.close_ticket") || strings.Contains(out, "billing.") {
		t.Errorf("--app support: code %d\n%s", code, out)
	}
	// --explain gives every hit shown the factors of its score.
	code, out, _ = runCLI(t, "search", "--explain", "--top", "3", "list a customer's open support tickets")
	if code != 0 || !strings.Contains(out, "support.list_tickets") {
		t.Fatalf("--explain: code %d\n%s", code, out)
	}
	if n := strings.Count(out, "↳ coverage"); n != 3 {
		t.Errorf("--explain: %d explanations for 3 hits\n%s", n, out)
	}
	if !strings.Contains(out, "tickets=name") {
		t.Errorf("--explain does not say where the words matched\n%s", out)
	}
}

func TestSearchCatalog(t *testing.T) {
	cat := writeFile(t, "tools.json", `[
		{"app":"git","name":"open_pr","description":"Open a pull request from a branch."},
		{"app":"git","name":"list_commits","description":"List the commits of a branch."},
		{"app":"chat","name":"post","description":"Post a message to a channel."}]`)
	code, out, errOut := runCLI(t, "search", "--catalog", cat, "create a merge request")
	if code != 0 || !strings.Contains(out, "git.open_pr") {
		t.Errorf("code %d\n%s\n%s", code, out, errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "Usage"},
		{[]string{"frobnicate"}, 2, "unknown command"},
		{[]string{"search"}, 1, "needs a query"},
		{[]string{"search", "--top", "0", "x"}, 0, ""}, // 0 means the config's default
		{[]string{"search", "--top", "-1", "x"}, 1, "topK"},
		{[]string{"search", "--top", "100000", "x"}, 1, "topK"},
		{[]string{"check"}, 1, "needs --config"},
		{[]string{"serve", "--nope"}, 2, "flag provided but not defined"},
		{[]string{"serve", "extra"}, 1, "no arguments"},
		{[]string{"serve", "--catalog", "/nonexistent.json"}, 1, "nonexistent.json"},
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(t, tt.args...)
		if code != tt.code || !strings.Contains(out+errOut, tt.want) {
			t.Errorf("%v: code %d (want %d), output %q %q, want it to mention %q", tt.args, code, tt.code, out, errOut, tt.want)
		}
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(out, "codecall ") {
		t.Errorf("version: %d %q", code, out)
	}
}

func TestServeStdio(t *testing.T) {
	inR, inW := io.Pipe()
	var out, errb mcptest.Buffer
	done := make(chan int)
	go func() { done <- run(context.Background(), []string{"serve"}, inR, &out, &errb) }()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`not json at all`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	} {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// Keep stdin open until the answer is written: closing it ends the
	// session and cancels requests still in flight.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), `"id":2`) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d: %s", code, errb.String())
	}
	got := out.String()
	for _, want := range []string{`"id":1`, `"code":-32700`, `"codecall.search"`, `"health"`} {
		if !strings.Contains(got, want) {
			t.Errorf("stdout lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, `"crm.find_contacts"`) {
		t.Error("codecall_only lists a hidden tool")
	}
}

func TestEval(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "corpus")
	if d := os.Getenv("CODECALLTEST_CORPUS_DIR"); d != "" {
		dir = d
	}
	if _, err := os.Stat(filepath.Join(dir, "tools.json")); err != nil {
		t.Skipf("corpus not found at %s (set CODECALLTEST_CORPUS_DIR): %v", dir, err)
	}
	code, out, errOut := runCLI(t, "eval", "--corpus", dir, "--queries", "../../search/testdata/corpus-queries.json")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"918 tools", "own all", "own heldout", "own all paraphrase", "own all app-scoped", "queries-dev.json", "corpus-queries.json", "codecall", "plain BM25", "nDCG@10", "NEG-FLAGGED"} {
		if !strings.Contains(out, want) {
			t.Errorf("eval output lacks %q:\n%s", want, out)
		}
	}
	if code, _, errOut := runCLI(t, "eval", "--corpus", t.TempDir()); code != 1 || !strings.Contains(errOut, "tools.json") {
		t.Errorf("missing corpus: code %d, %s", code, errOut)
	}
}

// TestEnvWithoutConfigFile checks that CODECALL_ variables apply to the
// CLI without --config, with the same strict errors as with a file.
func TestEnvWithoutConfigFile(t *testing.T) {
	t.Setenv("CODECALL_SEARCH__TOP_K", "2")
	code, out, errOut := runCLI(t, "search", "refund a payment")
	if code != 0 || !strings.Contains(out, "2 of ") {
		t.Fatalf("CODECALL_SEARCH__TOP_K=2 without a file: code %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "check", "--http", "127.0.0.1:8080")
	if code != 0 || !strings.Contains(out, "environment: ok (CODECALL_SEARCH__TOP_K)") {
		t.Errorf("check of the environment: code %d\n%s", code, out)
	}
	t.Setenv("CODECALL_SEARCH__TOPKK", "2")
	for _, args := range [][]string{{"search", "refund"}, {"serve"}} {
		code, _, errOut = runCLI(t, args...)
		if code != 1 || !strings.Contains(errOut, "env CODECALL_SEARCH__TOPKK") || !strings.Contains(errOut, "did you mean CODECALL_SEARCH__TOP_K?") {
			t.Errorf("%v with an unknown variable: code %d\n%s", args, code, errOut)
		}
	}
	code, out, _ = runCLI(t, "check", "--http", "127.0.0.1:8080")
	if code != 1 || !strings.Contains(out, "environment: INVALID") || !strings.Contains(out, "CODECALL_SEARCH__TOPKK") {
		t.Errorf("check of a broken environment: code %d\n%s", code, out)
	}
}

// TestLogFormatAndProgress checks --log-format json and the progress lines
// of upstreams starting: which one, then how it ended.
func TestLogFormatAndProgress(t *testing.T) {
	servers := writeFile(t, "servers.json", `{"mcpServers": {"broken": {"command": "codecall-no-such-command"}}}`)
	_, _, errOut := runCLI(t, "search", "--log-format", "json", "--upstreams", servers, "anything")
	var starting, failed bool
	for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a log line is not JSON: %q", line)
		}
		switch rec["msg"] {
		case "codecall: starting upstream":
			starting = rec["upstream"] == "broken"
		case "codecall: upstream failed":
			_, hasMS := rec["ms"].(float64)
			failed = rec["upstream"] == "broken" && hasMS && strings.Contains(fmt.Sprint(rec["error"]), "codecall-no-such-command")
		}
	}
	if !starting || !failed {
		t.Errorf("progress lines missing (starting %v, failed %v):\n%s", starting, failed, errOut)
	}
	if code, _, errOut := runCLI(t, "search", "--log-format", "xml", "x"); code != 1 || !strings.Contains(errOut, "text or json") {
		t.Errorf("--log-format xml: code %d, %s", code, errOut)
	}
}
