package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/sandbox"
	"github.com/codecall-go/codecall/tokenstore"
)

// Defaults of the options.
const (
	DefaultSeparator    = "."
	DefaultStartTimeout = time.Minute
	DefaultCallTimeout  = time.Minute
	defaultBackoffMin   = time.Second
	defaultBackoffMax   = time.Minute
	// stableAfter is how long an upstream must stay up for its restart
	// backoff to start again from the minimum.
	stableAfter = 30 * time.Second
)

// Option configures New.
type Option func(*options)

type options struct {
	log          *slog.Logger
	sep          string
	lazy         bool
	startTimeout time.Duration
	lookup       func(string) (string, bool)
	backoffMin   time.Duration
	backoffMax   time.Duration
	name, ver    string
	depth        int // gateways above this one; set by New from EnvGatewayDepth
	progress     func(StartEvent)
	stateDir     string // pinned definitions live here; "" pins nothing
	noPins       bool   // upstreams.pinDefinitions: false
	newTools     string
	quarantined  func(Quarantine)
	cgroup       sandbox.CgroupMode // of sandboxed stdio upstreams
	tokens       tokenstore.Store   // OAuth tokens of HTTP and SSE upstreams
	tokenDir     string             // upstreams.tokenDir, when tokens is nil
}

// Quarantine is a tool the gateway holds back because its definition
// changed since it was pinned, or because it is new and new tools are
// quarantined.
type Quarantine struct {
	// Upstream is the server id; Tool the upstream's own tool name; Name
	// the name the gateway would serve it under.
	Upstream, Tool, Name string
	// New is true for a tool new to a known upstream.
	New bool
	// Reason says why and what to run, for logs and the audit trail.
	Reason string
}

// WithStateDir pins upstream tool definitions in dir (see
// presets.UpstreamsConfig.PinDefinitions). Without it, or with
// upstreams.pinDefinitions false, nothing is pinned.
func WithStateDir(dir string) Option { return func(o *options) { o.stateDir = dir } }

// WithCgroup says whether each sandboxed stdio upstream gets a cgroup v2
// of its own (memory.max from maxMemory, pids.max from maxProcesses, one
// CPU), as sandbox.cgroup says for plan workers: auto (the default) where
// one is delegated to the server, off, or required.
func WithCgroup(mode sandbox.CgroupMode) Option { return func(o *options) { o.cgroup = mode } }

// WithQuarantine calls f once for each tool the gateway starts holding
// back (not again while it stays held). It is how the command line writes
// the audit event; the gateway logs the hold itself.
func WithQuarantine(f func(Quarantine)) Option { return func(o *options) { o.quarantined = f } }

// StartEvent is one step of an attempt to connect to an upstream: its
// beginning, or its end with the time it took and its tools or its reason.
type StartEvent struct {
	// Upstream is the server id; Transport is stdio, http or sse.
	Upstream, Transport string
	// Done is false when the attempt begins, true when it ends.
	Done bool
	// Elapsed is the attempt's duration (Done only).
	Elapsed time.Duration
	// Tools is how many tools the upstream offers (Done, no Err).
	Tools int
	// Err says why the attempt failed (Done only), secrets redacted.
	Err error
}

// WithProgress calls f when each attempt to connect to an upstream begins
// and when it ends: at start-up, on a retry, on a reload. It is how a
// command line says which upstream it is waiting for (npx may take
// minutes to download one). f is called from the connecting goroutine,
// for several upstreams at once; it must be safe for concurrent use and
// must not block.
func WithProgress(f func(StartEvent)) Option { return func(o *options) { o.progress = f } }

// WithLogger sets the logger for upstream starts, failures and restarts
// (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithSeparator sets what goes between a server id and a tool name
// (default "."); clients that reject dots in tool names need "__".
func WithSeparator(sep string) Option { return func(o *options) { o.sep = sep } }

// WithLazyStart connects to the upstreams when the first client asks for
// tools, prompts, resources or completions instead of in Start. The
// gateway then declares the resources, prompts and completions
// capabilities up front, since it cannot know yet whether an upstream
// offers them.
func WithLazyStart(lazy bool) Option { return func(o *options) { o.lazy = lazy } }

