package openapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// Defaults of the options.
const (
	DefaultTimeout          = time.Minute
	DefaultMaxResponseBytes = 4 << 20
	maxRedirects            = 5
)

// Credentials are what the broker adds to every request: headers (an
// Authorization bearer token, an API key header) and query parameters (an
// API key in the query). They hold secrets: never log them.
type Credentials struct {
	Headers map[string]string
	Query   map[string]string
	// ClientCredentials, when set, fetches an access token per the OAuth
	// client credentials grant and sends it as "Authorization: Bearer".
	ClientCredentials *ClientCredentials
}

// Option configures New.
type Option func(*options)

type options struct {
	app       string
	baseURL   string
	selectOp  func(OperationRef) bool
	overrides func(OperationRef) (Override, bool)
	creds     Credentials
	redact    func(string) string
	private   bool
	maxBytes  int64
	timeout   time.Duration
	transport http.RoundTripper
	userAgent string
}

func (o *options) overrideFor(ref OperationRef) (Override, bool) {
	if o.overrides == nil {
		return Override{}, false
	}
	return o.overrides(ref)
}

// WithApp sets the app id written in each tool's _meta.codecall.
func WithApp(id string) Option { return func(o *options) { o.app = id } }

// WithBaseURL sets where calls go, instead of the document's first server.
func WithBaseURL(u string) Option { return func(o *options) { o.baseURL = u } }

// WithSelect keeps only the operations f accepts (include/exclude).
func WithSelect(f func(OperationRef) bool) Option { return func(o *options) { o.selectOp = f } }

// WithOverrides gives per-operation settings (requiresApproval, timeout).
func WithOverrides(f func(OperationRef) (Override, bool)) Option {
	return func(o *options) { o.overrides = f }
}

// WithCredentials sets the headers and query parameters added to every
// request. Their values should also be given to the redactor.
func WithCredentials(c Credentials) Option { return func(o *options) { o.creds = c } }

// WithRedactor sets the function every text the app returns (results,
// errors) goes through, so that a credential an API echoes back never
// reaches a client, a log or the audit trail. Package gateway passes its
// secrets replacer.
func WithRedactor(f func(string) string) Option { return func(o *options) { o.redact = f } }

// WithPrivateNetwork allows connections to loopback, private and
// link-local addresses for every host, not only for a base URL that
// points there itself.
func WithPrivateNetwork(allow bool) Option { return func(o *options) { o.private = allow } }

// WithMaxResponseBytes caps a response body (default 4 MiB); a larger
// response fails with LIMIT.
func WithMaxResponseBytes(n int64) Option { return func(o *options) { o.maxBytes = n } }

// WithTimeout bounds one call (default one minute); a client's shorter
// deadline wins.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithTransport replaces the HTTP transport (tests, benchmarks, proxies).
// The SSRF guard lives in the default transport's dialer: a replacement
// must apply its own.
func WithTransport(rt http.RoundTripper) Option { return func(o *options) { o.transport = rt } }

// WithUserAgent sets the User-Agent of requests.
func WithUserAgent(ua string) Option { return func(o *options) { o.userAgent = ua } }

// App is an OpenAPI document served as tools.
type App struct {
	doc     *Document
	opts    options
	base    *url.URL
	ops     []*Operation
	skipped []Skipped
	client  *http.Client
	tokens  *tokens // nil without ClientCredentials
}

