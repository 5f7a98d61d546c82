package policies_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/examples/demo"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/presets"
)

// Moments of the decision table, in UTC; the policy's business hours are
// Monday to Friday 09:00-18:00 in America/New_York (UTC-5 in November).
var (
	wednesdayAfternoon = time.Date(2026, 11, 18, 20, 0, 0, 0, time.UTC) // 15:00 in New York
	wednesdayEvening   = time.Date(2026, 11, 18, 23, 0, 0, 0, time.UTC) // 18:00 in New York
	saturdayMorning    = time.Date(2026, 11, 21, 16, 0, 0, 0, time.UTC) // 11:00 in New York
	thanksgiving       = time.Date(2026, 11, 26, 16, 0, 0, 0, time.UTC) // a configured holiday
)

// withoutTests leaves the *_test.rego files out, as a server loading only
// the policy would; the decision is the same with them.
func withoutTests(_ string, info fs.FileInfo, _ int) bool {
	return !info.IsDir() && strings.HasSuffix(info.Name(), "_test.rego")
}

// preparedDecision prepares data.codecall.decision over the example policy
// set once; the prepared query is safe for concurrent use. Built-in errors
// (a type error in a call, a bad time zone) are evaluation errors here
// instead of silently undefined expressions, so the tests catch them.
func preparedDecision(ctx context.Context) (rego.PreparedEvalQuery, error) {
	return rego.New(
		rego.Query("data.codecall.decision"),
		rego.Load([]string{policyDir}, withoutTests),
		rego.Strict(true),
		rego.StrictBuiltinErrors(true),
	).PrepareForEval(ctx)
}

// decision is the decision document.
type decision struct {
	Allow           bool
	RequireApproval bool
	Reason          string
}

// outcome names the three things a decision can do with a call.
func (d decision) outcome() string {
	switch {
	case !d.Allow:
		return "deny"
	case d.RequireApproval:
		return "approve"
	default:
		return "allow"
	}
}

// decide evaluates the prepared query and checks that the result is exactly
// the decision document CodeCall expects: an object with a boolean allow, a
// boolean requireApproval and a string reason, and nothing else.
func decide(ctx context.Context, pq rego.PreparedEvalQuery, input map[string]any, at time.Time) (decision, error) {
	rs, err := pq.Eval(ctx, rego.EvalInput(input), rego.EvalTime(at))
	if err != nil {
		return decision{}, err
	}
	if len(rs) != 1 || len(rs[0].Expressions) != 1 {
		return decision{}, fmt.Errorf("decision is undefined (%d results)", len(rs))
	}
	doc, ok := rs[0].Expressions[0].Value.(map[string]any)
	if !ok {
		return decision{}, fmt.Errorf("decision %#v is not an object", rs[0].Expressions[0].Value)
	}
	var d decision
	var okAllow, okApproval, okReason bool
	d.Allow, okAllow = doc["allow"].(bool)
	d.RequireApproval, okApproval = doc["requireApproval"].(bool)
	d.Reason, okReason = doc["reason"].(string)
	if !okAllow || !okApproval || !okReason || len(doc) != 3 {
		return decision{}, fmt.Errorf("decision %v is not {allow: bool, requireApproval: bool, reason: string}", doc)
	}
	return d, nil
}

// demoCatalog is the demo server's tools as CodeCall's catalog sees them,
// plus two tools the demo does not have: one registered without any hint and
// one of an app the policy does not know.
func demoCatalog(t testing.TB) *catalog.Snapshot {
	t.Helper()
	var tools []mcp.Tool
	for _, st := range demo.Tools() {
		tools = append(tools, st.Tool)
	}
	tools = append(tools,
		mcp.NewTool("crm.merge_contacts", mcp.WithDescription("Merge two contacts.")),
		mcp.NewTool("erp.post_journal", mcp.WithDescription("Post a journal entry."), mcp.WithReadOnlyHintAnnotation(true)),
	)
	snap, problems, err := catalog.Build(tools, catalog.Options{Config: presets.Default(), DefaultAppID: demo.Name})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Fatalf("catalog problems: %v", problems)
	}
	return snap
}

