package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codecall-go/codecall/console"
	"github.com/codecall-go/codecall/policy"
)

const token = "console-test-token-0123456789"

// fakeApprovals is a waiting list an operator answers; down makes it
// fail as a shared queue whose store cannot be reached.
type fakeApprovals struct {
	mu      sync.Mutex
	pending []policy.PendingApproval
	answers []string
	down    bool
}

func (f *fakeApprovals) Pending(context.Context) ([]policy.PendingApproval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, fmt.Errorf("%w, so the waiting calls cannot be listed: dial tcp: connection refused", policy.ErrQueueUnavailable)
	}
	return append([]policy.PendingApproval(nil), f.pending...), nil
}

func (f *fakeApprovals) Answer(_ context.Context, id string, approve bool, ch policy.Channel, by string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return fmt.Errorf("%w, so the answer is not recorded: dial tcp: connection refused", policy.ErrQueueUnavailable)
	}
	for i, p := range f.pending {
		if p.ID == id {
			f.pending = append(f.pending[:i], f.pending[i+1:]...)
			verdict := "deny"
			if approve {
				verdict = "approve"
			}
			f.answers = append(f.answers, verdict+" "+id+" "+string(ch)+" "+by)
			return nil
		}
	}
	return policy.ErrNoPendingApproval
}

const hostile = `<script>alert(1)</script><img src=x onerror=alert(2)>`

func newConsole(t *testing.T, opts ...console.Option) (*console.Console, *console.Store, *fakeApprovals) {
	t.Helper()
	st := console.NewStore()
	ap := &fakeApprovals{pending: []policy.PendingApproval{{ID: "ap-1", Tool: "shop." + hostile, Via: policy.ViaExecute, RunID: "r1", CallIndex: 1,
		Reason: hostile, Prompt: "Approve " + hostile, Since: time.Now(), Expires: time.Now().Add(time.Minute)}}}
	c, err := console.New(st, token, append([]console.Option{console.WithApprovals(ap)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	for _, e := range []console.Event{
		{Type: "execute.start", RunID: "r1", SessionID: "s1", Via: "execute", ScriptSHA256: "ab12", Time: t0},
		{Type: "policy.decision", RunID: "r1", ParentRunID: "r1", CallIndex: 1, Tool: hostile, AppID: hostile, Decision: "deny", Reason: hostile, ErrorCode: "NOT_FOUND", Time: t0.Add(time.Millisecond)},
		{Type: "tool.call", RunID: "r1", ParentRunID: "r1", CallIndex: 1, Tool: hostile, Status: "error", ErrorCode: "NOT_FOUND", Error: hostile, DurationMs: 1, Time: t0.Add(2 * time.Millisecond)},
		{Type: "execute.end", RunID: "r1", SessionID: "s1", Via: "execute", Status: "tool_error", Error: hostile, DurationMs: 3, Time: t0.Add(3 * time.Millisecond)},
	} {
		st.Add(e)
	}
	return c, st, ap
}

// do sends a request from remote (default loopback) and returns status and body.
func do(t *testing.T, h http.Handler, req *http.Request, remote string) (*http.Response, string) {
	t.Helper()
	if remote == "" {
		remote = "127.0.0.1:5555"
	}
	req.RemoteAddr = remote
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	res := w.Result()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func get(path string, hdr ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	return r
}

func TestNewRefusesShortTokens(t *testing.T) {
	if _, err := console.New(console.NewStore(), "short"); err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Fatalf("New with a 5-byte token: %v", err)
	}
}

func TestAuth(t *testing.T) {
	c, _, _ := newConsole(t)
	remote, _, _ := newConsole(t, console.WithAllowRemote(true))
	tests := []struct {
		name       string
		h          http.Handler
		req        *http.Request
		remote     string
		wantStatus int
		wantIn     string
	}{
		{"page without token goes to login", c, get("/console/"), "", http.StatusSeeOther, ""},
		{"api without token", c, get("/console/api/approvals"), "", http.StatusUnauthorized, "bearer token"},
		{"api with a wrong token", c, get("/console/api/approvals", "Authorization", "Bearer "+token+"x"), "", http.StatusUnauthorized, ""},
		{"api with a token prefix", c, get("/console/api/approvals", "Authorization", "Bearer "+token[:20]), "", http.StatusUnauthorized, ""},
		{"api with the token", c, get("/console/api/approvals", "Authorization", "Bearer "+token), "", http.StatusOK, `"ap-1"`},
		{"page with the token", c, get("/console/", "Authorization", "Bearer "+token), "", http.StatusOK, "r1"},
		{"non-loopback refused with the token", c, get("/console/", "Authorization", "Bearer "+token), "192.0.2.7:4000", http.StatusForbidden, "loopback"},
		{"non-loopback login page refused", c, get("/console/login"), "[2001:db8::1]:4000", http.StatusForbidden, ""},
		{"ipv6 loopback served", c, get("/console/", "Authorization", "Bearer "+token), "[::1]:4000", http.StatusOK, ""},
		{"allowRemote serves remote clients", remote, get("/console/", "Authorization", "Bearer "+token), "192.0.2.7:4000", http.StatusOK, ""},
		{"allowRemote still needs the token", remote, get("/console/api/approvals"), "192.0.2.7:4000", http.StatusUnauthorized, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, body := do(t, tt.h, tt.req, tt.remote)
			if res.StatusCode != tt.wantStatus || !strings.Contains(body, tt.wantIn) {
				t.Fatalf("status %d, body %.300s; want %d with %q", res.StatusCode, body, tt.wantStatus, tt.wantIn)
			}
			if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("Content-Security-Policy %q", csp)
			}
		})
	}
}

// login logs in through the form and returns the session cookie and the
// page's CSRF token.
func login(t *testing.T, h http.Handler) (*http.Cookie, string) {
	t.Helper()
	res, body := do(t, h, get("/console/login"), "")
	var form *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == "codecall_console_login" {
			form = ck
		}
	}
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(body)
	if form == nil || csrf == nil {
		t.Fatalf("login form without its CSRF cookie or field: %s", body)
	}
	post := func(tok, csrfValue string) *http.Response {
		r := httptest.NewRequest(http.MethodPost, "/console/login", strings.NewReader(url.Values{"token": {tok}, "name": {"dana"}, "csrf": {csrfValue}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.AddCookie(form)
		res, _ := do(t, h, r, "")
		return res
	}
	if res := post(token, "0000"); res.StatusCode != http.StatusForbidden {
		t.Errorf("login with a wrong CSRF token: %d", res.StatusCode)
	}
	if res := post("wrong-token-wrong-token", csrf[1]); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("login with a wrong token: %d", res.StatusCode)
	}
	res = post(token, csrf[1])
	var sess *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == "codecall_console" && ck.Value != "" {
			sess = ck
		}
	}
	if res.StatusCode != http.StatusSeeOther || sess == nil {
		t.Fatalf("login: status %d, no session cookie", res.StatusCode)
	}
	if !sess.HttpOnly || !sess.Secure || sess.SameSite != http.SameSiteStrictMode || strings.Contains(sess.Value, token) {
		t.Errorf("session cookie %+v: want HttpOnly, Secure, SameSite=Strict, not the token", sess)
	}
	r := get("/console/approvals")
	r.AddCookie(sess)
	_, page := do(t, h, r, "")
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("approvals page without a CSRF field: %s", page)
	}
	return sess, m[1]
}

