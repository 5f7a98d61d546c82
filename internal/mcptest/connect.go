package mcptest

import (
	"context"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// initTimeout bounds a client's initialization, so that a server that
// never answers fails the test instead of hanging it.
const initTimeout = time.Minute

// An Option changes how Connect or Initialize sets up a client.
type Option func(*config)

type config struct {
	version     string
	transport   string // "", "stdio" or "http"
	sent        *atomic.Int64
	elicitation client.ElicitationHandler
	sampling    client.SamplingHandler
	notes       *Notifications
}

// Legacy makes the client negotiate protocol 2025-11-25 with the
// initialize handshake: a server asks it for input with server-initiated
// requests (elicitation/create, sampling/createMessage). It is the
// default.
func Legacy() Option {
	return func(c *config) { c.version = mcp.ProtocolVersion20251125 }
}

// Modern makes the client speak protocol 2026-07-28: server/discover
// instead of the initialize handshake, its capabilities in each request's
// _meta, and a server's input requests answered by calling again with the
// answers (multi round-trip).
func Modern() Option {
	return func(c *config) { c.version = mcp.ProtocolVersion20260728 }
}

// Stdio connects over in-memory stdio pipes, through server.StdioServer,
// instead of mcp-go's in-process transport.
func Stdio() Option {
	return func(c *config) { c.transport = "stdio" }
}

// CountSent connects over in-memory stdio pipes, as Stdio does, and adds
// to n every byte the server sends the client.
func CountSent(n *atomic.Int64) Option {
	return func(c *config) { c.transport, c.sent = "stdio", n }
}

// HTTP connects over streamable HTTP to a test server, which, unlike the
// other transports, serves every client connected to the same MCP server
// from one HTTP server. The client listens for server-initiated messages
// continuously.
func HTTP() Option {
	return func(c *config) { c.transport = "http" }
}

// WithElicitation gives the client an elicitation handler, so it declares
// the elicitation capability and answers a server's prompts with h.
func WithElicitation(h client.ElicitationHandler) Option {
	return func(c *config) { c.elicitation = h }
}

// WithSampling gives the client a sampling handler, so it declares the
// sampling capability and answers a server's sampling requests with h.
func WithSampling(h client.SamplingHandler) Option {
	return func(c *config) { c.sampling = h }
}

// Record appends every notification the client receives to n.
func Record(n *Notifications) Option {
	return func(c *config) { c.notes = n }
}

// Connect connects an mcp-go client to srv and initializes it. By default
// the client is in process and speaks the legacy protocol (Legacy); the
// options choose another transport, the modern protocol and the client's
// handlers. The client is closed when the test ends.
func Connect(t testing.TB, srv *server.MCPServer, opts ...Option) *client.Client {
	t.Helper()
	cfg := configure(opts)
	var copts []client.ClientOption
	if cfg.elicitation != nil {
		copts = append(copts, client.WithElicitationHandler(cfg.elicitation))
	}
	if cfg.sampling != nil {
		copts = append(copts, client.WithSamplingHandler(cfg.sampling))
	}
	var c *client.Client
	switch cfg.transport {
	case "stdio":
		ctx, cancel := context.WithCancel(context.Background())
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		var out io.Writer = sw
		if cfg.sent != nil {
			out = countingWriter{w: sw, n: cfg.sent}
		}
		go func() { _ = server.NewStdioServer(srv).Listen(ctx, sr, out) }()
		c = client.NewClient(transport.NewIO(cr, cw, io.NopCloser(strings.NewReader(""))), copts...)
		t.Cleanup(func() { _ = c.Close(); cancel(); _ = sw.Close(); _ = sr.Close() })
	case "http":
		ts := httptest.NewServer(server.NewStreamableHTTPServer(srv))
		t.Cleanup(ts.Close)
		tr, err := transport.NewStreamableHTTP(ts.URL+"/mcp", transport.WithContinuousListening())
		if err != nil {
			t.Fatal(err)
		}
		c = client.NewClient(tr, copts...)
		t.Cleanup(func() { _ = c.Close() })
	default:
		var err error
		// NewInProcessClientWithOptions hands the handlers to the
		// transport too, which is how an in-process server reaches them.
		c, err = client.NewInProcessClientWithOptions(srv, copts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
	}
	start(t, c, cfg)
	return c
}

// Initialize starts and initializes c, a client the test built itself,
// for a server Connect cannot reach (another process, a URL); c is closed
// when the test ends. Of the options only the protocol (Legacy, Modern)
// and Record apply: the others choose what Connect builds.
func Initialize(t testing.TB, c *client.Client, opts ...Option) {
	t.Helper()
	cfg := configure(opts)
	if cfg.transport != "" || cfg.elicitation != nil || cfg.sampling != nil {
		t.Fatal("mcptest.Initialize: transport and handler options are for Connect")
	}
	t.Cleanup(func() { _ = c.Close() })
	start(t, c, cfg)
}

func configure(opts []Option) *config {
	cfg := &config{version: mcp.ProtocolVersion20251125}
	for _, o := range opts {
		o(cfg)
	}
	return cfg
}

// start starts c and initializes it at cfg's protocol version.
func start(t testing.TB, c *client.Client, cfg *config) {
	t.Helper()
	if cfg.notes != nil {
		c.OnNotification(cfg.notes.add)
	}
	// The transport may keep Start's context for the client's lifetime.
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("start the client: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), initTimeout)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = cfg.version
	req.Params.ClientInfo = mcp.Implementation{Name: "mcptest", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize the client: %v", err)
	}
}

// countingWriter adds the bytes written through it to n.
type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return c.w.Write(p)
}

// Notifications records the notifications a client receives (see
// Record). The zero value is empty and ready; it is safe for concurrent
// use.
type Notifications struct {
	mu   sync.Mutex
	list []mcp.JSONRPCNotification
}

func (n *Notifications) add(x mcp.JSONRPCNotification) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.list = append(n.list, x)
}

// All returns the notifications received so far, in order.
func (n *Notifications) All() []mcp.JSONRPCNotification {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.list)
}

// Of returns the notifications of method received so far, in order.
func (n *Notifications) Of(method string) []mcp.JSONRPCNotification {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []mcp.JSONRPCNotification
	for _, x := range n.list {
		if x.Method == method {
			out = append(out, x)
		}
	}
	return out
}
