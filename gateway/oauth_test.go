package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/client/rs"
	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/tokenstore"
)

// The confidential client the authorization server knows the gateway by,
// and the user who logs in (zitadel's example storage).
const (
	oauthClientID     = "codecall-gw"
	oauthClientSecret = "client-secret-0123456789"
	oauthUser         = "test-user2"
	oauthPassword     = "verysecure"
)

// oauthWorld is a real OAuth 2.1 / OpenID provider (zitadel's oidc
// library) and an MCP server (mcp-go, streamable HTTP) that takes only
// access tokens the provider says are active (RFC 7662 introspection) and
// publishes its protected resource metadata (RFC 9728).
type oauthWorld struct {
	issuer, mcpURL string
	redirectPort   int
	tokenRequests  atomic.Int64
	refused        atomic.Int64 // requests the MCP server answered 401
	mu             sync.Mutex
	seen           []string // every token that crossed the wire, to look for later
}

func (w *oauthWorld) remember(vals ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, v := range vals {
		if v != "" {
			w.seen = append(w.seen, v)
		}
	}
}

func (w *oauthWorld) secrets() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string{oauthClientSecret}, w.seen...)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func newOAuthWorld(t *testing.T) *oauthWorld {
	t.Helper()
	w := &oauthWorld{redirectPort: freePort(t)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w.issuer = "http://" + ln.Addr().String() + "/"
	clients := map[string]*storage.Client{
		oauthClientID: storage.WebClient(oauthClientID, oauthClientSecret, fmt.Sprintf("http://127.0.0.1:%d/callback", w.redirectPort)),
	}
	router := exampleop.SetupServer(w.issuer, storage.NewStorageWithClients(storage.NewUserStore(w.issuer), clients), slog.New(slog.DiscardHandler), false)
	op := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/oauth/token" {
			router.ServeHTTP(rw, r)
			return
		}
		w.tokenRequests.Add(1)
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

	introspector, err := rs.NewResourceServerClientCredentials(context.Background(), w.issuer, oauthClientID, oauthClientSecret)
	if err != nil {
		t.Fatal(err)
	}
	mcpSrv := server.NewMCPServer("docs", "1.0.0", server.WithToolCapabilities(true))
	mcpSrv.AddTool(mcp.NewTool("whoami", mcp.WithDescription("Says who the caller is, and (carelessly) the token it came with."),
		mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
			res := mcp.NewToolResultText("you are " + oauthUser + ", token " + tok)
			res.StructuredContent = map[string]any{"user": oauthUser, "token": tok}
			return res, nil
		})
	inner := server.NewStreamableHTTPServer(mcpSrv)
	var mcpURL string
	rsSrv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
			rw.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(rw).Encode(map[string]any{"resource": mcpURL, "authorization_servers": []string{w.issuer}})
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		active := false
		if ok {
			resp, err := rs.Introspect[*oidc.IntrospectionResponse](r.Context(), introspector, tok)
			active = err == nil && resp.Active
		}
		if !active {
			w.refused.Add(1)
			rw.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, "http://"+r.Host))
			http.Error(rw, "invalid_token", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(rw, r)
	}))
	t.Cleanup(rsSrv.Close)
	mcpURL = rsSrv.URL + "/mcp"
	w.mcpURL = mcpURL
	return w
}

// upstream is the gateway's entry for the protected MCP server.
func (w *oauthWorld) upstream() presets.Upstream {
	return presets.Upstream{URL: w.mcpURL, Timeout: 10 * time.Second, OAuth: &presets.UpstreamOAuth{
		ClientID: oauthClientID, ClientSecretEnv: "CODECALLTEST_OAUTH_SECRET", Scopes: []string{"openid", "offline_access"}, RedirectPort: w.redirectPort}}
}

func oauthLookup(k string) (string, bool) {
	if k == "CODECALLTEST_OAUTH_SECRET" {
		return oauthClientSecret, true
	}
	return "", false
}

