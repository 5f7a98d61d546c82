package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codecall-go/codecall/policy/redact"
	"github.com/codecall-go/codecall/presets"
)

// A GitHub-token-shaped test string; not a live credential.
const secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345"

var fixed = time.Date(2026, 11, 21, 18, 0, 0, 123e6, time.UTC)

func lines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestLineFormat(t *testing.T) {
	var buf bytes.Buffer
	l := NewWriter(&buf, withClock(func() time.Time { return fixed }))
	args := map[string]any{"amount": 12, "to": "acct-1"}
	argsSHA, argsN := Digest(args)
	resSHA, resN := Digest(map[string]any{"ok": true})
	l.Log(context.Background(), Event{Type: ExecuteStart, RunID: "r1", SessionID: "s1", ScriptSHA256: "abc"})
	l.Log(context.Background(), Event{
		Type: PolicyDecision, RunID: "r1", ParentRunID: "r0", CallIndex: 2, SessionID: "s1", Tool: "billing.pay", AppID: "billing",
		Via: "execute", ArgsSHA256: argsSHA, ArgsBytes: argsN, Decision: DecisionApproval, Reason: "amount over 10",
	})
	l.Log(context.Background(), Event{Type: Approval, RunID: "r1", CallIndex: 2, Tool: "billing.pay", Approval: OutcomeApproved})
	l.Log(context.Background(), Event{
		Type: ToolCall, Time: fixed.Add(time.Second), RunID: "r1", CallIndex: 2, Tool: "billing.pay", Via: "execute",
		Status: "ok", Duration: 1500 * time.Microsecond, ResultSHA256: resSHA, ResultBytes: resN,
	})
	l.Log(context.Background(), Event{Type: ExecuteEnd, RunID: "r1", Status: "tool_error", ErrorCode: "TIMEOUT", Error: "slow"})

	want := []string{
		`{"time":"2026-11-21T18:00:00.123Z","event":"execute.start","runId":"r1","sessionId":"s1","scriptSha256":"abc"}`,
		`{"time":"2026-11-21T18:00:00.123Z","event":"policy.decision","runId":"r1","parentRunId":"r0","callIndex":2,"sessionId":"s1","tool":"billing.pay","appId":"billing","via":"execute","argsSha256":"` + argsSHA + `","argsBytes":` + fmt.Sprint(argsN) + `,"decision":"approval","reason":"amount over 10"}`,
		`{"time":"2026-11-21T18:00:00.123Z","event":"approval","runId":"r1","callIndex":2,"tool":"billing.pay","approval":"approved"}`,
		`{"time":"2026-11-21T18:00:01.123Z","event":"tool.call","runId":"r1","callIndex":2,"tool":"billing.pay","via":"execute","status":"ok","durationMs":1.5,"resultSha256":"` + resSHA + `","resultBytes":11}`,
		`{"time":"2026-11-21T18:00:00.123Z","event":"execute.end","runId":"r1","status":"tool_error","durationMs":0,"errorCode":"TIMEOUT","error":"slow"}`,
	}
	got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("got %d lines:\n%s", len(got), buf.String())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

// TestSecretsNeverWritten plants one secret in the arguments, the result,
// the reason, the error message and the tool name, and checks that the log
// holds none of it, while the digests still identify the arguments and
// result.
func TestSecretsNeverWritten(t *testing.T) {
	var buf bytes.Buffer
	l := NewWriter(&buf)
	args := map[string]any{"token": secret, "note": "use " + secret}
	result := json.RawMessage(`{"content":[{"type":"text","text":"your key is ` + secret + `"}]}`)
	argsSHA, argsN := Digest(args)
	resSHA, resN := Digest(result)
	for _, typ := range []Type{PolicyDecision, Approval, ToolCall, Invoke, ExecuteEnd} {
		l.Log(context.Background(), Event{
			Type: typ, RunID: "r", Tool: "lookup " + secret, AppID: secret, ArgsSHA256: argsSHA, ArgsBytes: argsN,
			ResultSHA256: resSHA, ResultBytes: resN, Decision: DecisionDeny,
			Reason: "denied: argument token=" + secret, Error: `upstream said {"apiKey": "` + secret + `"}`,
		})
	}
	out := buf.String()
	if strings.Contains(out, secret) || strings.Contains(out, secret[4:20]) {
		t.Fatalf("secret in the audit log:\n%s", out)
	}
	for _, m := range lines(t, buf.Bytes()) {
		if m["argsSha256"] != argsSHA || m["resultSha256"] != resSHA || !strings.Contains(m["reason"].(string), redact.DefaultPlaceholder) {
			t.Errorf("line lacks digests or redacted reason: %v", m)
		}
	}
}

func TestCustomRedactor(t *testing.T) {
	r, err := redact.New(presets.RedactionConfig{
		Patterns:    []presets.RedactionPattern{{Name: "ticket", Regex: `TKT-\d+`}},
		Placeholder: "***",
	})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	NewWriter(&buf, WithRedactor(r)).Log(context.Background(), Event{Type: PolicyDecision, Reason: "see TKT-42"})
	if !strings.Contains(buf.String(), `"reason":"see ***"`) {
		t.Errorf("got %s", buf.String())
	}
}

func TestClip(t *testing.T) {
	var buf bytes.Buffer
	l := NewWriter(&buf)
	l.Log(context.Background(), Event{Type: PolicyDecision, Reason: strings.Repeat("é", 2000), Tool: "t\xff", Status: strings.Repeat("s", 100)})
	m := lines(t, buf.Bytes())[0]
	reason := m["reason"].(string)
	if len(reason) > maxTextBytes || !strings.HasSuffix(reason, "…") {
		t.Errorf("reason not clipped: %d bytes", len(reason))
	}
	if m["tool"] != "t\uFFFD" || len(m["status"].(string)) > maxWordBytes {
		t.Errorf("line = %v", m)
	}
}

func TestDigest(t *testing.T) {
	a, n := Digest(map[string]any{"b": 1, "a": "<x>"})
	b, m := Digest(json.RawMessage(`{ "a": "<x>", "b": 1 }`))
	if a != b || n != m || n != len(`{"a":"<x>","b":1}`) {
		t.Errorf("map and raw digests differ: %s/%d %s/%d", a, n, b, m)
	}
	want, _ := DigestBytes([]byte(`{"a":"<x>","b":1}`))
	if a != want || len(a) != 64 {
		t.Errorf("Digest = %s, want %s", a, want)
	}
	if s, n := Digest(func() {}); s != "" || n != 0 {
		t.Errorf("Digest(func) = %q, %d", s, n)
	}
	if s, n := Digest(json.RawMessage(`{bad`)); s == "" || n != 4 {
		t.Errorf("Digest(invalid raw) = %q, %d", s, n)
	}
	if s, _ := DigestBytes(nil); s != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("DigestBytes(nil) = %s", s)
	}
}

