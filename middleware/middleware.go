// Package middleware is CodeCall's composition root. Wrap installs CodeCall
// on an existing mcp-go server in one call: the list filter, the meta-tools,
// the access gate as tool-handler middleware, and a catalog kept in step
// with the server's tools and the configuration.
//
// CodeCall itself holds what lives as long as it does (the server, the
// options, approvals and paused plans) and composes small owners, each in
// its own file with its own lock: generations (generations.go) keeps the
// immutable catalog snapshots and rebuilds them, isolation (isolation.go)
// keeps the worker pool, and reloader (reload.go) watches the config and
// policy files. dispatch.go holds the server hooks that route every call
// through the gate.
package middleware

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel/metric"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/meta"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/policy/audit"
	"github.com/codecall-go/codecall/policy/redact"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/search"
	"github.com/codecall-go/codecall/typescript"
)

// CodeCall is CodeCall installed on one server. Close it when the server
// stops.
//
// It holds the long-lived pieces every generation shares and composes
// three owners, each behind its own lock: gens (the catalog snapshots),
// iso (the worker pool) and rl (the config and policy files). Lock order,
// where one is taken under another: rl, then gens, then iso.
type CodeCall struct {
	srv        *server.MCPServer
	opts       options
	log        *slog.Logger
	idBase     string        // makes the ids of internal calls unique
	callPrefix []byte        // every internal call's message up to its sequence number; see internalRequest
	seq        atomic.Uint64 // numbers internal calls

	approvals *policy.Approvals // pending approvals and session trust
	outOfBand *policy.OutOfBand // calls waiting for an operator; nil unless WithOutOfBandApprovals
	paused    *meta.PausedRuns  // plans waiting for an approval
	durable   *meta.Durable     // paused plans in a state store; nil keeps them in paused

	gens *generations
	iso  *isolation
	rl   *reloader

	emb embedders // the embedding model of search.embeddings, kept across generations

	metrics   metric.Registration
	durableMx metric.Registration // nil without a state store
	stop      context.CancelFunc
	done      chan struct{}
	downDone  chan struct{} // watchDown's end; nil when it does not run
	sweepDone chan struct{} // sweepPaused's end; nil without a state store
	closeOnce sync.Once
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
	o := newOptions(srv, opts)
	cfg, err := initialConfig(o)
	if err != nil {
		return nil, err
	}
	c := &CodeCall{srv: srv, opts: o, log: o.logger, done: make(chan struct{}),
		paused: meta.NewPausedRuns(),
		iso:    newIsolation(o.logger, o.sandbox),
	}
	var approvalOpts []policy.ApprovalOption
	if o.stateStore != nil {
		var durOpts []meta.DurableOption
		if l := cfg.State.ResumeLease; l > 0 {
			durOpts = append(durOpts, meta.WithResumeLease(l))
		}
		durOpts = append(durOpts, o.durableOpts...)
		if c.durable, err = meta.NewDurable(o.stateStore, o.stateKey, durOpts...); err != nil {
			return nil, fmt.Errorf("codecall: WithStateStore: %w", err)
		}
		approvalOpts = append(approvalOpts, policy.WithTrustStore(c.durable.TrustStore()), policy.WithPromptStore(c.durable.PromptStore()))
	}
	c.approvals = policy.NewApprovals(cfg.Approval.Timeout, cfg.Approval.AllowSessionTrust, approvalOpts...)
	if o.oobEnabled {
		oobOpts := o.outOfBand
		if o.stateStore != nil {
			// Every replica with the store lists and answers every
			// replica's waiting calls.
			q, err := newOOBStore(c.durable.CountedStore(), o.stateKey)
			if err != nil {
				return nil, fmt.Errorf("codecall: WithStateStore: the out-of-band queue: %w", err)
			}
			oobOpts = append([]policy.OutOfBandOption{policy.WithSharedQueue(q)}, oobOpts...)
		}
		c.outOfBand = policy.NewOutOfBand(c.approvals, oobOpts...)
	}
	// Worked out here, after every option, so that WithoutReload and
	// WithConfigFile mean the same in either order.
	watchConfig := o.configFile != "" && !o.noReload
	watchPolicy := !o.noReload
	if c.rl, err = newReloader(cfg, o.configFile, watchConfig, watchPolicy, c.log, c.reconfigure); err != nil {
		return nil, fmt.Errorf("codecall: %w", err)
	}
	var id [6]byte
	_, _ = rand.Read(id[:])
	c.idBase = hex.EncodeToString(id[:])
	c.callPrefix = callPrefix(c.idBase)
	obs := newObserver("codecall-observer-" + c.idBase)
	c.gens = newGenerations(srv, c, obs, c.log, cfg, c.newGeneration)

	for _, name := range meta.NamesFor(&cfg).All() {
		if srv.GetTool(name) != nil {
			return nil, fmt.Errorf("codecall: the server already has a tool named %q, which is a CodeCall meta-tool name; rename it or set metaTools.prefix", name)
		}
	}
	server.WithToolFilter(c.filter)(srv)
	srv.Use(c.gate)
	if err := srv.RegisterSession(context.Background(), obs); err != nil {
		return nil, fmt.Errorf("codecall: cannot watch the server's tool list: %w", err)
	}
	if err := c.gens.update(true); err != nil {
		c.iso.close()
		srv.UnregisterSession(context.Background(), obs.id)
		return nil, err
	}

	if c.metrics, err = c.iso.registerMetrics(o.meter); err != nil {
		c.log.Warn("codecall: sandbox metrics are off", "error", err)
	}
	if c.durable != nil {
		if c.durableMx, err = registerDurableMetrics(o.meter, c.durable); err != nil {
			c.log.Warn("codecall: state store metrics are off", "error", err)
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	c.rl.start(ctx, cfg)
	go func() {
		defer close(c.done)
		c.gens.drainEvery(ctx, time.Second)
	}()
	if c.durable != nil {
		c.sweepDone = make(chan struct{})
		go func() {
			defer close(c.sweepDone)
			c.sweepPaused(ctx, sweepInterval)
		}()
	}
	if _, ok := o.servers.(meta.ServerHealth); ok {
		c.downDone = make(chan struct{})
		go func() {
			defer close(c.downDone)
			c.watchDown(ctx, time.Second)
		}()
	}
	return c, nil
}

// sweepInterval is how often a server with a state store looks for paused
// plans nobody answered (meta.Durable.SweepExpired): one Scan of their
// small records per replica.
const sweepInterval = time.Minute

// sweepPaused ends, every interval until ctx ends, the paused plans whose
// prompt expired unanswered, so each run's audit chain ends.
func (c *CodeCall) sweepPaused(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c.sweepOnce(ctx, time.Now())
	}
}

// sweepOnce is one sweep, at now.
func (c *CodeCall) sweepOnce(ctx context.Context, now time.Time) int {
	st, release := c.Acquire(ctx)
	defer release()
	n, err := c.durable.SweepExpired(ctx, st, now)
	if err != nil && ctx.Err() == nil {
		c.log.Warn("codecall: sweeping paused plans nobody answered failed; the next sweep tries again", "error", err)
	}
	return n
}

// newGeneration is the one place a generation's state is assembled: the
// gate, runner, catalog, redactor, audit logger and search index a config
// and a tool set call for, joined to the long-lived pieces CodeCall holds.
// The generations owner calls it under its lock.
func (c *CodeCall) newGeneration(cfg presets.Config, tools []mcp.Tool, names meta.Names, version uint64, old *generation) (*generation, error) {
	gate, err := policy.NewGate(cfg, policy.WithPolicies(c.rl.policies), policy.WithApprovals(c.approvals), policy.WithReserved(names.All()...),
		policy.WithDirectCallFilter(c.opts.directFilter))
	if err != nil {
		return nil, err
	}
	runner, err := c.iso.runner(&cfg)
	if err != nil {
		return nil, err
	}
	snap, problems, err := catalog.Build(tools, catalog.Options{
		Config: cfg, Include: c.opts.include, DefaultAppID: c.opts.defaultAppID,
		Reserved: names.All(), Version: version, TypeScript: declare,
	})
	if err != nil {
		return nil, err
	}
	for _, p := range problems {
		c.log.Warn("codecall: tool kept out of CodeCall", "tool", p.Tool, "problem", p.Message)
	}
	redactor, err := redact.New(cfg.Redaction)
	if err != nil {
		return nil, fmt.Errorf("codecall: %w", err)
	}
	auditLog, auditKey, err := c.auditLogger(old, cfg, redactor)
	if err != nil {
		return nil, err
	}
	idx, err := c.newIndex(snap.Enabled(), cfg, old)
	if err != nil {
		if old == nil || auditLog != old.state.Audit {
			_ = auditLog.Close()
		}
		return nil, fmt.Errorf("codecall: building the search index: %w", err)
	}
	c.approvals.SetRedactor(redactor)
	g := &generation{
		state: meta.State{Config: &cfg, Catalog: snap, Index: idx, Gate: gate, Runner: runner,
			Approvals: c.approvals, Paused: c.paused, Durable: c.durable, Logger: c.log, Tracer: c.opts.tracer.Tracer(meta.Instrumentation),
			Audit: auditLog, Redactor: redactor},
		auditKey: auditKey,
		index:    idx,
	}
	g.state.Python, g.state.PythonOff = c.iso.pythonRunner(&cfg)
	if c.outOfBand != nil {
		g.state.OutOfBand = c.outOfBand
	}
	// The servers start what codemode.run requests and, when they can
	// say which are down (meta.ServerHealth), tell search and describe.
	g.state.Servers = c.opts.servers
	if cfg.Offers(presets.SurfaceCodeMode) {
		g.state.CodeMode = meta.NewModules(&g.state)
	}
	g.metaTools = meta.Listed(&g.state)
	return g, nil
}

// OutOfBand returns the calls waiting for an operator's approval, for a
// console or an API to list and answer them; nil unless Wrap was given
// WithOutOfBandApprovals.
func (c *CodeCall) OutOfBand() *policy.OutOfBand { return c.outOfBand }

// searchIndex is a generation's search index: a *search.Index, or a
// *search.AsyncIndex still being built for a large catalog.
type searchIndex interface {
	meta.Searcher
	Close() error
}

// newIndex builds the search index of a generation's enabled tools. A
// catalog above the background threshold is indexed in the background,
// so that neither Wrap nor the request that saw the tools change (often
// initialize's tools/list) waits for it; until it is ready, searches are
// answered by old's index when that one answers, else they wait.
//
// Passing old's index on takes a reference to old, which the new index
// gives back when its build ends: the retired generation, with its index,
// stays open exactly as long as it answers for the new one.
func (c *CodeCall) newIndex(tools []*catalog.Tool, cfg presets.Config, old *generation) (searchIndex, error) {
	if c.opts.indexAbove < 0 || len(tools) <= c.opts.indexAbove {
		ix, err := c.buildIndex(cfg.Search, tools)
		if err != nil {
			return nil, err
		}
		return ix, nil
	}
	async := []search.AsyncOption{search.WithIndexOptions(c.searchOptions(context.Background(), cfg.Search)...)}
	if c.opts.indexBuild != nil {
		async = append(async, search.WithBuildFunc(c.opts.indexBuild))
	}
	if old != nil && answers(old.index) {
		old.refs.Add(1)
		async = append(async, search.WithPrevious(old.index, old.release))
	}
	// The build outlives this call; Close (through the generation's
	// retirement) abandons it.
	return search.Start(context.Background(), tools, async...), nil
}

// answers reports whether ix answers a search without waiting for a build.
func answers(ix searchIndex) bool {
	if a, ok := ix.(*search.AsyncIndex); ok {
		return a.Serving()
	}
	return ix != nil
}

// auditLogger returns the audit logger for cfg: the current one when
// neither the sink nor the redaction rules changed, else a new one (the
// old one is closed when the last request using it ends).
func (c *CodeCall) auditLogger(old *generation, cfg presets.Config, r *redact.Redactor) (*audit.Logger, string, error) {
	key := fmt.Sprintf("%q %v", cfg.Audit.Path, cfg.Redaction)
	if old != nil && old.auditKey == key {
		return old.state.Audit, key, nil
	}
	opts := []audit.Option{audit.WithRedactor(r), audit.WithDiagnostics(c.log)}
	for _, h := range c.opts.auditSinks {
		opts = append(opts, audit.WithAlso(h))
	}
	if c.opts.auditHandler != nil {
		return audit.New(c.opts.auditHandler, opts...), key, nil
	}
	l, err := audit.Open(cfg.Audit, opts...)
	if err != nil {
		return nil, "", fmt.Errorf("codecall: %w", err)
	}
	return l, key, nil
}

// reconfigure puts a reloaded config in force: the approval settings at
// once, the rest through a rebuild. The reloader calls it with the
// config's policy already loaded.
func (c *CodeCall) reconfigure(cfg presets.Config) error {
	if len(c.opts.surfaces) > 0 {
		cfg.Surfaces = c.opts.surfaces
	}
	c.approvals.Configure(cfg.Approval.Timeout, cfg.Approval.AllowSessionTrust)
	return c.gens.reconfigure(cfg)
}

// initialConfig is the config Wrap starts with: WithConfig's (as given:
// the program built it), the file's with the CODECALL_ environment on top,
// or the defaults with the environment on top, validated; giving both sources is an error, not a
// silent precedence.
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
	default:
		// No file: the defaults with the CODECALL_ variables on top, as
		// with a file, and with the same strict errors; a variable must
		// not be ignored because nobody wrote a config file.
		var err error
		if cfg, err = presets.Parse(nil, os.Environ()); err != nil {
			return cfg, fmt.Errorf("codecall: %w", err)
		}
	}
	if len(o.surfaces) > 0 {
		cfg.Surfaces = o.surfaces
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

// Close detaches CodeCall's background work, releases the index and stops
// the worker pool (running plans end first, by their deadlines). The
// server keeps its tools; CodeCall's filter then hides every tool but the
// meta-tools, whose calls fail.
func (c *CodeCall) Close() error {
	c.closeOnce.Do(func() {
		c.rl.close()
		c.stop()
		<-c.done
		if c.downDone != nil {
			<-c.downDone
		}
		if c.sweepDone != nil {
			<-c.sweepDone
		}
		c.srv.UnregisterSession(context.Background(), c.gens.obs.id)
		c.gens.close()
		c.iso.close()
		if c.metrics != nil {
			_ = c.metrics.Unregister()
		}
		if c.durableMx != nil {
			_ = c.durableMx.Unregister()
		}
	})
	return nil
}

// Refresh rebuilds the catalog now if the server's tools changed. Requests
// do this by themselves; Refresh is for callers that want the cost paid
// up front.
func (c *CodeCall) Refresh() error {
	return c.gens.update(true)
}

// Acquire implements meta.Env: it returns the current state, rebuilding the
// catalog first if the server's tool set changed.
func (c *CodeCall) Acquire(ctx context.Context) (*meta.State, func()) {
	g := c.acquire()
	return &g.state, g.release
}

// acquire returns the generation in force with a reference the caller
// releases; see generations.acquire.
func (c *CodeCall) acquire() *generation {
	return c.gens.acquire()
}

// declare renders a tool as the TypeScript declaration describe shows. Hints
// that only mcp.NewTool filled in are not the author's word (see
// catalog.Annotations.Defaulted), so the declaration does not repeat them.
func declare(t *catalog.Tool) string {
	return typescript.Declare(meta.TypeScriptFunction(t))
}
