package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The official Go SDK client (github.com/modelcontextprotocol/go-sdk) is a
// second client from another codebase than CodeCall's own (mcp-go) and the
// TypeScript SDK. It speaks the newest protocol revision: it opens a session
// with server/discover instead of the initialize handshake and sends the
// protocol version in every request's _meta.

// newestProtocol is the revision the Go SDK client asks for first.
const newestProtocol = "2026-07-28"

// metaProtocolKey is where a 2026-07-28 request carries its protocol version.
const metaProtocolKey = "io.modelcontextprotocol/protocolVersion"

// demoListed is what tools/list shows for codecall serve with the
// embedded demo and the default configuration (codecall_only, direct calls
// off): the meta-tools and the demo's health tool, which the demo marks
// visible.
var demoListed = []string{"codecall.describe", "codecall.execute", "codecall.search", "health"}

func TestGoSDKClient(t *testing.T) {
	skipE2E(t)
	root := moduleRoot(t)
	bin := buildCLI(t, root)

	t.Run("stdio", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), subtestTimeout)
		defer cancel()
		wire := &wireLog{}
		cs := connectStdio(ctx, t, bin, wire, false)
		goSDKRoundTrip(ctx, t, cs)
		closeSession(t, cs)
		wire.check(t, false)
	})

	t.Run("stdio-string-ids", func(t *testing.T) {
		// The SDK numbers its requests; this run renames every request id
		// to a string on the way out and insists that each response
		// carries that string back.
		ctx, cancel := context.WithTimeout(context.Background(), subtestTimeout)
		defer cancel()
		wire := &wireLog{}
		cs := connectStdio(ctx, t, bin, wire, true)
		goSDKRoundTrip(ctx, t, cs)
		closeSession(t, cs)
		wire.check(t, true)
	})

	t.Run("http", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), subtestTimeout)
		defer cancel()
		srv := startHTTPServer(ctx, t, bin, "serve")
		wire := &wireLog{}
		cs := connectHTTP(ctx, t, srv.addr, wire)
		goSDKRoundTrip(ctx, t, cs)
		closeSession(t, cs)
		wire.check(t, false)
		wire.checkHeaders(t)
		srv.stop(t)
	})

	// The gateway: codecall serve --upstreams in front of the Go SDK's
	// conformance fixture (a stdio child), default configuration.
	t.Run("gateway", func(t *testing.T) {
		if !supportsUpstreams(t, bin) {
			t.Skip("this codecall serve has no --upstreams flag")
		}
		fixture := buildFixture(t, root)
		servers := writeServers(t, map[string]any{conformanceServerID: map[string]any{"command": fixture, "paths": []string{filepath.Dir(fixture) + ":ro"}}})
		serve := []string{"serve", "--upstreams", servers}

		t.Run("stdio", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), subtestTimeout)
			defer cancel()
			wire := &wireLog{}
			cs := connectStdio(ctx, t, bin, wire, false, serve...)
			before := approvals.Load()
			gatewayRoundTrip(ctx, t, cs)
			// The fixture's tools declare no hints: the plan paused for an
			// approval prompt per call and resumed on the answers.
			if approvals.Load() == before {
				t.Error("the plan called tools without hints and no approval prompt reached the client")
			}
			if wire.retries() == 0 {
				t.Error("the approvals did not travel as 2026-07-28 multi-round-trip input requests")
			}
			closeSession(t, cs)
			wire.check(t, false)
		})
		t.Run("http", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), subtestTimeout)
			defer cancel()
			srv := startHTTPServer(ctx, t, bin, serve...)
			wire := &wireLog{}
			cs := connectHTTP(ctx, t, srv.addr, wire)
			gatewayRoundTrip(ctx, t, cs)
			closeSession(t, cs)
			wire.check(t, false)
			wire.checkHeaders(t)
			srv.stop(t)
		})
	})
}

// connectHTTP connects the Go SDK client to a streamable HTTP endpoint,
// recording what it posts in wire.
func connectHTTP(ctx context.Context, t *testing.T, addr string, wire *wireLog) *mcp.ClientSession {
	t.Helper()
	transport := &mcp.StreamableClientTransport{
		Endpoint:   "http://" + addr + "/mcp",
		HTTPClient: &http.Client{Transport: &recordingRoundTripper{next: http.DefaultTransport, wire: wire}},
		MaxRetries: -1,
	}
	cs, err := newGoSDKClient().Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("the Go SDK client could not connect over streamable HTTP: %v", err)
	}
	return cs
}

