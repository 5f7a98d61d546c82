package middleware_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/examples/demo"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// TestDiscoveryInPlans runs one plan that finds, reads and calls tools
// (searchTools, describeTools, callTool) through the gate, in both
// isolation modes: an excluded tool is never found, described or called.
func TestDiscoveryInPlans(t *testing.T) {
	const plan = `
		const hits = await searchTools('contacts', {appIds: ['crm'], topK: 20});
		const names = hits.map(h => h.name);
		const refunds = await searchTools('refund a payment', {appIds: ['billing'], topK: 3});
		const d = await describeTools(['crm.find_contacts', 'crm.delete_contact', 'crm.nope']);
		const def = d.tools[0];
		const found = await callTool(def.name, {query: 'ava'});
		let deleted;
		try { await callTool('crm.delete_contact', {contact_id: 'con_001'}); } catch (e) { deleted = e.code; }
		return {names, described: d.tools.map(t => t.name), notFound: d.notFound, hasTypes: typeof def.typescript === 'string',
			required: def.inputSchema.required ?? [], first: found.contacts[0].name, deleted,
			approvalShown: refunds.some(h => h.requiresApproval === true), effects: [...new Set(hits.map(h => h.effect))].sort()};`
	for _, iso := range []presets.Isolation{presets.IsolationInProcess, presets.IsolationProcess} {
		t.Run(string(iso), func(t *testing.T) {
			srv := demo.New()
			cfg := presets.Default()
			cfg.VM.Isolation = iso
			cfg.Exclude = []string{"crm.delete_contact"}
			cc, err := middleware.Wrap(srv, middleware.WithConfig(cfg), middleware.WithoutReload())
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			if iso == presets.IsolationProcess && cc.Isolation().Effective != presets.IsolationProcess {
				t.Skipf("worker processes cannot start here: %s", cc.Isolation().Fallback)
			}
			c := mcptest.Connect(t, srv)
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = "codecall.execute", map[string]any{"script": plan}
			res, err := c.CallTool(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var out struct {
				Status string
				Result struct {
					Names, Described, NotFound, Required, Effects []string
					HasTypes, ApprovalShown                       bool
					First, Deleted                                string
				}
				Metrics struct{ ToolCalls int }
			}
			text := mcp.GetTextFromContent(res.Content[0])
			if err := json.Unmarshal([]byte(text), &out); err != nil || out.Status != "ok" {
				t.Fatalf("plan: %s", text)
			}
			r := out.Result
			switch {
			case len(r.Names) == 0 || slices.Contains(r.Names, "crm.delete_contact"):
				t.Errorf("searchTools found %v; want crm tools without the excluded one", r.Names)
			case !slices.Equal(r.Described, []string{"crm.find_contacts"}) || !slices.Equal(r.NotFound, []string{"crm.delete_contact", "crm.nope"}):
				t.Errorf("describeTools: tools %v, notFound %v", r.Described, r.NotFound)
			case !r.HasTypes || r.First == "" || r.Deleted != "NOT_FOUND":
				t.Errorf("result: %s", text)
			case !r.ApprovalShown || !slices.Contains(r.Effects, "read-only"):
				t.Errorf("search hits do not show approval and effects: %s", text)
			case out.Metrics.ToolCalls != 2:
				t.Errorf("metrics.toolCalls = %d, want 2 (discovery is not a tool call)", out.Metrics.ToolCalls)
			}
		})
	}
}
