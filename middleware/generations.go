package middleware

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/meta"
	"github.com/codecall-go/codecall/presets"
)

// generation is one immutable state with the resources it owns. Requests
// hold a reference while they run, so a rebuild never pulls the index from
// under an in-flight search.
type generation struct {
	state       meta.State
	auditKey    string // what the audit logger was built from
	closeAudit  atomic.Bool
	metaTools   map[string]mcp.Tool // the meta-tools as tools/list shows them
	fingerprint string
	index       searchIndex
	refs        atomic.Int64
	retired     atomic.Bool
	closeOnce   sync.Once
}

// release ends one request's use of g; the last release of a retired
// generation closes it.
func (g *generation) release() {
	if g.refs.Add(-1) == 0 && g.retired.Load() {
		g.close()
	}
}

// retire marks g as replaced. It closes at once when no request holds it,
// else when the last one releases it.
func (g *generation) retire() {
	g.retired.Store(true)
	if g.refs.Load() == 0 {
		g.close()
	}
}

// close frees g's index, and its audit logger when the generation that
// replaced it opened another; once only, however many paths reach it.
func (g *generation) close() {
	g.closeOnce.Do(func() {
		if g.index != nil {
			_ = g.index.Close()
		}
		if g.closeAudit.Load() {
			_ = g.state.Audit.Close()
		}
	})
}

// buildFunc assembles a generation's state from a config and the
// server's tools (the meta-tools left out). old is the generation in
// force, or nil, so resources that did not change (the audit logger) carry
// over. It is a function rather than a method of generations so that the
// lifecycle here knows nothing of gates, runners or audit sinks.
type buildFunc func(cfg presets.Config, tools []mcp.Tool, names meta.Names, version uint64, old *generation) (*generation, error)

// generations owns the catalog snapshots: the generation in force, when a
// new one is due and how it replaces the old.
//
// The per-call path (acquire) takes no lock unless something changed: the
// generation in force is an atomic pointer, and a change is seen through
// the atomic dirty flag or a notification pending on the observer. mu only
// serialises rebuilds and what they read and write.
type generations struct {
	srv   *server.MCPServer
	env   meta.Env // handed to the meta-tools' handlers
	obs   *observer
	log   *slog.Logger
	build buildFunc

	cur   atomic.Pointer[generation]
	dirty atomic.Bool // the tools or the config changed since the last build

	mu         sync.Mutex // serialises rebuilds; guards the fields below
	cfg        presets.Config
	cfgChanged bool // cfg differs from the config of the generation in force
	version    uint64
	metaNames  []string // the meta-tools registered on srv
	// codeModeFeatures is set once the Code Mode prompt and resource
	// template are registered on srv.
	codeModeFeatures bool
	closed           bool
}

// newGenerations returns the owner of the catalog snapshots, with none in
// force yet and marked dirty, so the first update builds from cfg.
func newGenerations(srv *server.MCPServer, env meta.Env, obs *observer, log *slog.Logger, cfg presets.Config, build buildFunc) *generations {
	gs := &generations{srv: srv, env: env, obs: obs, log: log, build: build, cfg: cfg}
	gs.dirty.Store(true)
	return gs
}

// acquire returns the generation in force with a reference taken, first
// rebuilding when the tools or the config changed. When nothing changed it
// takes no lock: an AddTool made before this request has already put its
// notification on the observer's channel (mcp-go sends it synchronously),
// so pending sees it.
func (gs *generations) acquire() *generation {
	if gs.dirty.Load() || gs.obs.pending() {
		if err := gs.update(false); err != nil {
			gs.log.Error("codecall: catalog rebuild failed; serving the previous catalog", "error", err)
		}
	}
	for {
		g := gs.cur.Load()
		g.refs.Add(1)
		// A rebuild may have retired g between the load and the Add; then
		// its resources may be closing, so take the new one instead.
		if gs.cur.Load() == g {
			return g
		}
		g.release()
	}
}

// update rebuilds when the observer or a reload marked the catalog dirty,
// or always when force is set (a rebuild whose fingerprint matches the
// generation in force changes nothing). It does nothing after close.
func (gs *generations) update(force bool) error {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.drainLocked()
	if gs.closed || !(force || gs.dirty.Load()) {
		return nil
	}
	return gs.rebuildLocked()
}

// reconfigure puts cfg in force: the next generation is built from it now.
func (gs *generations) reconfigure(cfg presets.Config) error {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.cfg = cfg
	gs.cfgChanged = true
	gs.dirty.Store(true)
	if gs.closed {
		return nil
	}
	return gs.rebuildLocked()
}

// drainLocked empties the observer, marking the catalog dirty if the
// server's tool list changed. It runs under mu so that it never swallows a
// notification between a rebuild's own meta-tool changes and its drain.
func (gs *generations) drainLocked() {
	if gs.obs.drain() {
		gs.dirty.Store(true)
	}
}

