package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/tokenstore"
)

// LoginOption configures Login.
type LoginOption func(*loginOptions)

type loginOptions struct {
	open   func(authURL string)
	lookup func(string) (string, bool)
	client *http.Client
	name   string
}

// WithAuthorizationURL sets what Login does with the URL the operator must
// open in a browser: print it, open a browser. It is called once, before
// Login waits for the redirect. Without it, Login cannot be completed by
// anyone and fails when ctx ends.
func WithAuthorizationURL(f func(authURL string)) LoginOption {
	return func(o *loginOptions) { o.open = f }
}

// WithLoginLookupEnv sets where oauth.clientSecretEnv is read from
// (default os.LookupEnv).
func WithLoginLookupEnv(lookup func(string) (string, bool)) LoginOption {
	return func(o *loginOptions) { o.lookup = lookup }
}

// WithLoginHTTPClient sets the client of the discovery, registration and
// token requests (default: 30 s timeout).
func WithLoginHTTPClient(c *http.Client) LoginOption { return func(o *loginOptions) { o.client = c } }

// WithClientName sets the client_name sent with dynamic client
// registration (default "CodeCall").
func WithClientName(name string) LoginOption { return func(o *loginOptions) { o.name = name } }

// callbackPath is the path of the loopback redirect URI.
const callbackPath = "/callback"

