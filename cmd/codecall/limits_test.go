package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
)

// filler is n bytes of 'x' made up on the fly, so that a test can send a
// huge request without holding it.
type filler struct{ n int64 }

func (f *filler) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > f.n {
		p = p[:f.n]
	}
	for i := range p {
		p[i] = 'x'
	}
	f.n -= int64(len(p))
	return len(p), nil
}

// countingReader counts what was read from it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readLines reads what the limiter hands on the way mcp-go's stdio server
// does, with bufio.Reader.ReadString.
func readLines(r io.Reader) []string {
	br := bufio.NewReader(r)
	var lines []string
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			lines = append(lines, line)
		}
		if err != nil {
			return lines
		}
	}
}

func TestLineLimiter(t *testing.T) {
	const max = 10
	long := strings.Repeat("y", 3*lineChunk) // longer than a chunk too
	tests := []struct {
		name, in string
		want     []string
		refused  int
	}{
		{"short lines", "a\nbb\n", []string{"a\n", "bb\n"}, 0},
		{"exactly the limit", "0123456789\n", []string{"0123456789\n"}, 0},
		{"one byte over", "0123456789A\nok\n", []string{"ok\n"}, 1},
		{"over, across chunks", long + "\nok\n", []string{"ok\n"}, 1},
		{"two over in a row", long + "\n" + long + "\nok\n", []string{"ok\n"}, 2},
		{"over at end of input", "a\n" + long, []string{"a\n"}, 1},
		{"last line without newline", "a\nbc", []string{"a\n", "bc"}, 0},
		{"empty lines pass", "\n\nok\n", []string{"\n", "\n", "ok\n"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refused := 0
			got := readLines(newLineLimiter(strings.NewReader(tt.in), max, func() { refused++ }))
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || refused != tt.refused {
				t.Errorf("lines %q, %d refused; want %q, %d refused", got, refused, tt.want, tt.refused)
			}
		})
	}
}

// A line far over the limit costs memory in proportion to the limit, not
// to the line: the limiter never holds more than max bytes of it.
func TestLineLimiterMemoryIsBoundedByTheLimit(t *testing.T) {
	const max = 64 << 10
	const huge = 64 << 20
	in := io.MultiReader(&filler{huge}, strings.NewReader("\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n"))
	refused := 0
	lim := newLineLimiter(in, max, func() { refused++ })
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	lines := readLines(lim)
	runtime.ReadMemStats(&after)
	if refused != 1 || len(lines) != 1 || !strings.Contains(lines[0], `"id":2`) {
		t.Fatalf("lines %q, %d refused; want the ping after one refusal", lines, refused)
	}
	// Loose: other goroutines of the test binary allocate too. Holding the
	// line would take at least its 64 MiB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("reading a %d-byte line under a %d-byte limit allocated %d bytes", huge, max, alloc)
	}
}

func TestLimitBody(t *testing.T) {
	const max = 1 << 10
	var got []byte
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusNoContent)
	})
	h := limitBody(next, max)
	serve := func(body io.Reader, length int64) *httptest.ResponseRecorder {
		got = nil
		r := httptest.NewRequest(http.MethodPost, "/mcp", body)
		r.ContentLength = length
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	refused := func(t *testing.T, w *httptest.ResponseRecorder) {
		t.Helper()
		if w.Code != http.StatusRequestEntityTooLarge || got != nil {
			t.Fatalf("status %d, handler saw %d bytes; want 413 and the handler not called", w.Code, len(got))
		}
		var resp struct {
			ID    any `json:"id"`
			Error struct {
				Code    int
				Message string
				Data    struct{ MaxRequestBytes int64 }
			}
		}
		if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || resp.ID != nil || resp.Error.Code != codeInvalidRequest ||
			!strings.Contains(resp.Error.Message, "transport.maxRequestBytes") || !strings.Contains(resp.Error.Message, "1024 bytes") ||
			resp.Error.Data.MaxRequestBytes != max {
			t.Errorf("413 body is not a JSON-RPC error naming the limit: %v\n%s", err, w.Body)
		}
	}

	if w := serve(strings.NewReader(strings.Repeat("a", max)), max); w.Code != http.StatusNoContent || len(got) != max {
		t.Errorf("a body at the limit: status %d, handler saw %d bytes", w.Code, len(got))
	}
	t.Run("declared too long", func(t *testing.T) {
		body := &countingReader{r: &filler{64 << 20}}
		refused(t, serve(body, 64<<20))
		if body.n != 0 {
			t.Errorf("read %d bytes of a body whose Content-Length is over the limit", body.n)
		}
	})
	t.Run("chunked, too long", func(t *testing.T) {
		body := &countingReader{r: &filler{64 << 20}}
		refused(t, serve(body, -1))
		if body.n > 2*max+64<<10 {
			t.Errorf("read %d bytes of a chunked body over a %d-byte limit", body.n, max)
		}
	})
}