// WithStartTimeout bounds connecting to one upstream: starting it, the
// handshake and the first tools/list (default one minute).
func WithStartTimeout(d time.Duration) Option { return func(o *options) { o.startTimeout = d } }

// WithLookupEnv sets where ${VAR} placeholders, the environment allowlist
// and the nesting depth (presets.EnvGatewayDepth) are read from (default
// os.LookupEnv).
func WithLookupEnv(lookup func(string) (string, bool)) Option {
	return func(o *options) { o.lookup = lookup }
}

// WithBackoff sets the first and the longest wait between restarts of an
// upstream that failed (default 1s doubling up to 1m).
func WithBackoff(first, longest time.Duration) Option {
	return func(o *options) { o.backoffMin, o.backoffMax = first, longest }
}

// WithImplementation sets the name and version the gateway's server
// announces to its clients (default "codecall-gateway", "dev").
func WithImplementation(name, version string) Option {
	return func(o *options) { o.name, o.ver = name, version }
}

// WithConfig applies the gateway-wide settings of an upstreams: section:
// separator, start mode and start timeout.
func WithConfig(c presets.UpstreamsConfig) Option {
	return func(o *options) {
		if c.Separator != "" {
			o.sep = c.Separator
		}
		o.lazy = c.Start == presets.StartLazy
		o.noPins = !c.Pinning()
		o.newTools = c.NewTools
		if c.StateDir != "" {
			o.stateDir = c.StateDir
		}
		if c.StartTimeout > 0 {
			o.startTimeout = c.StartTimeout
		}
		o.tokenDir = c.TokenDir
	}
}

// Gateway serves the tools of upstream MCP servers on one mcp-go server.
// Close it when done: it stops every upstream process.
type Gateway struct {
	srv  *server.MCPServer
	opts options
	log  *slog.Logger

	ctx    context.Context // ends at Close; upstream clients live as long
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu             sync.Mutex
	ups            map[string]*upstream
	pins           *pins            // nil: definitions are not pinned
	tokens         tokenstore.Store // nil when tokenErr says why
	tokenErr       error
	owners         map[string]*upstream // registered tool name -> its upstream
	promptOwners   map[string]*upstream // registered prompt name -> its upstream
	resourceOwners map[string]*upstream // registered resource URI -> its upstream
	templates      map[string]ownedTemplate
	closed         bool

	// nameMu makes checking an upstream's names for clashes and
	// registering them one step, so that two upstreams starting at once
	// cannot both take a name.
	nameMu sync.Mutex

	subsMu sync.Mutex
	subs   map[string]map[string]bool // resource URI -> subscribed session ids

	startOnce sync.Once
	started   chan struct{}
	startedOK atomic.Bool
	seq       atomic.Uint64
}

