// Package middleware is CodeCall's composition root. Wrap installs CodeCall
// on an existing mcp-go server in one call: the list filter, the meta-tools,
// the access gate as tool-handler middleware, and a catalog kept in step
// with the server's tools and the configuration.
package middleware

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/meta"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/policy/audit"
	"github.com/codecall-go/codecall/policy/redact"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/sandbox"
	"github.com/codecall-go/codecall/search"
	"github.com/codecall-go/codecall/typescript"
)

// CodeCall is CodeCall installed on one server. Close it when the server
// stops.
type CodeCall struct {
	srv    *server.MCPServer
	opts   options
	log    *slog.Logger
	obs    *observer
	idBase string
	seq    atomic.Uint64

	// mu serialises rebuilds and guards the fields below it.
	mu         sync.Mutex
	cfg        presets.Config
	cfgChanged bool
	dirty      bool
	version    uint64
	metaNames  []string
	closed     bool
	pool       *sandbox.Pool // runs plans when the config asks for process isolation
	poolKey    poolKey
	fallback   string         // why plans run in process despite the config, or ""
	poolWG     sync.WaitGroup // pools being closed
	poolBase   sandbox.Stats  // counters of the pools a reload replaced
	metrics    metric.Registration

	// Long-lived policy state, shared by every generation.
	policies    *policy.Policies
	approvals   *policy.Approvals
	paused      *meta.PausedRuns
	policyKey   string             // paths and query of the policy in force; guarded by mu
	policyWatch context.CancelFunc // stops the policy watcher; guarded by mu
	bgCtx       context.Context

	cur       atomic.Pointer[generation]
	stop      context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

// generation is one immutable state with the resources it owns. Requests
// hold a reference while they run, so a rebuild never pulls the index from
// under an in-flight search.
type generation struct {
	state        meta.State
	auditKey     string // what the audit logger was built from
	closeAudit   atomic.Bool
	descriptions map[string]string
	fingerprint  string
	index        *search.Index
	refs         atomic.Int64
	retired      atomic.Bool
	closeOnce    sync.Once
}

func (g *generation) release() {
	if g.refs.Add(-1) == 0 && g.retired.Load() {
		g.close()
	}
}

func (g *generation) retire() {
	g.retired.Store(true)
	if g.refs.Load() == 0 {
		g.close()
	}
}

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

// Wrap installs CodeCall on srv. Tools already registered and tools added or
// removed later are all seen through CodeCall; in the default mode
// (codecall_only) tools/list shows only the meta-tools and the tools marked
// visible. Wrap must be called before the server starts serving.
//
// When vm.isolation is process, Wrap starts the pool of sandboxed worker
// processes that runs plans (package sandbox). Where workers cannot start,
// Wrap fails under the locked_down preset and, under any other, logs a
// warning and runs plans in process; Isolation reports which.
func Wrap(srv *server.MCPServer, opts ...Option) (*CodeCall, error) {
	if srv == nil {
		return nil, errors.New("codecall: Wrap needs a server, got nil")
	}
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	if o.defaultAppID == "" {
		o.defaultAppID = serverName(srv)
	}
	if o.tracer == nil {
		o.tracer = otel.GetTracerProvider()
	}
	if o.meter == nil {
		o.meter = otel.GetMeterProvider()
	}
	cfg, err := initialConfig(o)
	if err != nil {
		return nil, err
	}
	c := &CodeCall{srv: srv, opts: o, log: o.logger, cfg: cfg, dirty: true, done: make(chan struct{}),
		policies:  policy.NewPolicies(nil),
		approvals: policy.NewApprovals(cfg.Approval.Timeout, cfg.Approval.AllowSessionTrust),
		paused:    meta.NewPausedRuns(),
	}
	if err := c.loadPolicy(context.Background(), cfg); err != nil {
		return nil, fmt.Errorf("codecall: %w", err)
	}
	var id [6]byte
	_, _ = rand.Read(id[:])
	c.idBase = hex.EncodeToString(id[:])
	c.obs = newObserver("codecall-observer-" + c.idBase)

	for _, name := range meta.NamesFor(&cfg).All() {
		if srv.GetTool(name) != nil {
			return nil, fmt.Errorf("codecall: the server already has a tool named %q, which is a CodeCall meta-tool name; rename it or set metaTools.prefix", name)
		}
	}
	server.WithToolFilter(c.filter)(srv)
	srv.Use(c.gate)
	if err := srv.RegisterSession(context.Background(), c.obs); err != nil {
		return nil, fmt.Errorf("codecall: cannot watch the server's tool list: %w", err)
	}
	c.mu.Lock()
	err = c.rebuildLocked()
	if err != nil {
		c.retirePoolLocked()
	}
	c.mu.Unlock()
	if err != nil {
		c.poolWG.Wait()
		srv.UnregisterSession(context.Background(), c.obs.id)
		return nil, err
	}

	if c.metrics, err = c.registerMetrics(o.meter); err != nil {
		c.log.Warn("codecall: sandbox metrics are off", "error", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	c.mu.Lock()
	c.bgCtx = ctx
	c.watchPolicyLocked()
	c.mu.Unlock()
	go c.background(ctx)
	return c, nil
}

// auditLoggerLocked returns the audit logger for cfg: the current one when
// neither the sink nor the redaction rules changed, else a new one (the
// old one is closed when the last request using it ends).
func (c *CodeCall) auditLoggerLocked(old *generation, cfg presets.Config, r *redact.Redactor) (*audit.Logger, string, error) {
	key := fmt.Sprintf("%q %v", cfg.Audit.Path, cfg.Redaction)
	if old != nil && old.auditKey == key {
		return old.state.Audit, key, nil
	}
	opts := []audit.Option{audit.WithRedactor(r), audit.WithDiagnostics(c.log)}
	if c.opts.auditHandler != nil {
		return audit.New(c.opts.auditHandler, opts...), key, nil
	}
	l, err := audit.Open(cfg.Audit, opts...)
	if err != nil {
		return nil, "", fmt.Errorf("codecall: %w", err)
	}
	return l, key, nil
}

func policyKey(cfg presets.Config) string {
	return fmt.Sprintf("%q %q", cfg.Policy.Paths, cfg.Policy.Query)
}

// loadPolicy loads the Rego policy cfg names and puts it in force; with no
// paths the built-in default policy applies.
func (c *CodeCall) loadPolicy(ctx context.Context, cfg presets.Config) error {
	var e *policy.Engine
	if len(cfg.Policy.Paths) > 0 {
		var err error
		if e, err = policy.LoadEngine(ctx, cfg.Policy.Paths, cfg.Policy.Query); err != nil {
			return err
		}
		c.log.Info("codecall: policy loaded", "files", len(e.Files()), "query", e.Query())
	}
	c.policies.Swap(e)
	c.policyKey = policyKey(cfg)
	return nil
}

// watchPolicyLocked (re)starts the watcher of the policy files, when the
// config names any and reloading is on.
func (c *CodeCall) watchPolicyLocked() {
	if c.policyWatch != nil {
		c.policyWatch()
		c.policyWatch = nil
	}
	if len(c.cfg.Policy.Paths) == 0 || c.opts.noReload || c.bgCtx == nil {
		return
	}
	ctx, cancel := context.WithCancel(c.bgCtx)
	c.policyWatch = cancel
	run, err := policy.WatchPolicies(ctx, c.cfg.Policy.Paths, c.cfg.Policy.Query, c.policies, c.log, nil)
	if err != nil {
		c.log.Warn("codecall: policy reload is off", "error", err)
		cancel()
		return
	}
	go run()
}

func initialConfig(o options) (presets.Config, error) {
	var cfg presets.Config
	switch {
	case o.config != nil && o.configFile != "":
		return cfg, errors.New("codecall: WithConfig and WithConfigFile both given; use one")
	case o.config != nil:
		cfg = *o.config
	case o.configFile != "":
		var err error
		if cfg, err = presets.Load(o.configFile); err != nil {
			return cfg, fmt.Errorf("codecall: %w", err)
		}
		return cfg, nil
	default:
		cfg = presets.Default()
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("codecall: invalid configuration: %w", err)
	}
	return cfg, nil
}

// serverName reads the wrapped server's name, which mcp-go keeps
// unexported, to serve as the default app id. It falls back to "default".
func serverName(srv *server.MCPServer) string {
	v := reflect.ValueOf(srv).Elem().FieldByName("name")
	if v.IsValid() && v.Kind() == reflect.String && v.String() != "" {
		return v.String()
	}
	return "default"
}

// background drains the observer so mcp-go never finds its channel full,
// and watches the config file.
func (c *CodeCall) background(ctx context.Context) {
	defer close(c.done)
	if c.opts.configFile != "" && c.opts.watch {
		go func() {
			c.mu.Lock()
			initial := c.cfg
			c.mu.Unlock()
			err := presets.Watch(ctx, c.opts.configFile, c.applyConfig, c.log, presets.WithInitial(initial))
			if err != nil && ctx.Err() == nil {
				c.log.Warn("codecall: config reload is off", "file", c.opts.configFile, "error", err)
			}
		}()
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.mu.Lock()
			if c.obs.drain() {
				c.dirty = true
			}
			c.mu.Unlock()
		}
	}
}

func (c *CodeCall) applyConfig(cfg presets.Config) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if policyKey(cfg) != c.policyKey {
		if err := c.loadPolicy(c.bgCtx, cfg); err != nil {
			c.log.Warn("codecall: reloaded config not applied: its policy does not load; the last good config and policy keep serving", "error", err)
			return
		}
	}
	c.approvals.Configure(cfg.Approval.Timeout, cfg.Approval.AllowSessionTrust)
	c.cfg = cfg
	c.cfgChanged = true
	c.dirty = true
	c.watchPolicyLocked()
	if err := c.rebuildLocked(); err != nil {
		c.log.Warn("codecall: reloaded config not applied", "error", err)
		return
	}
	c.log.Info("codecall: config reloaded", "mode", cfg.Mode, "preset", cfg.Preset)
}

// Close detaches CodeCall's background work, releases the index and stops
// the worker pool (running plans end first, by their deadlines). The
// server keeps its tools; CodeCall's filter then hides every tool but the
// meta-tools, whose calls fail.
func (c *CodeCall) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		if c.stop != nil {
			c.stop()
			<-c.done
		}
		c.srv.UnregisterSession(context.Background(), c.obs.id)
		if g := c.cur.Load(); g != nil {
			g.retire()
		}
		c.mu.Lock()
		c.retirePoolLocked()
		c.mu.Unlock()
		c.poolWG.Wait()
		if c.metrics != nil {
			_ = c.metrics.Unregister()
		}
	})
	return nil
}