func TestCSRF(t *testing.T) {
	c, _, ap := newConsole(t)
	sess, csrf := login(t, c)
	answer := func(fields url.Values, origin string, withCookie bool) int {
		r := httptest.NewRequest(http.MethodPost, "/console/approvals/ap-1", strings.NewReader(fields.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if withCookie {
			r.AddCookie(sess)
		}
		res, _ := do(t, c, r, "")
		return res.StatusCode
	}
	tests := []struct {
		name   string
		fields url.Values
		origin string
		cookie bool
		want   int
	}{
		{"no csrf field", url.Values{"decision": {"approve"}}, "", true, http.StatusForbidden},
		{"wrong csrf", url.Values{"decision": {"approve"}, "csrf": {csrf + "0"}}, "", true, http.StatusForbidden},
		{"cross-site origin", url.Values{"decision": {"approve"}, "csrf": {csrf}}, "https://evil.example", true, http.StatusForbidden},
		{"no session", url.Values{"decision": {"approve"}, "csrf": {csrf}}, "", false, http.StatusUnauthorized},
		{"api write with a cookie only", nil, "", true, 0},
		{"valid", url.Values{"decision": {"approve"}, "csrf": {csrf}}, "http://example.com", true, http.StatusSeeOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.fields == nil {
				r := httptest.NewRequest(http.MethodPost, "/console/api/approvals/ap-1", strings.NewReader(`{"decision":"approve"}`))
				r.AddCookie(sess)
				if res, _ := do(t, c, r, ""); res.StatusCode != http.StatusUnauthorized {
					t.Fatalf("API write with a session cookie and no bearer token: %d, want 401", res.StatusCode)
				}
				return
			}
			if got := answer(tt.fields, tt.origin, tt.cookie); got != tt.want {
				t.Fatalf("status %d, want %d", got, tt.want)
			}
		})
	}
	if len(ap.answers) != 1 || ap.answers[0] != "approve ap-1 console dana" {
		t.Errorf("answers %q, want exactly one, by dana through the console", ap.answers)
	}
}

// TestEscaping: tool names, apps, reasons, errors and prompts come from
// tools, plans and policies; every page shows them as text.
func TestEscaping(t *testing.T) {
	c, _, _ := newConsole(t)
	for _, path := range []string{"/console/", "/console/runs/r1", "/console/approvals", "/console/audit?tool=script", "/console/audit?run=" + url.QueryEscape(hostile)} {
		_, body := do(t, c, get(path, "Authorization", "Bearer "+token), "")
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s: hostile markup reached the page unescaped", path)
		}
		if path == "/console/runs/r1" && !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s: the hostile tool name is not shown escaped", path)
		}
	}
}