// New creates a gateway for servers (keyed by server id). Nothing is
// started until Start, or the first client request with WithLazyStart.
// Entries are validated like the YAML configuration; an invalid entry is an
// error, a disabled one is skipped. A gateway that would run nested under
// MaxDepth others is refused with an error wrapping ErrTooDeep.
func New(servers map[string]presets.Upstream, opts ...Option) (*Gateway, error) {
	o := options{sep: DefaultSeparator, startTimeout: DefaultStartTimeout, lookup: os.LookupEnv,
		backoffMin: defaultBackoffMin, backoffMax: defaultBackoffMax, name: "codecall-gateway", ver: "dev"}
	for _, opt := range opts {
		opt(&o)
	}
	if o.log == nil {
		o.log = slog.Default()
	}
	if o.sep == "" {
		o.sep = DefaultSeparator
	}
	if o.startTimeout <= 0 {
		o.startTimeout = DefaultStartTimeout
	}
	if o.backoffMin <= 0 || o.backoffMax < o.backoffMin {
		return nil, fmt.Errorf("gateway: WithBackoff(%v, %v): the first wait must be positive and not longer than the longest", o.backoffMin, o.backoffMax)
	}
	if err := (presets.UpstreamsConfig{Separator: o.sep, Servers: servers}).Validate(); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	depth, err := nestingDepth(o.lookup)
	if err != nil {
		return nil, err
	}
	o.depth = depth
	if o.newTools != "" && o.newTools != presets.NewToolsAccept && o.newTools != presets.NewToolsQuarantine {
		return nil, fmt.Errorf("gateway: upstreams.newTools %q: allowed: %s, %s", o.newTools, presets.NewToolsAccept, presets.NewToolsQuarantine)
	}
	g := &Gateway{opts: o, log: o.log, ups: map[string]*upstream{}, owners: map[string]*upstream{},
		promptOwners: map[string]*upstream{}, resourceOwners: map[string]*upstream{}, templates: map[string]ownedTemplate{},
		subs: map[string]map[string]bool{}, started: make(chan struct{})}
	if o.stateDir != "" && !o.noPins {
		g.pins = newPins(o.stateDir, o.newTools)
	}
	g.tokens = o.tokens
	if g.tokens == nil {
		g.tokens, g.tokenErr = defaultTokenStore(o.tokenDir)
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	// A request for tools waits until every upstream has been tried, so
	// the first tools/list is complete; the handshake never waits.
	hooks := &server.Hooks{}
	// Requests for what upstreams offer wait until every upstream has been
	// tried (eager) or started (lazy); the handshake is answered at once.
	hooks.AddBeforeAny(func(ctx context.Context, _ any, method mcp.MCPMethod, _ any) {
		switch method {
		case mcp.MethodToolsList, mcp.MethodToolsCall, mcp.MethodPromptsList, mcp.MethodPromptsGet,
			mcp.MethodResourcesList, mcp.MethodResourcesTemplatesList, mcp.MethodResourcesRead, mcp.MethodCompletionComplete:
			g.waitStarted(ctx)
		}
	})
	hooks.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		g.subscribe(ctx, sessionOf(ctx), req.Params.URI, true)
	})
	hooks.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		g.subscribe(ctx, sessionOf(ctx), req.Params.URI, false)
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) { g.dropSession(s.SessionID()) })
	comp := completer{g: g}
	g.srv = server.NewMCPServer(o.name, o.ver, server.WithToolCapabilities(true), server.WithLogging(), server.WithHooks(hooks),
		server.WithPromptCompletionProvider(comp), server.WithResourceCompletionProvider(comp))
	if o.lazy {
		// Nothing is known of the upstreams before the first client
		// arrives: offer everything, and answer with empty lists when no
		// upstream has a feature.
		g.declareCapabilities(true)
	}
	for _, id := range sortedIDs(servers) {
		if !servers[id].IsEnabled() {
			g.log.Info("gateway: upstream disabled", "upstream", id)
			continue
		}
		g.ups[id] = g.newUpstream(id, servers[id])
	}
	return g, nil
}

// NewFromConfig creates a gateway from an upstreams: section: the servers
// of its file (relative to baseDir) and its own servers.
func NewFromConfig(c presets.UpstreamsConfig, baseDir string, opts ...Option) (*Gateway, error) {
	servers, err := ServersOf(c, baseDir)
	if err != nil {
		return nil, err
	}
	return New(servers, append([]Option{WithConfig(c)}, opts...)...)
}

// ServersOf merges the servers of an upstreams: section with those of its
// file (a relative path is taken from baseDir). A server id in both is an
// error.
func ServersOf(c presets.UpstreamsConfig, baseDir string) (map[string]presets.Upstream, error) {
	servers := maps.Clone(c.Servers)
	if servers == nil {
		servers = map[string]presets.Upstream{}
	}
	openapiPaths(servers, baseDir)
	if c.File == "" {
		return servers, nil
	}
	path := c.File
	if !filepath.IsAbs(path) && baseDir != "" {
		path = filepath.Join(baseDir, path)
	}
	fromFile, err := LoadServers(path)
	if err != nil {
		return nil, err
	}
	for id, u := range fromFile {
		if _, dup := servers[id]; dup {
			return nil, fmt.Errorf("upstream %q is defined both in %s and under upstreams.servers; keep one", id, path)
		}
		servers[id] = u
	}
	return servers, nil
}

