package middleware

import (
	"log/slog"

	"github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/meta"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/sandbox"
	"github.com/codecall-go/codecall/search"
	"github.com/codecall-go/codecall/state"
)

// ToolInfo is what an include predicate sees of a tool.
type ToolInfo = catalog.Info

// ToolMeta is a tool's own CodeCall settings; see SetMeta.
type ToolMeta = catalog.Meta

// SetMeta stores CodeCall settings in a tool's _meta.codecall and returns
// the tool, so a tool opts in or out in one call:
//
//	srv.AddTool(middleware.SetMeta(mcp.NewTool("health"), middleware.ToolMeta{VisibleInListTools: catalog.Bool(true)}), h)
var SetMeta = catalog.SetMeta

// Option configures Wrap.
type Option func(*options)

// options holds one field per setting, each set by one Option. A zero
// value means "the default"; defaults and settings that depend on each
// other (whether files are watched) are worked out after every option has
// been applied, by newOptions and Wrap, so the order of the options never
// matters.
type options struct {
	configFile   string
	config       *presets.Config
	include      func(ToolInfo) bool
	directFilter func(ToolInfo) bool
	logger       *slog.Logger
	defaultAppID string
	noReload     bool
	tracer       trace.TracerProvider
	meter        metric.MeterProvider
	auditHandler slog.Handler
	auditSinks   []slog.Handler
	outOfBand    []policy.OutOfBandOption
	oobEnabled   bool
	stateStore   state.Store
	stateKey     []byte
	durableOpts  []meta.DurableOption // tests: the Durable's clock
	sandbox      []sandbox.Option
	servers      meta.Servers
	surfaces     []presets.Surface
	// indexAbove is the background index threshold (WithBackgroundIndexAbove):
	// DefaultBackgroundIndexAbove unless indexAboveSet.
	indexAbove    int
	indexAboveSet bool
	// indexBuild replaces search.New for background builds; tests set it
	// (export_test.go) to hold a build at a known point.
	indexBuild search.BuildFunc
}

// newOptions applies opts in order, then fills in the defaults of the
// settings they left unset.
func newOptions(srv *server.MCPServer, opts []Option) options {
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
	if !o.indexAboveSet {
		o.indexAbove = DefaultBackgroundIndexAbove
	}
	return o
}

// DefaultBackgroundIndexAbove is the number of enabled tools above which
// the search index is built in the background (WithBackgroundIndexAbove).
// Below it a build takes well under a second, and building it in line
// keeps the first search and the tests deterministic.
const DefaultBackgroundIndexAbove = 2000

// WithBackgroundIndexAbove builds the search index in the background when
// the catalog has more than n enabled tools (DefaultBackgroundIndexAbove
// when this option is not given), so that the server answers initialize
// and tools/list at once however large the catalog. Until the index is
// ready, codecall.search and a plan's searchTools answer from the
// previous catalog's index when there is one, else wait for the build (at
// most 20 s, reporting progress to a client that asked for it, then
// answering that the index is being built and the search can be retried).
// A negative n always builds in line.
func WithBackgroundIndexAbove(n int) Option {
	return func(o *options) { o.indexAbove, o.indexAboveSet = n, true }
}

// WithAuditHandler sends the audit events to h (one record per event, the
// event type as its message) instead of the file named by audit.path.
// Secrets are redacted before they reach h.
func WithAuditHandler(h slog.Handler) Option {
	return func(o *options) { o.auditHandler = h }
}

// WithAuditSink sends the audit events to h as well as to the audit log
// (audit.path, or WithAuditHandler's handler): the same redacted records,
// one per event. codecall serve's console uses it to keep its in-memory
// view of recent runs. Repeatable.
func WithAuditSink(h slog.Handler) Option {
	return func(o *options) {
		if h != nil {
			o.auditSinks = append(o.auditSinks, h)
		}
	}
}

// WithOutOfBandApprovals turns on approval out of band: a call that needs
// approval, whose client cannot show a prompt, waits (at most
// approval.timeout, a plan's clock stopped) for an operator to answer it
// through CodeCall.OutOfBand, instead of failing at once with
// APPROVAL_REQUIRED. opts tune the waiting list (policy.WithOnChange,
// policy.WithMaxPending, policy.WithPollInterval). With WithStateStore
// the waiting list is kept in the state store (policy.WithSharedQueue):
// every replica lists and answers every replica's waiting calls. Without
// this option nothing waits.
func WithOutOfBandApprovals(opts ...policy.OutOfBandOption) Option {
	return func(o *options) { o.oobEnabled, o.outOfBand = true, append(o.outOfBand, opts...) }
}

