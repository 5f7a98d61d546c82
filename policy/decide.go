package policy

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
)

// Call is one tool call to decide: who asks, by which path, with what.
type Call struct {
	// Tool is the name as the caller wrote it; it resolves byte for byte.
	Tool string
	// Via is the path: ViaExecute, ViaInvoke or ViaDirect.
	Via Via
	// Args are the call's arguments. The policy sees them unredacted.
	Args map[string]any
	// SessionID is the MCP session, "" when the transport has none.
	SessionID string
	// Run identifies the plan making the call (ViaExecute only).
	Run *RunInfo
	// Context is codecall.execute's context object (ViaExecute only).
	Context map[string]any
	// Allowed limits the call to these tools (a plan's allowedTools,
	// compiled once per run); empty allows every tool the path offers.
	Allowed presets.Globs
}

// RunInfo identifies the plan a call comes from.
type RunInfo struct {
	ID           string
	ScriptSHA256 string
	// CallIndex is the call's position in the run, from 1.
	CallIndex int
}

// Index returns the call index, 0 for a nil RunInfo.
func (r *RunInfo) Index() int {
	if r == nil {
		return 0
	}
	return r.CallIndex
}

// ToolDocument is the input.tool document of the policy input for t; see
// README "Policy input". Hints are always booleans: an unset hint carries
// the MCP default, and explicit says which were set on purpose (hints that
// mcp.NewTool filled in by default are not).
func ToolDocument(t *catalog.Tool) map[string]any {
	a := t.Annotations
	explicit := map[string]any{}
	hint := func(name string, v *bool, def bool) bool {
		explicit[name] = v != nil && !a.Defaulted
		if v == nil {
			return def
		}
		return *v
	}
	tags := make([]any, len(t.Tags))
	for i, tag := range t.Tags {
		tags[i] = tag
	}
	return map[string]any{
		"name": t.Name, "title": t.Title, "appId": t.AppID, "source": string(t.Source), "tags": tags,
		"annotations": map[string]any{
			"readOnlyHint":    hint("readOnlyHint", a.ReadOnlyHint, false),
			"destructiveHint": hint("destructiveHint", a.DestructiveHint, true),
			"idempotentHint":  hint("idempotentHint", a.IdempotentHint, false),
			"openWorldHint":   hint("openWorldHint", a.OpenWorldHint, true),
			"explicit":        explicit,
		},
		"requiresApproval": t.RequiresApproval,
	}
}

// InputDocument is the whole policy input for one call of t.
func InputDocument(t *catalog.Tool, c Call) map[string]any {
	doc := callDocument(c)
	doc["tool"] = ToolDocument(t)
	return doc
}

// callDocument is the policy input without input.tool.
func callDocument(c Call) map[string]any {
	args := c.Args
	if args == nil {
		args = map[string]any{}
	}
	ctxDoc := c.Context
	if ctxDoc == nil {
		ctxDoc = map[string]any{}
	}
	run := map[string]any{}
	if c.Run != nil {
		run = map[string]any{"id": c.Run.ID, "scriptSha256": c.Run.ScriptSHA256, "callIndex": c.Run.CallIndex}
	}
	return map[string]any{
		"args": args, "via": string(c.Via), "session": map[string]any{"id": c.SessionID}, "run": run, "context": ctxDoc,
	}
}

// DefaultDecision is the built-in policy, used when no Rego policy is
// configured:
//   - a tool marked requiresApproval (metadata or config) needs approval;
//   - a tool whose author set readOnlyHint: true runs;
//   - a tool whose author set destructiveHint: false runs, unless it acts
//     on the open world: openWorldHint true, or unset, which MCP reads as
//     true (sending email, opening an issue, posting a message are not
//     destructive and still reach people outside the system);
//   - every other tool needs approval, including tools whose hints are only
//     mcp.NewTool's defaults (destructiveHint: true unless the author said
//     otherwise) and tools with no hints at all.
//
// The open-world rule follows the server-surface spec's "high-risk tools
// always ask": before it, an explicit destructiveHint: false was enough to
// run unasked.
func DefaultDecision(t *catalog.Tool) Decision {
	a := t.Annotations
	set := func(v *bool) (bool, bool) {
		if v == nil || a.Defaulted {
			return false, false
		}
		return *v, true
	}
	switch ro, roSet := set(a.ReadOnlyHint); {
	case t.RequiresApproval:
		return Decision{Allow: true, RequireApproval: true, Reason: "the tool is marked requiresApproval"}
	case roSet && ro:
		return Decision{Allow: true, Reason: "read-only tool"}
	}
	destructive, destructiveSet := set(a.DestructiveHint)
	openWorld, openWorldSet := set(a.OpenWorldHint)
	closedWorld := openWorldSet && !openWorld
	switch {
	case destructiveSet && !destructive && closedWorld:
		return Decision{Allow: true, Reason: "the tool's author marked it non-destructive and closed-world"}
	case destructiveSet && !destructive:
		return Decision{Allow: true, RequireApproval: true, Reason: "the tool is not read-only and acts on the open world (openWorldHint is true or unset)"}
	case destructiveSet:
		return Decision{Allow: true, RequireApproval: true, Reason: "the tool is marked destructive"}
	default:
		return Decision{Allow: true, RequireApproval: true, Reason: "the tool does not say it is read-only or non-destructive"}
	}
}

// Policies holds the policy in force: a Rego Engine, or the built-in
// default when none is configured. Swapping is atomic, so every decision
// is made by exactly one policy; a call that started on the old policy
// finishes on it.
type Policies struct {
	cur atomic.Pointer[Engine]
}

