package openapi

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"

	"github.com/codecall-go/codecall/toolerr"
)

// The service account of zitadel's example storage, which is granted
// tokens by the client credentials grant.
const (
	serviceID     = "sid1"
	serviceSecret = "verysecret"
)

// authServer starts a real OAuth 2.1 / OpenID provider (zitadel's oidc
// library) on loopback. It counts the token requests it answers and keeps
// the access tokens it issued, so the API below takes only those.
func authServer(t *testing.T) (issuer string, tokenRequests *atomic.Int64, issued func(string) bool) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer = "http://" + ln.Addr().String() + "/"
	router := exampleop.SetupServer(issuer, storage.NewStorage(storage.NewUserStore(issuer)), slog.New(slog.DiscardHandler), false)
	tokenRequests = new(atomic.Int64)
	var mu sync.Mutex
	tokens := map[string]bool{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/oauth/token" {
			router.ServeHTTP(w, r)
			return
		}
		tokenRequests.Add(1)
		rec := httptest.NewRecorder()
		router.ServeHTTP(rec, r)
		var body struct {
			AccessToken string `json:"access_token"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &body) == nil && body.AccessToken != "" {
			mu.Lock()
			tokens[body.AccessToken] = true
			mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return issuer, tokenRequests, func(tok string) bool {
		mu.Lock()
		defer mu.Unlock()
		return tokens[tok]
	}
}

// TestClientCredentials runs an OpenAPI app whose API takes only access
// tokens the authorization server issued: the broker fetches one
// by the client credentials grant, reuses it, fetches another when the
// API refuses it, says UNAUTHENTICATED with the fix when the server
// refuses the client, and never lets a token or the secret reach a
// result.
func TestClientCredentials(t *testing.T) {
	issuer, tokenRequests, issued := authServer(t)
	var mu sync.Mutex
	var seen []string            // the tokens the API received, in order
	revoked := map[string]bool{} // tokens the API refuses from now on
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		mu.Lock()
		seen = append(seen, token)
		refused := revoked[token]
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if !ok || refused || !issued(token) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"invalid token `+token+`"}`)
			return
		}
		_, _ = io.WriteString(w, `[{"id":"b-1","title":"Dune","token":"`+token+`"}]`)
	}))
	t.Cleanup(api.Close)
	creds := func(secret string) Option {
		return WithCredentials(Credentials{ClientCredentials: &ClientCredentials{
			TokenURL: issuer + "oauth/token", ClientID: serviceID, ClientSecret: secret, Scopes: []string{"openid"},
		}})
	}
	shop := newApp(t, "../examples/openapi/bookshop.yaml", WithBaseURL(api.URL+"/v1"), creds(serviceSecret))
	lastSeen := func() string {
		mu.Lock()
		defer mu.Unlock()
		return seen[len(seen)-1]
	}
	noSecrets := func(t *testing.T, v any, tokens ...string) {
		t.Helper()
		b, _ := json.Marshal(v)
		for _, s := range append(tokens, serviceSecret) {
			if s != "" && strings.Contains(string(b), s) {
				t.Errorf("a secret reached the result: %s", b)
			}
		}
	}

	res := callTool(t, shop, "listBooks", map[string]any{})
	if res.IsError {
		t.Fatalf("first call: %v", res.Content)
	}
	first := lastSeen()
	noSecrets(t, res, first)
	if !strings.Contains(mustJSON(t, res), "[redacted]") {
		t.Errorf("the token the API echoed is not redacted: %s", mustJSON(t, res))
	}
	callTool(t, shop, "listBooks", map[string]any{})
	if n := tokenRequests.Load(); n != 1 {
		t.Errorf("two calls made %d token requests, want 1 (the token is reused)", n)
	}

	// The API stops taking the token (revoked): the call fails as
	// UNAUTHENTICATED, retryable, and the next one uses a new token.
	mu.Lock()
	revoked[first] = true
	mu.Unlock()
	res = callTool(t, shop, "listBooks", map[string]any{})
	d := errData(res)
	if !res.IsError || d["code"] != string(toolerr.Unauthenticated) || d["retryable"] != true || !strings.Contains(d["hint"].(string), "retry once") {
		t.Fatalf("a refused token: %v %v", res.Content, d)
	}
	noSecrets(t, res, first)
	res = callTool(t, shop, "listBooks", map[string]any{})
	if res.IsError {
		t.Fatalf("the call after a refused token: %v", res.Content)
	}
	if second := lastSeen(); second == first || tokenRequests.Load() != 2 {
		t.Errorf("after a refusal the token was not replaced (token requests: %d)", tokenRequests.Load())
	}

	// The authorization server refuses the client: no request reaches
	// the API, and the error names what the operator must fix.
	before := len(seen)
	bad := newApp(t, "../examples/openapi/bookshop.yaml", WithBaseURL(api.URL+"/v1"), creds("wrong-secret"))
	res = callTool(t, bad, "listBooks", map[string]any{})
	d = errData(res)
	if !res.IsError || d["code"] != string(toolerr.Unauthenticated) || !strings.Contains(d["hint"].(string), "auth.clientCredentials") {
		t.Fatalf("a refused client: %v %v", res.Content, d)
	}
	if strings.Contains(mustJSON(t, res), "wrong-secret") {
		t.Errorf("the client secret reached the result: %s", mustJSON(t, res))
	}
	mu.Lock()
	after := len(seen)
	mu.Unlock()
	if after != before {
		t.Errorf("a call without a token reached the API")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