// WithStateStore keeps the codecall.execute plans of 2026-07-28 clients
// that pause for approval in store, sealed with a key derived from key
// (state.KeyBytes long), instead of this process's memory: the answer may
// reach any replica that has the same store and key, and a replica may
// restart between the prompt and the answer. The plan is resumed by running
// it again from its start, its completed calls answered from a journal
// (see meta.Durable). Session trust ("approve for this session") is kept
// there too, so every replica sees it, for that session only, and so are
// the calls waiting for an operator (WithOutOfBandApprovals). Wrap
// neither opens nor closes the store.
func WithStateStore(store state.Store, key []byte) Option {
	return func(o *options) { o.stateStore, o.stateKey = store, key }
}

// WithTracerProvider sends CodeCall's spans (codecall.execute,
// codecall.search and codecall.tool_call, the last with the policy
// decision as an attribute) to tp. The default is OpenTelemetry's global
// provider, which records nothing until the program installs one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tracer = tp }
}

// WithMeterProvider reports the sandbox worker pool (warm and live
// workers, spawns and their time, queue waits and timeouts, kills by
// cause) as OpenTelemetry metrics of mp. The default is OpenTelemetry's
// global provider, which records nothing until the program installs one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) { o.meter = mp }
}

// WithConfigFile loads the configuration from a YAML file and, unless
// WithoutReload is given too (before or after), reloads it when the file
// changes (a broken edit keeps the last good configuration). Environment
// overrides (CODECALL_...) apply on top.
func WithConfigFile(path string) Option {
	return func(o *options) { o.configFile = path }
}

// WithConfig uses cfg as the configuration. It is validated like a file.
// CODECALL_ environment variables do not apply to it: the program built
// it, and can apply them itself with presets.Parse. Without WithConfig and
// WithConfigFile, Wrap uses the defaults with the environment on top.
func WithConfig(cfg presets.Config) Option {
	return func(o *options) { c := cfg; o.config = &c }
}

// WithIncludeTools keeps only the tools for which include returns true;
// it applies before the mode, on every path.
func WithIncludeTools(include func(ToolInfo) bool) Option {
	return func(o *options) { o.include = include }
}

// WithDirectCallFilter narrows codecall.invoke (directCalls) to the tools
// filter returns true for, after directCalls.allowedTools; other tools
// answer ACCESS_DENIED on that path and stay callable from plans.
func WithDirectCallFilter(filter func(ToolInfo) bool) Option {
	return func(o *options) { o.directFilter = filter }
}

// WithLogger sets the logger for catalog rebuilds, config reloads and
// refusals. The default discards nothing: it is slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithDefaultAppID sets the app of tools whose names carry no `app.` or
// `app:` prefix. The default is the wrapped server's name.
func WithDefaultAppID(id string) Option {
	return func(o *options) { o.defaultAppID = id }
}

// WithoutReload turns off watching files: the config file given by
// WithConfigFile and the policy files under policy.paths, whichever order
// the options come in.
func WithoutReload() Option {
	return func(o *options) { o.noReload = true }
}

// WithServers gives codemode.run's requestedCapabilities the servers
// behind the catalog, so that a requested server is started (or found
// unavailable and reported) before the script runs; when s is also a
// meta.ServerHealth, search and describe say which servers are down. The
// gateway (gateway.Gateway) is one; a server wrapped on its own needs none.
func WithServers(s meta.Servers) Option {
	return func(o *options) { o.servers = s }
}

// WithSurfaces sets the agent-facing surfaces, in place of the config's
// surfaces (presets.SurfaceCodeCall, presets.SurfaceCodeMode), across
// reloads of the config file too; codecall serve --surface uses it.
func WithSurfaces(s ...presets.Surface) Option {
	return func(o *options) { o.surfaces = s }
}

// WithSandboxOptions adds options to the pool of sandboxed worker processes
// that runs plans when vm.isolation is process, e.g. sandbox.WithCommand
// to start a dedicated worker binary. The configuration's sandbox keys and
// vm limits apply first.
func WithSandboxOptions(opts ...sandbox.Option) Option {
	return func(o *options) { o.sandbox = append(o.sandbox, opts...) }
}
