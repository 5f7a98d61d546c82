package middleware_test

import (
	"github.com/codecall-go/codecall/internal/mcptest"

	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// regoHeader begins each policy module the tests write.
const regoHeader = "package codecall\n\nimport rego.v1\n\n"

const allowAll = `default decision := {"allow": true, "requireApproval": false, "reason": "open"}
`

const denyCharges = `default decision := {"allow": true, "requireApproval": false, "reason": "open"}

decision := {"allow": false, "requireApproval": false, "reason": "charges are over budget"} if input.tool.name == "shop.charge"
`

const denyDeletes = `default decision := {"allow": true, "requireApproval": false, "reason": "open"}

decision := {"allow": false, "requireApproval": false, "reason": "no deletes today"} if input.tool.name == "shop.delete_order"
`

func policyShop(t *testing.T, dir string, mut func(*presets.Config)) (*approvalShop, *mcptest.Buffer) {
	t.Helper()
	logs := &mcptest.Buffer{}
	s := newApprovalShopWith(t, func(cfg *presets.Config) {
		cfg.Policy.Paths = []string{dir}
		if mut != nil {
			mut(cfg)
		}
	}, middleware.WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	return s, logs
}

// TestPolicyDeniesOnEveryPath checks that a Rego denial reaches direct
// calls, codecall.invoke and plans alike, with the policy's reason.
func TestPolicyDeniesOnEveryPath(t *testing.T) {
	dir := t.TempDir()
	mcptest.WritePolicy(t, dir, "policy.rego", regoHeader+denyCharges)
	s, _ := policyShop(t, dir, nil)
	c := mcptest.Connect(t, s.srv)
	for _, via := range paths {
		if code := mcptest.CallVia(t, c, via, "shop.charge", map[string]any{"id": "1"}); code != "ACCESS_DENIED" {
			t.Errorf("%s: code %q, want ACCESS_DENIED", via, code)
		}
		// The policy allows this one without approval, though the built-in
		// default would ask: the policy, not the default, decides.
		if code := mcptest.CallVia(t, c, via, "shop.delete_order", map[string]any{"id": "1"}); code != "" {
			t.Errorf("%s: delete_order code %q, want allowed by the policy", via, code)
		}
	}
	if n := s.count("shop.charge"); n != 0 {
		t.Fatalf("a denied call ran %d times", n)
	}
	// The plan sees the reason.
	req := mcp.CallToolRequest{}
	req.Params.Name = "codecall.execute"
	req.Params.Arguments = map[string]any{"script": `
		const r = await callTool('shop.charge', {id: '1'}, {throwOnError: false});
		try { await callTool('shop.charge', {id: '1'}); } catch (e) { return [r.error, e.code, e.reason]; }`}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	text := mcp.GetTextFromContent(res.Content[0])
	if !strings.Contains(text, `"reason":"charges are over budget"`) || !strings.Contains(text, `"ACCESS_DENIED","charges are over budget"`) {
		t.Fatalf("plan did not see the policy's reason: %s", text)
	}
}

// TestPolicyReload checks hot reload: a valid edit applies, a broken edit
// is refused and the last good policy keeps serving.
func TestPolicyReload(t *testing.T) {
	dir := t.TempDir()
	mcptest.WritePolicy(t, dir, "policy.rego", regoHeader+allowAll)
	s, logs := policyShop(t, dir, nil)
	c := mcptest.Connect(t, s.srv)
	if code := mcptest.CallVia(t, c, "invoke", "shop.delete_order", nil); code != "" {
		t.Fatalf("before the edit: %s", code)
	}
	mcptest.WritePolicy(t, dir, "policy.rego", regoHeader+denyDeletes)
	waitFor(t, func() bool { return mcptest.CallVia(t, c, "invoke", "shop.delete_order", nil) == "ACCESS_DENIED" }, "the edited policy to apply")

	mcptest.WritePolicy(t, dir, "policy.rego", regoHeader+"decision := {\n") // broken
	waitFor(t, func() bool { return strings.Contains(logs.String(), "policy change not applied") }, "the broken edit to be refused")
	if !strings.Contains(logs.String(), "policy.rego:") {
		t.Errorf("the refusal does not name the file and line:\n%s", logs)
	}
	if code := mcptest.CallVia(t, c, "invoke", "shop.delete_order", nil); code != "ACCESS_DENIED" {
		t.Fatalf("after a broken edit the last good policy must keep serving; got %q", code)
	}
	if code := mcptest.CallVia(t, c, "invoke", "shop.update_note", nil); code != "" {
		t.Fatalf("after a broken edit: update_note %q", code)
	}
}

// TestPolicyFilterDiscovery checks policy.filterDiscovery: a tool the
// policy denies whatever its arguments is neither found nor described.
func TestPolicyFilterDiscovery(t *testing.T) {
	dir := t.TempDir()
	mcptest.WritePolicy(t, dir, "policy.rego", regoHeader+denyCharges)
	for _, filter := range []bool{false, true} {
		s, _ := policyShop(t, dir, func(cfg *presets.Config) { cfg.Policy.FilterDiscovery = filter })
		c := mcptest.Connect(t, s.srv)
		req := mcp.CallToolRequest{}
		req.Params.Name = "codecall.describe"
		req.Params.Arguments = map[string]any{"tools": []string{"shop.charge", "shop.update_note"}}
		res, err := c.CallTool(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			NotFound []string `json:"notFound"`
		}
		_ = json.Unmarshal([]byte(mcp.GetTextFromContent(res.Content[0])), &out)
		hidden := len(out.NotFound) == 1 && out.NotFound[0] == "shop.charge"
		if hidden != filter {
			t.Errorf("filterDiscovery=%v: notFound %v", filter, out.NotFound)
		}
		req.Params.Name = "codecall.search"
		req.Params.Arguments = map[string]any{"query": "shop charge"}
		res, err = c.CallTool(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if found := strings.Contains(mcp.GetTextFromContent(res.Content[0]), `"shop.charge"`); found == filter {
			t.Errorf("filterDiscovery=%v: search found shop.charge = %v", filter, found)
		}
	}
}

// TestPolicyLoadFailsClosed checks that a server never starts without the
// policy it was configured with.
func TestPolicyLoadFailsClosed(t *testing.T) {
	dir := t.TempDir()
	tests := map[string]func(){
		"missing file": func() {},
		"broken rego":  func() { mcptest.WritePolicy(t, dir, "policy.rego", regoHeader+"decision := {") },
	}
	for name, prepare := range tests {
		t.Run(name, func(t *testing.T) {
			prepare()
			cfg := presets.Default()
			cfg.Policy.Paths = []string{filepath.Join(dir, "policy.rego")}
			srv := server.NewMCPServer("x", "1", server.WithToolCapabilities(true))
			_, err := middleware.Wrap(srv, middleware.WithConfig(cfg))
			if err == nil || !strings.Contains(err.Error(), "policy.rego") {
				t.Fatalf("Wrap: %v; want an error naming policy.rego", err)
			}
		})
	}
}
