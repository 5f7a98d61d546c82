package policy_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/presets"
)

const amountPolicy = `package codecall

import rego.v1

default decision := {"allow": false, "requireApproval": false, "reason": "not allowed"}

decision := {"allow": true, "requireApproval": false, "reason": "read-only"} if {
	input.tool.annotations.readOnlyHint
	input.tool.annotations.explicit.readOnlyHint
}

decision := {"allow": true, "requireApproval": input.args.amount > data.limits.approveAbove, "reason": "charge"} if {
	input.tool.name == "billing.charge"
	input.args.amount <= data.limits.max
}
`

func TestLoadEngineErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		paths func(dir string) []string
		query string
		want  []string // substrings of the error
	}{
		{"missing path", nil, func(dir string) []string { return []string{filepath.Join(dir, "nope.rego")} }, "data.codecall.decision",
			[]string{"nope.rego", "no such file"}},
		{"parse error names file and line", map[string]string{"p.rego": "package codecall\n\ndecision := {\n"}, nil, "data.codecall.decision",
			[]string{"p.rego:", "rego_parse_error"}},
		{"compile error names file and line", map[string]string{"p.rego": "package codecall\n\nimport rego.v1\n\ndecision := x if { y := 1 }\n"}, nil, "data.codecall.decision",
			[]string{"p.rego:5", "rego_"}},
		{"v0 syntax is refused", map[string]string{"p.rego": "package codecall\n\ndecision = {\"allow\": true} { true }\n"}, nil, "data.codecall.decision",
			[]string{"p.rego:3"}},
		{"query naming no rule", map[string]string{"p.rego": amountPolicy}, nil, "data.codecall.verdict",
			[]string{"names no rule", "data.codecall.verdict"}},
		{"no module", map[string]string{"data.json": `{"limits": {}}`}, nil, "data.codecall.decision",
			[]string{"no .rego module"}},
		{"bad data file", map[string]string{"p.rego": amountPolicy, "limits.json": `{"limits": `}, nil, "data.codecall.decision",
			[]string{"limits.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := mcptest.WritePolicies(t, tt.files)
			paths := []string{dir}
			if tt.paths != nil {
				paths = tt.paths(dir)
			}
			_, err := policy.LoadEngine(context.Background(), paths, tt.query)
			var le *policy.LoadError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want a *policy.LoadError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func tool(name string, opts ...mcp.ToolOption) *catalog.Tool {
	cfg := presets.Default()
	snap, _, err := catalog.Build([]mcp.Tool{mcp.NewTool(name, opts...)}, catalog.Options{Config: cfg, DefaultAppID: "app"})
	if err != nil {
		panic(err)
	}
	t, _ := snap.Lookup(name)
	return t
}

func TestEngineDecide(t *testing.T) {
	dir := mcptest.WritePolicies(t, map[string]string{
		"codecall.rego":      amountPolicy,
		"codecall_test.rego": "package codecall\n\nimport rego.v1\n\ntest_never_loaded if { false }\n",
		"limits.yaml":        "limits:\n  approveAbove: 100\n  max: 1000\n",
	})
	e, err := policy.LoadEngine(context.Background(), []string{dir}, "data.codecall.decision")
	if err != nil {
		t.Fatal(err)
	}
	if files := strings.Join(e.Files(), ","); strings.Contains(files, "_test.rego") {
		t.Fatalf("unit-test files must not be loaded: %s", files)
	}
	charge := tool("billing.charge")
	readOnly := tool("crm.find", mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false))
	tests := []struct {
		name string
		tool *catalog.Tool
		args map[string]any
		want policy.Decision
	}{
		{"small charge", charge, map[string]any{"amount": 50}, policy.Decision{Allow: true, Reason: "charge"}},
		{"large charge needs approval", charge, map[string]any{"amount": 500}, policy.Decision{Allow: true, RequireApproval: true, Reason: "charge"}},
		{"huge charge denied", charge, map[string]any{"amount": 5000}, policy.Decision{Reason: "not allowed"}},
		{"read-only", readOnly, nil, policy.Decision{Allow: true, Reason: "read-only"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Decide(context.Background(), policy.InputDocument(tt.tool, policy.Call{Tool: tt.tool.Name, Via: policy.ViaExecute, Args: tt.args}))
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	// Prepared once, evaluated from many goroutines.
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 50 {
				d, err := e.Decide(context.Background(), policy.InputDocument(charge, policy.Call{Args: map[string]any{"amount": 500}}))
				if err != nil || !d.RequireApproval {
					t.Errorf("concurrent decision: %+v, %v", d, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestFailClosed checks that every way a policy can fail to decide denies.
func TestFailClosed(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		reason string
	}{
		{"undefined decision", "package codecall\n\nimport rego.v1\n\ndecision := {\"allow\": true} if { input.args.never }\n", "gave no decision"},
		{"runtime error", "package codecall\n\nimport rego.v1\n\ndecision := {\"allow\": to_number(input.args.amount) > 0}\n", "failed to evaluate"},
		{"conflicting rules", "package codecall\n\nimport rego.v1\n\ndecision := {\"allow\": true}\ndecision := {\"allow\": false} if { true }\n", "failed to evaluate"},
		{"not an object", "package codecall\n\nimport rego.v1\n\ndecision := true\n", "malformed"},
		{"allow not a boolean", "package codecall\n\nimport rego.v1\n\ndecision := {\"allow\": \"yes\"}\n", "malformed"},
		{"reason not a string", "package codecall\n\nimport rego.v1\n\ndecision := {\"allow\": true, \"reason\": 7}\n", "malformed"},
	}
	charge := tool("billing.charge")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := mcptest.WritePolicies(t, map[string]string{"p.rego": tt.policy})
			e, err := policy.LoadEngine(context.Background(), []string{dir}, "data.codecall.decision")
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			d, err := e.Decide(context.Background(), policy.InputDocument(charge, policy.Call{Args: map[string]any{"amount": "lots"}}))
			if d.Allow || err == nil || !strings.Contains(d.Reason, tt.reason) {
				t.Fatalf("got %+v, err %v; want a denial saying %q and an error to log", d, err, tt.reason)
			}
		})
	}
}

func TestNeverAllows(t *testing.T) {
	dir := mcptest.WritePolicies(t, map[string]string{"p.rego": `package codecall

import rego.v1

default decision := {"allow": false, "reason": "default deny"}

decision := {"allow": true, "reason": "crm"} if input.tool.appId == "crm"

decision := {"allow": true, "reason": "small"} if {
	input.tool.name == "billing.charge"
	input.args.amount < 10
}
`})
	e, err := policy.LoadEngine(context.Background(), []string{dir}, "data.codecall.decision")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"crm.find": false, "billing.charge": false, "billing.refund": true, "admin.drop": true} {
		tl := tool(name)
		if got := e.NeverAllows(context.Background(), policy.ToolDocument(tl)); got != want {
			t.Errorf("NeverAllows(%s) = %v, want %v", name, got, want)
		}
	}
}

func TestDefaultDecision(t *testing.T) {
	all := func(ro, destructive bool) []mcp.ToolOption {
		return []mcp.ToolOption{mcp.WithReadOnlyHintAnnotation(ro), mcp.WithDestructiveHintAnnotation(destructive),
			mcp.WithIdempotentHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false)}
	}
	approval := tool("x.charge", all(false, false)...)
	approval.RequiresApproval = true
	tests := []struct {
		name string
		tool *catalog.Tool
		want policy.Decision
	}{
		{"explicit read-only", tool("x.get", all(true, false)...), policy.Decision{Allow: true}},
		{"explicit non-destructive", tool("x.note", all(false, false)...), policy.Decision{Allow: true}},
		{"explicit destructive", tool("x.drop", all(false, true)...), policy.Decision{Allow: true, RequireApproval: true}},
		// Not destructive, but it reaches the world outside (an email, an issue): a person is asked.
		{"non-destructive, open world", tool("x.send", mcp.WithReadOnlyHintAnnotation(false), mcp.WithDestructiveHintAnnotation(false),
			mcp.WithIdempotentHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(true)), policy.Decision{Allow: true, RequireApproval: true}},
		// MCP reads an unset openWorldHint as true.
		{"non-destructive, open world unset", tool("x.post", mcp.WithDestructiveHintAnnotation(false)), policy.Decision{Allow: true, RequireApproval: true}},
		{"read-only, open world", tool("x.fetch", mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
			mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(true)), policy.Decision{Allow: true}},
		{"hints left to mcp.NewTool", tool("x.delete"), policy.Decision{Allow: true, RequireApproval: true}},
		// readOnly false, destructive true and so on are exactly mcp.NewTool's defaults: not a statement.
		{"defaults written out", tool("x.default", mcp.WithReadOnlyHintAnnotation(false), mcp.WithDestructiveHintAnnotation(true),
			mcp.WithIdempotentHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(true)), policy.Decision{Allow: true, RequireApproval: true}},
		{"requiresApproval wins over non-destructive", approval, policy.Decision{Allow: true, RequireApproval: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := policy.DefaultDecision(tt.tool)
			if got.Allow != tt.want.Allow || got.RequireApproval != tt.want.RequireApproval || got.Reason == "" {
				t.Fatalf("got %+v, want %+v with a reason", got, tt.want)
			}
		})
	}
}

// TestSwapUnderLoad checks that calls deciding while policies are swapped
// see one policy or the other, never a mix of the two.
func TestSwapUnderLoad(t *testing.T) {
	load := func(allow bool, reason string) *policy.Engine {
		body := "package codecall\n\nimport rego.v1\n\ndecision := {\"allow\": " + map[bool]string{true: "true", false: "false"}[allow] +
			", \"requireApproval\": false, \"reason\": \"" + reason + "\"}\n"
		e, err := policy.LoadEngine(context.Background(), []string{mcptest.WritePolicies(t, map[string]string{"p.rego": body})}, "data.codecall.decision")
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	a, b := load(true, "policy A"), load(false, "policy B")
	cfg := presets.Default()
	snap, _, err := catalog.Build([]mcp.Tool{mcp.NewTool("x.y")}, catalog.Options{Config: cfg, DefaultAppID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	ps := policy.NewPolicies(a)
	gate, err := policy.NewGate(cfg, policy.WithPolicies(ps))
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var swaps sync.WaitGroup
	swaps.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			ps.Swap([]*policy.Engine{a, b}[i%2])
		}
	})
	var wg sync.WaitGroup
	var seen [2]atomic.Int64
	for range 8 {
		wg.Go(func() {
			for range 300 {
				out, err := gate.Decide(context.Background(), snap, policy.Call{Tool: "x.y", Via: policy.ViaExecute})
				switch {
				case err == nil && out.Decision.Reason == "policy A":
					seen[0].Add(1)
				case err != nil && out != nil && out.Decision.Reason == "policy B" && !out.Decision.Allow:
					seen[1].Add(1)
				default:
					t.Errorf("mixed decision: %+v, %v", out, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	swaps.Wait()
	if seen[0].Load() == 0 || seen[1].Load() == 0 {
		t.Logf("only one policy was seen (A %d, B %d): the swaps were not interleaved this run", seen[0].Load(), seen[1].Load())
	}
}

// TestWouldAsk checks what discovery says of approval, asking nobody: the
// built-in policy's verdict, a Rego policy's for a call without arguments
// (via a plan, in the session), a tool's own requiresApproval, and trust
// the session was given.
func TestWouldAsk(t *testing.T) {
	const sessionPolicy = `package codecall

import rego.v1

default decision := {"allow": true, "requireApproval": true, "reason": "ask"}

decision := {"allow": true, "requireApproval": false, "reason": "the ops session"} if input.session.id == "ops"

decision := {"allow": false, "reason": "never"} if input.tool.name == "db.drop"
`
	e, err := policy.LoadEngine(context.Background(), []string{mcptest.WritePolicies(t, map[string]string{"p.rego": sessionPolicy})}, "data.codecall.decision")
	if err != nil {
		t.Fatal(err)
	}
	cfg := presets.Default()
	cfg.Tools = map[string]presets.ToolOverride{"shop.marked": {RequiresApproval: catalog.Bool(true)}}
	ro := mcp.WithReadOnlyHintAnnotation(true)
	snap, _, err := catalog.Build([]mcp.Tool{
		mcp.NewTool("shop.read", ro), mcp.NewTool("shop.write", mcp.WithReadOnlyHintAnnotation(false)),
		mcp.NewTool("shop.marked", ro), mcp.NewTool("db.drop", ro),
	}, catalog.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	approvals := policy.NewApprovals(time.Minute, true)
	write, _ := snap.Lookup("shop.write")
	approvals.Interpret(&mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept,
		Content: map[string]any{"decision": policy.ChoiceApproveSession}}}, policy.ApprovalRequest{Tool: write, SessionID: "trusting"})
	builtin, err := policy.NewGate(cfg, policy.WithApprovals(approvals))
	if err != nil {
		t.Fatal(err)
	}
	rego, err := policy.NewGate(cfg, policy.WithApprovals(approvals), policy.WithPolicies(policy.NewPolicies(e)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		gate    *policy.Gate
		tool    string
		session string
		want    bool
	}{
		{"built-in: read-only", builtin, "shop.read", "s", false},
		{"built-in: writes", builtin, "shop.write", "s", true},
		{"built-in: writes, trusted in this session", builtin, "shop.write", "trusting", false},
		{"built-in: marked requiresApproval", builtin, "shop.marked", "s", true},
		{"rego: asks by default", rego, "shop.read", "s", true},
		{"rego: not in the ops session", rego, "shop.read", "ops", false},
		{"rego: cannot waive the tool's own requiresApproval", rego, "shop.marked", "ops", true},
		{"rego: a denied tool is not asked about", rego, "db.drop", "s", false},
		{"rego: trusted in this session", rego, "shop.write", "trusting", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tool, ok := snap.Lookup(tt.tool)
			if !ok {
				t.Fatalf("%s missing", tt.tool)
			}
			if got := tt.gate.WouldAsk(context.Background(), tool, tt.session); got != tt.want {
				t.Errorf("WouldAsk(%s, %s) = %v, want %v", tt.tool, tt.session, got, tt.want)
			}
		})
	}
}