// inputFor builds the policy input document (README.md) for a call.
func inputFor(tool *catalog.Tool, args map[string]any, via string) map[string]any {
	a := tool.Annotations
	value := func(p *bool, def bool) bool {
		if p == nil {
			return def
		}
		return *p
	}
	// A hint is explicit when the tool set it and it is not one of the
	// defaults mcp.NewTool fills in for an author who set none.
	explicit := func(p *bool) bool { return p != nil && !a.Defaulted }
	tags := []any{}
	for _, tag := range tool.Tags {
		tags = append(tags, tag)
	}
	run := map[string]any{}
	if via == "execute" {
		run = map[string]any{"id": "run-1", "scriptSha256": strings.Repeat("ab", 32), "callIndex": 0}
	}
	in := map[string]any{
		"tool": map[string]any{
			"name":   tool.Name,
			"title":  tool.Title,
			"appId":  tool.AppID,
			"source": string(tool.Source),
			"tags":   tags,
			"annotations": map[string]any{
				"readOnlyHint":    value(a.ReadOnlyHint, false),
				"destructiveHint": value(a.DestructiveHint, true),
				"idempotentHint":  value(a.IdempotentHint, false),
				"openWorldHint":   value(a.OpenWorldHint, true),
				"explicit": map[string]any{
					"readOnlyHint":    explicit(a.ReadOnlyHint),
					"destructiveHint": explicit(a.DestructiveHint),
					"idempotentHint":  explicit(a.IdempotentHint),
					"openWorldHint":   explicit(a.OpenWorldHint),
				},
			},
			"requiresApproval": tool.RequiresApproval,
		},
		"via":     via,
		"session": map[string]any{"id": "sess-1"},
		"run":     run,
		"context": map[string]any{},
	}
	if args != nil {
		in["args"] = args
	}
	return in
}