// Server is the gateway's mcp-go server: wrap it with middleware.Wrap and
// serve it over stdio or HTTP.
func (g *Gateway) Server() *server.MCPServer { return g.srv }

// Start connects to every upstream at once and returns when each has
// either answered with its tools or failed (bounded by the start timeout).
// Failed upstreams are logged with their reason and retried in the
// background; the error lists them but the gateway serves the others.
// It may run in the background while the server already serves: requests
// for tools wait for it, the handshake does not. With WithLazyStart, Start
// returns at once and the first client request for tools does the work.
func (g *Gateway) Start(ctx context.Context) error {
	if g.opts.lazy {
		return nil
	}
	return g.startAll(ctx)
}

func (g *Gateway) startAll(ctx context.Context) error {
	var err error
	g.startOnce.Do(func() {
		defer close(g.started)
		g.mu.Lock()
		ups := sortedUpstreams(g.ups)
		g.mu.Unlock()
		var wg sync.WaitGroup
		errs := make([]error, len(ups))
		for i, u := range ups {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = u.connect(ctx)
			}()
		}
		wg.Wait()
		if !g.opts.lazy {
			// Not yet serving: the capabilities can still change.
			g.declareCapabilities(false)
		}
		g.startedOK.Store(true)
		err = errors.Join(errs...)
	})
	return err
}

// waitStarted holds a request until every upstream has been tried (or the
// request's context ends), starting them if nothing has yet: the lazy
// mode's first request, or an eager gateway whose Start runs in the
// background or was never called.
func (g *Gateway) waitStarted(ctx context.Context) {
	if g.startedOK.Load() {
		return
	}
	g.spawn(func() { _ = g.startAll(g.ctx) })
	select {
	case <-g.started:
	case <-ctx.Done():
	}
}

// Status is the state of one upstream.
type Status struct {
	// ID is the server id, which is also the app id of its tools.
	ID string `json:"id"`
	// Transport is stdio, http or sse.
	Transport string `json:"transport"`
	// State is one of idle, starting, ready, failed, closed.
	State string `json:"state"`
	// Tools is how many of its tools are registered.
	Tools int `json:"tools"`
	// Error is why it last failed, with secrets removed; "" when ready.
	Error string `json:"error,omitempty"`
	// Restarts counts failed starts and deaths since it was last stable.
	Restarts int `json:"restarts"`
	// Sandbox is how it runs: default, default+network, none (stdio) or
	// remote (HTTP, SSE).
	Sandbox string `json:"sandbox"`
	// Quarantined are its tools held back (their own names, sorted): a
	// definition changed since it was pinned, or a new tool under
	// upstreams.newTools quarantine.
	Quarantined []string `json:"quarantined,omitempty"`
	// DownSince is when a failed upstream went down (zero unless
	// failed); RetryAt is when it is tried again.
	DownSince time.Time `json:"downSince,omitzero"`
	RetryAt   time.Time `json:"retryAt,omitzero"`
}

// Status reports every enabled upstream, sorted by id.
func (g *Gateway) Status() []Status {
	g.mu.Lock()
	ups := sortedUpstreams(g.ups)
	g.mu.Unlock()
	out := make([]Status, 0, len(ups))
	for _, u := range ups {
		out = append(out, u.status())
	}
	return out
}

