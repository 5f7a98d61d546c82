package gateway

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Prompts, resources, resource templates, subscriptions and completion of
// the upstreams, served on the gateway's own server. Prompt names follow
// the tool naming rule of their upstream (prefixed or not); resource URIs
// and URI templates are the upstream's own, so links inside results keep
// working.

// listPrompts lists every prompt of an upstream.
func listPrompts(ctx context.Context, cl *client.Client) ([]mcp.Prompt, error) {
	res, err := cl.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil {
		return nil, err
	}
	return res.Prompts, nil
}

// listResources lists every resource and resource template of an upstream.
func listResources(ctx context.Context, cl *client.Client) ([]mcp.Resource, []mcp.ResourceTemplate, error) {
	res, err := cl.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		return nil, nil, err
	}
	tpl, err := cl.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil {
		return nil, nil, fmt.Errorf("resources/templates/list: %w", err)
	}
	return res.Resources, tpl.ResourceTemplates, nil
}

// running returns the upstream's client when generation gen is current.
func (u *upstream) running(gen uint64) (*client.Client, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.cl, u.gen == gen && u.state == stateReady
}

// refreshPrompts re-lists the prompts after prompts/list_changed.
func (u *upstream) refreshPrompts(gen uint64) {
	cl, ok := u.running(gen)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(u.g.ctx, u.g.opts.startTimeout)
	defer cancel()
	prompts, err := listPrompts(ctx, cl)
	if err != nil {
		u.g.log.Warn("gateway: re-listing prompts after list_changed failed", "upstream", u.id, "error", u.red.String(err.Error()))
		return
	}
	u.setPrompts(prompts)
}

// refreshResources re-lists the resources after resources/list_changed.
func (u *upstream) refreshResources(gen uint64) {
	cl, ok := u.running(gen)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(u.g.ctx, u.g.opts.startTimeout)
	defer cancel()
	res, tpl, err := listResources(ctx, cl)
	if err != nil {
		u.g.log.Warn("gateway: re-listing resources after list_changed failed", "upstream", u.id, "error", u.red.String(err.Error()))
		return
	}
	u.setResources(res, tpl)
}

// setPrompts registers the upstream's prompts under their gateway names
// and removes the ones it no longer has; nil removes them all.
func (u *upstream) setPrompts(prompts []mcp.Prompt) {
	u.syncMu.Lock()
	defer u.syncMu.Unlock()
	if u.g.ctx.Err() != nil && prompts != nil {
		return
	}
	want := map[string]server.ServerPrompt{}
	orig := map[string]string{}
	for _, p := range prompts {
		name := p.Name
		p.Name = u.exposedName(name)
		p.Description = u.red.String(p.Description)
		want[p.Name] = server.ServerPrompt{Prompt: p, Handler: u.promptHandler(name)}
		orig[p.Name] = name
	}
	var remove []string
	for name := range u.prompts {
		if _, ok := want[name]; !ok {
			remove = append(remove, name)
		}
	}
	kept := u.g.registerPrompts(u, sortedValues(want, func(p server.ServerPrompt) string { return p.Prompt.Name }), remove)
	for _, name := range remove {
		delete(u.prompts, name)
	}
	for _, p := range kept {
		u.prompts[p.Prompt.Name] = orig[p.Prompt.Name]
	}
}

// setResources registers the upstream's resources and templates under
// their own URIs and removes the ones it no longer has; nil removes them
// all.
func (u *upstream) setResources(resources []mcp.Resource, templates []mcp.ResourceTemplate) {
	u.syncMu.Lock()
	defer u.syncMu.Unlock()
	if u.g.ctx.Err() != nil && (resources != nil || templates != nil) {
		return
	}
	read := u.readHandler()
	var add []server.ServerResource
	want := map[string]bool{}
	for _, r := range resources {
		r.Description = u.red.String(r.Description)
		want[r.URI] = true
		add = append(add, server.ServerResource{Resource: r, Handler: read})
	}
	var remove []string
	for uri := range u.resources {
		if !want[uri] {
			remove = append(remove, uri)
		}
	}
	var addT []server.ServerResourceTemplate
	wantT := map[string]bool{}
	for _, t := range templates {
		if t.URITemplate == nil {
			continue
		}
		t.Description = u.red.String(t.Description)
		wantT[t.URITemplate.Raw()] = true
		addT = append(addT, server.ServerResourceTemplate{Template: t, Handler: server.ResourceTemplateHandlerFunc(read)})
	}
	u.resources = u.g.registerResources(u, add, remove)
	u.templates = u.g.registerTemplates(u, addT, wantT)
}

