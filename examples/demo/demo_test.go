package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/typescript"
)

// testNow is the fixed clock of every test server, so that seed data and
// timestamps are the same on every run.
var testNow = time.Date(2026, time.March, 10, 15, 4, 5, 0, time.UTC)

func testClock() time.Time { return testNow }

// harness is an in-process MCP client talking to one demo server.
type harness struct {
	t   *testing.T
	ctx context.Context
	c   *client.Client
	srv *server.MCPServer
}

func start(t *testing.T, opts ...Option) *harness {
	t.Helper()
	return connect(t, New(append([]Option{WithClock(testClock)}, opts...)...))
}

func connect(t *testing.T, srv *server.MCPServer) *harness {
	t.Helper()
	c := mcptest.Connect(t, srv, mcptest.Modern())
	return &harness{t: t, ctx: t.Context(), c: c, srv: srv}
}

func (h *harness) tools() []mcp.Tool {
	h.t.Helper()
	res, err := h.c.ListTools(h.ctx, mcp.ListToolsRequest{})
	if err != nil {
		h.t.Fatalf("ListTools: %v", err)
	}
	return res.Tools
}

// call calls a tool; a protocol error fails the test, a tool error does not.
func (h *harness) call(name string, args map[string]any) *mcp.CallToolResult {
	h.t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := h.c.CallTool(h.ctx, req)
	if err != nil {
		h.t.Fatalf("%s(%v): %v", name, args, err)
	}
	return res
}

// ok calls a tool that must succeed and returns its result decoded from
// structured content, or from the text content when there is none.
func (h *harness) ok(name string, args map[string]any) map[string]any {
	h.t.Helper()
	res := h.call(name, args)
	if res.IsError {
		h.t.Fatalf("%s(%v) failed: %s", name, args, text(res))
	}
	raw := []byte(res.RawStructuredContent)
	if len(raw) == 0 {
		raw = []byte(text(res))
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		h.t.Fatalf("%s: result is not a JSON object: %v\n%s", name, err, raw)
	}
	return out
}

// fail calls a tool that must fail with a tool error and returns its message.
func (h *harness) fail(name string, args map[string]any) string {
	h.t.Helper()
	res := h.call(name, args)
	if !res.IsError {
		h.t.Fatalf("%s(%v) succeeded, want a tool error; result: %s", name, args, text(res))
	}
	return text(res)
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// Accessors for decoded JSON, failing the test on a shape mismatch.

func num(t *testing.T, m map[string]any, key string) int64 {
	t.Helper()
	v, ok := m[key].(float64)
	if !ok {
		t.Fatalf("%q is %T (%v), want a number in %v", key, m[key], m[key], m)
	}
	return int64(v)
}

func str(t *testing.T, m map[string]any, key string) string {
	t.Helper()
	v, ok := m[key].(string)
	if !ok {
		t.Fatalf("%q is %T (%v), want a string in %v", key, m[key], m[key], m)
	}
	return v
}

func list(t *testing.T, m map[string]any, key string) []map[string]any {
	t.Helper()
	raw, ok := m[key].([]any)
	if !ok {
		t.Fatalf("%q is %T, want an array in %v", key, m[key], m)
	}
	out := make([]map[string]any, len(raw))
	for i, v := range raw {
		if out[i], ok = v.(map[string]any); !ok {
			t.Fatalf("%q[%d] is %T, want an object", key, i, v)
		}
	}
	return out
}

func obj(t *testing.T, m map[string]any, key string) map[string]any {
	t.Helper()
	v, ok := m[key].(map[string]any)
	if !ok {
		t.Fatalf("%q is %T, want an object in %v", key, m[key], m)
	}
	return v
}

func wantContains(t *testing.T, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Errorf("message %q does not contain %q", got, want)
	}
}

var toolName = regexp.MustCompile(`^[a-z]+\.[a-z_]+$`)

func TestToolList(t *testing.T) {
	h := start(t)
	tools := h.tools()
	if n := len(tools); n < 30 || n > 45 {
		t.Fatalf("%d tools, want 30 to 45", n)
	}
	apps := map[string]int{}
	byName := map[string]mcp.Tool{}
	for _, tool := range tools {
		byName[tool.Name] = tool
		if tool.Name != "health" && !toolName.MatchString(tool.Name) {
			t.Errorf("tool name %q is not <app>.<action>", tool.Name)
		}
		if app, _, ok := strings.Cut(tool.Name, "."); ok {
			apps[app]++
		}
		if len(tool.Description) < 20 || !strings.HasSuffix(tool.Description, ".") {
			t.Errorf("%s: description %q is not a sentence", tool.Name, tool.Description)
		}
		if tool.Title == "" || tool.Annotations.Title != tool.Title {
			t.Errorf("%s: title %q, annotation title %q", tool.Name, tool.Title, tool.Annotations.Title)
		}
		a := tool.Annotations
		if a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: not every hint is set: %+v", tool.Name, a)
			continue
		}
		if *a.ReadOnlyHint && (*a.DestructiveHint || !*a.IdempotentHint) {
			t.Errorf("%s: a read-only tool must be non-destructive and idempotent", tool.Name)
		}
		if !*a.ReadOnlyHint && *a.DestructiveHint && *a.OpenWorldHint && !*a.IdempotentHint {
			t.Errorf("%s: hints are mcp.NewTool's defaults, not a deliberate choice", tool.Name)
		}
		if tool.InputSchema.Type != "object" || tool.InputSchema.AdditionalProperties != false {
			t.Errorf("%s: input schema must be a closed object, got type %q additionalProperties %v",
				tool.Name, tool.InputSchema.Type, tool.InputSchema.AdditionalProperties)
		}
		for prop, schema := range tool.InputSchema.Properties {
			if d, _ := schema.(map[string]any)["description"].(string); d == "" {
				t.Errorf("%s: property %q has no description", tool.Name, prop)
			}
		}
		for _, req := range tool.InputSchema.Required {
			if _, ok := tool.InputSchema.Properties[req]; !ok {
				t.Errorf("%s: required property %q is not defined", tool.Name, req)
			}
		}
		if tool.OutputSchema.Type != "object" || len(tool.OutputSchema.Properties) == 0 {
			t.Errorf("%s declares no output schema, so a model cannot know the fields of its result", tool.Name)
		}
	}
	if len(apps) < 5 {
		t.Errorf("%d apps (%v), want at least 5", len(apps), apps)
	}

	meta := func(name string) catalog.Meta {
		t.Helper()
		tool, ok := byName[name]
		if !ok {
			t.Fatalf("tool %s is missing", name)
		}
		m, ok, err := catalog.ReadMeta(tool)
		if err != nil || !ok {
			t.Fatalf("%s: ReadMeta = %v, %v", name, ok, err)
		}
		return m
	}
	if m := meta("health"); m.VisibleInListTools == nil || !*m.VisibleInListTools {
		t.Errorf("health is not marked visible in tools/list: %+v", m)
	}
	// A person confirms the tools that move money, delete records or change
	// who may do what; no other tool asks.
	confirmed := []string{"billing.refund_payment", "billing.void_invoice", "crm.delete_contact",
		"users.delete_account", "users.update_role", "users.deactivate"}
	for name := range byName {
		m, _, _ := catalog.ReadMeta(byName[name])
		asks := m.RequiresApproval != nil && *m.RequiresApproval
		if want := slices.Contains(confirmed, name); asks != want {
			t.Errorf("%s: requiresApproval %v, want %v", name, asks, want)
		}
	}
	for name := range byName {
		if strings.HasPrefix(name, "billing.") && !slices.Contains(meta(name).Tags, "payments") {
			t.Errorf("%s is not tagged payments", name)
		}
	}
	// Every tool with arguments has examples, and they are valid calls of
	// their tool; TestEveryToolAnswersItsOutputSchema runs them.
	for name, tool := range byName {
		m, _, err := catalog.ReadMeta(tool)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(m.Examples) == 0 && len(tool.InputSchema.Properties) > 0 {
			t.Errorf("%s takes arguments but has no example", name)
		}
		for _, ex := range m.Examples {
			if ex.Description == "" {
				t.Errorf("%s: an example has no description", name)
			}
			if err := compile(t, tool.InputSchema).Validate(jsonValue(t, ex.Input)); err != nil {
				t.Errorf("%s: example %q does not match the input schema: %v", name, ex.Description, err)
			}
		}
	}
}