// drainEvery empties the observer every d until ctx ends: mcp-go drops
// notifications to a full channel, and a server with no requests for a
// while would otherwise fill it.
func (gs *generations) drainEvery(ctx context.Context, d time.Duration) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if gs.obs.pending() {
				gs.mu.Lock()
				gs.drainLocked()
				gs.mu.Unlock()
			}
		}
	}
}

// close stops rebuilds and retires the generation in force; requests still
// holding it finish on it.
func (gs *generations) close() {
	gs.mu.Lock()
	gs.closed = true
	gs.mu.Unlock()
	if g := gs.cur.Load(); g != nil {
		g.retire()
	}
}

// rebuildLocked builds a new generation when the tools or config changed.
//
// dirty stays set until the rebuild ends, whatever its outcome, so that a
// request arriving meanwhile waits on mu for the new generation instead
// of taking the old one: the meta-tools the new config asks for are
// registered on the server before the new generation is in force. A
// change that arrives during the rebuild is left on the observer, where
// the next request finds it.
func (gs *generations) rebuildLocked() error {
	defer gs.dirty.Store(false)
	cfg := gs.cfg
	names := meta.NamesFor(&cfg)
	gs.syncMetaToolsLocked(&cfg)

	tools := gs.serverTools(names)
	fp, err := fingerprint(tools)
	if err != nil {
		return err
	}
	old := gs.cur.Load()
	if old != nil && old.fingerprint == fp && !gs.cfgChanged {
		return nil
	}
	g, err := gs.build(cfg, tools, names, gs.version+1, old)
	if err != nil {
		return err
	}
	g.fingerprint = fp
	gs.version++
	gs.cur.Store(g)
	configChanged := gs.cfgChanged
	gs.cfgChanged = false
	if old != nil {
		old.closeAudit.Store(old.state.Audit != g.state.Audit)
		old.retire()
		// mcp-go announces changes to its own tool set; a change made only by
		// CodeCall's filter (a config reload) is announced here.
		if configChanged && !slices.Equal(visibleNames(old), visibleNames(g)) {
			gs.srv.SendNotificationToAllClients(mcp.MethodNotificationToolsListChanged, nil)
		}
	}
	snap := g.state.Catalog
	gs.log.Debug("codecall: catalog built", "version", gs.version, "tools", len(snap.All()), "enabled", len(snap.Enabled()))
	return nil
}

// syncMetaToolsLocked registers the meta-tools the config asks for and
// removes the ones it no longer does.
func (gs *generations) syncMetaToolsLocked(cfg *presets.Config) {
	want := meta.Tools(cfg, gs.env)
	wantNames := make([]string, len(want))
	for i, t := range want {
		wantNames[i] = t.Tool.Name
	}
	if cfg.Offers(presets.SurfaceCodeMode) && !gs.codeModeFeatures {
		// Registered once and kept: mcp-go cannot remove a resource
		// template, and their handlers answer from the current state.
		prompt, tmpl := meta.CodeModeFeatures(gs.env)
		gs.srv.AddPrompts(prompt)
		gs.srv.AddResourceTemplates(tmpl)
		gs.codeModeFeatures = true
	}
	if slices.Equal(wantNames, gs.metaNames) {
		return
	}
	var stale []string
	for _, n := range gs.metaNames {
		if !slices.Contains(wantNames, n) {
			stale = append(stale, n)
		}
	}
	if len(stale) > 0 {
		gs.srv.DeleteTools(stale...)
	}
	gs.srv.AddTools(want...)
	gs.metaNames = wantNames
	gs.obs.drain() // our own changes need no rebuild
}

// serverTools returns the server's tools but the meta-tools, by name, so
// equal tool sets give equal fingerprints.
func (gs *generations) serverTools(names meta.Names) []mcp.Tool {
	registered := gs.srv.ListTools()
	tools := make([]mcp.Tool, 0, len(registered))
	for name, st := range registered {
		if names.Has(name) {
			continue
		}
		tools = append(tools, st.Tool)
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	return tools
}

// fingerprint identifies a tool set, so a change notification that changed
// nothing CodeCall sees costs no rebuild.
func fingerprint(tools []mcp.Tool) (string, error) {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, t := range tools {
		if err := enc.Encode(t); err != nil {
			return "", fmt.Errorf("codecall: tool %q cannot be encoded: %w", t.Name, err)
		}
		if err := enc.Encode(t.Meta); err != nil {
			return "", fmt.Errorf("codecall: tool %q metadata cannot be encoded: %w", t.Name, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// visibleNames are the tools g shows in tools/list besides the
// meta-tools, to tell whether a reload changed what clients see.
func visibleNames(g *generation) []string {
	var names []string
	for _, t := range g.state.Catalog.Visible() {
		names = append(names, t.Name)
	}
	return names
}
