package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
)

const (
	// minNodeMajor is the oldest Node.js the MCP TypeScript SDK supports.
	minNodeMajor = 18

	buildTimeout   = 5 * time.Minute
	installTimeout = 5 * time.Minute
	// subtestTimeout bounds one transport's whole client run, server
	// start and stop included.
	subtestTimeout = 2 * time.Minute
	// startTimeout bounds the wait for the HTTP server's port.
	startTimeout = 30 * time.Second
	// stopTimeout is how long the HTTP server may take to exit after SIGINT
	// before it is killed.
	stopTimeout = 15 * time.Second
	// waitDelay bounds how long a finished child's output pipes may stay
	// open (a grandchild can hold them).
	waitDelay = 10 * time.Second
)

// env variables read by this test. They use their own CODECALLTEST_ prefix
// because the server treats the whole CODECALL_ namespace as configuration
// keys and refuses names it does not know.
const (
	envEnable    = "CODECALLTEST_E2E"        // "0" skips; "1" fails instead of skipping when Node.js is missing
	envNodeCache = "CODECALLTEST_NODE_CACHE" // directory for the client's node_modules
)

// setup is what every transport's subtest needs.
type setup struct {
	bin     string // the codecall binary
	node    string // the node executable
	nodeDir string // directory holding node_modules and the client script
	script  string // the client script's file name in nodeDir
	catalog string // absolute paths of the fixtures
	config  string
	expect  string
}

func TestEndToEnd(t *testing.T) {
	s := prepare(t)

	t.Run("stdio", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), subtestTimeout)
		defer cancel()
		// The client spawns the server itself, with the SDK's minimal
		// environment.
		args := append([]string{"stdio", s.bin}, s.serveArgs()...)
		s.runClient(ctx, t, "stdio", args...)
	})

	t.Run("http", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), subtestTimeout)
		defer cancel()
		srv := s.startHTTP(ctx, t)
		s.runClient(ctx, t, "http", "http", "http://"+srv.addr+"/mcp")
		srv.stop(t)
	})
}

// prepare skips when the tests cannot run, then builds the CLI, installs
// the client's dependencies and locates the fixtures.
func prepare(t *testing.T) *setup {
	t.Helper()
	mode := os.Getenv(envEnable)
	if mode == "0" {
		t.Skipf("%s=0: end-to-end tests skipped", envEnable)
	}
	if testing.Short() && mode != "1" {
		t.Skip("-short: end-to-end tests skipped (they build the CLI and run a Node.js client); set CODECALLTEST_E2E=1 to run them anyway")
	}
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if mode == "1" {
			t.Fatalf("%s (%s=1 requires the end-to-end tests to run)", msg, envEnable)
		}
		t.Skipf("end-to-end tests skipped: %s; they need Node.js >= %d and npm on PATH (set %s=0 to skip them on purpose)",
			msg, minNodeMajor, envEnable)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		missing("npm is not on PATH")
	}
	version, major, err := nodeVersion(node)
	if err != nil {
		missing("cannot tell the Node.js version: %v", err)
	}
	if major < minNodeMajor {
		missing("node is %s", version)
	}
	t.Logf("node %s at %s", version, node)

	root := moduleRoot(t)
	fixture := func(name string) string {
		p, err := filepath.Abs(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("fixture: %v", err)
		}
		return p
	}
	s := &setup{
		node:    node,
		catalog: fixture("catalog.json"),
		config:  fixture("codecall.yaml"),
		expect:  fixture("expect.json"),
	}
	s.bin = buildCLI(t, root)
	s.nodeDir, s.script = installClient(t, npm)
	return s
}

func (s *setup) serveArgs() []string {
	return []string{"serve", "--catalog", s.catalog, "--config", s.config}
}

// nodeVersion runs node --version and returns it with its major number.
func nodeVersion(node string) (string, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return "", 0, err
	}
	v := strings.TrimSpace(string(out))
	majorText, _, _ := strings.Cut(strings.TrimPrefix(v, "v"), ".")
	major, err := strconv.Atoi(majorText)
	if err != nil {
		return v, 0, fmt.Errorf("unexpected version %q", v)
	}
	return v, major, nil
}