// freeAddr returns a free TCP address on host.
func freeAddr(t *testing.T, host string) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// serveInBackground runs codecall with args until the test ends and
// checks that it exits cleanly.
func serveInBackground(t *testing.T, args ...string) (stderr *mcptest.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var out mcptest.Buffer
	stderr = &mcptest.Buffer{}
	go func() { done <- run(ctx, args, strings.NewReader(""), &out, stderr) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d: %s", code, stderr.String())
		}
	})
	return stderr
}

// waitHTTP waits until something answers on addr.
func waitHTTP(t *testing.T, addr string, stderr *mcptest.Buffer) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s: %s", addr, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

const initializeRequest = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// serve --http answers a body over transport.maxRequestBytes with 413,
// and keeps serving.
func TestServeHTTPRefusesLargeBodies(t *testing.T) {
	addr := freeAddr(t, "127.0.0.1")
	config := writeFile(t, "codecall.yaml", "preset: balanced\ntransport: {maxRequestBytes: 64KiB}\n")
	stderr := serveInBackground(t, "serve", "--http", addr, "--config", config)
	waitHTTP(t, addr, stderr)
	post := func(body io.Reader) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", body)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// An initialize request padded with whitespace past the limit.
	padded := initializeRequest[:len(initializeRequest)-1] + strings.Repeat(" ", 64<<10) + "}"
	if code, body := post(strings.NewReader(padded)); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "transport.maxRequestBytes") {
		t.Errorf("oversized initialize: status %d, body %s", code, body)
	}
	if code, body := post(io.MultiReader(strings.NewReader(initializeRequest[:len(initializeRequest)-1]), &filler{8 << 20}, strings.NewReader("}"))); code != http.StatusRequestEntityTooLarge {
		t.Errorf("8 MiB chunked initialize: status %d, body %.200s", code, body)
	}
	if code, body := post(strings.NewReader(initializeRequest)); code != http.StatusOK || !strings.Contains(body, `"protocolVersion"`) {
		t.Errorf("initialize after the refusals: status %d, body %s", code, body)
	}
}

// A stdin line over transport.maxRequestBytes is answered with a JSON-RPC
// error naming the limit, and the next line is served.
func TestServeStdioRefusesLongLines(t *testing.T) {
	config := writeFile(t, "codecall.yaml", "preset: balanced\ntransport: {maxRequestBytes: 64KiB}\n")
	inR, inW := io.Pipe()
	var out, errb mcptest.Buffer
	done := make(chan int)
	go func() { done <- run(context.Background(), []string{"serve", "--config", config}, inR, &out, &errb) }()
	go func() {
		_, _ = io.WriteString(inW, initializeRequest+"\n")
		_, _ = io.Copy(inW, &filler{16 << 20})
		_, _ = io.WriteString(inW, "\n"+`{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), `"id":2`) {
		if time.Now().After(deadline) {
			t.Fatalf("the request after the long line was not answered:\n%.2000s\n%s", out.String(), errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d: %s", code, errb.String())
	}
	var refusal bool
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var msg struct {
			ID    any `json:"id"`
			Error *struct {
				Code    int
				Message string
			}
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("stdout holds a line that is not one JSON-RPC message: %v\n%.300s", err, line)
		}
		if msg.Error != nil && msg.ID == nil && msg.Error.Code == codeInvalidRequest && strings.Contains(msg.Error.Message, "longer than 65536 bytes, the limit set by transport.maxRequestBytes") {
			refusal = true
		}
	}
	if !refusal {
		t.Errorf("no JSON-RPC error naming the limit:\n%s", out.String())
	}
	if !strings.Contains(errb.String(), "maxRequestBytes=65536") {
		t.Errorf("the refusal is not logged:\n%s", errb.String())
	}
}

// The codecall process answers the request after a 64 MiB line and exits
// when its stdin closes.
func TestServeProcessSurvivesAHugeLineAndExitsOnEOF(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	config := writeFile(t, "codecall.yaml", "preset: balanced\n")
	cmd := exec.Command(exe, "serve", "--config", config)
	cmd.Env = append(os.Environ(), cliVar+"=1")
	var stderr mcptest.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	go func() {
		_, _ = io.WriteString(stdin, initializeRequest+"\n")
		_, _ = io.Copy(stdin, &filler{64 << 20})
		_, _ = io.WriteString(stdin, "\n"+`{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	}()
	answered := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if bytes.Contains(sc.Bytes(), []byte(`"id":2`)) {
				answered <- nil
				_, _ = io.Copy(io.Discard, stdout)
				return
			}
		}
		answered <- fmt.Errorf("stdout ended: %v", sc.Err())
	}()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("the ping after the huge line was not answered: %v\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the ping after the huge line was not answered in time\n%s", stderr.String())
	}
	stdin.Close()
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("codecall exited with %v: %s", waitErr, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("codecall is still running 30 s after its stdin closed\n%s", stderr.String())
	}
}