// skipE2E skips the end-to-end tests on request and under -short (they
// build the CLI and start processes).
func skipE2E(t *testing.T) {
	t.Helper()
	mode := os.Getenv(envEnable)
	if mode == "0" {
		t.Skipf("%s=0: end-to-end tests skipped", envEnable)
	}
	if testing.Short() && mode != "1" {
		t.Skipf("-short: end-to-end tests skipped (they build the CLI and start processes); set %s=1 to run them anyway", envEnable)
	}
}

// approvals counts the approval prompts the Go SDK client was shown.
var approvals atomic.Int64

// newGoSDKClient is the Go SDK client, standing in for a person who
// approves every prompt: CodeCall's built-in policy asks before calls of
// tools that declare no hints. On 2026-07-28 the SDK answers CodeCall's
// multi-round-trip input requests with this handler and calls again.
func newGoSDKClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "codecall-e2e-go-sdk", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			approvals.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "approve"}}, nil
		},
	})
}

// connectStdio starts codecall with args (default: serve, the embedded
// demo) through the SDK's CommandTransport, with every message passing
// through wire.
func connectStdio(ctx context.Context, t *testing.T, bin string, wire *wireLog, stringIDs bool, args ...string) *mcp.ClientSession {
	t.Helper()
	if len(args) == 0 {
		args = []string{"serve"}
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = childEnv()
	cmd.Stderr = newLineLog(t, "server: ")
	transport := &wiredTransport{next: &mcp.CommandTransport{Command: cmd}, wire: wire, stringIDs: stringIDs}
	cs, err := newGoSDKClient().Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("the Go SDK client could not connect over stdio: %v", err)
	}
	return cs
}

func closeSession(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	if err := cs.Close(); err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		t.Errorf("close the session: %v", err)
	}
}

// goSDKRoundTrip checks the negotiated version and does a list, search,
// describe and execute round trip against the embedded demo.
func goSDKRoundTrip(ctx context.Context, t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	init := cs.InitializeResult()
	if init == nil {
		t.Fatal("no session result after Connect")
	}
	if init.ProtocolVersion != newestProtocol {
		t.Fatalf("negotiated protocol %q, want %q", init.ProtocolVersion, newestProtocol)
	}
	if init.Capabilities == nil || init.Capabilities.Tools == nil {
		t.Fatalf("the server offers no tools capability: %+v", init.Capabilities)
	}
	if init.ServerInfo == nil || init.ServerInfo.Name == "" {
		t.Errorf("server/discover carried no serverInfo: %+v", init.ServerInfo)
	} else {
		t.Logf("protocol %s with %s %s", init.ProtocolVersion, init.ServerInfo.Name, init.ServerInfo.Version)
	}

	// tools/list: the meta-tools and health.
	if names := listedTools(ctx, t, cs); !slices.Equal(names, demoListed) {
		t.Fatalf("tools/list = %v, want %v", names, demoListed)
	}

	// Search across apps, then within one.
	var found searchResult
	callMeta(ctx, t, cs, "codecall.search", map[string]any{"query": "list unpaid invoices of a customer"}, &found)
	if rank := found.rank("billing.list_invoices"); rank < 0 || rank >= 3 {
		t.Errorf("search: billing.list_invoices at rank %d, want the top 3: %+v", rank, found.Tools)
	}
	if found.TotalAvailableTools < 30 {
		t.Errorf("search: totalAvailableTools = %d, want the demo's whole catalog", found.TotalAvailableTools)
	}
	var crmOnly searchResult
	callMeta(ctx, t, cs, "codecall.search", map[string]any{
		"query": "find a customer by company name", "filter": map[string]any{"appIds": []string{"crm"}},
	}, &crmOnly)
	if len(crmOnly.Tools) == 0 {
		t.Error("search with appIds [crm] found nothing")
	}
	for _, hit := range crmOnly.Tools {
		if hit.AppID != "crm" {
			t.Errorf("search with appIds [crm] returned %s of app %s", hit.Name, hit.AppID)
		}
	}
	if crmOnly.rank("crm.find_contacts") < 0 {
		t.Errorf("search with appIds [crm]: crm.find_contacts not found: %+v", crmOnly.Tools)
	}

	// Describe what the plan will call.
	var described struct {
		Tools []struct {
			Name        string          `json:"name"`
			AppID       string          `json:"appId"`
			InputSchema json.RawMessage `json:"inputSchema"`
			TypeScript  string          `json:"typescript"`
		} `json:"tools"`
		NotFound []string `json:"notFound"`
	}
	callMeta(ctx, t, cs, "codecall.describe", map[string]any{"tools": []string{"crm.find_contacts", "billing.list_invoices"}, "format": "both"}, &described)
	if len(described.Tools) != 2 || len(described.NotFound) != 0 {
		t.Fatalf("describe: got %d tools, notFound %v", len(described.Tools), described.NotFound)
	}
	for _, d := range described.Tools {
		if !bytes.Contains(d.InputSchema, []byte(`"properties"`)) || !strings.Contains(d.TypeScript, d.Name) {
			t.Errorf("describe %s: schema %s, typescript %q", d.Name, d.InputSchema, d.TypeScript)
		}
	}

	// Execute a plan joining two apps.
	const plan = `
const found = await callTool('crm.find_contacts', {status: 'customer', limit: 3});
const rows = await Promise.all(found.contacts.map(async (c) => {
  const inv = await callTool('billing.list_invoices', {customer_id: c.id, limit: 100});
  return {id: c.id, name: c.name, invoices: inv.total,
    due: inv.invoices.reduce((sum, i) => sum + i.amount_due_cents, 0),
    owners: [...new Set(inv.invoices.map((i) => i.customer_id))]};
}));
return {customers: found.total, rows};`
	var run planRun[struct {
		Customers int `json:"customers"`
		Rows      []struct {
			ID       string   `json:"id"`
			Name     string   `json:"name"`
			Invoices int      `json:"invoices"`
			Due      int64    `json:"due"`
			Owners   []string `json:"owners"`
		} `json:"rows"`
	}]
	callMeta(ctx, t, cs, "codecall.execute", map[string]any{"script": plan}, &run)
	if run.Status != "ok" {
		t.Fatalf("execute: status %q, error %s", run.Status, run.Error)
	}
	rows := run.Result.Rows
	if run.Result.Customers == 0 || len(rows) != min(3, run.Result.Customers) {
		t.Fatalf("execute: %d rows for %d customers", len(rows), run.Result.Customers)
	}
	invoices := 0
	for _, r := range rows {
		if !strings.HasPrefix(r.ID, "con_") || r.Name == "" || r.Invoices < 0 || r.Due < 0 {
			t.Errorf("execute: implausible row %+v", r)
		}
		if len(r.Owners) > 1 || (len(r.Owners) == 1 && r.Owners[0] != r.ID) {
			t.Errorf("execute: invoices of %s belong to %v", r.ID, r.Owners)
		}
		invoices += r.Invoices
	}
	if invoices == 0 {
		t.Errorf("execute: no invoice for any of %d customers; the demo seeds invoices", len(rows))
	}
	if len(run.ToolTrace) != 1+len(rows) || run.ToolTrace[0].ToolName != "crm.find_contacts" {
		t.Errorf("execute: toolTrace %+v, want crm.find_contacts then %d billing.list_invoices", run.ToolTrace, len(rows))
	}
	for _, tr := range run.ToolTrace[1:] {
		if tr.ToolName != "billing.list_invoices" || !tr.OK {
			t.Errorf("execute: trace entry %+v", tr)
		}
	}
	t.Logf("plan joined %d customers with %d invoices", len(rows), invoices)

	// A plan that sends bad input gets the tool's validation error.
	var bad struct {
		Status string `json:"status"`
		Error  struct {
			Code     string `json:"code"`
			ToolName string `json:"toolName"`
			Message  string `json:"message"`
		} `json:"error"`
	}
	callMetaResult(ctx, t, cs, "codecall.execute", map[string]any{"script": "return await callTool('crm.get_contact', {});"}, true, &bad)
	if bad.Status != "tool_error" || bad.Error.Code != "VALIDATION" || bad.Error.ToolName != "crm.get_contact" ||
		!strings.Contains(bad.Error.Message, "contact_id") {
		t.Errorf("execute with bad input: %+v, want tool_error VALIDATION naming contact_id", bad)
	}
}