// Refresh rebuilds the catalog now if the server's tools changed. Requests
// do this by themselves; Refresh is for callers that want the cost paid
// up front.
func (c *CodeCall) Refresh() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.obs.drain() {
		c.dirty = true
	}
	return c.rebuildLocked()
}

// Acquire implements meta.Env: it returns the current state, rebuilding the
// catalog first if the server's tool set changed.
func (c *CodeCall) Acquire(ctx context.Context) (*meta.State, func()) {
	g := c.acquire()
	return &g.state, g.release
}

func (c *CodeCall) acquire() *generation {
	c.mu.Lock()
	if c.obs.drain() {
		c.dirty = true
	}
	if c.dirty && !c.closed {
		if err := c.rebuildLocked(); err != nil {
			c.log.Error("codecall: catalog rebuild failed; serving the previous catalog", "error", err)
		}
	}
	c.mu.Unlock()
	for {
		g := c.cur.Load()
		g.refs.Add(1)
		if c.cur.Load() == g {
			return g
		}
		g.release()
	}
}

// rebuildLocked builds a new generation when the tools or config changed.
func (c *CodeCall) rebuildLocked() error {
	c.dirty = false
	cfg := c.cfg
	names := meta.NamesFor(&cfg)
	c.syncMetaToolsLocked(&cfg)

	tools := c.serverTools(names)
	fp, err := fingerprint(tools)
	if err != nil {
		return err
	}
	old := c.cur.Load()
	if old != nil && old.fingerprint == fp && !c.cfgChanged {
		return nil
	}
	gate, err := policy.NewGate(cfg, policy.WithPolicies(c.policies), policy.WithApprovals(c.approvals), policy.WithReserved(names.All()...))
	if err != nil {
		return err
	}
	runner, err := c.runnerLocked(&cfg)
	if err != nil {
		return err
	}
	c.version++
	snap, problems, err := catalog.Build(tools, catalog.Options{
		Config: cfg, Include: c.opts.include, DefaultAppID: c.opts.defaultAppID,
		Reserved: names.All(), Version: c.version, TypeScript: declare,
	})
	if err != nil {
		return err
	}
	for _, p := range problems {
		c.log.Warn("codecall: tool kept out of CodeCall", "tool", p.Tool, "problem", p.Message)
	}
	redactor, err := redact.New(cfg.Redaction)
	if err != nil {
		return fmt.Errorf("codecall: %w", err)
	}
	auditLog, auditKey, err := c.auditLoggerLocked(old, cfg, redactor)
	if err != nil {
		return err
	}
	idx, err := search.New(snap.Enabled(), search.WithLowRelevance(cfg.Search.LowRelevance))
	if err != nil {
		if old == nil || auditLog != old.state.Audit {
			_ = auditLog.Close()
		}
		return fmt.Errorf("codecall: building the search index: %w", err)
	}
	c.approvals.SetRedactor(redactor)
	g := &generation{
		state: meta.State{Config: &cfg, Catalog: snap, Index: idx, Gate: gate, Runner: runner,
			Approvals: c.approvals, Paused: c.paused, Logger: c.log, Tracer: c.opts.tracer.Tracer(meta.Instrumentation),
			Audit: auditLog, Redactor: redactor},
		auditKey:    auditKey,
		fingerprint: fp,
		index:       idx,
	}
	g.descriptions = meta.Descriptions(&g.state)
	c.cur.Store(g)
	configChanged := c.cfgChanged
	c.cfgChanged = false
	if old != nil {
		old.closeAudit.Store(old.state.Audit != auditLog)
		old.retire()
		// mcp-go announces changes to its own tool set; a change made only by
		// CodeCall's filter (a config reload) is announced here.
		if configChanged && !slices.Equal(visibleNames(old), visibleNames(g)) {
			c.srv.SendNotificationToAllClients(mcp.MethodNotificationToolsListChanged, nil)
		}
	}
	c.log.Debug("codecall: catalog built", "version", c.version, "tools", len(snap.All()), "enabled", len(snap.Enabled()))
	return nil
}