// moduleRoot finds the directory of the module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	if gomod, err := exec.Command(goTool(t), "env", "GOMOD").Output(); err == nil {
		p := strings.TrimSpace(string(gomod))
		if p != "" && p != os.DevNull {
			return filepath.Dir(p)
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("cannot find the module root: go env GOMOD gave nothing and %v", err)
	}
	return root
}

func goTool(t *testing.T) string {
	t.Helper()
	// go test puts its own GOROOT/bin first on PATH.
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	return p
}

// buildCLI builds cmd/codecall into a temporary directory.
func buildCLI(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "codecall")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool(t), "build", "-o", bin, "./cmd/codecall")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/codecall in %s: %v\n%s", root, err, out)
	}
	return bin
}

// installClient makes sure the client's pinned dependencies are installed
// in a cache directory keyed by the hash of package-lock.json, and copies
// the client script there. It returns the directory and the script's name.
func installClient(t *testing.T, npm string) (dir, script string) {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("client", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pkg, lock, src := read("package.json"), read("package-lock.json"), read("client.mjs")
	hash := shortHash(lock, 16)

	dir = cacheDir(t, envNodeCache, "codecall-e2e", hash)
	if installed(dir, hash, sdkProbe) {
		t.Logf("client dependencies: reusing %s", dir)
	} else {
		t.Logf("client dependencies: npm ci into %s", dir)
		npmInstall(t, npm, dir, hash, sdkProbe, pkg, lock)
	}

	// The script is named by its content, so runs of different versions
	// sharing the cache cannot clash.
	script = "client-" + shortHash(src, 12) + ".mjs"
	if err := writeFileAtomic(filepath.Join(dir, script), src); err != nil {
		t.Fatalf("copy client script: %v", err)
	}
	pruneScripts(dir, script)
	return dir, script
}

// cacheDir returns (and creates) the directory named by the env variable
// if set, else <user cache dir>/<name>/<hash>.
func cacheDir(t *testing.T, env, name, hash string) string {
	t.Helper()
	dir := os.Getenv(env)
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		dir = filepath.Join(base, name, hash)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("cache directory: %v", err)
	}
	return dir
}

// pruneScripts removes client scripts of other versions that no run has
// written for a day.
func pruneScripts(dir, keep string) {
	old, _ := filepath.Glob(filepath.Join(dir, "client-*.mjs"))
	for _, p := range old {
		if fi, err := os.Stat(p); err == nil && filepath.Base(p) != keep && time.Since(fi.ModTime()) > 24*time.Hour {
			_ = os.Remove(p)
		}
	}
}

const stampFile = ".package-lock.sha256"

// sdkProbe is the file whose presence shows the client's install is whole.
var sdkProbe = filepath.Join("node_modules", "@modelcontextprotocol", "sdk", "package.json")

// installed reports whether dir holds node_modules installed from the lock
// file with the given hash; probe is a file (relative to dir) the install
// must have produced.
func installed(dir, hash, probe string) bool {
	stamp, err := os.ReadFile(filepath.Join(dir, stampFile))
	if err != nil || strings.TrimSpace(string(stamp)) != hash {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, probe))
	return err == nil
}

// npmInstall runs npm ci in a staging directory inside dir and moves the
// result into place, so an interrupted install or a concurrent run never
// leaves a half-filled node_modules behind a valid stamp.
func npmInstall(t *testing.T, npm, dir, hash, probe string, pkg, lock []byte) {
	t.Helper()
	staging, err := os.MkdirTemp(dir, ".install-")
	if err != nil {
		t.Fatalf("node cache: %v", err)
	}
	defer os.RemoveAll(staging)
	for name, data := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(staging, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = staging
	cmd.Env = append(childEnv(), "npm_config_update_notifier=false")
	cmd.WaitDelay = waitDelay
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm ci --no-audit --no-fund in %s: %v (the first run needs the npm registry)\n%s", staging, err, out)
	}

	if installed(dir, hash, probe) { // a concurrent run finished first
		return
	}
	_ = os.Remove(filepath.Join(dir, stampFile))
	if err := os.RemoveAll(filepath.Join(dir, "node_modules")); err != nil {
		t.Fatalf("remove stale node_modules: %v", err)
	}
	if err := os.Rename(filepath.Join(staging, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		if installed(dir, hash, probe) {
			return
		}
		t.Fatalf("move node_modules into place: %v", err)
	}
	for name, data := range map[string][]byte{"package.json": pkg, "package-lock.json": lock, stampFile: []byte(hash + "\n")} {
		if err := writeFileAtomic(filepath.Join(dir, name), data); err != nil {
			t.Fatal(err)
		}
	}
}

func shortHash(data []byte, n int) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])[:n]
}