// compile compiles a schema value (anything that marshals to a JSON Schema).
func compile(t *testing.T, schema any) *jsonschema.Schema {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatalf("marshal schema: %v", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode schema: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem:///schema.json", doc); err != nil {
		t.Fatalf("add schema: %v", err)
	}
	s, err := c.Compile("mem:///schema.json")
	if err != nil {
		t.Fatalf("compile schema %s: %v", b, err)
	}
	return s
}

func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// findPayment returns a payment that has at least minLeft cents left to
// refund.
func findPayment(h *harness, minLeft int64) map[string]any {
	h.t.Helper()
	for _, p := range list(h.t, h.ok("billing.list_payments", map[string]any{"limit": 100}), "payments") {
		if num(h.t, p, "amount_cents")-num(h.t, p, "refunded_cents") >= minLeft {
			return p
		}
	}
	h.t.Fatalf("no payment with %d cents left to refund", minLeft)
	return nil
}

func TestApps(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, h *harness)
	}{
		{"crm create, find, update, note, delete", func(t *testing.T, h *harness) {
			created := h.ok("crm.create_contact", map[string]any{
				"name": "Ada Lovelace", "email": "ada@analytical.example", "company": "Analytical Engines",
				"tags": []any{"vip", "beta", "vip"}, "owner_id": "usr_010",
			})
			id := str(t, created, "id")
			if got := str(t, created, "status"); got != "lead" {
				t.Errorf("status = %q, want the default lead", got)
			}
			if got := created["tags"]; !reflect.DeepEqual(got, []any{"beta", "vip"}) {
				t.Errorf("tags = %v, want sorted and unique", got)
			}
			if got := str(t, created, "created_at"); got != testNow.Format(time.RFC3339) {
				t.Errorf("created_at = %s, want the clock's %s", got, testNow.Format(time.RFC3339))
			}

			found := h.ok("crm.find_contacts", map[string]any{"query": "ANALYTICAL"})
			if num(t, found, "total") != 1 || str(t, list(t, found, "contacts")[0], "id") != id {
				t.Errorf("find by company text = %v, want only %s", found, id)
			}

			h.ok("crm.update_contact", map[string]any{"contact_id": id, "status": "customer", "title": "Mathematician"})
			got := h.ok("crm.get_contact", map[string]any{"contact_id": id})
			if str(t, got, "status") != "customer" || str(t, got, "title") != "Mathematician" ||
				str(t, got, "email") != "ada@analytical.example" {
				t.Errorf("after update: %v", got)
			}
			wantContains(t, h.fail("crm.update_contact", map[string]any{"contact_id": id}), "nothing to update")

			h.ok("crm.add_note", map[string]any{"contact_id": id, "body": "Asked for a demo of the difference engine."})
			got = h.ok("crm.get_contact", map[string]any{"contact_id": id})
			if num(t, got, "note_count") != 1 || str(t, list(t, got, "notes")[0], "author_id") != "usr_010" {
				t.Errorf("note not recorded with the owner as author: %v", got)
			}

			del := h.ok("crm.delete_contact", map[string]any{"contact_id": id})
			if del["deleted"] != true {
				t.Errorf("delete = %v", del)
			}
			wantContains(t, h.fail("crm.get_contact", map[string]any{"contact_id": id}), `contact "`+id+`" not found`)
		}},
		{"crm filters and pagination", func(t *testing.T, h *harness) {
			all := h.ok("crm.find_contacts", map[string]any{"limit": 100})
			if num(t, all, "total") != int64(len(firstNames)) {
				t.Fatalf("total = %d, want %d seeded contacts", num(t, all, "total"), len(firstNames))
			}
			first := h.ok("crm.find_contacts", map[string]any{"limit": 5})
			if len(list(t, first, "contacts")) != 5 || num(t, first, "next_offset") != 5 {
				t.Errorf("first page: %d contacts, next_offset %v", len(list(t, first, "contacts")), first["next_offset"])
			}
			second := h.ok("crm.find_contacts", map[string]any{"limit": 5, "offset": 5})
			if str(t, list(t, second, "contacts")[0], "id") != str(t, list(t, all, "contacts")[5], "id") {
				t.Error("second page does not continue where the first ended")
			}
			last := h.ok("crm.find_contacts", map[string]any{"offset": 1000})
			if len(list(t, last, "contacts")) != 0 || last["next_offset"] != nil {
				t.Errorf("past the end: %v", last)
			}
			for _, c := range list(t, h.ok("crm.find_contacts", map[string]any{"status": "churned", "limit": 100}), "contacts") {
				if str(t, c, "status") != "churned" {
					t.Errorf("status filter returned %v", c)
				}
			}
			// A contact with an unpaid invoice cannot be deleted.
			open := list(t, h.ok("billing.list_invoices", map[string]any{"status": "open", "limit": 1}), "invoices")
			if len(open) == 0 {
				t.Fatal("seed data has no open invoice")
			}
			wantContains(t, h.fail("crm.delete_contact", map[string]any{"contact_id": str(t, open[0], "customer_id")}), "unpaid invoice")
		}},
		{"users invite, role, deactivate, delete", func(t *testing.T, h *harness) {
			inv := h.ok("users.invite", map[string]any{"email": "New.Hire@northwind.example", "name": "New Hire", "role": "agent", "team": "support"})
			if str(t, inv, "status") != "invited" || str(t, inv, "email") != "new.hire@northwind.example" {
				t.Errorf("invite = %v", inv)
			}
			wantContains(t, h.fail("users.invite", map[string]any{"email": "new.hire@northwind.example", "name": "Again"}), "already has an account")
			sent := h.ok("notifications.list_sent", map[string]any{"to": "new.hire@northwind.example"})
			if num(t, sent, "total") != 1 {
				t.Errorf("invitation emails sent = %d, want 1", num(t, sent, "total"))
			}
			invited := h.ok("users.list", map[string]any{"status": "invited"})
			if !slices.ContainsFunc(list(t, invited, "users"), func(u map[string]any) bool { return u["id"] == inv["id"] }) {
				t.Errorf("invited user missing from users.list: %v", invited)
			}

			// Deactivating an agent releases their tickets.
			busy := int64(0)
			for _, status := range []string{"open", "pending"} {
				busy += num(t, h.ok("support.list_tickets", map[string]any{"assignee_id": "usr_003", "status": status}), "total")
			}
			deact := h.ok("users.deactivate", map[string]any{"user_id": "usr_003", "reason": "left the company"})
			if num(t, deact, "unassigned_tickets") != busy {
				t.Errorf("unassigned %d tickets, want %d", num(t, deact, "unassigned_tickets"), busy)
			}
			got := h.ok("users.get", map[string]any{"user_id": "usr_003"})
			if str(t, got, "status") != "deactivated" || num(t, got, "assigned_tickets") != 0 {
				t.Errorf("after deactivate: %v", got)
			}

			// The workspace keeps at least one active admin.
			h.ok("users.update_role", map[string]any{"user_id": "usr_001", "role": "member"})
			wantContains(t, h.fail("users.update_role", map[string]any{"user_id": "usr_002", "role": "analyst"}), "last active admin")
			wantContains(t, h.fail("users.delete_account", map[string]any{"user_id": "usr_002"}), "last active admin")

			h.ok("users.delete_account", map[string]any{"user_id": "usr_010"})
			wantContains(t, h.fail("users.get", map[string]any{"user_id": "usr_010"}), `user "usr_010" not found`)
			owned := h.ok("crm.find_contacts", map[string]any{"owner_id": "usr_010"})
			if num(t, owned, "total") != 0 {
				t.Errorf("contacts still owned by a deleted user: %v", owned)
			}
		}},
		{"billing refund changes the balance", func(t *testing.T, h *harness) {
			p := findPayment(h, 2000)
			pid, cid := str(t, p, "id"), str(t, p, "customer_id")
			before := h.ok("billing.get_balance", map[string]any{"customer_id": cid})

			ref := h.ok("billing.refund_payment", map[string]any{"payment_id": pid, "amount_cents": 1500, "reason": "product_defect"})
			if num(t, ref, "amount_cents") != 1500 || str(t, ref, "payment_status") != "partially_refunded" {
				t.Errorf("refund = %v", ref)
			}
			after := h.ok("billing.get_balance", map[string]any{"customer_id": cid})
			if d := num(t, after, "refunded_cents") - num(t, before, "refunded_cents"); d != 1500 {
				t.Errorf("refunded_cents grew by %d, want 1500", d)
			}
			if d := num(t, before, "net_paid_cents") - num(t, after, "net_paid_cents"); d != 1500 {
				t.Errorf("net_paid_cents fell by %d, want 1500", d)
			}
			if num(t, after, "paid_cents") != num(t, before, "paid_cents") {
				t.Error("a refund changed paid_cents")
			}

			left := num(t, p, "amount_cents") - num(t, p, "refunded_cents") - 1500
			wantContains(t, h.fail("billing.refund_payment", map[string]any{"payment_id": pid, "amount_cents": left + 1}), "exceeds")
			rest := h.ok("billing.refund_payment", map[string]any{"payment_id": pid})
			if num(t, rest, "amount_cents") != left || str(t, rest, "payment_status") != "refunded" {
				t.Errorf("refund of the rest = %v, want %d cents and status refunded", rest, left)
			}
			wantContains(t, h.fail("billing.refund_payment", map[string]any{"payment_id": pid}), "already fully refunded")
		}},
		{"billing invoice lifecycle", func(t *testing.T, h *harness) {
			before := h.ok("billing.get_balance", map[string]any{"customer_id": "con_001"})
			inv := h.ok("billing.create_invoice", map[string]any{
				"customer_id": "con_001",
				"items": []any{
					map[string]any{"product_id": "HW-1001", "quantity": 2},
					map[string]any{"description": "Setup fee", "quantity": 1, "unit_price_cents": 5000},
				},
				"due_in_days": 14,
				"memo":        "PO 4711",
			})
			id := str(t, inv, "id")
			if num(t, inv, "total_cents") != 2*12900+5000 || str(t, inv, "status") != "open" ||
				num(t, inv, "amount_due_cents") != 30800 {
				t.Errorf("created invoice = %v", inv)
			}
			if want := testNow.AddDate(0, 0, 14).Format(time.RFC3339); str(t, inv, "due_at") != want {
				t.Errorf("due_at = %s, want %s", str(t, inv, "due_at"), want)
			}
			mid := h.ok("billing.get_balance", map[string]any{"customer_id": "con_001"})
			if d := num(t, mid, "outstanding_cents") - num(t, before, "outstanding_cents"); d != 30800 {
				t.Errorf("outstanding grew by %d, want 30800", d)
			}

			h.ok("billing.record_payment", map[string]any{"invoice_id": id, "amount_cents": 10000, "method": "bank_transfer"})
			got := h.ok("billing.get_invoice", map[string]any{"invoice_id": id})
			if str(t, got, "status") != "open" || num(t, got, "amount_due_cents") != 20800 || len(list(t, got, "items")) != 2 {
				t.Errorf("after part payment: %v", got)
			}
			wantContains(t, h.fail("billing.record_payment", map[string]any{"invoice_id": id, "amount_cents": 20801}), "exceeds")
			h.ok("billing.record_payment", map[string]any{"invoice_id": id})
			got = h.ok("billing.get_invoice", map[string]any{"invoice_id": id})
			if str(t, got, "status") != "paid" || len(list(t, got, "payments")) != 2 {
				t.Errorf("after full payment: %v", got)
			}
			wantContains(t, h.fail("billing.void_invoice", map[string]any{"invoice_id": id}), "has payments")

			other := h.ok("billing.create_invoice", map[string]any{"customer_id": "con_001",
				"items": []any{map[string]any{"description": "Consulting", "quantity": 3, "unit_price_cents": 18000}}})
			for range 2 { // voiding is idempotent
				v := h.ok("billing.void_invoice", map[string]any{"invoice_id": other["id"], "reason": "sent by mistake"})
				if str(t, v, "status") != "void" || num(t, v, "amount_due_cents") != 0 {
					t.Errorf("void = %v", v)
				}
			}
			wantContains(t, h.fail("billing.create_invoice", map[string]any{"customer_id": "con_001",
				"items": []any{map[string]any{"quantity": 1}}}), "needs description and unit_price_cents")
		}},
		{"billing overdue is derived from the clock", func(t *testing.T, h *harness) {
			overdue := list(t, h.ok("billing.list_invoices", map[string]any{"status": "overdue", "limit": 100}), "invoices")
			for _, inv := range overdue {
				due, err := time.Parse(time.RFC3339, str(t, inv, "due_at"))
				if err != nil || !due.Before(testNow) || num(t, inv, "amount_due_cents") <= 0 {
					t.Errorf("not overdue: %v", inv)
				}
			}
			for _, inv := range list(t, h.ok("billing.list_invoices", map[string]any{"status": "open", "limit": 100}), "invoices") {
				due, _ := time.Parse(time.RFC3339, str(t, inv, "due_at"))
				if due.Before(testNow) {
					t.Errorf("open invoice past due: %v", inv)
				}
			}
		}},
		{"support ticket lifecycle", func(t *testing.T, h *harness) {
			tk := h.ok("support.open_ticket", map[string]any{"customer_id": "con_002", "subject": "Monitor flickers",
				"description": "The 27-inch monitor flickers at 60 Hz.", "priority": "high", "channel": "email"})
			id := str(t, tk, "id")
			if str(t, tk, "status") != "open" || tk["assignee_id"] != nil {
				t.Errorf("new ticket = %v", tk)
			}
			unassigned := h.ok("support.list_tickets", map[string]any{"assignee_id": "unassigned", "limit": 100})
			if str(t, list(t, unassigned, "tickets")[0], "id") != id {
				t.Error("newest unassigned ticket is not first")
			}
			wantContains(t, h.fail("support.assign_ticket", map[string]any{"ticket_id": id, "assignee_id": "usr_008"}), "only agents and admins")
			wantContains(t, h.fail("support.add_comment", map[string]any{"ticket_id": id, "body": "hello"}), "unassigned")
			assigned := h.ok("support.assign_ticket", map[string]any{"ticket_id": id, "assignee_id": "usr_004"})
			if str(t, obj(t, assigned, "ticket"), "assignee_id") != "usr_004" {
				t.Errorf("assign = %v", assigned)
			}

			reply := h.ok("support.add_comment", map[string]any{"ticket_id": id, "body": "Which cable do you use?"})
			if str(t, reply, "status") != "pending" || str(t, obj(t, reply, "comment"), "author_id") != "usr_004" {
				t.Errorf("agent reply = %v", reply)
			}
			back := h.ok("support.add_comment", map[string]any{"ticket_id": id, "body": "HDMI.", "author_id": "con_002"})
			if str(t, back, "status") != "open" {
				t.Errorf("customer reply = %v, want the ticket reopened", back)
			}

			closed := h.ok("support.close_ticket", map[string]any{"ticket_id": id, "resolution": "Replaced the HDMI cable."})
			if str(t, closed, "status") != "closed" || str(t, closed, "closed_at") != testNow.Format(time.RFC3339) {
				t.Errorf("close = %v", closed)
			}
			again := h.ok("support.close_ticket", map[string]any{"ticket_id": id, "resolution": "Something else."})
			if str(t, again, "resolution") != "Replaced the HDMI cable." {
				t.Errorf("closing twice changed the ticket: %v", again)
			}
			got := h.ok("support.get_ticket", map[string]any{"ticket_id": id})
			if num(t, got, "comment_count") != 2 || len(list(t, got, "comments")) != 2 {
				t.Errorf("ticket = %v", got)
			}
			wantContains(t, h.fail("support.add_comment", map[string]any{"ticket_id": id, "body": "more"}), "is closed")
		}},
		{"analytics track and query", func(t *testing.T, h *harness) {
			before := h.ok("analytics.query_metrics", map[string]any{"metric": "events", "event_name": "feature_used"})
			points := list(t, before, "points")
			if len(points) != 30 || str(t, before, "to") != testNow.Format(dateLayout) {
				t.Fatalf("default range: %d points ending %s, want 30 ending today", len(points), before["to"])
			}
			h.ok("analytics.track_event", map[string]any{"name": "feature_used", "customer_id": "con_001",
				"properties": map[string]any{"feature": "exports"}})
			after := h.ok("analytics.query_metrics", map[string]any{"metric": "events", "event_name": "feature_used"})
			if num(t, after, "total") != num(t, before, "total")+1 {
				t.Errorf("total %d → %d, want +1", num(t, before, "total"), num(t, after, "total"))
			}
			if today := list(t, after, "points")[29]; num(t, today, "value") != num(t, points[29], "value")+1 {
				t.Errorf("today's point did not grow: %v", today)
			}
			latest := list(t, h.ok("analytics.list_events", map[string]any{"name": "feature_used", "limit": 1}), "events")[0]
			if str(t, latest, "customer_id") != "con_001" || str(t, obj(t, latest, "properties"), "feature") != "exports" {
				t.Errorf("latest event = %v", latest)
			}

			weekly := h.ok("analytics.query_metrics", map[string]any{"metric": "revenue_cents", "granularity": "week",
				"from": "2025-12-01", "to": "2026-03-10"})
			sum := int64(0)
			for _, p := range list(t, weekly, "points") {
				start, err := time.Parse(dateLayout, str(t, p, "period_start"))
				if err != nil || start.Weekday() != time.Monday {
					t.Errorf("week starts on %v", p["period_start"])
				}
				sum += num(t, p, "value")
			}
			if sum != num(t, weekly, "total") || sum <= 0 {
				t.Errorf("points sum to %d, total %d", sum, num(t, weekly, "total"))
			}

			top := list(t, h.ok("analytics.top_customers", map[string]any{"by": "revenue", "days": 365, "limit": 3}), "customers")
			if len(top) != 3 {
				t.Fatalf("top customers = %v", top)
			}
			for i := 1; i < len(top); i++ {
				if num(t, top[i], "value") > num(t, top[i-1], "value") {
					t.Errorf("not sorted: %v", top)
				}
			}
			wantContains(t, h.fail("analytics.query_metrics", map[string]any{"metric": "events", "from": "2026-03-10", "to": "2026-03-01"}), "after")
			wantContains(t, h.fail("analytics.query_metrics", map[string]any{"metric": "signups", "event_name": "login"}), "only applies")
		}},
		{"inventory stock and prices", func(t *testing.T, h *harness) {
			hw := h.ok("inventory.list_products", map[string]any{"category": "hardware"})
			if num(t, hw, "total") != 7 {
				t.Errorf("hardware products = %d, want 7", num(t, hw, "total"))
			}
			p := h.ok("inventory.get_product", map[string]any{"product_id": "hw-1001"})
			stock := num(t, p, "stock")
			adj := h.ok("inventory.adjust_stock", map[string]any{"product_id": "prd_001", "delta": 10, "reason": "restock"})
			if num(t, adj, "previous_stock") != stock || num(t, adj, "stock") != stock+10 {
				t.Errorf("adjust = %v, want %d → %d", adj, stock, stock+10)
			}
			wantContains(t, h.fail("inventory.adjust_stock", map[string]any{"product_id": "prd_001", "delta": -(stock + 11), "reason": "sale"}),
				fmt.Sprintf("only %d in stock", stock+10))
			wantContains(t, h.fail("inventory.adjust_stock", map[string]any{"product_id": "prd_001", "delta": 0, "reason": "correction"}), "not be zero")

			price := h.ok("inventory.set_price", map[string]any{"product_id": "HW-1001", "price_cents": 15900})
			if num(t, price, "previous_price_cents") != 12900 {
				t.Errorf("set_price = %v", price)
			}
			inv := h.ok("billing.create_invoice", map[string]any{"customer_id": "con_003",
				"items": []any{map[string]any{"product_id": "prd_001", "quantity": 1}}})
			if num(t, inv, "total_cents") != 15900 {
				t.Errorf("invoice does not use the new price: %v", inv)
			}

			low := h.ok("inventory.low_stock_report", nil)
			rows := list(t, low, "products")
			if len(rows) == 0 {
				t.Fatal("seed data has no product low on stock")
			}
			for _, r := range rows {
				if r["low_stock"] != true || num(t, r, "suggested_reorder_qty") <= 0 {
					t.Errorf("low stock row = %v", r)
				}
			}
			for _, r := range list(t, h.ok("inventory.list_products", map[string]any{"in_stock": false, "limit": 100}), "products") {
				if num(t, r, "stock") != 0 {
					t.Errorf("in_stock=false returned %v", r)
				}
			}
		}},
		{"notifications outbox", func(t *testing.T, h *harness) {
			h.ok("notifications.send_email", map[string]any{"to": "ops@acme.example", "subject": "Renewal", "body": "Your renewal is due.", "customer_id": "con_001"})
			h.ok("notifications.send_email", map[string]any{"to": "ops@acme.example", "subject": "Renewal", "body": "Reminder."})
			msg := h.ok("notifications.send_slack_message", map[string]any{"channel": "#support-escalations", "text": "tkt_001 needs a look"})
			if str(t, msg, "kind") != "slack" || str(t, msg, "status") != "sent" {
				t.Errorf("slack = %v", msg)
			}
			emails := h.ok("notifications.list_sent", map[string]any{"kind": "email", "to": "ops@acme.example"})
			if num(t, emails, "total") != 2 {
				t.Errorf("emails = %v, want both (sending is not idempotent)", emails)
			}
			if num(t, h.ok("notifications.list_sent", map[string]any{"kind": "slack"}), "total") != 1 {
				t.Error("slack message not recorded")
			}
		}},
		{"health", func(t *testing.T, h *harness) {
			got := h.ok("health", nil)
			if str(t, got, "status") != "ok" || num(t, got, "tools") != int64(len(h.tools())) || num(t, got, "demo_tools") != 39 {
				t.Errorf("health = %v", got)
			}
			if rec := obj(t, got, "records"); num(t, rec, "users") != int64(len(staff)) || num(t, rec, "contacts") != int64(len(firstNames)) {
				t.Errorf("records = %v", rec)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t, start(t))
		})
	}
}

