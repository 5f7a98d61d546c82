package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
)

func newGateway(t *testing.T, servers map[string]presets.Upstream, opts ...Option) (*Gateway, *mcptest.Buffer) {
	t.Helper()
	logs := &mcptest.Buffer{}
	opts = append([]Option{WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))), WithStartTimeout(20 * time.Second)}, opts...)
	g, err := New(servers, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g, logs
}

// session is an mcp-go client connected to a server over in-memory pipes,
// recording the notifications it receives.
type session struct {
	*client.Client
	notes mcptest.Notifications
}

func connect(t *testing.T, srv *server.MCPServer) *session {
	t.Helper()
	s := &session{}
	s.Client = mcptest.Connect(t, srv, mcptest.Stdio(), mcptest.Record(&s.notes))
	return s
}

func (s *session) notifications(method string) []mcp.JSONRPCNotification {
	return s.notes.Of(method)
}

func call(t *testing.T, s *session, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := s.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestToolsAreExposedWithAppAndSource(t *testing.T) {
	g, _ := newGateway(t, map[string]presets.Upstream{"fx": fixture(t, "ok", nil)})
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := connect(t, g.Server())
	list, err := s.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var add *mcp.Tool
	for i, tool := range list.Tools {
		if !strings.HasPrefix(tool.Name, "fx.") {
			t.Errorf("tool %q lacks the server id prefix", tool.Name)
		}
		if tool.Name == "fx.add" {
			add = &list.Tools[i]
		}
	}
	if add == nil {
		t.Fatalf("fx.add not listed: %+v", list.Tools)
	}
	m, ok, err := catalog.ReadMeta(*add)
	if !ok || err != nil || m.AppID != "fx" || m.Source != catalog.SourceUpstream || m.SandboxProfile != presets.SandboxDefault {
		t.Errorf("_meta.codecall = %+v (ok %v, err %v), want appId fx, source upstream, sandboxProfile default", m, ok, err)
	}
	// The gateway sets the call timeout (the default here), where it is
	// set, and the directory the server runs in; the upstream cannot.
	if m.TimeoutMs != DefaultCallTimeout.Milliseconds() || !strings.Contains(m.TimeoutFrom, `upstream "fx"`) || m.Cwd != "/tmp (private to its sandbox)" {
		t.Errorf("_meta.codecall = %+v, want timeoutMs %d from upstream fx's default and cwd /tmp (private to its sandbox)", m, DefaultCallTimeout.Milliseconds())
	}
	if add.Annotations.ReadOnlyHint == nil || !*add.Annotations.ReadOnlyHint {
		t.Errorf("annotations not passed through: %+v", add.Annotations)
	}
	if _, ok := add.InputSchema.Properties["a"]; !ok {
		t.Errorf("input schema not passed through: %+v", add.InputSchema)
	}
	res := call(t, s, "fx.add", map[string]any{"a": 2, "b": 3})
	if res.IsError || !strings.Contains(string(mustJSON(t, res.StructuredContent)), `"sum":5`) {
		t.Errorf("fx.add = %+v", res)
	}
	if res := call(t, s, "fx.fail", nil); !res.IsError || text(res) != "boom from upstream" {
		t.Errorf("fx.fail = %+v, want the upstream's error", res)
	}
	if st := g.Status(); len(st) != 1 || st[0].State != stateReady || st[0].Tools < 8 {
		t.Errorf("status = %+v", st)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSeparatorAndToolGlobs(t *testing.T) {
	u := fixture(t, "ok", nil)
	u.IncludeTools = []string{"e*", "a*", "fail"}
	u.ExcludeTools = []string{"fail"}
	g, _ := newGateway(t, map[string]presets.Upstream{"fx": u}, WithSeparator("__"))
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range g.Server().ListTools() {
		names = append(names, name)
	}
	if len(names) != 2 || g.Server().GetTool("fx__echo") == nil || g.Server().GetTool("fx__add") == nil {
		t.Errorf("tools = %v, want fx__echo and fx__add", names)
	}
	s := connect(t, g.Server())
	if res := call(t, s, "fx__echo", map[string]any{"text": "hi"}); text(res) != "hi" {
		t.Errorf("fx__echo = %+v", res)
	}
}

func TestBrokenEntriesAreReportedAndTheRestServed(t *testing.T) {
	g, logs := newGateway(t, map[string]presets.Upstream{
		"good":    fixture(t, "ok", nil),
		"nocmd":   {Command: "/nonexistent/mcp-server"},
		"crashes": fixture(t, "crash-on-start", nil),
		"nohost":  {URL: "http://127.0.0.1:1/mcp"},
	}, WithBackoff(time.Hour, time.Hour), WithStartTimeout(10*time.Second))
	err := g.Start(context.Background())
	if err == nil {
		t.Fatal("Start reported no broken upstream")
	}
	for _, want := range []string{`"nocmd"`, "/nonexistent/mcp-server", `"crashes"`, "fatal: cannot open database", `"nohost"`, "127.0.0.1:1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Start error does not mention %s:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), `"good"`) {
		t.Errorf("the working upstream is reported broken: %v", err)
	}
	if !strings.Contains(logs.String(), "upstream=crashes") {
		t.Errorf("the log does not name the broken upstream:\n%s", logs)
	}
	s := connect(t, g.Server())
	if res := call(t, s, "good.echo", map[string]any{"text": "still here"}); text(res) != "still here" {
		t.Errorf("good.echo = %+v", res)
	}
	states := map[string]string{}
	for _, st := range g.Status() {
		states[st.ID] = st.State
	}
	want := map[string]string{"good": stateReady, "nocmd": stateFailed, "crashes": stateFailed, "nohost": stateFailed}
	for id, w := range want {
		if states[id] != w {
			t.Errorf("status of %s = %q, want %q", id, states[id], w)
		}
	}
}

func TestDeadUpstreamIsRestartedWithBackoff(t *testing.T) {
	g, _ := newGateway(t, map[string]presets.Upstream{"fx": fixture(t, "ok", nil), "other": fixture(t, "ok", nil)},
		WithBackoff(300*time.Millisecond, time.Second))
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := connect(t, g.Server())
	res := call(t, s, "fx.crash", nil)
	if !res.IsError || !strings.HasPrefix(text(res), UnavailablePrefix) {
		t.Errorf("a call that kills the upstream = %+v, want an UNAVAILABLE error", res)
	}
	// While it is down its tools fail fast with the reason; the other
	// upstream is unaffected.
	res = call(t, s, "fx.echo", map[string]any{"text": "x"})
	if !res.IsError || !strings.Contains(text(res), UnavailablePrefix) || !strings.Contains(text(res), `"fx"`) {
		t.Errorf("a call to the dead upstream = %+v, want UNAVAILABLE naming it", res)
	}
	// ...and say, as data, that the call may succeed later.
	if res.Meta == nil {
		t.Fatalf("a call to the dead upstream carries no _meta: %+v", res)
	}
	if data, _ := res.Meta.AdditionalFields[toolerr.MetaKey].(map[string]any); data["retryable"] != true || data["hint"] == "" {
		t.Errorf("_meta[%s] = %v, want retryable with a hint", toolerr.MetaKey, res.Meta.AdditionalFields)
	}
	if res := call(t, s, "other.echo", map[string]any{"text": "y"}); text(res) != "y" {
		t.Errorf("other.echo = %+v", res)
	}
	eventually(t, "the restart", func() bool {
		res := call(t, s, "fx.echo", map[string]any{"text": "back"})
		return !res.IsError && text(res) == "back"
	})
	for _, st := range g.Status() {
		if st.ID == "fx" && (st.State != stateReady || st.Restarts < 1) {
			t.Errorf("status after restart = %+v", st)
		}
	}
}

func TestListChangedUpdatesToolsAndReachesClients(t *testing.T) {
	g, _ := newGateway(t, map[string]presets.Upstream{"fx": fixture(t, "ok", nil)})
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := connect(t, g.Server())
	before := len(s.notifications(string(mcp.MethodNotificationToolsListChanged)))
	call(t, s, "fx.grow", map[string]any{"name": "fresh"})
	eventually(t, "fx.fresh to be registered", func() bool { return g.Server().GetTool("fx.fresh") != nil })
	if res := call(t, s, "fx.fresh", nil); text(res) != "fresh" {
		t.Errorf("fx.fresh = %+v", res)
	}
	eventually(t, "list_changed at the client", func() bool {
		return len(s.notifications(string(mcp.MethodNotificationToolsListChanged))) > before
	})
}

func TestCancellationReachesTheUpstream(t *testing.T) {
	// The sandboxed upstream writes its marker where its paths let it.
	dir := t.TempDir()
	fx := fixture(t, "ok", nil)
	fx.Paths = append(fx.Paths, dir)
	g, _ := newGateway(t, map[string]presets.Upstream{"fx": fx})
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := connect(t, g.Server())
	marker := filepath.Join(dir, "cancelled")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = "fx.slow"
	req.Params.Arguments = map[string]any{"marker": marker}
	if _, err := s.CallTool(ctx, req); err == nil {
		t.Fatal("the cancelled call returned no error")
	}
	eventually(t, "the upstream to see the cancellation", func() bool {
		b, err := os.ReadFile(marker)
		return err == nil && string(b) == "cancelled"
	})
}

func TestProgressAndLogsAreForwarded(t *testing.T) {
	g, _ := newGateway(t, map[string]presets.Upstream{"fx": fixture(t, "ok", nil)})
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := connect(t, g.Server())
	req := mcp.CallToolRequest{}
	req.Params.Name = "fx.progress"
	req.Params.Meta = &mcp.Meta{ProgressToken: "client-token-7"}
	// The client's level decides which of the upstream's lines it gets.
	if err := s.SetLevel(context.Background(), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelInfo}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CallTool(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	// mcp-go's server may write the last notifications after the response;
	// the ones that arrive must carry the client's token.
	eventually(t, "progress notifications", func() bool {
		return len(s.notifications(string(mcp.MethodNotificationProgress))) >= 1
	})
	for _, n := range s.notifications(string(mcp.MethodNotificationProgress)) {
		if tok := n.Params.AdditionalFields["progressToken"]; tok != "client-token-7" {
			t.Errorf("progress carries token %v, want the client's own", tok)
		}
	}
	eventually(t, "the log line", func() bool { return len(s.notifications("notifications/message")) >= 1 })
	for _, n := range s.notifications("notifications/message") {
		if n.Params.AdditionalFields["data"] != "progress done" {
			t.Errorf("log line %v reached a client whose level is info", n.Params.AdditionalFields)
		}
	}
}

func TestSecretsStayOutOfErrorsLogsAndDiscovery(t *testing.T) {
	const secret = "s3cr3t-value-4242"
	env := map[string]string{"CODECALLTEST_SECRET": secret, "PATH": os.Getenv("PATH"), "CODECALLTEST_NOT_ALLOWED": "x", "CODECALLTEST_ALLOWED": "yes"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	ok := fixture(t, "ok", map[string]string{"FIXTURE_SECRET": "${CODECALLTEST_SECRET}"})
	ok.EnvAllowlist = []string{"CODECALLTEST_ALLOWED"}
	crash := fixture(t, "crash-on-start", map[string]string{"FIXTURE_SECRET": "prefix-${CODECALLTEST_SECRET}"})
	missing := fixture(t, "ok", map[string]string{"FIXTURE_SECRET": "${CODECALLTEST_MISSING}"})
	g, logs := newGateway(t, map[string]presets.Upstream{"fx": ok, "crash": crash, "missing": missing},
		WithLookupEnv(lookup), WithBackoff(time.Hour, time.Hour))
	err := g.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "${CODECALLTEST_MISSING}") || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("Start error = %v, want the missing variable named and the secret redacted", err)
	}
	s := connect(t, g.Server())
	list, lerr := s.ListTools(context.Background(), mcp.ListToolsRequest{})
	if lerr != nil {
		t.Fatal(lerr)
	}
	if !strings.Contains(logs.String(), "fatal: cannot open database with key prefix-[redacted]") {
		t.Errorf("the debug log lacks the upstream's stderr line, redacted:\n%s", logs)
	}
	statuses, _ := json.Marshal(g.Status())
	for what, s := range map[string]string{"error": err.Error(), "log": logs.String(), "tools/list": string(mustJSON(t, list)), "status": string(statuses)} {
		if strings.Contains(s, secret) {
			t.Errorf("the secret leaks into the %s:\n%s", what, s)
		}
	}
	// The child does get the value, and only the allowlisted variables.
	if res := call(t, s, "fx.getenv", map[string]any{"name": "FIXTURE_SECRET"}); text(res) != secret {
		t.Errorf("the upstream sees FIXTURE_SECRET = %q", text(res))
	}
	if res := call(t, s, "fx.getenv", map[string]any{"name": "CODECALLTEST_ALLOWED"}); text(res) != "yes" {
		t.Errorf("allowlisted variable = %q, want yes", text(res))
	}
	if res := call(t, s, "fx.getenv", map[string]any{"name": "CODECALLTEST_NOT_ALLOWED"}); text(res) != "<unset>" {
		t.Errorf("a variable outside the allowlist reached the upstream: %q", text(res))
	}
}

func TestWorkingDirectory(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	u := fixture(t, "ok", nil)
	u.Cwd = dir
	g, _ := newGateway(t, map[string]presets.Upstream{"fx": u})
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if res := call(t, connect(t, g.Server()), "fx.cwd", nil); text(res) != dir {
		t.Errorf("the upstream runs in %q, want %q", text(res), dir)
	}
}

func TestLazyStartWaitsForFirstRequest(t *testing.T) {
	g, _ := newGateway(t, map[string]presets.Upstream{"fx": fixture(t, "ok", nil)}, WithLazyStart(true))
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := g.Status(); st[0].State != stateIdle {
		t.Fatalf("lazy upstream started before any request: %+v", st)
	}
	s := connect(t, g.Server())
	list, err := s.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil || len(list.Tools) == 0 {
		t.Fatalf("first tools/list = %v, %v; want the upstream's tools", list, err)
	}
}

func TestReload(t *testing.T) {
	env := map[string]string{"CODECALLTEST_TOKEN": "one"}
	var mu sync.Mutex
	lookup := func(k string) (string, bool) { mu.Lock(); defer mu.Unlock(); v, ok := env[k]; return v, ok }
	a := fixture(t, "ok", map[string]string{"TOKEN": "${CODECALLTEST_TOKEN}"})
	g, _ := newGateway(t, map[string]presets.Upstream{"a": a}, WithLookupEnv(lookup))
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := connect(t, g.Server())
	mu.Lock()
	env["CODECALLTEST_TOKEN"] = "two"
	mu.Unlock()
	if err := g.Reload(context.Background(), map[string]presets.Upstream{"a": a, "b": fixture(t, "ok", nil)}); err != nil {
		t.Fatal(err)
	}
	if res := call(t, s, "a.getenv", map[string]any{"name": "TOKEN"}); text(res) != "two" {
		t.Errorf("after reload the upstream sees TOKEN = %q, want the new value", text(res))
	}
	if g.Server().GetTool("b.echo") == nil {
		t.Error("the added upstream's tools are missing")
	}
	if err := g.Reload(context.Background(), map[string]presets.Upstream{"b": fixture(t, "ok", nil)}); err != nil {
		t.Fatal(err)
	}
	if g.Server().GetTool("a.echo") != nil {
		t.Error("the removed upstream's tools are still registered")
	}
}

func TestNewRejectsInvalidEntries(t *testing.T) {
	_, err := New(map[string]presets.Upstream{"bad id": {Command: "x"}, "both": {Command: "x", URL: "http://h/"}})
	if err == nil || !strings.Contains(err.Error(), `"bad id"`) || !strings.Contains(err.Error(), "both command and url") {
		t.Errorf("New = %v", err)
	}
}

func TestServersOf(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "servers.json"), []byte(`{"mcpServers": {"a": {"command": "x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	servers, err := ServersOf(presets.UpstreamsConfig{File: "servers.json", Servers: map[string]presets.Upstream{"b": {URL: "http://h/mcp"}}}, dir)
	if err != nil || len(servers) != 2 || servers["a"].Command != "x" {
		t.Errorf("ServersOf = %v, %v", servers, err)
	}
	_, err = ServersOf(presets.UpstreamsConfig{File: "servers.json", Servers: map[string]presets.Upstream{"a": {URL: "http://h/mcp"}}}, dir)
	if err == nil || !strings.Contains(err.Error(), `"a" is defined both`) {
		t.Errorf("duplicate id: %v", err)
	}
	_, err = ServersOf(presets.UpstreamsConfig{File: "missing.json"}, dir)
	if err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: %v", err)
	}
}

// An upstream's own _meta.codecall cannot move its tool to another app or
// source, nor switch off the operator's requiresApproval.
func TestUpstreamMetadataCannotClaimAnotherApp(t *testing.T) {
	u := fixture(t, "ok", nil)
	u.RequiresApproval = catalog.Bool(true)
	g, _ := newGateway(t, map[string]presets.Upstream{"fx": u})
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := g.Server().GetTool("fx.sneaky")
	if st == nil {
		t.Fatal("fx.sneaky not registered")
	}
	m, ok, err := catalog.ReadMeta(st.Tool)
	if !ok || err != nil {
		t.Fatalf("no _meta.codecall: %v", err)
	}
	if m.AppID != "fx" || m.Source != catalog.SourceUpstream || m.RequiresApproval == nil || !*m.RequiresApproval {
		t.Errorf("_meta.codecall = %+v; want appId fx, source upstream, requiresApproval true", m)
	}
	if m.TimeoutMs != DefaultCallTimeout.Milliseconds() || m.TimeoutFrom == "nowhere" || m.Cwd == "/claimed" {
		t.Errorf("_meta.codecall = %+v; the upstream chose its own timeout or directory", m)
	}
	if len(m.Tags) != 1 || m.Tags[0] != "claimed" {
		t.Errorf("the upstream's tags were dropped: %+v", m.Tags)
	}
	if st.Tool.Meta.AdditionalFields["other"] != "kept" {
		t.Errorf("other _meta fields were dropped: %+v", st.Tool.Meta.AdditionalFields)
	}
}

// TestProgress checks that WithProgress hears the beginning and the end of
// every upstream's first start, with the tools of one that starts and the
// reason of one that does not.
func TestProgress(t *testing.T) {
	var mu sync.Mutex
	var events []StartEvent
	g, _ := newGateway(t, map[string]presets.Upstream{
		"good":   fixture(t, "ok", nil),
		"broken": {Command: filepath.Join(t.TempDir(), "no-such-server")},
	}, WithProgress(func(e StartEvent) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}), WithBackoff(time.Hour, time.Hour))
	if err := g.Start(context.Background()); err == nil {
		t.Fatal("Start reported no failure for the broken upstream")
	}
	mu.Lock()
	defer mu.Unlock()
	began, ended := map[string]bool{}, map[string]StartEvent{}
	for _, e := range events {
		if e.Done {
			if !began[e.Upstream] {
				t.Errorf("%s ended before it began", e.Upstream)
			}
			ended[e.Upstream] = e
		} else {
			began[e.Upstream] = true
		}
	}
	if good := ended["good"]; good.Err != nil || good.Tools == 0 || good.Transport != presets.UpstreamStdio {
		t.Errorf("good upstream: %+v", good)
	}
	if bad := ended["broken"]; bad.Err == nil || !strings.Contains(bad.Err.Error(), "no-such-server") {
		t.Errorf("broken upstream: %+v", bad)
	}
}