func writeFileAtomic(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		now := time.Now() // marks the file as in use (see pruneScripts)
		return os.Chtimes(path, now, now)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// childEnv is this process's environment without any CODECALL_ variable,
// so the server reads only the fixture config.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(strings.ToUpper(kv), "CODECALL_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// summary is the client's last stdout line.
type summary struct {
	OK              bool   `json:"ok"`
	Transport       string `json:"transport"`
	Step            string `json:"step"`
	Error           string `json:"error"`
	Checks          int    `json:"checks"`
	ProtocolVersion string `json:"protocolVersion"`
	Server          struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"server"`
	ListedTools []string `json:"listedTools"`
	Warnings    []string `json:"warnings"`
}

// runClient runs the client script with the fixtures and the given
// transport arguments, logging its output line by line.
func (s *setup) runClient(ctx context.Context, t *testing.T, transport string, args ...string) {
	t.Helper()
	s.runScript(ctx, t, transport, append([]string{s.script, "--expect", s.expect, "--catalog", s.catalog}, args...)...)
}

// runScript runs a client script (its name, then its arguments) from the
// node directory and checks its JSON summary.
func (s *setup) runScript(ctx context.Context, t *testing.T, transport string, full ...string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, s.node, full...)
	cmd.Dir = s.nodeDir
	cmd.Env = childEnv()
	cmd.WaitDelay = waitDelay
	stdout := newLineLog(t, "client stdout: ")
	stderr := newLineLog(t, "")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	start := time.Now()
	err := cmd.Run()
	stdout.close()
	stderr.close()

	if ctx.Err() != nil {
		t.Fatalf("the %s client did not finish within %s: %v", transport, subtestTimeout, ctx.Err())
	}
	last := stdout.last()
	var sum summary
	if jerr := json.Unmarshal([]byte(last), &sum); jerr != nil {
		t.Fatalf("the %s client (%v) printed no JSON summary: %v; last stdout line: %q", transport, err, jerr, last)
	}
	if err != nil || !sum.OK {
		t.Fatalf("the %s client failed (%v) at step %q after %d checks: %s", transport, err, sum.Step, sum.Checks, sum.Error)
	}
	if sum.Transport != transport || sum.Checks == 0 {
		t.Fatalf("unexpected summary from the %s client: %s", transport, last)
	}
	t.Logf("%s: %d checks passed in %s against %s %s (protocol %s); tools/list: %v",
		transport, sum.Checks, time.Since(start).Round(time.Millisecond), sum.Server.Name, sum.Server.Version,
		sum.ProtocolVersion, sum.ListedTools)
	for _, w := range sum.Warnings {
		// Soft findings: shown with -v, never a failure.
		t.Logf("%s: warning: %s", transport, w)
	}
}

// httpServer is a codecall serve --http process.
type httpServer struct {
	addr     string
	cmd      *exec.Cmd
	out      *lineLog
	done     chan struct{}
	err      error // cmd.Wait's result, set before done closes
	stopOnce sync.Once
}

// startHTTP starts the fixture server over streamable HTTP.
func (s *setup) startHTTP(ctx context.Context, t *testing.T) *httpServer {
	t.Helper()
	return s.startHTTPWith(ctx, t, s.serveArgs())
}

// startHTTPWith starts codecall with the given arguments plus --http.
func (s *setup) startHTTPWith(ctx context.Context, t *testing.T, serveArgs []string) *httpServer {
	t.Helper()
	return startHTTPServer(ctx, t, s.bin, serveArgs...)
}

// startHTTPServer runs bin with args and --http on a free loopback port
// and waits until the port accepts connections, retrying with another port
// when the chosen one was taken in the meantime. It is stopped (and its
// exit checked) at the end of the test unless stop was called before.
func startHTTPServer(ctx context.Context, t *testing.T, bin string, args ...string) *httpServer {
	t.Helper()
	for attempt := 1; ; attempt++ {
		addr := freeLoopbackAddr(t)
		srv := &httpServer{addr: addr, out: newLineLog(t, "server: "), done: make(chan struct{})}
		srv.cmd = exec.Command(bin, append(slices.Clone(args), "--http", addr)...)
		srv.cmd.Env = childEnv()
		srv.cmd.Stdout, srv.cmd.Stderr = srv.out, srv.out
		srv.cmd.WaitDelay = waitDelay
		if err := srv.cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", bin, err)
		}
		go func() {
			srv.err = srv.cmd.Wait()
			close(srv.done)
		}()
		t.Cleanup(func() { srv.stop(t) })

		err := waitForPort(ctx, addr, srv.done)
		if err == nil {
			t.Logf("server listening on http://%s/mcp", addr)
			return srv
		}
		select {
		case <-srv.done:
			srv.stopOnce.Do(srv.out.close) // nothing left to stop
			if attempt < 3 && strings.Contains(srv.out.text(), "address already in use") {
				t.Logf("port %s was taken; retrying", addr)
				continue
			}
			t.Fatalf("the server exited before it accepted connections: %v", srv.err)
		default:
		}
		t.Fatalf("the server did not accept connections on %s: %v", addr, err)
	}
}

// stop sends SIGINT, waits for a clean exit, and kills the server when it
// takes longer than stopTimeout. It reports an unclean stop as a failure.
func (srv *httpServer) stop(t *testing.T) {
	t.Helper()
	srv.stopOnce.Do(func() {
		defer srv.out.close()
		select {
		case <-srv.done:
			t.Errorf("the server exited on its own before it was stopped: %v", srv.err)
			return
		default:
		}
		if err := srv.cmd.Process.Signal(os.Interrupt); err != nil {
			// No SIGINT on this platform (Windows): kill is the only way.
			_ = srv.cmd.Process.Kill()
			<-srv.done
			return
		}
		select {
		case <-srv.done:
			if srv.err != nil {
				t.Errorf("the server exited with %v after SIGINT; want a clean exit", srv.err)
			}
		case <-time.After(stopTimeout):
			_ = srv.cmd.Process.Kill()
			<-srv.done
			t.Errorf("the server did not exit within %s of SIGINT; killed it", stopTimeout)
		}
	})
}

// freeLoopbackAddr returns a 127.0.0.1 address whose port was free a moment
// ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// waitForPort waits until addr accepts TCP connections, the process exits
// (exited closes), ctx ends or startTimeout passes.
func waitForPort(ctx context.Context, addr string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	var d net.Dialer
	for {
		dctx, dcancel := context.WithTimeout(ctx, time.Second)
		c, err := d.DialContext(dctx, "tcp", addr)
		dcancel()
		if err == nil {
			return c.Close()
		}
		select {
		case <-exited:
			return errors.New("the process exited")
		case <-ctx.Done():
			return fmt.Errorf("%w (last dial error: %v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// lineLog is an io.Writer that passes each complete line to t.Log, so go
// test shows a child's output (on failure, or always with -v), and keeps
// the lines.
type lineLog struct {
	t      *testing.T
	prefix string

	mu     sync.Mutex
	buf    []byte
	lines  []string
	closed bool
}

func newLineLog(t *testing.T, prefix string) *lineLog {
	return &lineLog{t: t, prefix: prefix}
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.emit(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
}

func (l *lineLog) emit(line string) {
	line = strings.TrimRight(line, "\r")
	l.lines = append(l.lines, line)
	if !l.closed {
		l.t.Log(l.prefix + line)
	}
}

// close flushes a last unterminated line; later writes are kept but no
// longer logged, since the test may have ended.
func (l *lineLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		l.emit(string(l.buf))
		l.buf = nil
	}
	l.closed = true
}

// last returns the last non-empty line.
func (l *lineLog) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.lines) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(l.lines[i]); s != "" {
			return s
		}
	}
	return ""
}

func (l *lineLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n") + string(l.buf)
}

// TestMain gives the processes the tests start a state directory of their
// own: a gateway pins its upstreams' tool definitions there, and a pin
// left in the user's directory by another version of a fixture would hold
// its tools back.
func TestMain(m *testing.M) {
	os.Exit(mcptest.RunWithStateDir(m.Run))
}
