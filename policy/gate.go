// Package policy is CodeCall's one access gate. Every path to a tool —
// tools/list, search, describe, execute, invoke and a client's direct
// tools/call — asks the same Gate, which resolves names exactly as mcp-go's
// dispatch does and fails closed.
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
	directCalls     bool
	invokeAllows    presets.Globs
	policies        *Policies
	filterDiscovery bool
	never           sync.Map // neverKey -> bool: NeverAllows, cached per engine
	toolTerms       sync.Map // *catalog.Tool -> *ast.Term: the input.tool document
}

// GateOption configures a Gate.
type GateOption func(*Gate)

// WithPolicies makes the gate decide calls by the policy p holds, which
// may be swapped while the gate is in use. Without it the built-in
// default policy decides.
func WithPolicies(p *Policies) GateOption {
	return func(g *Gate) { g.policies = p }
}

// NewGate builds the gate for a configuration.
func NewGate(cfg presets.Config, opts ...GateOption) (*Gate, error) {
	allows, err := presets.CompileGlobs(cfg.DirectCalls.AllowedTools)
	if err != nil {
		return nil, fmt.Errorf("directCalls.allowedTools%w", err)
	}
	g := &Gate{directCalls: cfg.DirectCalls.Enabled, invokeAllows: allows, filterDiscovery: cfg.Policy.FilterDiscovery}
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
	notFound := &toolerr.Error{Code: toolerr.NotFound, Tool: req.Tool,
		Message: fmt.Sprintf("no tool named %q is available; use codecall.search to find tools", req.Tool)}
	if t == nil {
		return nil, notFound
	}
	switch req.Via {
	case ViaDirect:
		if !t.VisibleInList {
			return nil, notFound
		}
		return t, nil
	case ViaSearch, ViaDescribe:
		if !t.Enabled || !g.Discoverable(ctx, t) {
			return nil, notFound
		}
		return t, nil
	case ViaExecute:
		if !t.Enabled {
			return nil, notFound
		}
		return t, nil
	case ViaInvoke:
		if !t.Enabled {
			return nil, notFound
		}
		if !g.directCalls {
			return nil, &toolerr.Error{Code: toolerr.AccessDenied, Tool: req.Tool, Message: "direct calls are disabled (directCalls.enabled is false)"}
		}
		if len(g.invokeAllows) > 0 && !g.invokeAllows.Match(t.Name) {
			return nil, &toolerr.Error{Code: toolerr.AccessDenied, Tool: req.Tool,
				Message: fmt.Sprintf("tool %q is not in directCalls.allowedTools", req.Tool)}
		}
		return t, nil
	default:
		return nil, &toolerr.Error{Code: toolerr.AccessDenied, Tool: req.Tool, Message: fmt.Sprintf("unknown access path %q", req.Via)}
	}
}
