// Package policy is CodeCall's gate: the one door every tool call passes
// through, and the rules behind it.
//
// Gate.Admit takes a call from any path (a client's direct tools/call,
// codecall.invoke, a plan's callTool) through meta-tool refusal, access,
// input validation, the policy in force (a prepared Rego query, or the
// built-in default) and a person's approval, then runs it, telling an
// Observer about every step, refusals included. Gate.Authorize is the
// access rule alone, which tools/list, search and describe ask for every
// tool they show. Names resolve exactly as mcp-go's dispatch resolves
// them, and every check fails closed.
//
// The package also holds what the gate needs: Engine and Policies (Rego
// loaded, compiled and prepared once, swapped atomically on reload),
// Approvals (prompts, multi-round-trip state and session trust) and the
// Askers that differ by client.
package policy

import (
	"context"
	"fmt"
	"sync"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
)

// Via names the path a request took to a tool.
type Via string

// The paths to a tool.
const (
	ViaSearch   Via = "search"   // codecall.search results
	ViaDescribe Via = "describe" // codecall.describe
	ViaExecute  Via = "execute"  // callTool from a codecall.execute plan
	ViaInvoke   Via = "invoke"   // codecall.invoke
	ViaDirect   Via = "direct"   // a client's own tools/call
)

// Request is one request for access to a tool.
type Request struct {
	Tool string
	Via  Via
}

// Gate decides access. It is immutable; build a new one when the config
// changes.
type Gate struct {
	reserved        map[string]bool // CodeCall's own tools, never reached from inside
	approvals       *Approvals
	directCalls     bool
	invokeAllows    presets.Globs
	invokeFilter    func(catalog.Info) bool
	policies        *Policies
	filterDiscovery bool
	never           sync.Map // neverKey -> bool: NeverAllows, cached per engine
	toolTerms       sync.Map // *catalog.Tool -> *ast.Term: the input.tool document
	schemas         sync.Map // *catalog.Tool -> *inputSchema: compiled once per generation
}

// GateOption configures a Gate.
type GateOption func(*Gate)

// WithPolicies makes the gate decide calls by the policy p holds, which
// may be swapped while the gate is in use. Without it the built-in
// default policy decides.
func WithPolicies(p *Policies) GateOption {
	return func(g *Gate) { g.policies = p }
}

// WithReserved names CodeCall's own tools (the meta-tools): Admit refuses
// them with SELF_REFERENCE, so no path inside CodeCall reaches them.
func WithReserved(names ...string) GateOption {
	return func(g *Gate) {
		for _, n := range names {
			g.reserved[n] = true
		}
	}
}

// WithApprovals is who asks for approval and remembers session trust.
// Without it a call that needs approval is refused with APPROVAL_REQUIRED.
func WithApprovals(a *Approvals) GateOption {
	return func(g *Gate) { g.approvals = a }
}

// WithDirectCallFilter narrows codecall.invoke to the tools filter returns
// true for, after directCalls.allowedTools: the Go form of the plugin
// contract's directCalls.filter.
func WithDirectCallFilter(filter func(catalog.Info) bool) GateOption {
	return func(g *Gate) { g.invokeFilter = filter }
}

// NewGate builds the gate for a configuration.
func NewGate(cfg presets.Config, opts ...GateOption) (*Gate, error) {
	allows, err := presets.CompileGlobs(cfg.DirectCalls.AllowedTools)
	if err != nil {
		return nil, fmt.Errorf("directCalls.allowedTools%w", err)
	}
	g := &Gate{directCalls: cfg.DirectCalls.Enabled, invokeAllows: allows, filterDiscovery: cfg.Policy.FilterDiscovery,
		reserved: map[string]bool{}}
	for _, opt := range opts {
		opt(g)
	}
	return g, nil
}

// Authorize returns the tool when req may reach it in snap, and an *toolerr.Error
// otherwise. A tool CodeCall does not offer answers NOT_FOUND on every path,
// so a refusal never confirms that a hidden tool exists.
func (g *Gate) Authorize(ctx context.Context, snap *catalog.Snapshot, req Request) (*catalog.Tool, error) {
	if err := ctx.Err(); err != nil {
		return nil, &toolerr.Error{Code: toolerr.Timeout, Tool: req.Tool, Message: "request ended before the call: " + err.Error()}
	}
	var t *catalog.Tool
	if snap != nil {
		t, _ = snap.Lookup(req.Tool)
	}
	if t == nil {
		return nil, notFound(req.Tool)
	}
	switch req.Via {
	case ViaDirect:
		if !t.VisibleInList {
			return nil, notFound(req.Tool)
		}
		return t, nil
	case ViaSearch, ViaDescribe:
		if !t.Enabled || !g.Discoverable(ctx, t) {
			return nil, notFound(req.Tool)
		}
		return t, nil
	case ViaExecute:
		if !t.Enabled {
			return nil, notFound(req.Tool)
		}
		return t, nil
	case ViaInvoke:
		if !t.Enabled {
			return nil, notFound(req.Tool)
		}
		if !g.directCalls {
			return nil, &toolerr.Error{Code: toolerr.AccessDenied, Tool: req.Tool, Message: "direct calls are disabled (directCalls.enabled is false)"}
		}
		if len(g.invokeAllows) > 0 && !g.invokeAllows.Match(t.Name) {
			return nil, &toolerr.Error{Code: toolerr.AccessDenied, Tool: req.Tool,
				Message: fmt.Sprintf("tool %q is not in directCalls.allowedTools", req.Tool)}
		}
		if g.invokeFilter != nil && !g.invokeFilter(t.Info()) {
			return nil, &toolerr.Error{Code: toolerr.AccessDenied, Tool: req.Tool,
				Message: fmt.Sprintf("tool %q cannot be called directly on this server; call it from a plan", req.Tool)}
		}
		return t, nil
	default:
		return nil, &toolerr.Error{Code: toolerr.AccessDenied, Tool: req.Tool, Message: fmt.Sprintf("unknown access path %q", req.Via)}
	}
}

// notFound is Authorize's answer for a tool the caller may not see: the
// same for a tool that does not exist, so a refusal tells nothing of what
// is hidden. Built only when refusing: Authorize runs for every call of a
// plan and for every tool of a tools/list.
func notFound(tool string) *toolerr.Error {
	return &toolerr.Error{Code: toolerr.NotFound, Tool: tool,
		Message: fmt.Sprintf("no tool named %q is available; use codecall.search to find tools", tool)}
}