// New builds the tools of doc's operations. It fails when the document
// gives no usable base URL. An operation that cannot be served (a request
// body only in a media type CodeCall cannot send) is left out and listed
// by Skipped.
func New(doc *Document, opts ...Option) (*App, error) {
	o := options{maxBytes: DefaultMaxResponseBytes, timeout: DefaultTimeout, userAgent: "codecall-openapi"}
	for _, opt := range opts {
		opt(&o)
	}
	if o.maxBytes <= 0 {
		o.maxBytes = DefaultMaxResponseBytes
	}
	if o.timeout <= 0 {
		o.timeout = DefaultTimeout
	}
	if o.redact == nil {
		o.redact = func(s string) string { return s }
	}
	base, err := baseURLOf(doc, o.baseURL)
	if err != nil {
		return nil, err
	}
	var toks *tokens
	if cc := o.creds.ClientCredentials; cc != nil {
		toks = newTokens(*cc)
		// An access token is a secret the configuration never held: the
		// redactor learns each one as it is issued.
		configured := o.redact
		o.redact = func(s string) string { return toks.redact(configured(s)) }
	}
	ops, skipped := build(doc, &o)
	a := &App{doc: doc, opts: o, base: base, ops: ops, skipped: skipped, tokens: toks}
	rt := o.transport
	if rt == nil {
		rt = guardedTransport(base, o.private)
	}
	a.client = &http.Client{Transport: rt, CheckRedirect: a.checkRedirect}
	return a, nil
}

// Operations returns the app's operations, sorted by path and method.
func (a *App) Operations() []*Operation { return a.ops }

// Skipped returns the selected operations that are not served, with why.
func (a *App) Skipped() []Skipped { return a.skipped }

// BaseURL is where the app's calls go.
func (a *App) BaseURL() string { return a.base.String() }

// Tools returns one server tool per operation, its handler sending the
// request.
func (a *App) Tools() []server.ServerTool {
	out := make([]server.ServerTool, 0, len(a.ops))
	for _, op := range a.ops {
		out = append(out, server.ServerTool{Tool: op.Tool, Handler: a.handler(op)})
	}
	return out
}

// Server returns an MCP server offering the app's tools, for a client in
// the same process (package gateway connects to it like to any upstream).
func (a *App) Server(name, version string) *server.MCPServer {
	s := server.NewMCPServer(name, version, server.WithToolCapabilities(true))
	s.AddTools(a.Tools()...)
	return s
}

// checkRedirect follows a redirect only within the base URL's origin.
func (a *App) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("%w: more than %d redirects", errRedirect, maxRedirects)
	}
	if req.URL.Scheme != a.base.Scheme || req.URL.Host != a.base.Host {
		return fmt.Errorf("%w: the API redirected to %s://%s, another origin than %s://%s", errRedirect,
			req.URL.Scheme, req.URL.Host, a.base.Scheme, a.base.Host)
	}
	return nil
}

// errRedirect is a redirect the app refused to follow.
var errRedirect = errors.New("redirect refused")

// errPrivate is a connection the SSRF guard refused.
var errPrivate = errors.New("connection to a private address refused")

// guardedTransport is a transport whose dialer refuses loopback, private,
// link-local and unspecified addresses (cloud metadata endpoints among
// them), so that a host name that resolves there, or a redirect, cannot
// reach the internal network. The base URL's own host may be such an
// address when the operator wrote it so (a literal IP or localhost), and
// allowPrivate lifts the guard.
func guardedTransport(base *url.URL, allowPrivate bool) *http.Transport {
	allowedHost := ""
	if h := base.Hostname(); h == "localhost" || isLiteralIP(h) {
		allowedHost = h
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil // a proxy would dial for us, past the guard
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		dd := *d
		dd.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %s", errPrivate, address)
			}
			ip := ap.Addr().Unmap()
			if allowPrivate || !isPrivate(ip) {
				return nil
			}
			if allowedHost != "" && (host == allowedHost || (allowedHost == "localhost" && ip.IsLoopback())) {
				return nil
			}
			return fmt.Errorf("%w: %s resolves to %s (loopback, private or link-local); set allowPrivateNetwork to reach it", errPrivate, host, ip)
		}
		return dd.DialContext(ctx, network, addr)
	}
	return t
}

func isLiteralIP(h string) bool {
	_, err := netip.ParseAddr(h)
	return err == nil
}

// isPrivate reports addresses an API on the internet never needs.
func isPrivate(ip netip.Addr) bool {
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() ||
		netip.MustParsePrefix("100.64.0.0/10").Contains(ip) // carrier-grade NAT
}