func TestInvalidInputRejectedBySchema(t *testing.T) {
	h := start(t)
	tests := []struct {
		tool string
		args map[string]any
	}{
		{"crm.create_contact", map[string]any{"name": "No Email"}},
		{"crm.create_contact", map[string]any{"name": "Bad", "email": "not-an-email"}},
		{"crm.find_contacts", map[string]any{"status": "vip"}},
		{"crm.find_contacts", map[string]any{"limit": 0}},
		{"crm.find_contacts", map[string]any{"limit": 1000}},
		{"crm.find_contacts", map[string]any{"colour": "blue"}},
		{"users.invite", map[string]any{"email": "a@b.example", "name": "A", "role": "owner"}},
		{"billing.create_invoice", map[string]any{"customer_id": "con_001", "items": []any{}}},
		{"billing.create_invoice", map[string]any{"customer_id": "con_001", "items": []any{map[string]any{"quantity": "two"}}}},
		{"billing.refund_payment", map[string]any{"payment_id": "pay_001", "amount_cents": -5}},
		{"support.open_ticket", map[string]any{"customer_id": "con_001", "subject": "x", "description": "y", "priority": "critical"}},
		{"analytics.query_metrics", map[string]any{"metric": "mrr"}},
		{"analytics.query_metrics", map[string]any{"metric": "events", "from": "March 1"}},
		{"inventory.adjust_stock", map[string]any{"product_id": "prd_001", "delta": 20000, "reason": "restock"}},
		{"notifications.send_slack_message", map[string]any{"channel": "general", "text": "hi"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			wantContains(t, h.fail(tt.tool, tt.args), "input schema validation failed")
		})
	}
}