// syncMetaToolsLocked registers the meta-tools the config asks for and
// removes the ones it no longer does.
func (c *CodeCall) syncMetaToolsLocked(cfg *presets.Config) {
	want := meta.Tools(cfg, c)
	wantNames := make([]string, len(want))
	for i, t := range want {
		wantNames[i] = t.Tool.Name
	}
	if slices.Equal(wantNames, c.metaNames) {
		return
	}
	var stale []string
	for _, n := range c.metaNames {
		if !slices.Contains(wantNames, n) {
			stale = append(stale, n)
		}
	}
	if len(stale) > 0 {
		c.srv.DeleteTools(stale...)
	}
	c.srv.AddTools(want...)
	c.metaNames = wantNames
	c.obs.drain() // our own changes need no rebuild
}

func (c *CodeCall) serverTools(names meta.Names) []mcp.Tool {
	registered := c.srv.ListTools()
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

func visibleNames(g *generation) []string {
	var names []string
	for _, t := range g.state.Catalog.Visible() {
		names = append(names, t.Name)
	}
	return names
}

func declare(t *catalog.Tool) string {
	f := typescript.Function{
		Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
	}
	a := t.Annotations
	for _, h := range []struct {
		name string
		v    *bool
	}{{"readOnlyHint", a.ReadOnlyHint}, {"destructiveHint", a.DestructiveHint}, {"idempotentHint", a.IdempotentHint}, {"openWorldHint", a.OpenWorldHint}} {
		if h.v != nil {
			f.Hints = append(f.Hints, typescript.Hint{Name: h.name, Value: *h.v})
		}
	}
	return typescript.Declare(f)
}
