// Package demo is a realistic multi-app MCP server: a small SaaS back office
// with a CRM, workspace users, billing, support, analytics, inventory and
// notifications, 39 tools in all. The CodeCall CLI serves it when no upstream
// is configured, and CodeCall's tests and benchmarks use it as a server with
// many tools whose results are worth joining and filtering in a plan.
//
// Every tool works on an in-memory store that belongs to one server, so two
// servers never see each other's writes, and the store is seeded with the same
// data for the same seed and clock. Creating really creates, listing filters
// and paginates, refunds change the customer's balance; unknown ids and broken
// business rules come back as tool errors (isError) with a message that names
// the id and the tool to look it up with.
//
// The annotations describe the API the demo models rather than the in-memory
// store: notifications.send_email reaches people outside the system in a real
// deployment, so it is marked open-world even though the demo only records the
// message in an outbox. All four hints are set on every tool, because
// mcp.NewTool otherwise reports every tool as destructive and open-world.
package demo

import (
	"context"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Name and Version identify the demo server in the MCP initialize handshake.
const (
	Name    = "codecall-demo"
	Version = "1.0.0"
)

// DefaultSeed is the seed used when WithSeed is not given, so that two runs
// of the CLI show the same customers, invoices and tickets.
const DefaultSeed int64 = 1

// Option configures the demo store. Options exist for tests and benchmarks:
// production-like use needs none of them.
type Option func(*config)

type config struct {
	clock    func() time.Time
	seed     int64
	seedData bool
	latency  time.Duration
}

func newConfig(opts []Option) config {
	c := config{clock: time.Now, seed: DefaultSeed, seedData: true}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithClock replaces the wall clock. The seed data is laid out relative to the
// clock's first reading (invoices due in the last weeks, events in the last
// 30 days), so a fixed clock together with a fixed seed makes every record and
// every timestamp deterministic.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.clock = now
		}
	}
}

// WithSeed chooses the pseudo-random seed behind the generated parts of the
// seed data (amounts, dates, statuses, events). Names, companies and products
// do not depend on it, so documentation and examples stay valid for any seed.
func WithSeed(seed int64) Option {
	return func(c *config) { c.seed = seed }
}

// WithoutSeedData starts with an empty store (no users, contacts, products or
// history), for tests that want to build their own world through the tools.
func WithoutSeedData() Option {
	return func(c *config) { c.seedData = false }
}

// WithLatency makes every tool call wait d before doing its work, as a call
// to a remote API would. Benchmarks use it to measure how well a plan overlaps
// independent calls; the wait ends early when the call's context is done.
func WithLatency(d time.Duration) Option {
	return func(c *config) { c.latency = d }
}

// New returns an MCP server named "codecall-demo" that has the demo tools and
// validates every call's arguments against the tool's input schema, so bad
// input is rejected before a handler sees it.
func New(opts ...Option) *server.MCPServer {
	srv := server.NewMCPServer(Name, Version,
		server.WithToolCapabilities(true),
		server.WithInputSchemaValidation(),
		server.WithInstructions("A demo back office: CRM contacts, workspace users, billing, "+
			"support tickets, analytics, inventory and notifications. Tool names are <app>.<action>."),
	)
	Register(srv, opts...)
	return srv
}

// Register adds the demo tools, backed by a new store, to an existing server.
// It is how a server that already has tools of its own gets the demo apps
// next to them; calling it twice replaces the tools and starts a new store.
func Register(srv *server.MCPServer, opts ...Option) {
	srv.AddTools(Tools(opts...)...)
}

// Tools returns the demo tools bound to a new store, for callers that build
// their own server or a catalog without one.
func Tools(opts ...Option) []server.ServerTool {
	s := newStore(newConfig(opts))
	var tools []server.ServerTool
	for _, group := range [][]server.ServerTool{
		s.crmTools(),
		s.userTools(),
		s.billingTools(),
		s.supportTools(),
		s.analyticsTools(),
		s.inventoryTools(),
		s.notificationTools(),
		s.healthTools(),
	} {
		tools = append(tools, group...)
	}
	s.toolCount = len(tools)
	return tools
}