// promptHandler forwards prompts/get under the upstream's prompt name.
func (u *upstream) promptHandler(name string) server.PromptHandlerFunc {
	return func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		cl, err := u.forwardClient(ctx)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, u.timeout)
		defer cancel()
		up := mcp.GetPromptRequest{Params: req.Params}
		up.Params.Name = name
		res, err := cl.GetPrompt(ctx, up)
		if err != nil {
			return nil, u.upstreamError(err)
		}
		return res, nil
	}
}

// readHandler forwards resources/read with the URI the client asked for.
func (u *upstream) readHandler() server.ResourceHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		cl, err := u.forwardClient(ctx)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, u.timeout)
		defer cancel()
		res, err := cl.ReadResource(ctx, mcp.ReadResourceRequest{Params: req.Params})
		if err != nil {
			return nil, u.upstreamError(err)
		}
		return res.Contents, nil
	}
}

// forwardClient is client for requests other than tool calls.
func (u *upstream) forwardClient(ctx context.Context) (*client.Client, error) {
	cl, _, err := u.client(ctx)
	if err != nil {
		return nil, errors.New(UnavailablePrefix + u.red.String(err.Error()))
	}
	return cl, nil
}

// upstreamError is an upstream's error with secrets removed.
func (u *upstream) upstreamError(err error) error {
	return fmt.Errorf("upstream %q: %s", u.id, u.red.String(err.Error()))
}

