package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// envPrismCache is the directory for Prism's node_modules (default: the
// user cache directory, like the client's).
const envPrismCache = "CODECALLTEST_PRISM_CACHE"

// prismProbe is the file whose presence shows Prism's install is whole.
var prismProbe = filepath.Join("node_modules", "@stoplight", "prism-cli", "package.json")

// shopToken is the credential CodeCall sends to the API in this test.
const shopToken = "e2e-shop-credential-5f1c9a"

// TestOpenAPIEndToEnd serves examples/openapi/bookshop.yaml as an app whose
// API is Stoplight Prism's mock of the same document (Prism validates
// every request against it), and drives codecall serve --http with the
// TypeScript SDK client (client/openapi.mjs): search, describe, a plan
// with Promise.all, a write that asks for approval, bad input refused
// before any request, a 401 as a clean tool error, and the credential in
// no result, log line or audit record.
func TestOpenAPIEndToEnd(t *testing.T) {
	s := prepare(t)
	script := s.copyScript(t, "openapi.mjs")
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not on PATH")
	}
	prismDir := installPrism(t, npm)
	doc, err := filepath.Abs(filepath.Join("..", "examples", "openapi", "bookshop.yaml"))
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*subtestTimeout)
	defer cancel()
	prism := startPrism(ctx, t, s.node, prismDir, doc)
	api := newRecordingProxy(t, prism)

	dir := t.TempDir()
	audit := filepath.Join(dir, "audit.jsonl")
	config := filepath.Join(dir, "codecall.yaml")
	yaml := fmt.Sprintf(`audit: {path: %q}
upstreams:
  servers:
    shop:
      openapi: %q
      baseUrl: %q
      auth: {bearer: "${CODECALLTEST_SHOP_TOKEN}"}
`, audit, doc, api.URL)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CODECALLTEST_SHOP_TOKEN", shopToken)
	srv := s.startHTTPWith(ctx, t, []string{"serve", "--config", config, "--log-level", "debug"})
	s.runScript(ctx, t, "http", script, "http", "http://"+srv.addr+"/mcp")
	srv.stop(t)

	// Exactly the calls the plans made reached the API: not the one with
	// bad input, which the gate refused.
	want := []string{"GET /admin/stats", "GET /books", "GET /books/b-1", "GET /categories/3", "POST /orders"}
	got := api.requests()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("requests that reached the API: %v, want %v", got, want)
	}
	if n := api.withoutToken(); n != 0 {
		t.Errorf("%d requests were sent without the configured credential", n)
	}
	// Prism validates every request against the document: the only
	// violation is the one the test makes on purpose (no admin key).
	violations := 0
	for _, line := range strings.Split(prism.out.text(), "\n") {
		if strings.Contains(line, "Violation: request") {
			violations++
			if !strings.Contains(line, "security") {
				t.Errorf("Prism found a request that does not match the document: %s", line)
			}
		}
	}
	if violations != 1 {
		t.Errorf("Prism reported %d violations, want 1 (the admin key on purpose):\n%s", violations, prism.out.text())
	}
	auditLog, err := os.ReadFile(audit)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	for what, text := range map[string]string{"server log": srv.out.text(), "audit log": string(auditLog)} {
		if strings.Contains(text, shopToken) {
			t.Errorf("the credential is in the %s", what)
		}
	}
	if !strings.Contains(string(auditLog), "shop.createOrder") {
		t.Errorf("the audit log does not record the write:\n%s", auditLog)
	}
}

// installPrism installs e2e/prism's pinned Prism into the cache, once per
// lock file.
func installPrism(t *testing.T, npm string) string {
	t.Helper()
	pkg, err := os.ReadFile(filepath.Join("prism", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	lock, err := os.ReadFile(filepath.Join("prism", "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	hash := shortHash(lock, 16)
	dir := cacheDir(t, envPrismCache, "codecall-prism", hash)
	if installed(dir, hash, prismProbe) {
		t.Logf("prism: reusing %s", dir)
	} else {
		t.Logf("prism: npm ci into %s", dir)
		npmInstall(t, npm, dir, hash, prismProbe, pkg, lock)
	}
	return dir
}

// prismServer is a running prism mock.
type prismServer struct {
	url string
	out *lineLog
}

// startPrism runs prism mock on a free loopback port until the test ends.
func startPrism(ctx context.Context, t *testing.T, node, dir, doc string) *prismServer {
	t.Helper()
	addr := freeLoopbackAddr(t)
	host, port, _ := strings.Cut(addr, ":")
	entry := filepath.Join(dir, "node_modules", "@stoplight", "prism-cli", "dist", "index.js")
	p := &prismServer{url: "http://" + addr, out: newLineLog(t, "prism: ")}
	cmd := exec.Command(node, entry, "mock", "--host", host, "--port", port, doc)
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.WaitDelay = waitDelay
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prism: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		p.out.close()
	})
	if err := waitForPort(ctx, addr, done); err != nil {
		t.Fatalf("prism did not listen on %s: %v\n%s", addr, err, p.out.text())
	}
	return p
}

// recordingProxy forwards to the API and records what reached it.
type recordingProxy struct {
	*httptest.Server
	mu      sync.Mutex
	seen    []string
	noToken int
}

func newRecordingProxy(t *testing.T, prism *prismServer) *recordingProxy {
	t.Helper()
	target, err := url.Parse(prism.url)
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen = append(p.seen, r.Method+" "+r.URL.Path)
		if r.Header.Get("Authorization") != "Bearer "+shopToken {
			p.noToken++
		}
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *recordingProxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

func (p *recordingProxy) withoutToken() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.noToken
}