func TestUnknownIDs(t *testing.T) {
	h := start(t)
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"crm.get_contact", map[string]any{"contact_id": "con_999"}, `contact "con_999" not found; use crm.find_contacts`},
		{"crm.update_contact", map[string]any{"contact_id": "con_999", "name": "X"}, `contact "con_999" not found`},
		{"crm.delete_contact", map[string]any{"contact_id": "con_999"}, `contact "con_999" not found`},
		{"crm.add_note", map[string]any{"contact_id": "con_999", "body": "x"}, `contact "con_999" not found`},
		{"crm.create_contact", map[string]any{"name": "X", "email": "x@y.example", "owner_id": "usr_999"}, `user "usr_999" not found`},
		{"users.get", map[string]any{"user_id": "usr_999"}, `user "usr_999" not found; use users.list`},
		{"users.update_role", map[string]any{"user_id": "usr_999", "role": "agent"}, `user "usr_999" not found`},
		{"users.deactivate", map[string]any{"user_id": "usr_999"}, `user "usr_999" not found`},
		{"users.delete_account", map[string]any{"user_id": "usr_999"}, `user "usr_999" not found`},
		{"billing.get_invoice", map[string]any{"invoice_id": "inv_999"}, `invoice "inv_999" not found; use billing.list_invoices`},
		{"billing.record_payment", map[string]any{"invoice_id": "inv_999"}, `invoice "inv_999" not found`},
		{"billing.void_invoice", map[string]any{"invoice_id": "inv_999"}, `invoice "inv_999" not found`},
		{"billing.refund_payment", map[string]any{"payment_id": "pay_999"}, `payment "pay_999" not found; use billing.list_payments`},
		{"billing.get_balance", map[string]any{"customer_id": "con_999"}, `customer "con_999" not found`},
		{"billing.create_invoice", map[string]any{"customer_id": "con_999", "items": []any{map[string]any{"product_id": "prd_001", "quantity": 1}}}, `customer "con_999" not found`},
		{"billing.create_invoice", map[string]any{"customer_id": "con_001", "items": []any{map[string]any{"product_id": "XX-0000", "quantity": 1}}}, `product "XX-0000" not found`},
		{"support.get_ticket", map[string]any{"ticket_id": "tkt_999"}, `ticket "tkt_999" not found; use support.list_tickets`},
		{"support.close_ticket", map[string]any{"ticket_id": "tkt_999", "resolution": "x"}, `ticket "tkt_999" not found`},
		{"support.assign_ticket", map[string]any{"ticket_id": "tkt_001", "assignee_id": "usr_999"}, `user "usr_999" not found`},
		{"support.add_comment", map[string]any{"ticket_id": "tkt_999", "body": "x"}, `ticket "tkt_999" not found`},
		{"support.open_ticket", map[string]any{"customer_id": "con_999", "subject": "x", "description": "y"}, `customer "con_999" not found`},
		{"analytics.track_event", map[string]any{"name": "login", "customer_id": "con_999"}, `customer "con_999" not found`},
		{"inventory.get_product", map[string]any{"product_id": "prd_999"}, `product "prd_999" not found; use inventory.list_products`},
		{"inventory.adjust_stock", map[string]any{"product_id": "prd_999", "delta": 1, "reason": "restock"}, `product "prd_999" not found`},
		{"inventory.set_price", map[string]any{"product_id": "prd_999", "price_cents": 100}, `product "prd_999" not found`},
		{"notifications.send_email", map[string]any{"to": "a@b.example", "subject": "s", "body": "b", "customer_id": "con_999"}, `customer "con_999" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			wantContains(t, h.fail(tt.tool, tt.args), tt.want)
		})
	}
}

// TestEveryToolAnswersItsOutputSchema runs every example of every tool, each
// on a fresh server that also enforces the output schemas itself, and checks
// that the call succeeds on the seed data and that its structured content
// matches the output schema from tools/list. A tool without examples takes
// no required arguments and is called without any.
func TestEveryToolAnswersItsOutputSchema(t *testing.T) {
	strict := func(t *testing.T) *harness {
		srv := server.NewMCPServer("strict", "1.0.0", server.WithToolCapabilities(true),
			server.WithInputSchemaValidation(), server.WithOutputSchemaValidation())
		Register(srv, WithClock(testClock))
		return connect(t, srv)
	}
	tools := strict(t).tools()
	if len(tools) != 39 {
		t.Fatalf("%d tools, want 39", len(tools))
	}
	for _, tool := range tools {
		t.Run(tool.Name, func(t *testing.T) {
			if tool.OutputSchema.Type != "object" || len(tool.OutputSchema.Properties) == 0 {
				t.Fatal("no output schema")
			}
			schema := compile(t, tool.OutputSchema)
			m, _, err := catalog.ReadMeta(tool)
			if err != nil {
				t.Fatal(err)
			}
			calls := m.Examples
			if len(calls) == 0 {
				if len(tool.InputSchema.Required) > 0 {
					t.Fatal("required arguments but no example to call the tool with")
				}
				calls = []catalog.Example{{Description: "no arguments"}}
			}
			for _, ex := range calls {
				res := strict(t).call(tool.Name, ex.Input)
				if res.IsError {
					t.Errorf("example %q failed: %s", ex.Description, text(res))
					continue
				}
				if len(res.RawStructuredContent) == 0 {
					t.Errorf("example %q: no structured content", ex.Description)
					continue
				}
				inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(res.RawStructuredContent))
				if err != nil {
					t.Fatal(err)
				}
				if err := schema.Validate(inst); err != nil {
					t.Errorf("example %q: structured content does not match the output schema: %v\n%s",
						ex.Description, err, res.RawStructuredContent)
				}
				// The text content carries the same JSON for clients that
				// ignore structured content.
				var fromText, fromStructured any
				if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil {
					t.Errorf("example %q: text content is not JSON: %v", ex.Description, err)
				}
				_ = json.Unmarshal(res.RawStructuredContent, &fromStructured)
				if !reflect.DeepEqual(fromText, fromStructured) {
					t.Errorf("example %q: text content and structured content differ", ex.Description)
				}
			}
			// The declaration a model reads names every field of the result.
			if ts, err := typescript.TypeOf(mustJSON(t, tool.OutputSchema)); err != nil || strings.Contains(ts, "unknown") {
				t.Errorf("output type %s (%v) leaves fields unknown", ts, err)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// idPrefix matches the id shapes descriptions show: con_001 or usr_...
var idPrefix = regexp.MustCompile(`\b[a-z]{2,4}_(\d{3}|\.\.\.)`)

// closedSet names the result fields whose values come from a fixed set.
var closedSet = map[string]bool{
	"status": true, "role": true, "kind": true, "method": true, "category": true, "priority": true,
	"channel": true, "currency": true, "metric": true, "granularity": true, "by": true, "payment_status": true,
}

// TestVocabulary holds every schema to the package doc's vocabulary, so that
// a word means the same in every app.
func TestVocabulary(t *testing.T) {
	for _, tool := range start(t).tools() {
		walkProperties(tool.InputSchema.Properties, func(name string, p map[string]any) {
			desc, _ := p["description"].(string)
			switch {
			case strings.HasSuffix(name, "_after") || strings.HasSuffix(name, "_before"):
				t.Errorf("%s: argument %s: a day filter is <field>_since (on or after), or from and to", tool.Name, name)
			case strings.HasSuffix(name, "_id") && !idPrefix.MatchString(desc):
				t.Errorf("%s: argument %s: description %q shows no id, such as con_001 or usr_...", tool.Name, name, desc)
			case name == "customer_id" && !strings.Contains(desc, "contact id"):
				t.Errorf("%s: customer_id: description %q does not say it is a contact id", tool.Name, desc)
			case strings.Contains(desc, "YYYY-MM-DD") && p["pattern"] != datePattern:
				t.Errorf("%s: date argument %s has pattern %v", tool.Name, name, p["pattern"])
			}
			checkUnits(t, tool.Name, name, p)
		})
		walkProperties(tool.OutputSchema.Properties, func(name string, p map[string]any) {
			desc, _ := p["description"].(string)
			if desc == "" {
				t.Errorf("%s: result field %s has no description", tool.Name, name)
			}
			if strings.HasSuffix(name, "_at") && !strings.Contains(desc, "RFC 3339") {
				t.Errorf("%s: timestamp %s: description %q does not say RFC 3339", tool.Name, name, desc)
			}
			if closedSet[name] && p["enum"] == nil {
				t.Errorf("%s: result field %s takes a fixed set of values but declares no enum", tool.Name, name)
			}
			checkUnits(t, tool.Name, name, p)
		})
	}
}

// checkUnits checks the naming rules for amounts and timestamps.
func checkUnits(t *testing.T, tool, name string, p map[string]any) {
	t.Helper()
	if strings.HasSuffix(name, "_cents") && p["type"] != "integer" {
		t.Errorf("%s: amount %s has type %v, want integer cents", tool, name, p["type"])
	}
	if strings.HasSuffix(name, "_at") && p["type"] != "string" {
		t.Errorf("%s: timestamp %s has type %v, want string", tool, name, p["type"])
	}
}

// walkProperties calls fn for every property of a schema's properties, and
// of the objects nested in them, array items included.
func walkProperties(props map[string]any, fn func(name string, p map[string]any)) {
	for name, v := range props {
		p, ok := v.(map[string]any)
		if !ok {
			continue
		}
		fn(name, p)
		for _, nested := range []any{p, p["items"]} {
			if n, ok := nested.(map[string]any); ok {
				if inner, ok := n["properties"].(map[string]any); ok {
					walkProperties(inner, fn)
				}
			}
		}
	}
}

// TestErrorsSayWhatToDo makes calls that fail and then what their error
// message suggests, which must work.
func TestErrorsSayWhatToDo(t *testing.T) {
	t.Run("metric range", func(t *testing.T) {
		h := start(t)
		long := map[string]any{"metric": "revenue_cents", "from": "2024-01-01", "to": "2026-03-10"}
		msg := h.fail("analytics.query_metrics", long)
		for _, want := range []string{"is 800 days", "at most 366 points", "granularity week (115 points)",
			"granularity month (27 points)", "from 2025-03-10 or later"} {
			wantContains(t, msg, want)
		}
		for _, fix := range []map[string]any{
			{"metric": "revenue_cents", "from": "2024-01-01", "to": "2026-03-10", "granularity": "week"},
			{"metric": "revenue_cents", "from": "2024-01-01", "to": "2026-03-10", "granularity": "month"},
			{"metric": "revenue_cents", "from": "2025-03-10", "to": "2026-03-10"},
		} {
			if got := list(t, h.ok("analytics.query_metrics", fix), "points"); len(got) > maxPoints {
				t.Errorf("%v: %d points", fix, len(got))
			}
		}
		msg = h.fail("analytics.query_metrics", map[string]any{"metric": "events", "from": "1990-01-01", "granularity": "month"})
		wantContains(t, msg, "from 1995-")
		if strings.Contains(msg, "granularity") {
			t.Errorf("no coarser granularity than month, yet the message suggests one: %s", msg)
		}
	})
	t.Run("unpaid invoice blocks deleting a contact", func(t *testing.T) {
		h := start(t)
		msg := h.fail("crm.delete_contact", map[string]any{"contact_id": "con_028"})
		wantContains(t, msg, "billing.record_payment")
		for _, inv := range list(t, h.ok("billing.list_invoices", map[string]any{"customer_id": "con_028", "limit": 100}), "invoices") {
			if num(t, inv, "amount_due_cents") > 0 {
				h.ok("billing.record_payment", map[string]any{"invoice_id": inv["id"]})
			}
		}
		h.ok("crm.delete_contact", map[string]any{"contact_id": "con_028"})
	})
	t.Run("voiding a part-paid invoice", func(t *testing.T) {
		h := start(t)
		msg := h.fail("billing.void_invoice", map[string]any{"invoice_id": "inv_046"})
		wantContains(t, msg, "collect the rest with billing.record_payment")
		h.ok("billing.record_payment", map[string]any{"invoice_id": "inv_046"})
	})
	t.Run("too large a refund", func(t *testing.T) {
		h := start(t)
		msg := h.fail("billing.refund_payment", map[string]any{"payment_id": "pay_007", "amount_cents": 999999})
		wantContains(t, msg, "refund at most 2200")
		h.ok("billing.refund_payment", map[string]any{"payment_id": "pay_007", "amount_cents": 2200})
	})
	t.Run("removing more stock than there is", func(t *testing.T) {
		h := start(t)
		msg := h.fail("inventory.adjust_stock", map[string]any{"product_id": "HW-1006", "delta": -10, "reason": "sale"})
		wantContains(t, msg, "remove at most 2")
		h.ok("inventory.adjust_stock", map[string]any{"product_id": "HW-1006", "delta": -2, "reason": "sale"})
	})
	t.Run("a comment on an unassigned ticket", func(t *testing.T) {
		h := start(t)
		msg := h.fail("support.add_comment", map[string]any{"ticket_id": "tkt_002", "body": "Hello"})
		wantContains(t, msg, "support.assign_ticket")
		h.ok("support.assign_ticket", map[string]any{"ticket_id": "tkt_002", "assignee_id": "usr_004"})
		h.ok("support.add_comment", map[string]any{"ticket_id": "tkt_002", "body": "Hello"})
	})
}

func TestSeedIsDeterministic(t *testing.T) {
	snapshot := func(opts ...Option) string {
		h := start(t, opts...)
		var b strings.Builder
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"crm.find_contacts", map[string]any{"limit": 100}},
			{"billing.list_invoices", map[string]any{"limit": 100}},
			{"billing.list_payments", map[string]any{"limit": 100}},
			{"support.list_tickets", map[string]any{"limit": 100}},
			{"analytics.list_events", map[string]any{"limit": 100}},
			{"inventory.list_products", map[string]any{"limit": 100}},
		} {
			b.WriteString(text(h.call(call.tool, call.args)))
		}
		return b.String()
	}
	a, b := snapshot(), snapshot(WithSeed(DefaultSeed))
	if a != b {
		t.Error("two servers with the same seed and clock differ")
	}
	if c := snapshot(WithSeed(42)); c == a {
		t.Error("a different seed gives the same data")
	}
}

func TestServersHaveSeparateStores(t *testing.T) {
	h1, h2 := start(t), start(t)
	created := h1.ok("crm.create_contact", map[string]any{"name": "Only Here", "email": "only@here.example"})
	h2.fail("crm.get_contact", map[string]any{"contact_id": created["id"]})
	if n := num(t, h2.ok("crm.find_contacts", map[string]any{"query": "only@here"}), "total"); n != 0 {
		t.Errorf("second server sees %d contacts created on the first", n)
	}
}

func TestWithoutSeedData(t *testing.T) {
	h := start(t, WithoutSeedData())
	if n := num(t, h.ok("crm.find_contacts", nil), "total"); n != 0 {
		t.Errorf("empty store has %d contacts", n)
	}
	c := h.ok("crm.create_contact", map[string]any{"name": "First", "email": "first@example.com"})
	if str(t, c, "id") != "con_001" {
		t.Errorf("first contact id = %v", c["id"])
	}
	if q := h.ok("analytics.query_metrics", map[string]any{"metric": "signups"}); num(t, q, "total") != 1 {
		t.Errorf("signups = %v", q)
	}
}

func TestRegisterNextToOtherTools(t *testing.T) {
	srv := server.NewMCPServer("shop", "1.0.0", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("ping", mcp.WithDescription("Answer pong.")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("pong"), nil
	})
	Register(srv, WithClock(testClock))
	h := connect(t, srv)
	got := h.ok("health", nil)
	if num(t, got, "tools") != 40 || num(t, got, "demo_tools") != 39 {
		t.Errorf("health = %v, want 40 tools of which 39 demo tools", got)
	}
	if len(Tools()) != 39 {
		t.Errorf("Tools() returned %d tools", len(Tools()))
	}
}

func TestLatency(t *testing.T) {
	const d = 30 * time.Millisecond
	h := start(t, WithLatency(d))
	began := time.Now()
	h.ok("health", nil)
	if took := time.Since(began); took < d {
		t.Errorf("call took %v, want at least %v", took, d)
	}
	// A call whose context ends stops waiting at once.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	slow := Tools(WithClock(testClock), WithLatency(time.Hour))
	if _, err := slow[0].Handler(ctx, mcp.CallToolRequest{}); !errors.Is(err, context.Canceled) {
		t.Errorf("handler with a cancelled context returned %v, want context.Canceled", err)
	}
}

// TestConcurrentCalls runs reads and writes from many goroutines, for the
// race detector.
func TestConcurrentCalls(t *testing.T) {
	h := start(t)
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		wg.Go(func() {
			for i := range 5 {
				calls := []struct {
					tool string
					args map[string]any
				}{
					{"crm.create_contact", map[string]any{"name": fmt.Sprintf("C %d-%d", g, i), "email": fmt.Sprintf("c%d.%d@example.com", g, i)}},
					{"crm.find_contacts", map[string]any{"query": "c"}},
					{"analytics.track_event", map[string]any{"name": "login", "customer_id": "con_001"}},
					{"analytics.query_metrics", map[string]any{"metric": "events"}},
					{"inventory.adjust_stock", map[string]any{"product_id": "prd_002", "delta": 1, "reason": "return"}},
					{"health", nil},
				}
				for _, c := range calls {
					req := mcp.CallToolRequest{}
					req.Params.Name, req.Params.Arguments = c.tool, c.args
					res, err := h.c.CallTool(h.ctx, req)
					if err != nil || res.IsError {
						errs <- fmt.Sprintf("%s: %v %v", c.tool, err, res)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if n := num(t, h.ok("crm.find_contacts", map[string]any{"query": "@example.com"}), "total"); n != 40 {
		t.Errorf("%d contacts created concurrently, want 40", n)
	}
}
