package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"

	"github.com/codecall-go/codecall/internal/oauthtest"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/tokenstore"
)

// TestOAuthEndToEnd logs the gateway in to an MCP server protected by a
// real authorization server, then calls it: the token file is 0600; a call
// succeeds; an expired access token is refreshed; a revoked access token
// is replaced by a refresh; a revoked refresh token gives UNAUTHENTICATED
// with the command to run and shows the upstream as down; no token or
// secret reaches a result or a log line.
func TestOAuthEndToEnd(t *testing.T) {
	w := oauthtest.New(t, zitadelProvider, false)
	ctx := context.Background()
	store := tokenstore.NewDir(t.TempDir() + "/tokens")

	// Before any login: not a crash, not a raw HTTP error.
	g0, logs0 := newGateway(t, map[string]presets.Upstream{"docs": w.Upstream()}, WithTokenStore(store), WithLookupEnv(oauthtest.Lookup),
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
	rec, err := Login(ctx, "docs", w.Upstream(), store, WithLoginLookupEnv(oauthtest.Lookup), WithAuthorizationURL(func(u string) {
		shown = u
		go func() { browseErr = oauthtest.Browse(u) }()
	}))
	if err != nil {
		t.Fatalf("Login: %v (browser: %v)", err, browseErr)
	}
	for _, want := range []string{"code_challenge_method=S256", "code_challenge=", "client_id=" + oauthtest.ClientID, "scope=openid+offline_access", "resource="} {
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

	// The access token is revoked while no gateway runs: the gateway's
	// first connection is refused, and refreshes it.
	w.Revoke(t, rec.Token.AccessToken, "access_token")
	before := w.TokenRequests.Load()
	g, logs := newGateway(t, map[string]presets.Upstream{"docs": w.Upstream()}, WithTokenStore(store), WithLookupEnv(oauthtest.Lookup),
		WithBackoff(time.Hour, time.Hour))
	if err := g.Start(ctx); err != nil {
		t.Fatalf("start with a revoked access token: %v", err)
	}
	if w.TokenRequests.Load() != before+1 {
		t.Errorf("start with a revoked access token: %d token requests, want 1 refresh", w.TokenRequests.Load()-before)
	}
	s := connect(t, g.Server())
	var results []string
	whoami := func(step string) *mcp.CallToolResult {
		res := call(t, s, "docs.whoami", map[string]any{})
		b, _ := json.Marshal(res)
		results = append(results, string(b))
		return res
	}
	if res := whoami("first"); res.IsError || !strings.Contains(text(res), "you are "+oauthtest.User+", token [redacted]") {
		t.Fatalf("call with the login's token: %s", text(res))
	}
	if res := whoami("structured"); fmt.Sprint(res.StructuredContent) != fmt.Sprint(map[string]any{"user": oauthtest.User, "token": "[redacted]"}) {
		t.Errorf("structured content %v", res.StructuredContent)
	}

	// An access token past its expiry is refreshed before the call.
	r1, _ := store.Load(ctx, "docs")
	r1.Token.ExpiresAt = time.Now().Add(-time.Minute)
	if err := store.Save(ctx, r1); err != nil {
		t.Fatal(err)
	}
	before = w.TokenRequests.Load()
	if res := whoami("expired"); res.IsError {
		t.Fatalf("call after expiry: %s", text(res))
	}
	r2, _ := store.Load(ctx, "docs")
	if w.TokenRequests.Load() != before+1 || r2.Token.AccessToken == r1.Token.AccessToken || r2.Refreshed.IsZero() || r2.Token.IsExpired() {
		t.Errorf("expired token: %d token requests, refreshed %v, new token %v", w.TokenRequests.Load()-before, r2.Refreshed, r2.Token.AccessToken != r1.Token.AccessToken)
	}

	// An access token the server refuses before its expiry (revoked) is
	// replaced by a refresh, and the call goes through.
	w.Revoke(t, r2.Token.AccessToken, "access_token")
	refusedBefore := w.Refused.Load()
	if res := whoami("revoked access token"); res.IsError {
		t.Fatalf("call after the access token was revoked: %s", text(res))
	}
	r3, _ := store.Load(ctx, "docs")
	if w.Refused.Load() == refusedBefore || r3.Token.AccessToken == r2.Token.AccessToken {
		t.Errorf("revoked access token: refused %d, replaced %v", w.Refused.Load()-refusedBefore, r3.Token.AccessToken != r2.Token.AccessToken)
	}

	// A revoked refresh token (which takes its access token with it):
	// UNAUTHENTICATED with the command to run, and the upstream is down.
	w.Revoke(t, r3.Token.RefreshToken, "refresh_token")
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
	for _, secret := range w.Secrets() {
		if strings.Contains(all, secret) {
			t.Errorf("secret %.6s... appears in a log line or a result", secret)
		}
	}
	if len(w.Secrets()) < 9 {
		t.Errorf("only %d tokens were issued; the test did not exercise the refreshes", len(w.Secrets())-1)
	}
}

func TestParseServersOAuthKey(t *testing.T) {
	tests := []struct {
		name, file string
		want       *presets.UpstreamOAuth
		err        string
	}{
		{"every key", `{"mcpServers": {"a": {"url": "https://h/mcp", "oauth": {"clientId": "c", "clientSecretEnv": "S", "scopes": ["read"], "redirectPort": 8765, "authServerMetadataUrl": "https://a/.well-known/oauth-authorization-server"}}}}`,
			&presets.UpstreamOAuth{ClientID: "c", ClientSecretEnv: "S", Scopes: []string{"read"}, RedirectPort: 8765, AuthServerMetadataURL: "https://a/.well-known/oauth-authorization-server"}, ""},
		{"empty", `{"mcpServers": {"a": {"url": "https://h/mcp", "oauth": {}}}}`, &presets.UpstreamOAuth{}, ""},
		{"none", `{"mcpServers": {"a": {"url": "https://h/mcp"}}}`, nil, ""},
		{"unknown key", `{"mcpServers": {"a": {"url": "https://h/mcp", "oauth": {"clientSecret": "x"}}}}`, nil,
			`mcpServers["a"]: oauth: json: unknown field "clientSecret"; allowed keys: clientId, clientSecretEnv`},
		{"wrong type", `{"mcpServers": {"a": {"url": "https://h/mcp", "oauth": {"scopes": "read"}}}}`, nil, `oauth: json: cannot unmarshal string into Go struct field UpstreamOAuth.scopes`},
		{"on stdio", `{"mcpServers": {"a": {"command": "x", "oauth": {}}}}`, nil, `mcpServers["a"].oauth: only applies to HTTP and SSE servers`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			servers, err := ParseServers([]byte(tc.file))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseServers: %v; want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := servers["a"].OAuth; fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("oauth = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A 403 answers the call with UNAUTHENTICATED, never with mcp-go's text
// carrying the status and body, and leaves the upstream up; an SSE server
// that refuses its event stream with 401 is down with the login command.
func TestForbiddenAndRefusedStream(t *testing.T) {
	var forbid atomic.Bool
	inner := server.NewStreamableHTTPServer(httpUpstream())
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if forbid.Load() && r.Method == http.MethodPost {
			http.Error(w, "insufficient_scope: needs docs.read", http.StatusForbidden)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(remote.Close)
	sse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="x"`)
		http.Error(w, "who are you", http.StatusUnauthorized)
	}))
	t.Cleanup(sse.Close)
	g, logs := newGateway(t, map[string]presets.Upstream{
		"remote": {URL: remote.URL + "/mcp", Timeout: 5 * time.Second},
		"events": {Type: presets.UpstreamSSE, URL: sse.URL + "/sse"},
	}, WithBackoff(time.Hour, time.Hour), WithTokenStore(tokenstore.NewDir(t.TempDir())))
	_ = g.Start(context.Background())
	s := connect(t, g.Server())
	forbid.Store(true)
	res := call(t, s, "remote.echo", map[string]any{"text": "hi"})
	data, _ := res.Meta.AdditionalFields["codecall/error"].(map[string]any)
	if !res.IsError || !strings.HasPrefix(text(res), `UNAUTHENTICATED: upstream "remote" refused echo: it answered 403 Forbidden`) ||
		data["code"] != "UNAUTHENTICATED" || !strings.Contains(fmt.Sprint(data["hint"]), "oauth.scopes") {
		t.Errorf("403: %s %v", text(res), data)
	}
	if strings.Contains(text(res), "status 403") || strings.Contains(text(res), "insufficient_scope") {
		t.Errorf("the raw HTTP answer leaked into the result: %s", text(res))
	}
	if n := len(g.Status()); n != 2 {
		t.Fatalf("%d upstreams in the status, want 2", n)
	}
	for _, st := range g.Status() {
		switch st.ID {
		case "remote":
			if st.State != stateReady {
				t.Errorf("a 403 marked the upstream %s", st.State)
			}
		case "events":
			if st.State != stateFailed || !strings.Contains(st.Error, "401 Unauthorized") || !strings.Contains(st.Error, "codecall auth login events") {
				t.Errorf("SSE refused: %+v\n%s", st, logs.String())
			}
		}
	}
}

// zitadelProvider is zitadel's example OpenID provider, knowing
// oauthtest's client and user.
func zitadelProvider(issuer, redirectURI string) (http.Handler, func(id, secret, redirectURI string)) {
	clients := map[string]*storage.Client{oauthtest.ClientID: storage.WebClient(oauthtest.ClientID, oauthtest.ClientSecret, redirectURI)}
	h := exampleop.SetupServer(issuer, storage.NewStorageWithClients(storage.NewUserStore(issuer), clients), slog.New(slog.DiscardHandler), false)
	return h, func(id, secret, redirectURI string) { clients[id] = storage.WebClient(id, secret, redirectURI) }
}

// TestOAuthDynamicRegistration logs in to a server whose authorization
// server offers dynamic client registration, with an entry that names no
// client and no port: the registered client is stored with the token and
// used for refreshes, and an entry without the oauth key (the same URL)
// uses the stored token too.
func TestOAuthDynamicRegistration(t *testing.T) {
	w := oauthtest.New(t, zitadelProvider, true)
	ctx := context.Background()
	store := tokenstore.NewDir(t.TempDir())
	rec, err := Login(ctx, "docs", w.DynamicUpstream(), store, WithClientName("CodeCall (docs)"), WithAuthorizationURL(func(u string) {
		go func() {
			if err := oauthtest.Browse(u); err != nil {
				t.Errorf("browser: %v", err)
			}
		}()
	}))
	if err != nil {
		t.Fatal(err)
	}
	if w.Registrations.Load() != 1 || !strings.HasPrefix(rec.ClientID, "dynamic-") || rec.ClientSecret == "" || rec.AuthMethod != "client_secret_basic" {
		t.Fatalf("registered client: %d registrations, id %q, secret set %v, method %q", w.Registrations.Load(), rec.ClientID, rec.ClientSecret != "", rec.AuthMethod)
	}
	for name, entry := range map[string]presets.Upstream{"with the oauth key": w.DynamicUpstream(), "without it": {URL: w.MCPURL}} {
		t.Run(name, func(t *testing.T) {
			g, logs := newGateway(t, map[string]presets.Upstream{"docs": entry}, WithTokenStore(store), WithBackoff(time.Hour, time.Hour))
			if err := g.Start(ctx); err != nil {
				t.Fatal(err)
			}
			s := connect(t, g.Server())
			r, _ := store.Load(ctx, "docs")
			r.Token.ExpiresAt = time.Now().Add(-time.Minute)
			if err := store.Save(ctx, r); err != nil {
				t.Fatal(err)
			}
			before := w.TokenRequests.Load()
			res := call(t, s, "docs.whoami", map[string]any{})
			if res.IsError || !strings.Contains(text(res), "token [redacted]") {
				t.Fatalf("call: %s", text(res))
			}
			if w.TokenRequests.Load() != before+1 {
				t.Errorf("%d token requests, want one refresh with the registered client", w.TokenRequests.Load()-before)
			}
			for _, secret := range w.Secrets() {
				if strings.Contains(logs.String()+text(res), secret) {
					t.Errorf("secret %.8s... in a log line or the result", secret)
				}
			}
		})
	}
}