// hints are a tool's four behaviour annotations. The struct makes each tool
// state all four: a zero field is a deliberate false, not a missing hint.
type hints struct {
	readOnly    bool
	destructive bool
	idempotent  bool
	openWorld   bool
}

// The common combinations, named for what they promise a caller.
var (
	// readOnly tools only look at the store.
	readOnly = hints{readOnly: true, idempotent: true}
	// additive tools append a new record and keep everything else.
	additive = hints{}
	// settle tools move a record to a state that repeating the call keeps,
	// without losing data (closing a ticket, assigning it).
	settle = hints{idempotent: true}
	// overwrite tools replace or remove data, or revoke access; repeating
	// the call changes nothing more.
	overwrite = hints{destructive: true, idempotent: true}
	// outbound tools reach people outside the system and repeat the effect
	// each time they are called.
	outbound = hints{openWorld: true}
)

// newTool builds a tool with a title, a description, all four hints and an
// input schema that rejects unknown properties, so a misspelt argument is an
// error instead of being silently ignored.
func newTool(name, title, description string, h hints, opts ...mcp.ToolOption) mcp.Tool {
	base := []mcp.ToolOption{
		mcp.WithToolTitle(title),
		mcp.WithTitleAnnotation(title),
		mcp.WithDescription(description),
		mcp.WithReadOnlyHintAnnotation(h.readOnly),
		mcp.WithDestructiveHintAnnotation(h.destructive),
		mcp.WithIdempotentHintAnnotation(h.idempotent),
		mcp.WithOpenWorldHintAnnotation(h.openWorld),
		mcp.WithSchemaAdditionalProperties(false),
	}
	return mcp.NewTool(name, append(base, opts...)...)
}

// handle adapts a handler that takes decoded arguments to mcp-go's handler
// type. It applies the configured latency and decodes the arguments, which
// the server has already validated against the input schema.
func handle[A any](s *store, fn func(args A) *mcp.CallToolResult) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := s.wait(ctx); err != nil {
			return nil, err
		}
		var args A
		if err := req.BindArguments(&args); err != nil {
			return mcp.NewToolResultError("invalid arguments: " + err.Error()), nil
		}
		return fn(args), nil
	}
}

// withPaging returns the limit and offset arguments that every list tool
// shares, with the same bounds everywhere.
func withPaging() []mcp.ToolOption {
	return []mcp.ToolOption{
		mcp.WithInteger("limit", mcp.Description("Maximum number of results to return."),
			mcp.Min(1), mcp.Max(100), mcp.DefaultNumber(20)),
		mcp.WithInteger("offset", mcp.Description("Number of results to skip; pass the previous page's next_offset."),
			mcp.Min(0), mcp.DefaultNumber(0)),
	}
}

// join concatenates option lists, so list tools can add the paging options.
func join(groups ...[]mcp.ToolOption) []mcp.ToolOption {
	var out []mcp.ToolOption
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// withOutput declares T as the tool's output schema. The generator marks
// every slice and pointer as nullable, but the demo never returns null: lists
// are empty rather than null and optional fields are left out. Dropping
// "null" from the types keeps the schema honest and spares typed clients
// (CodeCall's TypeScript declarations among them) pointless null checks.
func withOutput[T any]() mcp.ToolOption {
	generate := mcp.WithOutputSchema[T]()
	return func(t *mcp.Tool) {
		generate(t)
		for _, p := range t.OutputSchema.Properties {
			dropNull(p)
		}
	}
}

func dropNull(node any) {
	switch n := node.(type) {
	case map[string]any:
		if types, ok := n["type"].([]any); ok {
			var kept []any
			for _, ty := range types {
				if ty != "null" {
					kept = append(kept, ty)
				}
			}
			if len(kept) == 1 {
				n["type"] = kept[0]
			} else {
				n["type"] = kept
			}
		}
		for _, v := range n {
			dropNull(v)
		}
	case []any:
		for _, v := range n {
			dropNull(v)
		}
	}
}