func TestApprovalAPI(t *testing.T) {
	c, _, ap := newConsole(t)
	ap.pending = append(ap.pending, policy.PendingApproval{ID: "ap-2", Tool: "shop.x"})
	post := func(id, body string) (int, string) {
		r := httptest.NewRequest(http.MethodPost, "/console/api/approvals/"+id, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+token)
		res, b := do(t, c, r, "")
		return res.StatusCode, b
	}
	tests := []struct {
		name, id, body string
		want           int
		wantIn         string
	}{
		{"bad decision", "ap-1", `{"decision":"maybe"}`, http.StatusBadRequest, "approve or deny"},
		{"unknown field", "ap-1", `{"decision":"approve","forever":true}`, http.StatusBadRequest, "forever"},
		{"not json", "ap-1", `approve`, http.StatusBadRequest, "JSON"},
		{"approve", "ap-1", `{"decision":"approve","by":"erin"}`, http.StatusOK, `"ap-1"`},
		{"again", "ap-1", `{"decision":"deny"}`, http.StatusNotFound, "answered already, expired"},
		{"deny", "ap-2", `{"decision":"deny","by":"erin\u0007"}`, http.StatusOK, `"deny"`},
		{"expired or unknown", "ap-9", `{"decision":"approve"}`, http.StatusNotFound, "expired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, body := post(tt.id, tt.body); got != tt.want || !strings.Contains(body, tt.wantIn) {
				t.Fatalf("status %d, body %s; want %d with %q", got, body, tt.want, tt.wantIn)
			}
		})
	}
	want := []string{"approve ap-1 cli erin", "deny ap-2 cli erin"}
	if strings.Join(ap.answers, "|") != strings.Join(want, "|") {
		t.Errorf("answers %q, want %q (channel cli, control characters dropped)", ap.answers, want)
	}
}

// TestApprovalsStoreDown: a shared queue whose store cannot be reached is
// said so, on the page and through the API (503), and no answer is taken
// for recorded: the form says it was not, the API refuses it.
func TestApprovalsStoreDown(t *testing.T) {
	c, _, ap := newConsole(t)
	sess, csrf := login(t, c)
	ap.mu.Lock()
	ap.down = true
	ap.mu.Unlock()

	res, body := do(t, c, get("/console/api/approvals", "Authorization", "Bearer "+token), "")
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "cannot be reached") {
		t.Errorf("list: %d %s; want 503 saying the store cannot be reached", res.StatusCode, body)
	}
	r := httptest.NewRequest(http.MethodPost, "/console/api/approvals/ap-1", strings.NewReader(`{"decision":"approve"}`))
	r.Header.Set("Authorization", "Bearer "+token)
	if res, body := do(t, c, r, ""); res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "not recorded") {
		t.Errorf("answer: %d %s; want 503 saying the answer is not recorded", res.StatusCode, body)
	}
	page := get("/console/approvals")
	page.AddCookie(sess)
	if res, body := do(t, c, page, ""); res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, `id="problem"`) || strings.Contains(body, "No call is waiting") {
		t.Errorf("page: %d; want 503 with the problem, not \"No call is waiting\": %.400s", res.StatusCode, body)
	}
	form := httptest.NewRequest(http.MethodPost, "/console/approvals/ap-1", strings.NewReader(url.Values{"decision": {"approve"}, "csrf": {csrf}}.Encode()))
	form.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	form.AddCookie(sess)
	if res, _ := do(t, c, form, ""); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/approvals?done=down" {
		t.Errorf("form answer: %d to %q; want a redirect to done=down", res.StatusCode, res.Header.Get("Location"))
	}
	if len(ap.answers) != 0 {
		t.Errorf("answers recorded with the store down: %q", ap.answers)
	}
}

// TestVersionWaits: the live-update poll returns when the store changes.
func TestVersionWaits(t *testing.T) {
	c, st, _ := newConsole(t)
	v := st.Version()
	go func() {
		time.Sleep(50 * time.Millisecond)
		st.Touch()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := get("/console/api/version?wait=20&since="+itoa(v), "Authorization", "Bearer "+token).WithContext(ctx)
	_, body := do(t, c, r, "")
	if !strings.Contains(body, `"version":`+itoa(v+1)) {
		t.Fatalf("version answer %s, want %d", body, v+1)
	}
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }
