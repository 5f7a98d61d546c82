package gateway

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
)

func startGateway(t *testing.T, servers map[string]presets.Upstream, opts ...Option) *Gateway {
	t.Helper()
	g, _ := newGateway(t, servers, opts...)
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestPrefixFalseKeepsUpstreamNames(t *testing.T) {
	u := fixture(t, "ok", nil)
	u.Prefix = catalog.Bool(false)
	g := startGateway(t, map[string]presets.Upstream{"fx": u})
	s := connect(t, g.Server())
	list, err := s.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var echo *mcp.Tool
	for i, tool := range list.Tools {
		if strings.HasPrefix(tool.Name, "fx.") {
			t.Errorf("tool %q is prefixed although prefix is false", tool.Name)
		}
		if tool.Name == "echo" {
			echo = &list.Tools[i]
		}
	}
	if echo == nil {
		t.Fatalf("echo not listed under its own name: %+v", list.Tools)
	}
	if m, ok, err := catalog.ReadMeta(*echo); !ok || err != nil || m.AppID != "fx" || m.Source != catalog.SourceUpstream {
		t.Errorf("_meta.codecall = %+v (ok %v, err %v), want appId fx, source upstream", m, ok, err)
	}
	if res := call(t, s, "echo", map[string]any{"text": "hi"}); res.IsError || text(res) != "hi" {
		t.Errorf("echo = %+v", res)
	}
	prompts, err := s.ListPrompts(context.Background(), mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "greet" {
		t.Errorf("prompts = %+v, want greet unprefixed", prompts.Prompts)
	}
}

func TestNameClashIsRefused(t *testing.T) {
	a, b := fixture(t, "ok", nil), fixture(t, "ok", nil)
	a.Prefix, b.Prefix = catalog.Bool(false), catalog.Bool(false)
	g, _ := newGateway(t, map[string]presets.Upstream{"a": a, "b": b})
	err := g.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "name clash") || !strings.Contains(err.Error(), `tool "add" is also served by upstream`) {
		t.Fatalf("Start = %v, want a name clash naming add", err)
	}
	var ready, failed int
	for _, st := range g.Status() {
		switch st.State {
		case stateReady:
			ready++
		case stateFailed:
			failed++
			if !strings.Contains(st.Error, "prefix") {
				t.Errorf("status error %q does not say how to fix it", st.Error)
			}
		}
	}
	if ready != 1 || failed != 1 {
		t.Errorf("status = %+v, want one upstream serving and the other refused", g.Status())
	}
	// Prefixed, the same two servers live side by side.
	b.Prefix = nil
	g2 := startGateway(t, map[string]presets.Upstream{"a": a, "b": b})
	if g2.Server().GetTool("echo") == nil || g2.Server().GetTool("b.echo") == nil {
		t.Error("want echo from a and b.echo from b")
	}
}

func TestPromptsResourcesAndCompletion(t *testing.T) {
	g := startGateway(t, map[string]presets.Upstream{"fx": fixture(t, "ok", nil)})
	s := connect(t, g.Server())
	ctx := context.Background()

	caps := s.GetServerCapabilities()
	if caps.Prompts == nil || caps.Resources == nil || !caps.Resources.Subscribe || caps.Completions == nil {
		t.Errorf("capabilities = %+v, want prompts, resources with subscribe, completions", caps)
	}

	prompts, err := s.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil || len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "fx.greet" {
		t.Fatalf("prompts/list = %+v, %v; want fx.greet", prompts, err)
	}
	get := mcp.GetPromptRequest{}
	get.Params.Name = "fx.greet"
	get.Params.Arguments = map[string]string{"name": "Ada"}
	got, err := s.GetPrompt(ctx, get)
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("prompts/get = %+v, %v", got, err)
	}
	if tc, ok := mcp.AsTextContent(got.Messages[0].Content); !ok || tc.Text != "Hello, Ada" {
		t.Errorf("prompt message = %+v", got.Messages[0].Content)
	}
	get.Params.Name = "greet"
	if _, err := s.GetPrompt(ctx, get); err == nil {
		t.Error("the unprefixed prompt name answered; the upstream is prefixed")
	}

	res, err := s.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil || len(res.Resources) != 1 || res.Resources[0].URI != "fx://note" {
		t.Fatalf("resources/list = %+v, %v", res, err)
	}
	tpl, err := s.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil || len(tpl.ResourceTemplates) != 1 || tpl.ResourceTemplates[0].URITemplate.Raw() != "fx://items/{id}" {
		t.Fatalf("resources/templates/list = %+v, %v", tpl, err)
	}
	for uri, want := range map[string]string{"fx://note": "note body", "fx://items/42": "item 42"} {
		read, err := s.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
		if err != nil || len(read.Contents) != 1 {
			t.Fatalf("resources/read %s = %+v, %v", uri, read, err)
		}
		if tc, ok := read.Contents[0].(mcp.TextResourceContents); !ok || tc.Text != want {
			t.Errorf("resources/read %s = %+v, want %q", uri, read.Contents[0], want)
		}
	}
	if _, err := s.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "fx://missing"}}); err == nil {
		t.Error("reading a resource no upstream has succeeded")
	}

	comp, err := s.Complete(ctx, mcp.CompleteRequest{Params: mcp.CompleteParams{
		Ref:      mcp.PromptReference{Type: "ref/prompt", Name: "fx.greet"},
		Argument: mcp.CompleteArgument{Name: "name", Value: "al"},
	}})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"alice", "albert"}) {
		t.Errorf("completion/complete = %+v, %v; want alice, albert", comp, err)
	}
	if _, err := s.Complete(ctx, mcp.CompleteRequest{Params: mcp.CompleteParams{
		Ref: mcp.PromptReference{Type: "ref/prompt", Name: "nope"}, Argument: mcp.CompleteArgument{Name: "x"},
	}}); err == nil {
		t.Error("completing an unknown prompt succeeded")
	}

	// Closing the gateway takes everything away again.
	_ = g.Close()
	if n := len(g.Server().ListResources()); n != 0 {
		t.Errorf("%d resources left after Close", n)
	}
}

// connectHTTP connects a client over streamable HTTP, which, unlike the
// in-memory stdio of connect, serves several sessions on one server.
func connectHTTP(t *testing.T, srv *server.MCPServer, opts ...mcptest.Option) *session {
	t.Helper()
	s := &session{}
	s.Client = mcptest.Connect(t, srv, append(opts, mcptest.HTTP(), mcptest.Record(&s.notes))...)
	return s
}

func TestCapabilitiesFollowTheUpstreams(t *testing.T) {
	g := startGateway(t, map[string]presets.Upstream{"fx": fixture(t, "tools-only", nil)})
	caps := connect(t, g.Server()).GetServerCapabilities()
	if caps.Prompts != nil || caps.Resources != nil || caps.Completions != nil {
		t.Errorf("capabilities = %+v; no upstream offers prompts, resources or completion", caps)
	}
	if caps.Tools == nil || caps.Logging == nil {
		t.Errorf("capabilities = %+v, want tools and logging", caps)
	}
}

func TestResourceSubscriptionsAreForwarded(t *testing.T) {
	g := startGateway(t, map[string]presets.Upstream{"fx": fixture(t, "ok", nil)})
	s := connectHTTP(t, g.Server())
	other := connectHTTP(t, g.Server())
	subscribe := func(s *session, method string) {
		t.Helper()
		res, err := s.GetTransport().SendRequest(context.Background(), transport.JSONRPCRequest{
			JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(method), Method: method, Params: map[string]any{"uri": "fx://note"},
		})
		if err != nil || res.Error != nil {
			t.Fatalf("%s: %v %+v", method, err, res)
		}
	}
	subscribe(s, "resources/subscribe")
	subscribe(other, "resources/subscribe")
	if got := text(call(t, s, "fx.subscriptions", nil)); got != "fx://note" {
		t.Errorf("upstream subscriptions = %q, want fx://note", got)
	}
	call(t, s, "fx.touch", nil)
	eventually(t, "resources/updated", func() bool {
		return len(s.notifications(mcp.MethodNotificationResourceUpdated)) == 1 && len(other.notifications(mcp.MethodNotificationResourceUpdated)) == 1
	})
	if uri := s.notifications(mcp.MethodNotificationResourceUpdated)[0].Params.AdditionalFields["uri"]; uri != "fx://note" {
		t.Errorf("updated uri = %v", uri)
	}
	// The upstream keeps the subscription until the last client leaves.
	subscribe(s, "resources/unsubscribe")
	if got := text(call(t, s, "fx.subscriptions", nil)); got != "fx://note" {
		t.Errorf("upstream subscriptions = %q while another client is subscribed", got)
	}
	subscribe(other, "resources/unsubscribe")
	if got := text(call(t, s, "fx.subscriptions", nil)); got != "" {
		t.Errorf("upstream subscriptions = %q after every client unsubscribed", got)
	}
	call(t, s, "fx.touch", nil)
	call(t, s, "fx.echo", map[string]any{"text": "sync"})
	if n := len(s.notifications(mcp.MethodNotificationResourceUpdated)); n != 1 {
		t.Errorf("%d updates after unsubscribing, want still 1", n)
	}
}

// answers is a client's model and user: it records what it was asked.
type answers struct{ asked []string }

func (a *answers) CreateMessage(_ context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	a.asked = append(a.asked, "sampling")
	return &mcp.CreateMessageResult{SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("4")}, Model: "test-model"}, nil
}

func (a *answers) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.asked = append(a.asked, "elicitation: "+req.Params.Message)
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"name": "Ada"}}}, nil
}

func TestSamplingAndElicitationReachTheCallingClient(t *testing.T) {
	g := startGateway(t, map[string]presets.Upstream{"fx": fixture(t, "ok", nil)})
	a := &answers{}
	s := connectHTTP(t, g.Server(), mcptest.WithSampling(a), mcptest.WithElicitation(a))
	res := call(t, s, "fx.consult", nil)
	if res.IsError || text(res) != "model: 4; user: accept map[name:Ada]" {
		t.Errorf("fx.consult = %q (error %v)", text(res), res.IsError)
	}
	if !slices.Equal(a.asked, []string{"sampling", "elicitation: Your name?"}) {
		t.Errorf("the client was asked %q", a.asked)
	}

	// A client that offers neither gets the upstream's own error, not a
	// hang and not someone else's answer.
	plain := connectHTTP(t, g.Server())
	if res := call(t, plain, "fx.consult", nil); !res.IsError || !strings.Contains(text(res), "sampling") {
		t.Errorf("fx.consult without sampling = %q (error %v)", text(res), res.IsError)
	}
}

func TestRelayNeedsOneCallingSession(t *testing.T) {
	g := startGateway(t, map[string]presets.Upstream{"fx": fixture(t, "ok", nil)})
	g.mu.Lock()
	u := g.ups["fx"]
	g.mu.Unlock()
	_, err := relay{u: u}.CreateMessage(context.Background(), mcp.CreateMessageRequest{})
	if !errors.Is(err, errNoCaller) {
		t.Errorf("sampling with no call in flight = %v, want errNoCaller", err)
	}
}

func TestRelayRefusesWhenCallsOfSeveralClientsAreInFlight(t *testing.T) {
	g := startGateway(t, map[string]presets.Upstream{"fx": fixture(t, "ok", nil)})
	waiting := connectHTTP(t, g.Server())
	a := &answers{}
	asking := connectHTTP(t, g.Server(), mcptest.WithSampling(a), mcptest.WithElicitation(a))

	// Another client's call is still running on the same upstream: the
	// upstream's question could belong to either call.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req := mcp.CallToolRequest{}
		req.Params.Name = "fx.slow"
		req.Params.Arguments = map[string]any{"marker": t.TempDir() + "/m"}
		_, _ = waiting.CallTool(ctx, req)
	}()
	t.Cleanup(func() { cancel(); <-done })
	g.mu.Lock()
	u := g.ups["fx"]
	g.mu.Unlock()
	eventually(t, "the slow call in flight", func() bool { return len(u.callers(true)) == 1 })

	res := call(t, asking, "fx.consult", nil)
	if !res.IsError || !strings.Contains(text(res), "cannot tell which one") {
		t.Errorf("fx.consult with another client's call in flight = %q (error %v), want a refusal", text(res), res.IsError)
	}
	if len(a.asked) != 0 {
		t.Errorf("a client was asked %q although the request could be another's", a.asked)
	}
}

func TestLazyStartDeclaresEverythingAndServesPrompts(t *testing.T) {
	g, _ := newGateway(t, map[string]presets.Upstream{"fx": fixture(t, "tools-only", nil), "fy": fixture(t, "ok", nil)}, WithLazyStart(true))
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := connect(t, g.Server())
	caps := s.GetServerCapabilities()
	if caps.Prompts == nil || caps.Resources == nil || caps.Completions == nil {
		t.Errorf("lazy capabilities = %+v, want prompts, resources and completions declared", caps)
	}
	// The first prompts/list starts the upstreams and waits for them.
	prompts, err := s.ListPrompts(context.Background(), mcp.ListPromptsRequest{})
	if err != nil || len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "fy.greet" {
		t.Errorf("first prompts/list = %+v, %v; want fy.greet", prompts, err)
	}
}

func TestPromptAndResourceListChanges(t *testing.T) {
	g := startGateway(t, map[string]presets.Upstream{"fx": fixture(t, "ok", nil)})
	s := connect(t, g.Server())
	call(t, s, "fx.more", map[string]any{"name": "extra"})
	eventually(t, "the new prompt and resource", func() bool {
		_, p := g.promptOwner("fx.extra")
		return p == "extra" && g.resourceOwner("fx://extra") != nil
	})
	get := mcp.GetPromptRequest{}
	get.Params.Name = "fx.extra"
	if got, err := s.GetPrompt(context.Background(), get); err != nil || got.Description != "extra" {
		t.Errorf("prompts/get fx.extra = %+v, %v", got, err)
	}
	eventually(t, "list_changed reaching the client", func() bool {
		return len(s.notifications(string(mcp.MethodNotificationPromptsListChanged))) > 0 &&
			len(s.notifications(string(mcp.MethodNotificationResourcesListChanged))) > 0
	})
}

func TestParseServersPrefix(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		want       bool
		err        string
	}{
		{"default", `{"mcpServers": {"a": {"command": "x"}}}`, true, ""},
		{"false", `{"mcpServers": {"a": {"command": "x", "prefix": false}}}`, false, ""},
		{"true", `{"mcpServers": {"a": {"command": "x", "prefix": true}}}`, true, ""},
		{"not a bool", `{"mcpServers": {"a": {"command": "x", "prefix": "no"}}}`, false, `mcpServers["a"]: line 1, column 52`},
		{"syntax", "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\",}\n}}", false, "line 2, column 24"},
		{"wrong type on a later line", "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"},\n  \"b\": {\"args\": \"-v\"}\n}}", false, `mcpServers["b"]: line 3, column 20`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			servers, err := ParseServers([]byte(tc.json))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to name %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := servers["a"].IsPrefixed(); got != tc.want {
				t.Errorf("IsPrefixed = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestUpstreamCannotReplaceTheGatewaysOwnTools(t *testing.T) {
	u := fixture(t, "ok", nil)
	u.Prefix = catalog.Bool(false)
	g, _ := newGateway(t, map[string]presets.Upstream{"fx": u})
	// As a CodeCall meta-tool would be after middleware.Wrap.
	own := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("the gateway's own"), nil
	}
	g.Server().AddTool(mcp.NewTool("echo"), own)
	err := g.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), `tool "echo" is a tool of the gateway itself`) {
		t.Fatalf("Start = %v, want the clash with the gateway's own tool", err)
	}
	s := connect(t, g.Server())
	if res := call(t, s, "echo", map[string]any{"text": "x"}); text(res) != "the gateway's own" {
		t.Errorf("echo = %q; the upstream replaced the gateway's own tool", text(res))
	}
	// Registering later (after list_changed, a reload) skips it too.
	g.mu.Lock()
	up := g.ups["fx"]
	g.mu.Unlock()
	if kept := g.register(up, []server.ServerTool{{Tool: mcp.NewTool("echo"), Handler: own}}, nil); len(kept) != 0 {
		t.Errorf("register kept %v over the gateway's own tool", kept)
	}
}