// gatewayRoundTrip checks the negotiated version and does a list, search
// and execute round trip through the gateway in front of the conformance
// fixture, whose tools are the app "fixture".
func gatewayRoundTrip(ctx context.Context, t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	expectGatewaySession(ctx, t, cs)

	var found searchResult
	callMeta(ctx, t, cs, "codecall.search", map[string]any{
		"query": "simple text content response", "filter": map[string]any{"appIds": []string{conformanceServerID}},
	}, &found)
	if rank := found.rank(gatewayToolName("test_simple_text")); rank < 0 || rank >= 3 {
		t.Errorf("search: %s at rank %d, want the top 3: %+v", gatewayToolName("test_simple_text"), rank, found.Tools)
	}
	for _, hit := range found.Tools {
		if hit.AppID != conformanceServerID {
			t.Errorf("search with appIds [%s] returned %s of app %s", conformanceServerID, hit.Name, hit.AppID)
		}
	}
	if found.TotalAvailableTools < 20 {
		t.Errorf("search: totalAvailableTools = %d, want the fixture's tools", found.TotalAvailableTools)
	}

	// One plan, three upstream calls: two results joined, and the
	// upstream's own error as a value.
	plan := fmt.Sprintf(`
const [text, schema] = await Promise.all([
  callTool(%[1]q, {}),
  callTool(%[2]q, {name: "Ada", email: "ada@example.com", address: {street: "1 Main St", city: "London"}}),
]);
const failed = await callTool(%[3]q, {}, {throwOnError: false});
return {text, schema, failed};`,
		gatewayToolName("test_simple_text"), gatewayToolName("json_schema_2020_12_tool"), gatewayToolName("test_error_handling"))
	var run planRun[struct {
		Text   any `json:"text"`
		Schema any `json:"schema"`
		Failed struct {
			OK    bool `json:"ok"`
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		} `json:"failed"`
	}]
	callMeta(ctx, t, cs, "codecall.execute", map[string]any{"script": plan}, &run)
	if run.Status != "ok" {
		t.Fatalf("execute: status %q, error %s", run.Status, run.Error)
	}
	if run.Result.Text != "This is a simple text response for testing." {
		t.Errorf("execute: test_simple_text gave %#v", run.Result.Text)
	}
	if s, _ := run.Result.Schema.(string); !strings.Contains(s, "Ada") {
		t.Errorf("execute: json_schema_2020_12_tool gave %#v, want the echo of its input", run.Result.Schema)
	}
	if f := run.Result.Failed; f.OK || !strings.Contains(f.Error.Message, "intentionally returns an error") {
		t.Errorf("execute: test_error_handling gave %+v, want the upstream's error message", f)
	}
	if len(run.ToolTrace) != 3 {
		t.Errorf("execute: toolTrace %+v, want 3 calls", run.ToolTrace)
	}

	// Bad input to an upstream tool is a tool_error.
	var bad struct {
		Status string `json:"status"`
		Error  struct {
			ToolName string `json:"toolName"`
			Message  string `json:"message"`
		} `json:"error"`
	}
	script := fmt.Sprintf("return await callTool(%q, {prompt: 42});", gatewayToolName("test_sampling"))
	callMetaResult(ctx, t, cs, "codecall.execute", map[string]any{"script": script}, true, &bad)
	if bad.Status != "tool_error" || bad.Error.ToolName != gatewayToolName("test_sampling") || !strings.Contains(bad.Error.Message, "prompt") {
		t.Errorf("execute with bad input: %+v, want a tool_error naming the field", bad)
	}
	t.Logf("through the gateway: plan joined %d upstream calls; bad input -> %s", len(run.ToolTrace), bad.Error.Message)
}

// expectGatewaySession checks that a session with the gateway (default
// configuration) runs on the newest revision and lists only the
// meta-tools.
func expectGatewaySession(ctx context.Context, t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	if v := cs.InitializeResult().ProtocolVersion; v != newestProtocol {
		t.Fatalf("negotiated protocol %q, want %q", v, newestProtocol)
	}
	names := listedTools(ctx, t, cs)
	if want := []string{"codecall.describe", "codecall.execute", "codecall.search"}; !slices.Equal(names, want) {
		t.Fatalf("tools/list = %v, want only the meta-tools %v (codecall_only)", names, want)
	}
}

// listedTools returns the sorted names tools/list shows, checking that
// each tool has a description and an input schema.
func listedTools(ctx context.Context, t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	list, err := cs.ListTools(ctx, &mcp.ListToolsParams{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("tools/list: %s has no description or input schema", tool.Name)
		}
	}
	sort.Strings(names)
	return names
}

// planRun is codecall.execute's result with the plan's own result type.
type planRun[R any] struct {
	Status    string          `json:"status"`
	Result    R               `json:"result"`
	Error     json.RawMessage `json:"error"`
	ToolTrace []struct {
		ToolName string `json:"toolName"`
		OK       bool   `json:"ok"`
	} `json:"toolTrace"`
}

