// Package oauthtest starts, for tests, a real OAuth 2.1 authorization
// server (the tests pass zitadel's example OpenID provider) and an MCP
// server it protects by token introspection, and does the browser's part
// of a login.
package oauthtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/presets"
)

// The confidential client the authorization server knows the gateway by,
// and the user who logs in (zitadel's example storage).
const (
	ClientID     = "codecall-gw"
	ClientSecret = "client-secret-0123456789"
	User         = "test-user2"
	Password     = "verysecure"
	// SecretEnv is the variable Lookup finds the client secret in.
	SecretEnv = "CODECALLTEST_OAUTH_SECRET"
)

// World is a real OAuth 2.1 / OpenID provider (zitadel's oidc
// library) and an MCP server (mcp-go, streamable HTTP) that takes only
// access tokens the provider says are active (RFC 7662 introspection) and
// publishes its protected resource metadata (RFC 9728).
type World struct {
	// Issuer is the provider's issuer URL; MCPURL the MCP endpoint.
	Issuer, MCPURL string
	// RedirectPort is the loopback port the client is registered with.
	RedirectPort int
	// TokenRequests counts the provider's token endpoint requests.
	TokenRequests atomic.Int64
	// Refused counts the requests the MCP server answered 401.
	Refused atomic.Int64
	// Registrations counts the dynamic client registrations answered.
	Registrations atomic.Int64
	mu            sync.Mutex
	seen          []string          // every token and secret that crossed the wire, to look for later
	clients       map[string]string // client id -> secret, for introspection and revocation
	register      func(id, secret, redirectURI string)
	opLock        sync.RWMutex // registrations change the provider's clients: exclusive
}

func (w *World) remember(vals ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, v := range vals {
		if v != "" {
			w.seen = append(w.seen, v)
		}
	}
}

// Secrets returns the client secrets and every token the provider issued.
func (w *World) Secrets() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string{ClientSecret}, w.seen...)
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Provider builds the authorization server's handler for issuer, knowing
// the confidential client ClientID (secret ClientSecret, allowed to
// introspect its own tokens) with redirectURI, and the user User. The
// tests pass zitadel's example OpenID provider, so that the library stays
// a test-only dependency. register adds a confidential client; it is
// called while no request is served.
type Provider func(issuer, redirectURI string) (h http.Handler, register func(id, secret, redirectURI string))

// New starts the provider and the MCP server it protects. With
// dynamicRegistration, the provider also offers dynamic client
// registration (RFC 7591): its metadata names a registration endpoint,
// which registers a confidential client (client_secret_basic) with the
// provider for the redirect URI asked.
func New(t testing.TB, provider Provider, dynamicRegistration bool) *World {
	t.Helper()
	w := &World{RedirectPort: freePort(t), clients: map[string]string{ClientID: ClientSecret}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w.Issuer = "http://" + ln.Addr().String() + "/"
	router, register := provider(w.Issuer, fmt.Sprintf("http://127.0.0.1:%d/callback", w.RedirectPort))
	w.register = register
	op := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if dynamicRegistration && r.URL.Path == "/register" {
			w.registerClient(rw, r)
			return
		}
		w.opLock.RLock()
		defer w.opLock.RUnlock()
		if dynamicRegistration && strings.HasPrefix(r.URL.Path, "/.well-known/") {
			// The provider's own metadata, plus the registration endpoint.
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, r)
			var meta map[string]any
			if rec.Code == http.StatusOK && json.Unmarshal(rec.Body.Bytes(), &meta) == nil {
				meta["registration_endpoint"] = w.Issuer + "register"
				rw.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(rw).Encode(meta)
				return
			}
			rw.WriteHeader(rec.Code)
			_, _ = rw.Write(rec.Body.Bytes())
			return
		}
		if r.URL.Path != "/oauth/token" {
			router.ServeHTTP(rw, r)
			return
		}
		w.TokenRequests.Add(1)
		rec := httptest.NewRecorder()
		router.ServeHTTP(rec, r)
		var body struct {
			AccessToken  string `json:"access_token"`
			RefreshToken string `json:"refresh_token"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &body) == nil {
			w.remember(body.AccessToken, body.RefreshToken)
		}
		for k, v := range rec.Header() {
			rw.Header()[k] = v
		}
		rw.WriteHeader(rec.Code)
		_, _ = rw.Write(rec.Body.Bytes())
	}))
	op.Listener.Close()
	op.Listener = ln
	op.Start()
	t.Cleanup(op.Close)

	mcpSrv := server.NewMCPServer("docs", "1.0.0", server.WithToolCapabilities(true))
	mcpSrv.AddTool(mcp.NewTool("whoami", mcp.WithDescription("Says who the caller is, and (carelessly) the token it came with."),
		mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
			res := mcp.NewToolResultText("you are " + User + ", token " + tok)
			res.StructuredContent = map[string]any{"user": User, "token": tok}
			return res, nil
		})
	inner := server.NewStreamableHTTPServer(mcpSrv)
	var mcpURL string
	rsSrv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
			rw.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(rw).Encode(map[string]any{"resource": mcpURL, "authorization_servers": []string{w.Issuer}})
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		active := false
		if ok {
			active = w.introspect(r.Context(), tok)
		}
		if !active {
			w.Refused.Add(1)
			rw.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, "http://"+r.Host))
			http.Error(rw, "invalid_token", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(rw, r)
	}))
	t.Cleanup(rsSrv.Close)
	mcpURL = rsSrv.URL + "/mcp"
	w.MCPURL = mcpURL
	return w
}

// Upstream is the gateway's entry for the protected MCP server, its
// client secret in SecretEnv.
func (w *World) Upstream() presets.Upstream {
	return presets.Upstream{URL: w.MCPURL, Timeout: 10 * time.Second, OAuth: &presets.UpstreamOAuth{
		ClientID: ClientID, ClientSecretEnv: SecretEnv, Scopes: []string{"openid", "offline_access"}, RedirectPort: w.RedirectPort}}
}

// DynamicUpstream is an entry for the protected MCP server that names no
// client: login registers one (with a provider started with
// dynamicRegistration) for a redirect on any free port.
func (w *World) DynamicUpstream() presets.Upstream {
	return presets.Upstream{URL: w.MCPURL, Timeout: 10 * time.Second, OAuth: &presets.UpstreamOAuth{Scopes: []string{"openid", "offline_access"}}}
}

// Lookup finds the client secret under SecretEnv.
func Lookup(k string) (string, bool) {
	if k == SecretEnv {
		return ClientSecret, true
	}
	return "", false
}

// Browse does what the operator does in the browser: open the
// authorization URL, sign in on the provider's form, and follow the
// redirects back to the gateway's loopback listener.
func Browse(authURL string) error {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 20 * time.Second}
	resp, err := c.Get(authURL)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="id" value="([^"]+)"`).FindSubmatch(body)
	if m == nil {
		return fmt.Errorf("no login form at %s (status %d): %.300s", resp.Request.URL, resp.StatusCode, body)
	}
	form := url.Values{"id": {string(m[1])}, "username": {User}, "password": {Password}}
	resp, err = c.PostForm(resp.Request.URL.Scheme+"://"+resp.Request.URL.Host+"/login/username", form)
	if err != nil {
		return err
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "logged in") {
		return fmt.Errorf("login ended at %s with %d: %.300s", resp.Request.URL, resp.StatusCode, body)
	}
	return nil
}