// sortedValues returns the values of m sorted by key.
func sortedValues[T any](m map[string]T, key func(T) string) []T {
	out := make([]T, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out
}

// claim makes u the owner of names in owners, skipping the names another
// upstream owns (with a warning), and releases the removed names u owns.
// It returns which names were kept and which were released. g.mu held.
func (g *Gateway) claim(owners map[string]*upstream, kind string, u *upstream, add, remove []string) (kept map[string]bool, gone []string) {
	kept = map[string]bool{}
	for _, name := range add {
		if owner, taken := owners[name]; taken && owner != u {
			g.log.Warn("gateway: "+kind+" taken by another upstream; skipped", kind, name, "upstream", u.id, "owner", owner.id)
			continue
		}
		owners[name] = u
		kept[name] = true
	}
	for _, name := range remove {
		if owners[name] == u {
			delete(owners, name)
			gone = append(gone, name)
		}
	}
	return kept, gone
}

// keysOf lists the key of every item.
func keysOf[T any](items []T, key func(T) string) []string {
	keys := make([]string, len(items))
	for i, it := range items {
		keys[i] = key(it)
	}
	return keys
}

// granted keeps the items whose key a claim granted.
func granted[T any](items []T, ok map[string]bool, key func(T) string) []T {
	var kept []T
	for _, it := range items {
		if ok[key(it)] {
			kept = append(kept, it)
		}
	}
	return kept
}

// registerPrompts installs an upstream's prompts, removing the ones it no
// longer has, and returns the ones installed.
func (g *Gateway) registerPrompts(u *upstream, add []server.ServerPrompt, remove []string) []server.ServerPrompt {
	name := func(p server.ServerPrompt) string { return p.Prompt.Name }
	g.mu.Lock()
	ok, gone := g.claim(g.promptOwners, "prompt", u, keysOf(add, name), remove)
	g.mu.Unlock()
	kept := granted(add, ok, name)
	if len(gone) > 0 {
		g.srv.DeletePrompts(gone...)
	}
	if len(kept) > 0 {
		g.srv.AddPrompts(kept...)
	}
	return kept
}

// registerResources installs an upstream's resources, removing the ones it
// no longer has, and returns the URIs it now serves.
func (g *Gateway) registerResources(u *upstream, add []server.ServerResource, remove []string) map[string]bool {
	uri := func(r server.ServerResource) string { return r.Resource.URI }
	g.mu.Lock()
	ok, gone := g.claim(g.resourceOwners, "resource", u, keysOf(add, uri), remove)
	g.mu.Unlock()
	kept := granted(add, ok, uri)
	if len(gone) > 0 {
		g.srv.DeleteResources(gone...)
	}
	if len(kept) > 0 {
		g.srv.AddResources(kept...)
	}
	return ok
}

// registerTemplates replaces an upstream's resource templates. mcp-go can
// add templates but not delete them, so the gateway's whole set is
// installed again when one goes away.
func (g *Gateway) registerTemplates(u *upstream, add []server.ServerResourceTemplate, want map[string]bool) map[string]bool {
	g.mu.Lock()
	removed := false
	for uri, t := range g.templates {
		if t.owner == u && !want[uri] {
			delete(g.templates, uri)
			removed = true
		}
	}
	kept := map[string]bool{}
	var fresh []server.ServerResourceTemplate
	for _, t := range add {
		uri := t.Template.URITemplate.Raw()
		if old, taken := g.templates[uri]; taken && old.owner != u {
			g.log.Warn("gateway: resource template taken by another upstream; skipped", "template", uri, "upstream", u.id, "owner", old.owner.id)
			continue
		}
		g.templates[uri] = ownedTemplate{owner: u, tpl: t}
		kept[uri] = true
		fresh = append(fresh, t)
	}
	all := make([]server.ServerResourceTemplate, 0, len(g.templates))
	for _, t := range g.templates {
		all = append(all, t.tpl)
	}
	g.mu.Unlock()
	switch {
	case removed:
		g.srv.SetResourceTemplates(all...)
	case len(fresh) > 0:
		g.srv.AddResourceTemplates(fresh...)
	}
	return kept
}

// ownedTemplate is a resource template and the upstream serving it.
type ownedTemplate struct {
	owner *upstream
	tpl   server.ServerResourceTemplate
}

// nameConflicts reports the tool and prompt names of lst that another
// upstream already serves under the same gateway name.
func (g *Gateway) nameConflicts(u *upstream, lst listing) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var msgs []string
	for _, t := range u.keptTools(lst.tools) {
		name := u.exposedName(t.Name)
		if owner, ok := g.owners[name]; ok && owner != u {
			msgs = append(msgs, fmt.Sprintf("tool %q is also served by upstream %q", name, owner.id))
		} else if g.foreignTool(name) {
			msgs = append(msgs, fmt.Sprintf("tool %q is a tool of the gateway itself (a CodeCall meta-tool)", name))
		}
	}
	for _, p := range lst.prompts {
		name := u.exposedName(p.Name)
		if owner, ok := g.promptOwners[name]; ok && owner != u {
			msgs = append(msgs, fmt.Sprintf("prompt %q is also served by upstream %q", name, owner.id))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	sort.Strings(msgs)
	if len(msgs) > 3 {
		msgs = append(msgs[:3], fmt.Sprintf("and %d more", len(msgs)-3))
	}
	return fmt.Errorf("name clash: %s; keep prefix true (the default) on one of them, or leave the tool out with excludeTools", strings.Join(msgs, ", "))
}

// owner of a prompt name or a resource URI or template, for completion
// and subscriptions.
func (g *Gateway) promptOwner(name string) (*upstream, string) {
	g.mu.Lock()
	u := g.promptOwners[name]
	g.mu.Unlock()
	if u == nil {
		return nil, ""
	}
	u.syncMu.Lock()
	defer u.syncMu.Unlock()
	return u, u.prompts[name]
}

func (g *Gateway) resourceOwner(uri string) *upstream {
	g.mu.Lock()
	defer g.mu.Unlock()
	if u := g.resourceOwners[uri]; u != nil {
		return u
	}
	if t, ok := g.templates[uri]; ok {
		return t.owner
	}
	for _, t := range g.templates {
		if t.tpl.Template.URITemplate != nil && t.tpl.Template.URITemplate.Regexp().MatchString(uri) {
			return t.owner
		}
	}
	return nil
}

// completer answers completion/complete with the upstream that serves the
// prompt or resource template.
type completer struct{ g *Gateway }

// CompletePromptArgument implements server.PromptCompletionProvider.
func (c completer) CompletePromptArgument(ctx context.Context, name string, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	u, orig := c.g.promptOwner(name)
	if u == nil {
		return nil, fmt.Errorf("no upstream serves prompt %q", name)
	}
	return u.complete(ctx, mcp.PromptReference{Type: "ref/prompt", Name: orig}, arg, cctx)
}

// CompleteResourceArgument implements server.ResourceCompletionProvider.
func (c completer) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	u := c.g.resourceOwner(uri)
	if u == nil {
		return nil, fmt.Errorf("no upstream serves resource %q", uri)
	}
	return u.complete(ctx, mcp.ResourceReference{Type: "ref/resource", URI: uri}, arg, cctx)
}

// complete forwards completion/complete; an upstream without completions
// has none to offer.
func (u *upstream) complete(ctx context.Context, ref any, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	cl, err := u.forwardClient(ctx)
	if err != nil {
		return nil, err
	}
	if cl.GetServerCapabilities().Completions == nil {
		return &mcp.Completion{Values: []string{}}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, u.timeout)
	defer cancel()
	res, err := cl.Complete(ctx, mcp.CompleteRequest{Params: mcp.CompleteParams{Ref: ref, Argument: arg, Context: cctx}})
	if err != nil {
		return nil, u.upstreamError(err)
	}
	return &res.Completion, nil
}

// subscribe records a client's subscription to a resource and passes it to
// the upstream serving it when it is the first.
func (g *Gateway) subscribe(ctx context.Context, session, uri string, on bool) {
	if session == "" || uri == "" {
		return
	}
	g.subsMu.Lock()
	subs := g.subs[uri]
	if subs == nil {
		subs = map[string]bool{}
		g.subs[uri] = subs
	}
	before := len(subs)
	if on {
		subs[session] = true
	} else {
		delete(subs, session)
	}
	after := len(subs)
	if after == 0 {
		delete(g.subs, uri)
	}
	g.subsMu.Unlock()
	if (before == 0) == (after == 0) {
		return
	}
	u := g.resourceOwner(uri)
	if u == nil {
		return
	}
	method := "resources/subscribe"
	if !on {
		method = "resources/unsubscribe"
	}
	if err := u.passSubscription(ctx, method, uri); err != nil {
		g.log.Warn("gateway: "+method+" failed upstream", "upstream", u.id, "uri", uri, "error", u.red.String(err.Error()))
	}
}

// dropSession forgets the subscriptions of a client that went away.
func (g *Gateway) dropSession(session string) {
	g.subsMu.Lock()
	var uris []string
	for uri, subs := range g.subs {
		if subs[session] {
			uris = append(uris, uri)
		}
	}
	g.subsMu.Unlock()
	for _, uri := range uris {
		g.subscribe(g.ctx, session, uri, false)
	}
}

// passSubscription sends resources/subscribe or resources/unsubscribe to
// the upstream (mcp-go's client has no method for them) when it offers
// subscriptions.
func (u *upstream) passSubscription(ctx context.Context, method, uri string) error {
	cl, err := u.forwardClient(ctx)
	if err != nil {
		return err
	}
	if caps := cl.GetServerCapabilities(); caps.Resources == nil || !caps.Resources.Subscribe {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, u.timeout)
	defer cancel()
	res, err := cl.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId(fmt.Sprintf("codecall-sub-%d", u.g.seq.Add(1))),
		Method:  method,
		Params:  map[string]any{"uri": uri},
	})
	if err != nil {
		return err
	}
	if res.Error != nil {
		return fmt.Errorf("%d %s", res.Error.Code, res.Error.Message)
	}
	return nil
}