func TestDecisionTable(t *testing.T) {
	ctx := t.Context()
	pq, err := preparedDecision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snap := demoCatalog(t)
	tests := []struct {
		name   string
		tool   string
		args   map[string]any
		via    string
		at     time.Time
		want   string // allow, approve or deny
		reason string // a part of the reason
	}{
		{"read-only direct", "crm.get_contact", map[string]any{"contact_id": "con_001"}, "direct", wednesdayAfternoon, "allow", "crm.get_contact is read-only"},
		{"read-only at the weekend", "support.list_tickets", map[string]any{}, "execute", saturdayMorning, "allow", "is read-only"},
		{"health has the server's app", "health", nil, "direct", thanksgiving, "allow", "health is read-only"},
		{"declared harmless write", "crm.create_contact", map[string]any{"name": "Ada", "email": "ada@example.com"}, "direct", wednesdayAfternoon, "allow", "declares that it is not destructive"},
		{"closed-world write from a plan", "support.add_comment", map[string]any{"ticket_id": "tkt_001", "body": "On it"}, "execute", wednesdayAfternoon, "allow", "may be reached via execute"},
		{"outbound write from a plan", "notifications.send_email", map[string]any{"to": "ada@example.com", "subject": "Hi", "body": "Hello"}, "execute", wednesdayAfternoon, "approve", "reaches outside the system"},
		{"outbound write by invoke", "notifications.send_email", map[string]any{"to": "ada@example.com", "subject": "Hi", "body": "Hello"}, "invoke", wednesdayAfternoon, "allow", ""},
		{"invitation from a plan", "users.invite", map[string]any{"email": "bo@example.com", "name": "Bo"}, "execute", wednesdayAfternoon, "approve", "users.invite reaches outside"},
		{"destructive in business hours", "crm.delete_contact", map[string]any{"contact_id": "con_001"}, "direct", wednesdayAfternoon, "approve", "crm.delete_contact is destructive (its author set destructiveHint: true)"},
		{"destructive at closing time", "crm.delete_contact", map[string]any{"contact_id": "con_001"}, "direct", wednesdayEvening, "deny", "runs only in business hours"},
		{"destructive at the weekend", "inventory.set_price", map[string]any{"product_id": "prd_001", "price_cents": 1999}, "execute", saturdayMorning, "deny", "it is Saturday 2026-11-21 11:00 there now"},
		{"destructive on a holiday", "billing.void_invoice", map[string]any{"invoice_id": "inv_001"}, "invoke", thanksgiving, "deny", "Thursday 2026-11-26"},
		{"tool without hints", "crm.merge_contacts", nil, "invoke", wednesdayAfternoon, "approve", "destructiveHint is only the MCP default"},
		{"tool without hints at the weekend", "crm.merge_contacts", nil, "invoke", saturdayMorning, "deny", "runs only in business hours"},
		{"unknown app", "erp.post_journal", nil, "invoke", wednesdayAfternoon, "deny", `app "erp" of tool erp.post_journal is not in the allowlist`},
		{"billing not direct", "billing.list_invoices", map[string]any{}, "direct", wednesdayAfternoon, "deny", "app billing may not be reached via direct"},
		{"billing by invoke", "billing.list_invoices", map[string]any{}, "invoke", wednesdayAfternoon, "allow", ""},
		{"blocked tool", "users.delete_account", map[string]any{"user_id": "usr_003"}, "execute", wednesdayAfternoon, "deny", "users.delete_account is blocked"},
		{"small refund", "billing.refund_payment", map[string]any{"payment_id": "pay_001", "amount_cents": 1500}, "invoke", wednesdayAfternoon, "approve", "billing.refund_payment requires approval"},
		{"large refund", "billing.refund_payment", map[string]any{"payment_id": "pay_001", "amount_cents": 50000}, "execute", wednesdayAfternoon, "approve", "$500.00 is above $100.00"},
		{"refund above the limit", "billing.refund_payment", map[string]any{"payment_id": "pay_001", "amount_cents": 150000}, "invoke", wednesdayAfternoon, "deny", "$1500.00 is above the limit of $1000.00"},
		{"full refund", "billing.refund_payment", map[string]any{"payment_id": "pay_001"}, "invoke", wednesdayAfternoon, "approve", "without args.amount_cents"},
		{"refund amount as text", "billing.refund_payment", map[string]any{"payment_id": "pay_001", "amount_cents": "1500"}, "invoke", wednesdayAfternoon, "deny", "must be a whole, non-negative number of cents"},
		{"payment in limits", "billing.record_payment", map[string]any{"invoice_id": "inv_001", "amount_cents": 25000}, "execute", wednesdayAfternoon, "allow", ""},
		{"payment above threshold", "billing.record_payment", map[string]any{"invoice_id": "inv_001", "amount_cents": 2000000}, "execute", saturdayMorning, "approve", "$20000.00 is above $10000.00"},
		{"payment above the limit", "billing.record_payment", map[string]any{"invoice_id": "inv_001", "amount_cents": 20000000}, "invoke", wednesdayAfternoon, "deny", "above the limit of $100000.00"},
		{"unknown path", "crm.get_contact", nil, "websocket", wednesdayAfternoon, "deny", `input.via must be execute, invoke or direct, not "websocket"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, ok := snap.Lookup(tt.tool)
			if !ok {
				t.Fatalf("no tool %q in the demo catalog", tt.tool)
			}
			d, err := decide(ctx, pq, inputFor(tool, tt.args, tt.via), tt.at)
			if err != nil {
				t.Fatal(err)
			}
			if d.outcome() != tt.want || !strings.Contains(d.Reason, tt.reason) {
				t.Errorf("got %s (%q), want %s with a reason containing %q", d.outcome(), d.Reason, tt.want, tt.reason)
			}
		})
	}
}

// TestMalformedInputIsDenied feeds documents that do not follow the input
// contract: each is denied with a reason, never left undefined.
func TestMalformedInputIsDenied(t *testing.T) {
	ctx := t.Context()
	pq, err := preparedDecision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]map[string]any{
		"empty":                {},
		"tool as a string":     {"tool": "crm.get_contact", "via": "direct"},
		"tool without a name":  {"tool": map[string]any{"appId": "crm"}, "via": "direct"},
		"no via":               {"tool": map[string]any{"name": "crm.get_contact", "appId": "crm"}},
		"args as a list":       {"tool": map[string]any{"name": "crm.get_contact", "appId": "crm"}, "via": "direct", "args": []any{1}},
		"annotations missing":  {"tool": map[string]any{"name": "crm.get_contact", "appId": "crm"}, "via": "direct", "args": map[string]any{}},
		"annotations as a str": {"tool": map[string]any{"name": "crm.get_contact", "appId": "crm", "annotations": "read-only"}, "via": "direct"},
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			d, err := decide(ctx, pq, in, saturdayMorning)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allow || d.Reason == "" {
				t.Errorf("got %+v, want a denial with a reason", d)
			}
		})
	}
}

// FuzzDecisionIsAlwaysDefined evaluates the policy for arbitrary JSON input:
// whatever a caller sends, the decision is a well-formed document, with no
// evaluation error, and input that is not an object is denied.
func FuzzDecisionIsAlwaysDefined(f *testing.F) {
	seeds := []string{
		`{}`, `null`, `1`, `"crm.get_contact"`, `[]`, `{"tool": null}`,
		`{"tool": {"name": 7, "appId": ["crm"]}, "via": {"x": 1}, "args": "a"}`,
		`{"tool": {"name": "crm.get_contact", "appId": "crm", "annotations": {"readOnlyHint": true, "explicit": {"readOnlyHint": true}}}, "via": "direct"}`,
		`{"tool": {"name": "billing.refund_payment", "appId": "billing"}, "via": "execute", "args": {"amount_cents": 1e300}}`,
		`{"tool": {"name": "billing.refund_payment", "appId": "billing"}, "via": "invoke", "args": {"amount_cents": -0.5}}`,
		`{"tool": {"name": "users.delete_account", "appId": "users", "annotations": "x"}, "via": "execute", "args": null}`,
		`{"tool": {"name": "crm.x", "appId": "crm", "annotations": {"explicit": 5, "destructiveHint": false}}, "via": "direct"}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	pq, err := preparedDecision(context.Background())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var in any
		if err := json.Unmarshal([]byte(text), &in); err != nil {
			t.Skip("not JSON")
		}
		rs, err := pq.Eval(context.Background(), rego.EvalInput(in), rego.EvalTime(saturdayMorning))
		if err != nil {
			t.Fatalf("input %s: %v", text, err)
		}
		if len(rs) != 1 || len(rs[0].Expressions) != 1 {
			t.Fatalf("input %s: decision is undefined", text)
		}
		doc, ok := rs[0].Expressions[0].Value.(map[string]any)
		if !ok || len(doc) != 3 {
			t.Fatalf("input %s: decision %#v is not an object of three fields", text, rs[0].Expressions[0].Value)
		}
		allow, okAllow := doc["allow"].(bool)
		_, okApproval := doc["requireApproval"].(bool)
		reason, okReason := doc["reason"].(string)
		if !okAllow || !okApproval || !okReason || reason == "" {
			t.Fatalf("input %s: malformed decision %v", text, doc)
		}
		if _, isObject := in.(map[string]any); !isObject && allow {
			t.Fatalf("input %s: allowed input that is not an object", text)
		}
	})
}