type neverKey struct {
	engine *Engine
	tool   string
}

// NewPolicies returns a holder with e in force; e may be nil for the
// built-in default.
func NewPolicies(e *Engine) *Policies {
	p := &Policies{}
	p.cur.Store(e)
	return p
}

// Engine returns the engine in force, nil for the built-in default.
func (p *Policies) Engine() *Engine {
	if p == nil {
		return nil
	}
	return p.cur.Load()
}

// Swap puts e in force and returns the previous engine.
func (p *Policies) Swap(e *Engine) *Engine {
	return p.cur.Swap(e)
}

// Outcome is a decided call: the tool it resolved to, the decision, and
// whether approval is needed after all rules.
type Outcome struct {
	Tool     *catalog.Tool
	Decision Decision
	// Policy names what decided: "default" or the Rego query.
	Policy string
	// EvalErr is a failure of the policy itself (logged; the call is
	// denied).
	EvalErr error
}

// NeedsApproval reports whether a person must approve the call.
func (o *Outcome) NeedsApproval() bool { return o.Decision.Allow && o.Decision.RequireApproval }

// Decide is Admit's verdict without approval and without running the
// call: meta-tool refusal, access, input validation, then the policy. A
// tool marked requiresApproval needs approval whatever a policy says (a
// policy can deny it, never waive its approval). The returned error is a
// *toolerr.Error; on success the Outcome says whether to ask for
// approval. The Outcome is returned with the error too when the policy
// denied, for auditing. Use Admit to make a call; Decide serves tests,
// benchmarks and tools that explain decisions.
func (g *Gate) Decide(ctx context.Context, snap *catalog.Snapshot, c Call) (*Outcome, error) {
	t, err := g.Access(ctx, snap, c)
	if err != nil {
		return nil, err
	}
	if err := g.validate(t, c); err != nil {
		return nil, err
	}
	out := &Outcome{Tool: t, Policy: "default"}
	if e := g.policies.Engine(); e != nil {
		out.Policy = e.query
		if in, err := g.inputValue(t, c); err != nil {
			out.Decision, out.EvalErr = deny("the call's input cannot be given to the policy"), err
		} else {
			out.Decision, out.EvalErr = e.decideValue(ctx, in)
		}
		if t.RequiresApproval && out.Decision.Allow {
			out.Decision.RequireApproval = true
		}
	} else {
		out.Decision = DefaultDecision(t)
	}
	if !out.Decision.Allow {
		reason := out.Decision.Reason
		if reason == "" {
			reason = "the policy denies this call"
		}
		return out, &toolerr.Error{Code: toolerr.AccessDenied, Tool: c.Tool, Message: fmt.Sprintf("policy denied %s: %s", c.Tool, reason), Reason: reason}
	}
	return out, nil
}

// inputValue builds the policy input as OPA's value type directly, with
// the tool document converted once per tool and generation: converting it
// on every call was a third of a decision's cost.
func (g *Gate) inputValue(t *catalog.Tool, c Call) (ast.Value, error) {
	var toolTerm *ast.Term
	if v, ok := g.toolTerms.Load(t); ok {
		toolTerm = v.(*ast.Term)
	} else {
		v, err := ast.InterfaceToValue(ToolDocument(t))
		if err != nil {
			return nil, fmt.Errorf("policy input: %w", err)
		}
		toolTerm = ast.NewTerm(v)
		g.toolTerms.Store(t, toolTerm)
	}
	rest, err := ast.InterfaceToValue(callDocument(c))
	if err != nil {
		return nil, fmt.Errorf("policy input: %w", err)
	}
	obj := rest.(ast.Object)
	obj.Insert(ast.StringTerm("tool"), toolTerm)
	return obj, nil
}

// Discoverable reports whether search and describe may show t: always,
// unless policy.filterDiscovery is on and the policy denies every call of
// t whatever the arguments.
func (g *Gate) Discoverable(ctx context.Context, t *catalog.Tool) bool {
	if !g.filterDiscovery {
		return true
	}
	e := g.policies.Engine()
	if e == nil {
		return true
	}
	key := neverKey{e, t.Name}
	if v, ok := g.never.Load(key); ok {
		return !v.(bool)
	}
	never := e.NeverAllows(ctx, ToolDocument(t))
	g.never.Store(key, never)
	return !never
}

// WouldAsk reports whether a call of t in session would wait for a
// person's approval, for discovery to show before any call, without
// asking anybody: the tool's own requiresApproval, then the policy in
// force, evaluated as Decide would for a plan's call with no arguments,
// then the session's trust ("approve for this session" given earlier
// answers such calls). A Rego policy that reads the arguments may decide
// otherwise for a real call; a policy that denies the empty call, or
// fails, counts as not asking (the call is refused, not approved).
func (g *Gate) WouldAsk(ctx context.Context, t *catalog.Tool, session string) bool {
	d := DefaultDecision(t)
	if e := g.policies.Engine(); e != nil {
		in, err := g.inputValue(t, Call{Tool: t.Name, Via: ViaExecute, SessionID: session})
		if err != nil {
			return false
		}
		if d, err = e.decideValue(ctx, in); err != nil {
			return false
		}
		if t.RequiresApproval && d.Allow {
			d.RequireApproval = true
		}
	}
	if !d.Allow || !d.RequireApproval {
		return false
	}
	return g.approvals == nil || !g.approvals.Trusted(session, t.Name)
}