type searchResult struct {
	Tools []struct {
		Name  string  `json:"name"`
		AppID string  `json:"appId"`
		Score float64 `json:"score"`
	} `json:"tools"`
	TotalAvailableTools int `json:"totalAvailableTools"`
}

func (r searchResult) rank(name string) int {
	for i, hit := range r.Tools {
		if hit.Name == name {
			return i
		}
	}
	return -1
}

// callMeta calls a meta-tool that must succeed and decodes its structured
// result into out.
func callMeta(ctx context.Context, t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	callMetaResult(ctx, t, cs, name, args, false, out)
}

// callMetaResult calls a meta-tool, checks its isError flag, and decodes
// its structured result into out, checking that the text block carries the
// same JSON.
func callMetaResult(ctx context.Context, t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, wantError bool, out any) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError != wantError {
		t.Fatalf("%s returned isError %v, want %v: %s", name, res.IsError, wantError, contentText(res))
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil || res.StructuredContent == nil {
		t.Fatalf("%s: no structuredContent (%v)", name, err)
	}
	var fromText, fromStructured any
	if err := json.Unmarshal([]byte(contentText(res)), &fromText); err != nil {
		t.Fatalf("%s: the text block is not JSON: %v", name, err)
	}
	if err := json.Unmarshal(structured, &fromStructured); err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(fromText, fromStructured) {
		t.Errorf("%s: text block and structuredContent differ:\n%s\n%s", name, contentText(res), structured)
	}
	if err := json.Unmarshal(structured, out); err != nil {
		t.Fatalf("%s: decode %s: %v", name, structured, err)
	}
}

func contentText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// wireLog records the requests a client sent and the responses it got, to
// check what went over the wire.
type wireLog struct {
	mu        sync.Mutex
	requests  []wireRequest
	responses []any // raw ids of responses
	headers   []string
	problems  []string
}

type wireRequest struct {
	method   string
	id       any // nil for a notification
	protocol string
	retry    bool // carries the requestState of an input request
}

func (w *wireLog) request(method string, id any, params []byte) {
	var p struct {
		Meta         map[string]any `json:"_meta"`
		RequestState string         `json:"requestState"`
	}
	_ = json.Unmarshal(params, &p)
	v, _ := p.Meta[metaProtocolKey].(string)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.requests = append(w.requests, wireRequest{method: method, id: id, protocol: v, retry: p.RequestState != ""})
}

// retries counts the requests that answered a multi-round-trip input
// request (they carry its requestState).
func (w *wireLog) retries() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, r := range w.requests {
		if r.retry {
			n++
		}
	}
	return n
}

func (w *wireLog) problem(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.problems = append(w.problems, fmt.Sprintf(format, args...))
}

// check verifies that the session opened with server/discover, never sent
// initialize, put the protocol version in every request's _meta, and (with
// stringIDs) used and got back string ids only.
func (w *wireLog) check(t *testing.T, stringIDs bool) {
	t.Helper()
	// A call returns when its response is dispatched, which over HTTP can
	// come before the transport's reader has recorded it: wait (bounded)
	// for the record to catch up with the requests.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		w.mu.Lock()
		calls := 0
		for _, r := range w.requests {
			if r.id != nil {
				calls++
			}
		}
		caught := len(w.responses) >= calls
		w.mu.Unlock()
		if caught {
			break
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.problems {
		t.Error(p)
	}
	var calls []wireRequest
	for _, r := range w.requests {
		if r.id != nil {
			calls = append(calls, r)
		}
		if r.method == "initialize" || r.method == "notifications/initialized" {
			t.Errorf("the client sent %s: the session fell back to the initialize handshake", r.method)
		}
	}
	if len(calls) == 0 || calls[0].method != "server/discover" {
		t.Fatalf("the first request was not server/discover: %+v", calls)
	}
	for _, c := range calls {
		if c.protocol != newestProtocol {
			t.Errorf("%s (id %v) carried _meta protocolVersion %q, want %q", c.method, c.id, c.protocol, newestProtocol)
		}
		if _, isString := c.id.(string); stringIDs && !isString {
			t.Errorf("%s went out with id %v (%T), want a string", c.method, c.id, c.id)
		}
	}
	if len(w.responses) < len(calls) {
		t.Errorf("%d requests but %d responses: requests %+v responses %v", len(calls), len(w.responses), calls, w.responses)
	}
	kinds := map[string]int{}
	for _, id := range w.responses {
		kinds[fmt.Sprintf("%T", id)]++
	}
	t.Logf("wire: %d requests (first %s), response id types %v", len(calls), calls[0].method, kinds)
}

// checkHeaders verifies the MCP-Protocol-Version header of HTTP requests.
func (w *wireLog) checkHeaders(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.headers) == 0 {
		t.Fatal("no HTTP request was recorded")
	}
	for _, h := range w.headers {
		if h != newestProtocol {
			t.Errorf("an HTTP request carried MCP-Protocol-Version %q, want %q", h, newestProtocol)
		}
	}
}