// Revoke revokes, as ClientID, a token at the provider's revocation endpoint (RFC 7009),
// as an administrator or the user would.
func (w *World) Revoke(t testing.TB, token, hint string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, w.Issuer+"revoke", strings.NewReader(url.Values{"token": {token}, "token_type_hint": {hint}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(ClientID, ClientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("revoke %s: %d %s", hint, resp.StatusCode, b)
	}
}

// introspect asks the provider whether tok is active (RFC 7662), as the
// resource server, authenticated as the client the token was issued to.
func (w *World) introspect(ctx context.Context, tok string) bool {
	for id, secret := range w.knownClients() {
		if w.introspectAs(ctx, tok, id, secret) {
			return true
		}
	}
	return false
}

func (w *World) introspectAs(ctx context.Context, tok, id, secret string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.Issuer+"oauth/introspect", strings.NewReader(url.Values{"token": {tok}}.Encode()))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var body struct {
		Active bool `json:"active"`
	}
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&body) == nil && body.Active
}

// registerClient answers a dynamic client registration request (RFC
// 7591): a confidential client for the first redirect URI, authenticated
// with HTTP Basic at the token endpoint (the response says so, as RFC
// 7591 §3.2.1 allows the server to decide).
func (w *World) registerClient(rw http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
		ClientName   string   `json:"client_name"`
		GrantTypes   []string `json:"grant_types"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.RedirectURIs) == 0 || req.ClientName == "" {
		http.Error(rw, `{"error":"invalid_client_metadata"}`, http.StatusBadRequest)
		return
	}
	n := w.Registrations.Add(1)
	id := fmt.Sprintf("dynamic-%d", n)
	secret := fmt.Sprintf("dynamic-secret-%d-%d", n, time.Now().UnixNano())
	w.opLock.Lock()
	w.register(id, secret, req.RedirectURIs[0])
	w.opLock.Unlock()
	w.mu.Lock()
	w.clients[id] = secret
	w.seen = append(w.seen, secret)
	w.mu.Unlock()
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(rw).Encode(map[string]any{"client_id": id, "client_secret": secret, "client_name": req.ClientName,
		"redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "client_secret_basic", "grant_types": req.GrantTypes})
}

// knownClients returns the client ids and secrets the provider has.
func (w *World) knownClients() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]string, len(w.clients))
	for k, v := range w.clients {
		out[k] = v
	}
	return out
}