// TestEveryDemoToolHasADecision sweeps all demo tools over the three paths
// and checks each decision against what the tool's own description says it
// should be, so that a new or renamed demo tool cannot slip past the policy
// unnoticed.
func TestEveryDemoToolHasADecision(t *testing.T) {
	ctx := t.Context()
	pq, err := preparedDecision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snap := demoCatalog(t)
	count := 0
	for _, tool := range snap.All() {
		if tool.AppID == "erp" {
			continue // not a demo tool; covered by the table
		}
		count++
		for _, via := range []string{"execute", "invoke", "direct"} {
			d, err := decide(ctx, pq, inputFor(tool, map[string]any{}, via), wednesdayAfternoon)
			if err != nil {
				t.Fatalf("%s via %s: %v", tool.Name, via, err)
			}
			if want := expectedOutcome(tool, via); d.outcome() != want {
				t.Errorf("%s via %s: got %s (%q), want %s", tool.Name, via, d.outcome(), d.Reason, want)
			}
		}
	}
	if count < 39 {
		t.Errorf("swept %d tools; the demo has 39 and this test adds one", count)
	}
}

// expectedOutcome states the example policy in plain terms for a call in
// business hours without arguments.
func expectedOutcome(tool *catalog.Tool, via string) string {
	a := tool.Annotations
	is := func(p *bool) bool { return p != nil && *p && !a.Defaulted }
	isNot := func(p *bool) bool { return p != nil && !*p && !a.Defaulted }
	switch {
	case via == "direct" && (tool.AppID == "billing" || tool.AppID == "users"):
		return "deny"
	case tool.Name == "users.delete_account":
		return "deny"
	case is(a.ReadOnlyHint):
		return "allow"
	case tool.RequiresApproval, !isNot(a.DestructiveHint):
		return "approve"
	case via == "execute" && !isNot(a.OpenWorldHint):
		return "approve"
	default:
		return "allow"
	}
}