// resourceUpdated passes an upstream's notifications/resources/updated to
// the clients subscribed to that URI.
func (g *Gateway) resourceUpdated(uri string, params map[string]any) {
	g.subsMu.Lock()
	var sessions []string
	for id := range g.subs[uri] {
		sessions = append(sessions, id)
	}
	g.subsMu.Unlock()
	for _, id := range sessions {
		_ = g.srv.SendNotificationToSpecificClient(id, mcp.MethodNotificationResourceUpdated, params)
	}
}

// declareCapabilities offers clients resources (with subscriptions when an
// upstream has them), prompts and completion when some running upstream
// offers them. Called before the gateway serves (eager start), since
// mcp-go reads its capabilities without a lock.
func (g *Gateway) declareCapabilities(all bool) {
	var res, sub, prompts, completions bool
	g.mu.Lock()
	for _, u := range g.ups {
		u.mu.Lock()
		c := u.caps
		u.mu.Unlock()
		res = res || c.Resources != nil
		sub = sub || (c.Resources != nil && c.Resources.Subscribe)
		prompts = prompts || c.Prompts != nil
		completions = completions || c.Completions != nil
	}
	g.mu.Unlock()
	if all {
		res, sub, prompts, completions = true, true, true, true
	}
	if res {
		server.WithResourceCapabilities(sub, true)(g.srv)
	}
	if prompts {
		server.WithPromptCapabilities(true)(g.srv)
	}
	if completions {
		server.WithCompletions()(g.srv)
	}
}
