package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
)

const shopToken = "s3cret-shop-token"

// shopAPI is a small implementation of examples/openapi/bookshop.yaml that
// echoes the Authorization header it received in getOrder, as a careless
// API might.
func shopAPI(t *testing.T, hits *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+shopToken {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"message":"no token"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/books/b-1":
			_, _ = w.Write([]byte(`{"id":"b-1","title":"Dune","genre":"scifi","price":9.5,"authorId":"a-1"}`))
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/orders/"):
			_ = json.NewEncoder(w).Encode(map[string]any{"id": strings.TrimPrefix(r.URL.Path, "/orders/"), "status": "placed",
				"bookId": "b-1", "quantity": 1, "note": "called with " + r.Header.Get("Authorization")})
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"no such thing"}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// shopDoc copies the example document into a temporary directory, where a
// test may edit it.
func shopDoc(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../examples/openapi/bookshop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bookshop.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func shopUpstream(doc, base string) presets.Upstream {
	return presets.Upstream{OpenAPI: doc, BaseURL: base, Auth: presets.OpenAPIAuth{Bearer: "${CODECALLTEST_SHOP_TOKEN}"}}
}

func shopLookup(k string) (string, bool) {
	if k == "CODECALLTEST_SHOP_TOKEN" {
		return shopToken, true
	}
	return "", false
}

func TestOpenAPIAppServesOperationsAsTools(t *testing.T) {
	var hits atomic.Int64
	api := shopAPI(t, &hits)
	g, logs := newGateway(t, map[string]presets.Upstream{"shop": shopUpstream(shopDoc(t), api.URL)}, WithLookupEnv(shopLookup))
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := connect(t, g.Server())
	st := g.Server().GetTool("shop.getBook")
	if st == nil {
		t.Fatal("shop.getBook is not registered")
	}
	m, _, err := catalog.ReadMeta(st.Tool)
	if err != nil || m.Source != catalog.SourceOpenAPI || m.AppID != "shop" || len(m.Tags) != 1 || m.Tags[0] != "books" {
		t.Errorf("meta = %+v (%v), want source openapi, app shop, tags [books]", m, err)
	}
	if got := g.Status()[0]; got.Transport != presets.UpstreamOpenAPI || got.State != stateReady || got.Tools != 8 {
		t.Errorf("status = %+v, want an openapi app, ready, with 8 tools", got)
	}

	res := call(t, s, "shop.getBook", map[string]any{"bookId": "b-1"})
	if res.IsError || !strings.Contains(text(res), "Dune") {
		t.Fatalf("getBook = %s", text(res))
	}
	if sc, ok := res.StructuredContent.(map[string]any); !ok || sc["title"] != "Dune" {
		t.Errorf("structuredContent = %#v, want the book", res.StructuredContent)
	}

	res = call(t, s, "shop.getOrder", map[string]any{"orderId": "o-7"})
	if res.IsError || strings.Contains(text(res), shopToken) || !strings.Contains(text(res), "[redacted]") {
		t.Errorf("an echoed credential must come back redacted: %s", text(res))
	}
	if b, _ := json.Marshal(res); strings.Contains(string(b), shopToken) {
		t.Errorf("the credential is in the result: %s", b)
	}

	res = call(t, s, "shop.getBook", map[string]any{"bookId": "b-404"})
	if !res.IsError || !strings.Contains(text(res), "HTTP 404") || metaCode(res) != toolerr.NotFound {
		t.Errorf("a 404 must be a NOT_FOUND tool error: %s (code %q)", text(res), metaCode(res))
	}
	if strings.Contains(logs.String(), shopToken) {
		t.Error("the credential is in the logs")
	}
}

func metaCode(res *mcp.CallToolResult) toolerr.Code {
	if res.Meta == nil {
		return ""
	}
	data, _ := res.Meta.AdditionalFields[toolerr.MetaKey].(map[string]any)
	code, _ := data["code"].(string)
	return toolerr.Code(code)
}

func TestOpenAPISelectionAndOverrides(t *testing.T) {
	var hits atomic.Int64
	api := shopAPI(t, &hits)
	up := shopUpstream(shopDoc(t), api.URL)
	up.IncludeTools = []string{"tag:orders", "GET /books/*"}
	up.ExcludeTools = []string{"deleteBook"}
	up.Operations = map[string]presets.OperationOverride{"getOrder": {RequiresApproval: catalog.Bool(true)}}
	g, _ := newGateway(t, map[string]presets.Upstream{"shop": up}, WithLookupEnv(shopLookup))
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range g.Server().ListTools() {
		names = append(names, name)
	}
	want := map[string]bool{"shop.createOrder": true, "shop.getOrder": true, "shop.getBook": true}
	if len(names) != len(want) {
		t.Errorf("tools = %v, want %v", names, want)
	}
	for _, n := range names {
		if !want[n] {
			t.Errorf("tool %s should not be served", n)
		}
	}
	m, _, _ := catalog.ReadMeta(g.Server().GetTool("shop.getOrder").Tool)
	if m.RequiresApproval == nil || !*m.RequiresApproval {
		t.Error("operations.getOrder.requiresApproval is not applied")
	}
}

func TestOpenAPIReloadAfterDocumentEdit(t *testing.T) {
	var hits atomic.Int64
	api := shopAPI(t, &hits)
	doc := shopDoc(t)
	servers := map[string]presets.Upstream{"shop": shopUpstream(doc, api.URL)}
	g, _ := newGateway(t, servers, WithLookupEnv(shopLookup))
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := connect(t, g.Server())
	if _, err := s.ListTools(context.Background(), mcp.ListToolsRequest{}); err != nil {
		t.Fatal(err)
	}
	before := len(s.notifications(string(mcp.MethodNotificationToolsListChanged)))
	// Unchanged document: nothing restarts, no notification.
	if err := g.Reload(context.Background(), servers); err != nil {
		t.Fatal(err)
	}
	if n := len(s.notifications(string(mcp.MethodNotificationToolsListChanged))) - before; n != 0 {
		t.Errorf("a reload with an unchanged document sent %d list_changed", n)
	}
	data, _ := os.ReadFile(doc)
	edited := strings.Replace(string(data), "operationId: getOrder", "operationId: fetchOrder", 1)
	if err := os.WriteFile(doc, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := g.Reload(context.Background(), servers); err != nil {
		t.Fatal(err)
	}
	if g.Server().GetTool("shop.fetchOrder") == nil || g.Server().GetTool("shop.getOrder") != nil {
		t.Error("the edited document's operations are not served")
	}
	eventually(t, "tools/list_changed", func() bool {
		return len(s.notifications(string(mcp.MethodNotificationToolsListChanged))) > before
	})
}

func TestOpenAPIEntryValidation(t *testing.T) {
	tests := []struct {
		name string
		up   presets.Upstream
		want string
	}{
		{"no document", presets.Upstream{Type: "openapi"}, "openapi: required"},
		{"url too", presets.Upstream{OpenAPI: "a.yaml", URL: "http://h/"}, "not url"},
		{"bad base", presets.Upstream{OpenAPI: "a.yaml", BaseURL: "ftp://h"}, "baseUrl"},
		{"auth on stdio", presets.Upstream{Command: "x", Auth: presets.OpenAPIAuth{Bearer: "t"}}, "only applies to OpenAPI apps"},
		{"bad placeholder", presets.Upstream{OpenAPI: "a.yaml", Auth: presets.OpenAPIAuth{Bearer: "${T"}}, "auth.bearer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(map[string]presets.Upstream{"a": tt.up})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestOpenAPIDocumentMissingIsReported(t *testing.T) {
	g, _ := newGateway(t, map[string]presets.Upstream{"shop": {OpenAPI: filepath.Join(t.TempDir(), "nope.yaml")}})
	err := g.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("Start = %v, want the missing document named", err)
	}
}

// A document read from a URL is fetched again on reload; a new version
// restarts the app.
func TestOpenAPIReloadRefetchesURL(t *testing.T) {
	var hits atomic.Int64
	api := shopAPI(t, &hits)
	data, err := os.ReadFile("../examples/openapi/bookshop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var served atomic.Pointer[string]
	doc := string(data)
	served.Store(&doc)
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write([]byte(*served.Load()))
	}))
	defer docs.Close()
	servers := map[string]presets.Upstream{"shop": shopUpstream(docs.URL+"/openapi.yaml", api.URL)}
	g, _ := newGateway(t, servers, WithLookupEnv(shopLookup))
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g.Server().GetTool("shop.getOrder") == nil {
		t.Fatal("the document from the URL is not served")
	}
	next := strings.Replace(doc, "operationId: getOrder", "operationId: fetchOrder", 1)
	served.Store(&next)
	if err := g.Reload(context.Background(), servers); err != nil {
		t.Fatal(err)
	}
	if g.Server().GetTool("shop.fetchOrder") == nil || g.Server().GetTool("shop.getOrder") != nil {
		t.Error("the new version of the document is not served after reload")
	}
}
