package demo

import (
	"context"
	"reflect"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
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

// withMeta adds CodeCall's metadata to a tool: examples, tags and whether a
// person confirms each call. Every demo tool with arguments has at least
// one example, and the tests run each one against the seed data.
func withMeta(t mcp.Tool, m catalog.Meta) mcp.Tool {
	return catalog.SetMeta(t, m)
}

// example is one example call; its input is valid for the seed data of
// DefaultSeed at any clock.
func example(description string, input map[string]any) catalog.Example {
	return catalog.Example{Description: description, Input: input}
}

// approval marks a tool a person confirms before each call: it moves money,
// deletes records or changes who may do what, and cannot be undone by the
// tools themselves.
func approval(m catalog.Meta) catalog.Meta {
	m.RequiresApproval = catalog.Bool(true)
	return m
}

// withPaging returns the limit and offset arguments that every list tool
// shares, with the same bounds everywhere.
func withPaging() []mcp.ToolOption {
	return []mcp.ToolOption{
		mcp.WithInteger("limit", mcp.Description("Maximum number of results to return."),
			mcp.Min(1), mcp.Max(100), mcp.DefaultNumber(defaultLimit)),
		mcp.WithInteger("offset", mcp.Description("Number of results to skip; pass the previous page's next_offset."),
			mcp.Min(0), mcp.DefaultNumber(0)),
	}
}

// withCustomerID is the customer_id argument of every app but the CRM: the
// contact id of the customer a record belongs to, described the same way
// everywhere. what says what the argument selects.
func withCustomerID(what string, required bool) mcp.ToolOption {
	o := []mcp.PropertyOption{mcp.Description(what + " (customer_id is a contact id, e.g. con_001; crm.find_contacts returns ids).")}
	if required {
		o = append(o, mcp.Required())
	}
	return mcp.WithString("customer_id", o...)
}

// withDate is a UTC calendar date argument.
func withDate(name, description string) mcp.ToolOption {
	return mcp.WithString(name, mcp.Description(description+" (YYYY-MM-DD, UTC)."), mcp.Pattern(datePattern))
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
//
// A string field tagged enum:"<set>" gets the values of that set from
// enumSets as its enum, so a status reads as "open" | "paid" in a typed
// client instead of string.
func withOutput[T any]() mcp.ToolOption {
	generate := mcp.WithOutputSchema[T]()
	return func(t *mcp.Tool) {
		generate(t)
		for _, p := range t.OutputSchema.Properties {
			dropNull(p)
		}
		addEnums(reflect.TypeFor[T](), t.OutputSchema.Properties)
	}
}

// enumSets are the value sets enum tags name. Each is the one list the
// tools' arguments and results share.
var enumSets = map[string][]string{
	"contactStatuses":   contactStatuses,
	"userRoles":         userRoles,
	"userStatuses":      userStatuses,
	"invoiceStatuses":   invoiceStatuses,
	"paymentStatuses":   paymentStatuses,
	"refundedStatuses":  paymentStatuses[1:],
	"paymentMethods":    paymentMethods,
	"refundReasons":     refundReasons,
	"currencies":        {currency},
	"ticketStatuses":    ticketStatuses,
	"notClosed":         ticketStatuses[:2],
	"ticketPriorities":  ticketPriorities,
	"ticketChannels":    ticketChannels,
	"metrics":           metrics,
	"granularities":     granularities,
	"rankings":          rankings,
	"productCategories": productCategories,
	"stockReasons":      stockReasons,
	"messageKinds":      messageKinds,
	"messageStatuses":   {"sent"},
	"healthStatuses":    {"ok"},
}

// addEnums sets the enum of every property of props whose field in rt has
// an enum tag, following nested structs, slices and embedded fields.
func addEnums(rt reflect.Type, props map[string]any) {
	for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Slice {
		rt = rt.Elem()
	}
	if rt.Kind() != reflect.Struct {
		return
	}
	for i := range rt.NumField() {
		f := rt.Field(i)
		if f.Anonymous {
			addEnums(f.Type, props)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		p, ok := props[name].(map[string]any)
		if !ok {
			continue
		}
		if set := f.Tag.Get("enum"); set != "" {
			values, ok := enumSets[set]
			if !ok {
				panic("demo: field " + rt.Name() + "." + f.Name + " names unknown enum set " + set)
			}
			p["enum"] = values
		}
		if items, ok := p["items"].(map[string]any); ok {
			p = items
		}
		if nested, ok := p["properties"].(map[string]any); ok {
			addEnums(f.Type, nested)
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
