package policies_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/examples/demo"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/presets"
)

// policyCopy copies this policy set into a temporary directory with the
// business-hours rule set to ask rather than deny, so the decisions below
// do not depend on the hour the test runs at.
func policyCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".rego") && name != "data.yaml" {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if name == "data.yaml" {
			if !strings.Contains(string(b), "outside: deny") {
				t.Fatal("data.yaml no longer has business_hours.outside: deny; update this test")
			}
			b = []byte(strings.Replace(string(b), "outside: deny", "outside: approve", 1))
		}
		mcptest.WritePolicy(t, dir, name, string(b))
	}
	return dir
}

// TestSameDecisionOnEveryPath runs the example policy in front of the demo
// server and makes the same calls through the three paths: a client's
// direct tools/call, codecall.invoke and a plan's callTool. The client
// cannot show approval prompts, so a call that needs approval answers
// APPROVAL_REQUIRED. Where the policy says a path differs (billing is not
// reachable directly; a plan's outbound writes ask), the table says so.
func TestSameDecisionOnEveryPath(t *testing.T) {
	cfg := presets.Default()
	cfg.Policy.Paths = []string{policyCopy(t)}
	cfg.DirectCalls.Enabled = true
	cfg.Tools = map[string]presets.ToolOverride{"*": {VisibleInListTools: catalog.Bool(true)}}
	srv := demo.New()
	cc, err := middleware.Wrap(srv, middleware.WithConfig(cfg), middleware.WithoutReload())
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := mcptest.Connect(t, srv)

	const (
		ok       = ""
		denied   = "ACCESS_DENIED"
		approval = "APPROVAL_REQUIRED"
		// The gate validates input before the policy, on every path; the
		// demo also validates input itself (mcp-go's input validation),
		// before any middleware, so a malformed direct call is answered by
		// the server and never reaches the gate.
		invalid       = "VALIDATION"
		serverInvalid = mcptest.NotCodeCalls
	)
	tests := []struct {
		tool                    string
		args                    map[string]any
		direct, invoke, execute string
	}{
		{"crm.get_contact", map[string]any{"contact_id": "con_001"}, ok, ok, ok},
		{"support.list_tickets", map[string]any{}, ok, ok, ok},
		{"crm.delete_contact", map[string]any{"contact_id": "con_002"}, approval, approval, approval},
		{"users.delete_account", map[string]any{"user_id": "usr_003"}, denied, denied, denied},
		{"billing.list_invoices", map[string]any{}, denied, ok, ok},
		{"billing.refund_payment", map[string]any{"payment_id": "pay_001", "amount_cents": 1500}, denied, approval, approval},
		{"billing.refund_payment", map[string]any{"payment_id": "pay_001", "amount_cents": 150000}, denied, denied, denied},
		{"billing.refund_payment", map[string]any{"payment_id": "pay_001", "amount_cents": "1500"}, serverInvalid, invalid, invalid},
		{"notifications.send_email", map[string]any{"to": "ada@example.com", "subject": "Hi", "body": "Hello"}, ok, ok, approval},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %v", tt.tool, tt.args), func(t *testing.T) {
			for via, want := range map[string]string{"direct": tt.direct, "invoke": tt.invoke, "execute": tt.execute} {
				if got := mcptest.CallVia(t, c, via, tt.tool, tt.args); got != want {
					t.Errorf("%s: code %q, want %q", via, got, want)
				}
			}
		})
	}
}

// TestDiscoveryFilterIgnoresTheClock checks policy.filterDiscovery with
// this policy: a tool denied by configuration is hidden, a tool denied only
// outside business hours is not, whatever the time now.
func TestDiscoveryFilterIgnoresTheClock(t *testing.T) {
	e, err := policy.LoadEngine(t.Context(), []string{"."}, presets.DefaultPolicyQuery)
	if err != nil {
		t.Fatal(err)
	}
	snap := demoCatalog(t)
	for name, hidden := range map[string]bool{
		"users.delete_account": true,  // deny_tools
		"erp.post_journal":     true,  // app not in the allowlist
		"crm.delete_contact":   false, // destructive: business hours only
		"crm.get_contact":      false,
	} {
		tool, ok := snap.Lookup(name)
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		if got := e.NeverAllows(t.Context(), policy.ToolDocument(tool)); got != hidden {
			t.Errorf("NeverAllows(%s) = %v, want %v", name, got, hidden)
		}
	}
}