// Reload replaces the upstream definitions: removed servers are stopped and
// their tools removed, new ones started, changed ones (including a changed
// value of a ${VAR} they use, or an OpenAPI app whose document changed)
// restarted; unchanged ones keep running.
func (g *Gateway) Reload(ctx context.Context, servers map[string]presets.Upstream) error {
	if err := (presets.UpstreamsConfig{Separator: g.opts.sep, Servers: servers}).Validate(); err != nil {
		return fmt.Errorf("gateway: reload: %w", err)
	}
	specs := g.changedSpecs(ctx) // reads documents: outside g.mu
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return errors.New("gateway: reload after Close")
	}
	var stop []*upstream
	var start []*upstream
	for id, u := range g.ups {
		next, ok := servers[id]
		if !ok || !next.IsEnabled() || !reflect.DeepEqual(next, u.cfg) || u.envChanged() || specs[id] {
			stop = append(stop, u)
			delete(g.ups, id)
		}
	}
	for _, id := range sortedIDs(servers) {
		if _, running := g.ups[id]; running || !servers[id].IsEnabled() {
			continue
		}
		u := g.newUpstream(id, servers[id])
		g.ups[id] = u
		start = append(start, u)
	}
	lazyPending := g.opts.lazy && !g.startedOK.Load()
	g.mu.Unlock()
	for _, u := range stop {
		u.close()
		g.log.Info("gateway: upstream stopped for reload", "upstream", u.id)
	}
	// The upstreams that keep running are checked against the pinned
	// definitions again: an operator may have accepted some.
	g.mu.Lock()
	kept := make([]*upstream, 0, len(g.ups))
	for _, u := range g.ups {
		if !slices.Contains(start, u) {
			kept = append(kept, u)
		}
	}
	g.mu.Unlock()
	for _, u := range kept {
		u.recheck()
	}
	if lazyPending {
		return nil
	}
	var errs []error
	for _, u := range start {
		errs = append(errs, u.connect(ctx))
	}
	return errors.Join(errs...)
}

// Close stops every upstream and removes their tools.
func (g *Gateway) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	ups := sortedUpstreams(g.ups)
	g.mu.Unlock()
	g.cancel()
	for _, u := range ups {
		u.close()
	}
	g.wg.Wait()
	return nil
}

// spawn runs f in a goroutine that Close waits for, unless the gateway is
// closed; it reports whether f was started.
func (g *Gateway) spawn(f func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
	return true
}

// register installs an upstream's tools under their gateway names, removing
// the ones it no longer has. Names taken by another upstream are skipped
// with a warning.
func (g *Gateway) register(u *upstream, add []server.ServerTool, remove []string) []server.ServerTool {
	names := make([]string, 0, len(add))
	g.mu.Lock()
	for _, st := range add {
		if g.foreignTool(st.Tool.Name) {
			g.log.Warn("gateway: tool name taken by a tool of the gateway's own server; skipped", "tool", st.Tool.Name, "upstream", u.id)
			continue
		}
		names = append(names, st.Tool.Name)
	}
	ok, gone := g.claim(g.owners, "tool", u, names, remove)
	closed := g.closed && len(ok) > 0
	g.mu.Unlock()
	if closed {
		return nil
	}
	kept := granted(add, ok, func(st server.ServerTool) string { return st.Tool.Name })
	if len(gone) > 0 {
		g.srv.DeleteTools(gone...)
	}
	if len(kept) > 0 {
		g.srv.AddTools(kept...)
	}
	return kept
}

// foreignTool reports whether the gateway's server has a tool of that name
// that no upstream registered, such as a CodeCall meta-tool: an upstream
// must not replace it. g.mu held.
func (g *Gateway) foreignTool(name string) bool {
	_, ours := g.owners[name]
	return !ours && g.srv.GetTool(name) != nil
}

func sortedIDs(m map[string]presets.Upstream) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// sortedUpstreams returns the upstreams sorted by id.
func sortedUpstreams(m map[string]*upstream) []*upstream {
	out := make([]*upstream, 0, len(m))
	for _, u := range m {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// ErrUnknownServer is Ensure's error for an id no enabled upstream has.
var ErrUnknownServer = errors.New("no upstream has this id")

// Ensure makes the upstream with this id available: it starts the
// upstreams if nothing has started them yet (the lazy mode's first
// request), then starts this one if it is idle. It returns why the
// upstream is not available: ErrUnknownServer, or its last failure (with
// secrets removed), in which case it is restarted in the background as
// usual. It implements middleware's Servers, for codemode.run's
// requestedCapabilities.
func (g *Gateway) Ensure(ctx context.Context, id string) error {
	g.waitStarted(ctx)
	g.mu.Lock()
	u, ok := g.ups[id]
	g.mu.Unlock()
	if !ok {
		return fmt.Errorf("%q: %w", id, ErrUnknownServer)
	}
	if _, _, err := u.client(ctx); err != nil {
		return err
	}
	return nil
}