// Login runs the OAuth 2.1 authorization code flow with PKCE (S256) for
// the HTTP or SSE upstream id: it discovers the authorization server from
// the server's protected resource metadata (RFC 9728, also as announced by
// a 401's WWW-Authenticate) and the authorization server's metadata (RFC
// 8414), registers a client dynamically when the entry names none and the
// server offers registration (RFC 7591), listens on a loopback redirect
// URI, hands the authorization URL to WithAuthorizationURL, waits for the
// browser's redirect (or ctx's end), exchanges the code and saves the
// token, with the registered client, in store. A running gateway picks the
// token up on its next attempt to connect.
func Login(ctx context.Context, id string, u presets.Upstream, store tokenstore.Store, opts ...LoginOption) (*tokenstore.Record, error) {
	o := loginOptions{lookup: os.LookupEnv, client: &http.Client{Timeout: 30 * time.Second}, name: "CodeCall"}
	for _, opt := range opts {
		opt(&o)
	}
	if t := u.Transport(); t != presets.UpstreamHTTP && t != presets.UpstreamSSE {
		return nil, fmt.Errorf("upstream %q is a %s server; OAuth login is for HTTP and SSE servers", id, t)
	}
	if issues := presets.UpstreamIssues(id, u); len(issues) > 0 {
		return nil, fmt.Errorf("upstream %q: %s: %s", id, issues[0].Key, issues[0].Message)
	}
	cfg := presets.UpstreamOAuth{}
	if u.OAuth != nil {
		cfg = *u.OAuth
	}
	secret, err := u.OAuthSecret(o.lookup)
	if err != nil {
		return nil, fmt.Errorf("upstream %q: %w", id, err)
	}
	base, err := baseURL(u.URL)
	if err != nil {
		return nil, fmt.Errorf("upstream %q: url: %w", id, err)
	}

	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.RedirectPort)))
	if err != nil {
		return nil, fmt.Errorf("cannot listen for the redirect on 127.0.0.1:%d (%w); free the port or change oauth.redirectPort", cfg.RedirectPort, err)
	}
	defer ln.Close()
	redirect := "http://" + ln.Addr().String() + callbackPath

	tokens := transport.NewMemoryTokenStore()
	h := transport.NewOAuthHandler(transport.OAuthConfig{
		ClientID: cfg.ClientID, ClientSecret: secret, RedirectURI: redirect, Scopes: cfg.Scopes,
		TokenStore: tokens, AuthServerMetadataURL: cfg.AuthServerMetadataURL, PKCEEnabled: true, HTTPClient: o.client,
	})
	h.SetBaseURL(base)
	probe(ctx, o.client, u, h)
	meta, err := h.GetServerMetadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("upstream %q: cannot discover its authorization server: %w; set oauth.authServerMetadataUrl if it publishes no protected resource metadata", id, err)
	}
	if m := meta.CodeChallengeMethodsSupported; len(m) > 0 && !slices.Contains(m, "S256") {
		return nil, fmt.Errorf("upstream %q: its authorization server %s does not support PKCE with S256 (it lists %s), which OAuth 2.1 requires", id, meta.Issuer, strings.Join(m, ", "))
	}
	rec := &tokenstore.Record{Upstream: id, URL: u.URL}
	if cfg.ClientID == "" {
		if meta.RegistrationEndpoint == "" {
			return nil, fmt.Errorf("upstream %q: its authorization server %s offers no dynamic client registration; register a client for CodeCall there (redirect URI %s) and set oauth.clientId (and oauth.clientSecretEnv for a confidential client)",
				id, meta.Issuer, redirectHint(cfg.RedirectPort))
		}
		if err := h.RegisterClient(ctx, o.name); err != nil {
			return nil, fmt.Errorf("upstream %q: dynamic client registration at %s failed: %w", id, meta.RegistrationEndpoint, err)
		}
		rec.ClientID, rec.ClientSecret, rec.AuthMethod = h.GetClientID(), h.GetClientSecret(), h.GetTokenEndpointAuthMethod()
	}

	verifier, err := transport.GenerateCodeVerifier()
	if err != nil {
		return nil, err
	}
	state, err := transport.GenerateState()
	if err != nil {
		return nil, err
	}
	authURL, err := h.GetAuthorizationURL(ctx, state, transport.GenerateCodeChallenge(verifier))
	if err != nil {
		return nil, fmt.Errorf("upstream %q: %w", id, err)
	}

	type answer struct{ code, state, err string }
	answers := make(chan answer, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != callbackPath {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		a := answer{code: q.Get("code"), state: q.Get("state")}
		if e := q.Get("error"); e != "" {
			a.err = e
			if d := q.Get("error_description"); d != "" {
				a.err += ": " + d
			}
		}
		if a.err == "" && a.code == "" {
			http.Error(w, "missing code", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		msg := "CodeCall is logged in to " + id + ". You can close this window."
		if a.err != "" {
			msg = "The login to " + id + " was refused: " + a.err
		}
		fmt.Fprintf(w, "<!doctype html><title>CodeCall</title><p>%s</p>\n", html.EscapeString(msg))
		select {
		case answers <- a:
		default:
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if o.open != nil {
		o.open(authURL)
	}
	var a answer
	select {
	case a = <-answers:
	case <-ctx.Done():
		return nil, fmt.Errorf("upstream %q: no answer from the browser: %w", id, ctx.Err())
	}
	if a.err != "" {
		return nil, fmt.Errorf("upstream %q: the authorization server refused the login: %s", id, a.err)
	}
	if err := h.ProcessAuthorizationResponse(ctx, a.code, a.state, verifier); err != nil {
		if errors.Is(err, transport.ErrInvalidState) {
			return nil, fmt.Errorf("upstream %q: the redirect carried another login's state; run the login again and use only its URL", id)
		}
		return nil, fmt.Errorf("upstream %q: exchanging the authorization code failed: %w", id, err)
	}
	tok, err := tokens.GetToken(ctx)
	if err != nil {
		return nil, fmt.Errorf("upstream %q: the token endpoint returned no token: %w", id, err)
	}
	rec.Token = *tok
	rec.LoggedIn = time.Now().UTC()
	if err := store.Save(ctx, rec); err != nil {
		return nil, fmt.Errorf("upstream %q: cannot store the token: %w", id, err)
	}
	return rec, nil
}

func redirectHint(port int) string {
	if port == 0 {
		return "http://127.0.0.1:<port>" + callbackPath + ", with oauth.redirectPort set to that port"
	}
	return "http://127.0.0.1:" + strconv.Itoa(port) + callbackPath
}

// probe sends the server an unauthenticated initialize (GET for SSE) so
// that a 401's WWW-Authenticate can name its protected resource metadata
// (RFC 9728 §5.1); whatever the answer, discovery falls back to the
// well-known URL.
func probe(ctx context.Context, c *http.Client, u presets.Upstream, h *transport.OAuthHandler) {
	var req *http.Request
	var err error
	if u.Transport() == presets.UpstreamSSE {
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, u.URL, nil)
		if err == nil {
			req.Header.Set("Accept", "text/event-stream")
		}
	} else {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"codecall-login","version":"1"}}}`,
			mcp.LATEST_LEGACY_PROTOCOL_VERSION)
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, u.URL, bytes.NewReader([]byte(body)))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
		}
	}
	if err != nil {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := c.Do(req.WithContext(pctx))
	if err != nil {
		return
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusUnauthorized {
		h.HandleUnauthorizedResponse(resp)
	}
}
