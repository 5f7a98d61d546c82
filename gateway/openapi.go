package gateway

import (
	"context"
	"path/filepath"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/codecall-go/codecall/openapi"
	"github.com/codecall-go/codecall/presets"
)

// An OpenAPI app (an upstream of type openapi) is served by package
// openapi's in-process MCP server, which the upstream connects to like to
// any other: start, retry with backoff, tool registration, include and
// exclude, reload and status are the gateway's own. What differs is here:
// the document is loaded when the upstream starts, credentials go to the
// app (and their values to the upstream's redactor), operations are
// selected by name, path or tag, and a reload restarts the app when its
// document changed.

// openapiSlack is how much longer the gateway waits for an OpenAPI call
// than the app itself, so that the app's own TIMEOUT error, which names the
// operation, is what the caller sees.
const openapiSlack = 5 * time.Second

// resolveOpenAPIAuth adds an OpenAPI app's credentials to r: the bearer
// token as an Authorization header, the query parameters. expand records
// each placeholder's value as a secret.
func resolveOpenAPIAuth(u presets.Upstream, r *resolved, expand func(string) string) {
	if u.Transport() != presets.UpstreamOpenAPI {
		return
	}
	if u.Auth.Bearer != "" {
		r.headers["Authorization"] = "Bearer " + expand(u.Auth.Bearer)
	}
	if cc := u.Auth.ClientCredentials; cc != nil {
		r.clientCreds = &openapi.ClientCredentials{
			TokenURL:     cc.TokenURL,
			ClientID:     expand(cc.ClientID),
			ClientSecret: expand(cc.ClientSecret),
			Scopes:       cc.Scopes,
		}
	}
	if len(u.Auth.Query) > 0 {
		r.query = make(map[string]string, len(u.Auth.Query))
		for name, v := range u.Auth.Query {
			r.query[name] = expand(v)
		}
	}
}

// openapiPaths makes the relative document paths of OpenAPI apps relative
// to baseDir (the config file's directory).
func openapiPaths(servers map[string]presets.Upstream, baseDir string) {
	if baseDir == "" {
		return
	}
	for id, u := range servers {
		if u.OpenAPI != "" && !openapi.IsURL(u.OpenAPI) && !filepath.IsAbs(u.OpenAPI) {
			u.OpenAPI = filepath.Join(baseDir, u.OpenAPI)
			servers[id] = u
		}
	}
}

// openapiCeiling is the gateway's bound on one call of an OpenAPI app: the
// longest timeout of its operations, plus openapiSlack.
func openapiCeiling(cfg presets.Upstream, timeout time.Duration) time.Duration {
	longest := timeout
	for _, o := range cfg.Operations {
		longest = max(longest, o.Timeout)
	}
	return longest + openapiSlack
}

// openapiTransport loads the document and connects to the app's server in
// this process.
func (u *upstream) openapiTransport() (transport.Interface, error) {
	ctx, cancel := context.WithTimeout(u.g.ctx, u.g.opts.startTimeout)
	defer cancel()
	doc, err := openapi.Load(ctx, u.cfg.OpenAPI)
	if err != nil {
		return nil, err
	}
	app, err := openapi.New(doc, u.openapiOptions()...)
	if err != nil {
		return nil, err
	}
	for _, s := range app.Skipped() {
		u.g.log.Warn("gateway: OpenAPI operation not served", "upstream", u.id, "operation", s.Method+" "+s.Path,
			"tool", s.Name, "reason", u.red.String(s.Reason))
	}
	u.mu.Lock()
	u.specHash = doc.Hash
	u.mu.Unlock()
	return transport.NewInProcessTransport(app.Server(u.id, u.g.opts.ver)), nil
}

func (u *upstream) openapiOptions() []openapi.Option {
	timeout := u.cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	return []openapi.Option{
		openapi.WithApp(u.id),
		openapi.WithBaseURL(u.cfg.BaseURL),
		openapi.WithSelect(u.openapiSelect),
		openapi.WithOverrides(u.openapiOverride),
		openapi.WithCredentials(openapi.Credentials{Headers: u.res.headers, Query: u.res.query, ClientCredentials: u.res.clientCreds}),
		openapi.WithRedactor(u.red.String),
		openapi.WithPrivateNetwork(u.cfg.AllowPrivateNetwork),
		openapi.WithMaxResponseBytes(u.cfg.MaxResponseBytes),
		openapi.WithTimeout(timeout),
		openapi.WithUserAgent(u.g.opts.name + "/" + u.g.opts.ver),
	}
}

// openapiSelect applies includeTools and excludeTools to an operation:
// a glob matches its tool name, its operationId, its path, "METHOD /path"
// or "tag:<tag>" for one of its tags. Exclude wins.
func (u *upstream) openapiSelect(op openapi.OperationRef) bool {
	keys := []string{op.Name, op.Path, op.Method + " " + op.Path}
	if op.ID != "" {
		keys = append(keys, op.ID)
	}
	for _, t := range op.Tags {
		keys = append(keys, "tag:"+t)
	}
	match := func(gs presets.Globs) bool {
		for _, k := range keys {
			if gs.Match(k) {
				return true
			}
		}
		return false
	}
	if match(u.exclude) {
		return false
	}
	return len(u.include) == 0 || match(u.include)
}

// openapiOverride finds an operation's entry under operations, by
// operationId or by tool name.
func (u *upstream) openapiOverride(op openapi.OperationRef) (openapi.Override, bool) {
	o, ok := u.cfg.Operations[op.ID]
	if !ok || op.ID == "" {
		o, ok = u.cfg.Operations[op.Name]
	}
	if !ok {
		return openapi.Override{}, false
	}
	return openapi.Override{RequiresApproval: o.RequiresApproval, Timeout: o.Timeout}, true
}

// changedSpecs reports the running OpenAPI apps whose document now reads
// differently (a file edited, a URL that serves a new version), so that
// Reload restarts them and clients get tools/list_changed. A document that
// cannot be read now is logged and left as it is served.
func (g *Gateway) changedSpecs(ctx context.Context) map[string]bool {
	g.mu.Lock()
	ups := sortedUpstreams(g.ups)
	g.mu.Unlock()
	changed := map[string]bool{}
	for _, u := range ups {
		if u.cfg.Transport() != presets.UpstreamOpenAPI {
			continue
		}
		u.mu.Lock()
		served, ready := u.specHash, u.state == stateReady
		u.mu.Unlock()
		if !ready {
			continue
		}
		doc, err := openapi.Load(ctx, u.cfg.OpenAPI)
		if err != nil {
			g.log.Warn("gateway: OpenAPI document unreadable on reload; the app keeps its tools", "upstream", u.id, "error", u.red.String(err.Error()))
			continue
		}
		changed[u.id] = doc.Hash != served
	}
	return changed
}