// browse does what the operator does in the browser: open the
// authorization URL, sign in on the provider's form, and follow the
// redirects back to the gateway's loopback listener.
func browse(authURL string) error {
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
	form := url.Values{"id": {string(m[1])}, "username": {oauthUser}, "password": {oauthPassword}}
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

// TestOAuthEndToEnd logs the gateway in to an MCP server protected by a
// real authorization server, then calls it: the token file is 0600; a call
// succeeds; an expired access token is refreshed; a revoked access token
// is replaced by a refresh; a revoked refresh token gives UNAUTHENTICATED
// with the command to run and shows the upstream as down; no token or
// secret reaches a result or a log line.
func TestOAuthEndToEnd(t *testing.T) {
	w := newOAuthWorld(t)
	ctx := context.Background()
	store := tokenstore.NewDir(t.TempDir() + "/tokens")

	// Before any login: not a crash, not a raw HTTP error.
	g0, logs0 := newGateway(t, map[string]presets.Upstream{"docs": w.upstream()}, WithTokenStore(store), WithLookupEnv(oauthLookup),
		WithBackoff(time.Hour, time.Hour))
	if err := g0.Start(ctx); err == nil || !strings.Contains(err.Error(), "codecall auth login docs") {
		t.Errorf("Start before login: %v", err)
	}
	if st := g0.Status()[0]; st.State != stateFailed || !strings.Contains(st.Error, "codecall auth login docs") || !strings.Contains(st.Error, "no OAuth token is stored") {
		t.Errorf("before login: status %+v", st)
	}
	_ = logs0
	_ = g0.Close()

	// The login: the browser's part is driven by the test.
	var browseErr error
	var shown string
	rec, err := Login(ctx, "docs", w.upstream(), store, WithLoginLookupEnv(oauthLookup), WithAuthorizationURL(func(u string) {
		shown = u
		go func() { browseErr = browse(u) }()
	}))
	if err != nil {
		t.Fatalf("Login: %v (browser: %v)", err, browseErr)
	}
	for _, want := range []string{"code_challenge_method=S256", "code_challenge=", "client_id=" + oauthClientID, "scope=openid+offline_access", "resource="} {
		if !strings.Contains(shown, want) {
			t.Errorf("authorization URL lacks %q: %s", want, shown)
		}
	}
	if rec.Token.AccessToken == "" || rec.Token.RefreshToken == "" {
		t.Fatalf("login stored no access or refresh token: %+v", rec.Token.ExpiresAt)
	}
	st, err := os.Stat(store.File("docs"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, mode %v", err, st.Mode())
	}

	g, logs := newGateway(t, map[string]presets.Upstream{"docs": w.upstream()}, WithTokenStore(store), WithLookupEnv(oauthLookup),
		WithBackoff(time.Hour, time.Hour))
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	s := connect(t, g.Server())
	var results []string
	whoami := func(step string) *mcp.CallToolResult {
		res := call(t, s, "docs.whoami", map[string]any{})
		b, _ := json.Marshal(res)
		results = append(results, string(b))
		return res
	}
	if res := whoami("first"); res.IsError || !strings.Contains(text(res), "you are "+oauthUser+", token [redacted]") {
		t.Fatalf("call with the login's token: %s", text(res))
	}
	if res := whoami("structured"); fmt.Sprint(res.StructuredContent) != fmt.Sprint(map[string]any{"user": oauthUser, "token": "[redacted]"}) {
		t.Errorf("structured content %v", res.StructuredContent)
	}

	// An access token past its expiry is refreshed before the call.
	r1, _ := store.Load(ctx, "docs")
	r1.Token.ExpiresAt = time.Now().Add(-time.Minute)
	if err := store.Save(ctx, r1); err != nil {
		t.Fatal(err)
	}
	before := w.tokenRequests.Load()
	if res := whoami("expired"); res.IsError {
		t.Fatalf("call after expiry: %s", text(res))
	}
	r2, _ := store.Load(ctx, "docs")
	if w.tokenRequests.Load() != before+1 || r2.Token.AccessToken == r1.Token.AccessToken || r2.Refreshed.IsZero() || r2.Token.IsExpired() {
		t.Errorf("expired token: %d token requests, refreshed %v, new token %v", w.tokenRequests.Load()-before, r2.Refreshed, r2.Token.AccessToken != r1.Token.AccessToken)
	}

	// An access token the server refuses before its expiry (revoked) is
	// replaced by a refresh, and the call goes through.
	revoke(t, w, r2.Token.AccessToken, "access_token")
	refusedBefore := w.refused.Load()
	if res := whoami("revoked access token"); res.IsError {
		t.Fatalf("call after the access token was revoked: %s", text(res))
	}
	r3, _ := store.Load(ctx, "docs")
	if w.refused.Load() == refusedBefore || r3.Token.AccessToken == r2.Token.AccessToken {
		t.Errorf("revoked access token: refused %d, replaced %v", w.refused.Load()-refusedBefore, r3.Token.AccessToken != r2.Token.AccessToken)
	}

	// A revoked refresh token (which takes its access token with it):
	// UNAUTHENTICATED with the command to run, and the upstream is down.
	revoke(t, w, r3.Token.RefreshToken, "refresh_token")
	res := whoami("revoked refresh token")
	data, _ := res.Meta.AdditionalFields["codecall/error"].(map[string]any)
	if !res.IsError || !strings.HasPrefix(text(res), `UNAUTHENTICATED: upstream "docs" refused whoami`) || data["code"] != "UNAUTHENTICATED" ||
		!strings.Contains(fmt.Sprint(data["hint"]), "codecall auth login docs") || data["retryable"] != false {
		t.Fatalf("after the refresh token was revoked: %s %v", text(res), data)
	}
	if st := g.Status()[0]; st.State != stateFailed || !strings.Contains(st.Error, "codecall auth login docs") {
		t.Errorf("status after the refresh was refused: %+v", st)
	}
	res = whoami("while down")
	if !strings.HasPrefix(text(res), "UNAUTHENTICATED: ") || !strings.Contains(text(res), "codecall auth login docs") {
		t.Errorf("call while down: %s", text(res))
	}
	for _, banned := range []string{"&{", "status 401", "invalid_token", "OAuth error"} {
		for _, r := range results[len(results)-2:] {
			if strings.Contains(r, banned) {
				t.Errorf("a refused call shows %q: %s", banned, r)
			}
		}
	}

	// No token nor the client secret anywhere.
	all := logs.String() + logs0.String() + strings.Join(results, "\n")
	for _, secret := range w.secrets() {
		if strings.Contains(all, secret) {
			t.Errorf("secret %.6s... appears in a log line or a result", secret)
		}
	}
	if len(w.secrets()) < 7 {
		t.Errorf("only %d tokens were issued; the test did not exercise the refreshes", len(w.secrets())-1)
	}
}

// revoke revokes a token at the provider's revocation endpoint (RFC 7009),
// as an administrator or the user would.
func revoke(t *testing.T, w *oauthWorld, token, hint string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, w.issuer+"revoke", strings.NewReader(url.Values{"token": {token}, "token_type_hint": {hint}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(oauthClientID, oauthClientSecret)
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