func TestConcurrentLinesDoNotInterleave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(presets.AuditConfig{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 16, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				l.Log(context.Background(), Event{Type: ToolCall, RunID: fmt.Sprintf("w%d", w), CallIndex: i + 1,
					Reason: strings.Repeat("x", 500)})
			}
		}()
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := lines(t, b)
	if len(got) != workers*each {
		t.Fatalf("%d lines, want %d", len(got), workers*each)
	}
	seen := map[string]bool{}
	for _, m := range got {
		seen[fmt.Sprint(m["runId"], "/", m["callIndex"])] = true
	}
	if len(seen) != workers*each {
		t.Errorf("%d distinct events, want %d", len(seen), workers*each)
	}
}

func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	if err := os.WriteFile(path, []byte("{\"earlier\":1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Open(presets.AuditConfig{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	l.Log(context.Background(), Event{Type: Invoke})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	l.Log(context.Background(), Event{Type: Invoke}) // dropped, no panic
	b, _ := os.ReadFile(path)
	if got := lines(t, b); len(got) != 2 || got[0]["earlier"] == nil || got[1]["event"] != "invoke" {
		t.Errorf("file = %s", b)
	}
	if l.Dropped() != 1 {
		t.Errorf("Dropped = %d after a Log on a closed logger", l.Dropped())
	}

	created := filepath.Join(dir, "new.jsonl")
	l, err = Open(presets.AuditConfig{Path: created})
	if err != nil {
		t.Fatal(err)
	}
	_ = l.Close()
	if fi, err := os.Stat(created); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("created file mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
}

func TestOpenWarnsAboutWideMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	var diag bytes.Buffer
	l, err := Open(presets.AuditConfig{Path: path}, WithDiagnostics(slog.New(slog.NewTextHandler(&diag, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !strings.Contains(diag.String(), "chmod 600") {
		t.Errorf("no warning about mode 0644: %q", diag.String())
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{filepath.Join(dir, "missing", "audit.jsonl"), dir} {
		_, err := Open(presets.AuditConfig{Path: path})
		if err == nil || !strings.Contains(err.Error(), "audit.path") {
			t.Errorf("Open(%q) = %v, want an error naming audit.path", path, err)
		}
	}
}

func TestOpenDisabledAndStderr(t *testing.T) {
	l, err := Open(presets.AuditConfig{})
	if err != nil || l.Enabled() {
		t.Fatalf("Open(\"\") = %v, %v; want a disabled logger", l, err)
	}
	l.Log(context.Background(), Event{Type: Invoke})
	var nilLogger *Logger
	nilLogger.Log(context.Background(), Event{Type: Invoke})
	if nilLogger.Enabled() || nilLogger.Close() != nil || nilLogger.Dropped() != 0 {
		t.Error("nil Logger")
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	l, err = Open(presets.AuditConfig{Path: "-"})
	os.Stderr = stderr
	if err != nil {
		t.Fatal(err)
	}
	l.Log(context.Background(), Event{Type: Invoke, RunID: "to-stderr"})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	b, _ := io.ReadAll(r)
	if !strings.Contains(string(b), `"runId":"to-stderr"`) {
		t.Errorf("stderr got %q", b)
	}
}

// failingWriter fails while fail is set.
type failingWriter struct {
	mu   sync.Mutex
	fail bool
	buf  bytes.Buffer
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fail {
		return 0, errors.New("disk full")
	}
	return w.buf.Write(p)
}

func (w *failingWriter) set(fail bool) {
	w.mu.Lock()
	w.fail = fail
	w.mu.Unlock()
}

func TestWriteErrorsReportedOnce(t *testing.T) {
	var diag bytes.Buffer
	fw := &failingWriter{fail: true}
	l := NewWriter(fw, WithDiagnostics(slog.New(slog.NewTextHandler(&diag, nil))))
	for range 5 {
		l.Log(context.Background(), Event{Type: ToolCall})
	}
	if n := strings.Count(diag.String(), "disk full"); n != 1 {
		t.Errorf("write error reported %d times, want once:\n%s", n, diag.String())
	}
	if l.Dropped() != 5 {
		t.Errorf("Dropped = %d, want 5", l.Dropped())
	}
	fw.set(false)
	l.Log(context.Background(), Event{Type: ToolCall})
	if !strings.Contains(diag.String(), "works again") || fw.buf.Len() == 0 {
		t.Errorf("recovery not reported or event not written:\n%s", diag.String())
	}
	fw.set(true)
	l.Log(context.Background(), Event{Type: ToolCall})
	if n := strings.Count(diag.String(), "disk full"); n != 2 {
		t.Errorf("a new failure after recovery reported %d times in all, want 2", n)
	}
}

// panicHandler is a caller's handler with a bug.
type panicHandler struct{ slog.Handler }

func (panicHandler) Handle(context.Context, slog.Record) error { panic("boom") }

func TestHandlerPanicDoesNotEscape(t *testing.T) {
	var diag bytes.Buffer
	l := New(panicHandler{}, WithDiagnostics(slog.New(slog.NewTextHandler(&diag, nil))))
	l.Log(context.Background(), Event{Type: Invoke})
	if l.Dropped() != 1 || !strings.Contains(diag.String(), "panicked: boom") {
		t.Errorf("dropped %d, diag %q", l.Dropped(), diag.String())
	}
}

// recordingHandler keeps what a caller-supplied handler would see.
type recordingHandler struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return false }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r)
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

func TestCustomHandler(t *testing.T) {
	h := &recordingHandler{}
	l := New(h)
	l.Log(context.Background(), Event{Type: ToolCall, Time: fixed, RunID: "r", Status: "ok", Duration: time.Millisecond})
	if len(h.recs) != 1 {
		t.Fatalf("handler got %d records (a handler disabled for Info still receives audit events)", len(h.recs))
	}
	r := h.recs[0]
	attrs := map[string]any{}
	r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.Any(); return true })
	if r.Message != "tool.call" || r.Level != slog.LevelInfo || !r.Time.Equal(fixed) ||
		attrs["runId"] != "r" || attrs["status"] != "ok" || attrs["durationMs"] != 1.0 {
		t.Errorf("record = %v %v %v %v", r.Message, r.Level, r.Time, attrs)
	}
}