// TestDecisionsAreSafeForConcurrentUse evaluates one prepared query from
// several goroutines, as CodeCall does; run it with -race.
func TestDecisionsAreSafeForConcurrentUse(t *testing.T) {
	ctx := t.Context()
	pq, err := preparedDecision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snap := demoCatalog(t)
	refund, _ := snap.Lookup("billing.refund_payment")
	contact, _ := snap.Lookup("crm.get_contact")
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			for j := range 20 {
				tool, want := contact, "allow"
				in := inputFor(tool, map[string]any{"contact_id": "con_001"}, "direct")
				if (i+j)%2 == 0 {
					tool, want = refund, "deny"
					in = inputFor(tool, map[string]any{"payment_id": "pay_001", "amount_cents": 200000}, "invoke")
				}
				d, err := decide(ctx, pq, in, wednesdayAfternoon)
				if err == nil && d.outcome() != want {
					err = fmt.Errorf("%s: got %s, want %s", tool.Name, d.outcome(), want)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// BenchmarkDecision measures one evaluation of the prepared decision for
// typical calls: a read-only lookup, a refund from a plan that collects
// several approval reasons, and a refund denied outside business hours.
// "baseline" evaluates the query `true` with the same input, so that the
// policy's own cost can be read as a ratio on a busy machine. p50-µs and
// p99-µs are the median and 99th percentile of single evaluations.
func BenchmarkDecision(b *testing.B) {
	ctx := context.Background()
	pq, err := preparedDecision(ctx)
	if err != nil {
		b.Fatal(err)
	}
	trivial, err := rego.New(rego.Query("true")).PrepareForEval(ctx)
	if err != nil {
		b.Fatal(err)
	}
	snap := demoCatalog(b)
	contact, _ := snap.Lookup("crm.get_contact")
	refund, _ := snap.Lookup("billing.refund_payment")
	lookup := inputFor(contact, map[string]any{"contact_id": "con_001"}, "direct")
	refundArgs := map[string]any{"payment_id": "pay_001", "amount_cents": 50000}
	cases := []struct {
		name  string
		query rego.PreparedEvalQuery
		input map[string]any
		at    time.Time
	}{
		{"baseline", trivial, lookup, wednesdayAfternoon},
		{"read-only", pq, lookup, wednesdayAfternoon},
		{"refund", pq, inputFor(refund, refundArgs, "execute"), wednesdayAfternoon},
		{"out-of-hours", pq, inputFor(refund, refundArgs, "invoke"), saturdayMorning},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			durations := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				if _, err := c.query.Eval(ctx, rego.EvalInput(c.input), rego.EvalTime(c.at)); err != nil {
					b.Fatal(err)
				}
				durations = append(durations, time.Since(start))
			}
			slices.Sort(durations)
			pct := func(p float64) float64 {
				return float64(durations[int(p*float64(len(durations)-1))].Nanoseconds()) / 1e3
			}
			b.ReportMetric(pct(0.50), "p50-µs")
			b.ReportMetric(pct(0.99), "p99-µs")
		})
	}
}

// Example evaluates the example policy for a refund of $250 through
// codecall.invoke on a Wednesday afternoon in New York.
func Example() {
	ctx := context.Background()
	pq, err := rego.New(
		rego.Query("data.codecall.decision"),
		rego.Load([]string{"."}, nil),
	).PrepareForEval(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	input := map[string]any{
		"tool": map[string]any{
			"name": "billing.refund_payment", "title": "Refund payment", "appId": "billing",
			"source": "inline", "tags": []any{"payments", "refunds"},
			"annotations": map[string]any{
				"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false,
				"explicit": map[string]any{
					"readOnlyHint": true, "destructiveHint": true, "idempotentHint": true, "openWorldHint": true,
				},
			},
			"requiresApproval": true,
		},
		"args":    map[string]any{"payment_id": "pay_003", "amount_cents": 25000},
		"via":     "invoke",
		"session": map[string]any{"id": "sess-1"},
		"run":     map[string]any{},
		"context": map[string]any{},
	}
	rs, err := pq.Eval(ctx, rego.EvalInput(input), rego.EvalTime(time.Date(2026, 11, 18, 20, 0, 0, 0, time.UTC)))
	if err != nil {
		fmt.Println(err)
		return
	}
	d := rs[0].Expressions[0].Value.(map[string]any)
	fmt.Println("allow:", d["allow"])
	fmt.Println("requireApproval:", d["requireApproval"])
	for _, reason := range strings.Split(d["reason"].(string), "; ") {
		fmt.Println("-", reason)
	}
	// Output:
	// allow: true
	// requireApproval: true
	// - billing.refund_payment is destructive (its author set destructiveHint: true)
	// - billing.refund_payment requires approval (requiresApproval in its metadata or the CodeCall config)
	// - billing.refund_payment: $250.00 is above $100.00, which needs approval
}

// TestSampleConfigLoadsThisPolicy loads examples/codecall-policies.yaml as
// the server does (its policy paths are relative to the file) and decides a
// call with the engine it builds.
func TestSampleConfigLoadsThisPolicy(t *testing.T) {
	cfg, err := presets.Load(filepath.Join("..", "codecall-policies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	e, err := policy.LoadEngine(ctx, cfg.Policy.Paths, cfg.Policy.Query)
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := demoCatalog(t).Lookup("crm.get_contact")
	d, err := e.Decide(ctx, policy.InputDocument(tool, policy.Call{Tool: tool.Name, Via: policy.ViaDirect, Args: map[string]any{"contact_id": "con_001"}}))
	if err != nil || !d.Allow || d.RequireApproval {
		t.Errorf("got %+v, %v from the sample config's policy, want allow", d, err)
	}
}