// wiredTransport records every message of a connection and, with stringIDs,
// renames the client's numeric request ids to strings.
type wiredTransport struct {
	next      mcp.Transport
	wire      *wireLog
	stringIDs bool
}

func (tr *wiredTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := tr.next.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &wiredConn{Connection: conn, wire: tr.wire, stringIDs: tr.stringIDs, renamed: map[string]jsonrpc.ID{}}, nil
}

type wiredConn struct {
	mcp.Connection
	wire      *wireLog
	stringIDs bool

	mu      sync.Mutex
	renamed map[string]jsonrpc.ID // string id on the wire -> the SDK's id
}

func (c *wiredConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok {
		if c.stringIDs && req.ID.IsValid() {
			wireID := fmt.Sprintf("go-sdk-%v", req.ID.Raw())
			id, err := jsonrpc.MakeID(wireID)
			if err != nil {
				return err
			}
			c.mu.Lock()
			c.renamed[wireID] = req.ID
			c.mu.Unlock()
			copied := *req
			copied.ID = id
			msg, req = &copied, &copied
		}
		c.wire.request(req.Method, req.ID.Raw(), req.Params)
	}
	return c.Connection.Write(ctx, msg)
}

func (c *wiredConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		return msg, err
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return msg, nil
	}
	raw := resp.ID.Raw()
	c.wire.mu.Lock()
	c.wire.responses = append(c.wire.responses, raw)
	c.wire.mu.Unlock()
	if !c.stringIDs {
		return msg, nil
	}
	s, isString := raw.(string)
	c.mu.Lock()
	orig, known := c.renamed[s]
	delete(c.renamed, s)
	c.mu.Unlock()
	if !isString || !known {
		c.wire.problem("a response came back with id %v (%T), which was never sent", raw, raw)
		return msg, nil
	}
	copied := *resp
	copied.ID = orig
	return &copied, nil
}

// recordingRoundTripper records the JSON-RPC requests a streamable HTTP
// client posts, and the protocol version header each HTTP request carries.
type recordingRoundTripper struct {
	next http.RoundTripper
	wire *wireLog
}

func (rt *recordingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if v := req.Header.Get("MCP-Protocol-Version"); v != "" || req.Method == http.MethodPost {
		rt.wire.mu.Lock()
		rt.wire.headers = append(rt.wire.headers, v)
		rt.wire.mu.Unlock()
	}
	if req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		msg, err := jsonrpc.DecodeMessage(body)
		if err != nil {
			rt.wire.problem("the client posted a body that is not one JSON-RPC message: %v: %s", err, body)
		} else if r, ok := msg.(*jsonrpc.Request); ok {
			rt.wire.request(r.Method, r.ID.Raw(), r.Params)
		}
	}
	resp, err := rt.next.RoundTrip(req)
	if err == nil && req.Method == http.MethodPost {
		// Responses arrive as JSON or an event stream; count them as the
		// SDK reads them.
		resp.Body = &responseCounter{ReadCloser: resp.Body, wire: rt.wire}
	}
	return resp, err
}

// responseCounter notes the id of each JSON-RPC response in an HTTP
// response body (plain JSON or server-sent events) as it is read.
type responseCounter struct {
	io.ReadCloser
	wire *wireLog
	buf  bytes.Buffer
}

func (r *responseCounter) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.buf.Write(p[:n])
	if err != nil {
		r.scan()
	}
	return n, err
}

func (r *responseCounter) Close() error {
	r.scan()
	return r.ReadCloser.Close()
}

func (r *responseCounter) scan() {
	data := r.buf.Bytes()
	r.buf.Reset()
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(line), []byte("data:")))
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		if msg, err := jsonrpc.DecodeMessage(line); err == nil {
			if resp, ok := msg.(*jsonrpc.Response); ok {
				r.wire.mu.Lock()
				r.wire.responses = append(r.wire.responses, resp.ID.Raw())
				r.wire.mu.Unlock()
			}
		}
	}
}
