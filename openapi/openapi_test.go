package openapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/toolerr"
)

func load(t testing.TB, path string) *Document {
	t.Helper()
	doc, err := Load(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func newApp(t testing.TB, path string, opts ...Option) *App {
	t.Helper()
	a, err := New(load(t, path), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func op(t testing.TB, a *App, name string) *Operation {
	t.Helper()
	for _, o := range a.Operations() {
		if o.Name == name {
			return o
		}
	}
	var names []string
	for _, o := range a.Operations() {
		names = append(names, o.Name)
	}
	t.Fatalf("no operation %s; have %v", name, names)
	return nil
}

func schemaOf(t testing.TB, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLoadShapes(t *testing.T) {
	tests := []struct {
		path, version, base string
		ops                 []string
	}{
		{"../examples/openapi/bookshop.yaml", "3.0.3", "http://127.0.0.1:4010",
			[]string{"createBook", "createOrder", "deleteBook", "getBook", "getCategory", "getOrder", "get_admin_stats", "listBooks"}},
		{"testdata/v31.yaml", "3.1.0", "https://eu.api.example.com/v2",
			[]string{"get_a_b", "get_a_b_2", "get_items_id", "search", "upload"}},
		{"testdata/swagger.json", "2.0", "https://legacy.example.com/api", []string{"updateUser"}},
		{"testdata/external/main.yaml", "3.0.3", "https://split.example.com", []string{"listPets"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			doc := load(t, tt.path)
			if doc.Version != tt.version {
				t.Errorf("version = %q, want %q", doc.Version, tt.version)
			}
			a, err := New(doc)
			if err != nil {
				t.Fatal(err)
			}
			if a.BaseURL() != tt.base {
				t.Errorf("base URL = %q, want %q", a.BaseURL(), tt.base)
			}
			var names []string
			for _, o := range a.Operations() {
				names = append(names, o.Name)
				if m, _, err := catalog.ReadMeta(o.Tool); err != nil || m.Source != catalog.SourceOpenAPI {
					t.Errorf("%s: meta %+v, %v", o.Name, m, err)
				}
			}
			slices.Sort(names)
			if !slices.Equal(names, tt.ops) {
				t.Errorf("operations = %v, want %v", names, tt.ops)
			}
		})
	}
}

func TestParseWithoutLocation(t *testing.T) {
	for _, path := range []string{"../examples/openapi/bookshop.yaml", "testdata/swagger.json"} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := Parse(context.Background(), data, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if _, err := New(doc); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	data, _ := os.ReadFile("testdata/external/main.yaml")
	if _, err := Parse(context.Background(), data, nil); err == nil || !strings.Contains(err.Error(), "without a location") {
		t.Errorf("a document with external $refs and no location: %v", err)
	}
}

func TestLoadRefusals(t *testing.T) {
	tests := []struct{ path, want string }{
		{"testdata/escape.yaml", "leaves the document's directory"},
		{"testdata/empty.json", "no paths"},
		{"testdata/missing.yaml", "missing.yaml"},
		{"../go.mod", "neither JSON nor YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			_, err := Load(context.Background(), tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestToolSynthesis(t *testing.T) {
	shop := newApp(t, "../examples/openapi/bookshop.yaml", WithApp("shop"))
	shapes := newApp(t, "testdata/v31.yaml")
	legacy := newApp(t, "testdata/swagger.json")

	t.Run("merged input with required", func(t *testing.T) {
		in := schemaOf(t, op(t, shop, "createOrder").Tool.RawInputSchema)
		props := in["properties"].(map[string]any)
		for _, k := range []string{"Idempotency-Key", "bookId", "quantity", "shipTo"} {
			if props[k] == nil {
				t.Errorf("input lacks %s: %v", k, props)
			}
		}
		req := in["required"].([]any)
		if len(req) != 4 {
			t.Errorf("required = %v, want the header and the body's three", req)
		}
		if in["additionalProperties"] != false {
			t.Error("unknown fields must be refused")
		}
	})
	t.Run("readOnly left out of input", func(t *testing.T) {
		in := schemaOf(t, op(t, shop, "createBook").Tool.RawInputSchema)
		if _, ok := in["properties"].(map[string]any)["id"]; ok {
			t.Error("a readOnly property is in the input")
		}
	})
	t.Run("cycle kept as $defs", func(t *testing.T) {
		out := schemaOf(t, op(t, shop, "getCategory").Tool.RawOutputSchema)
		defs, _ := out["$defs"].(map[string]any)
		cat, _ := defs["Category"].(map[string]any)
		if cat == nil || out["type"] != "object" {
			t.Fatalf("output schema = %v", out)
		}
		parent := cat["properties"].(map[string]any)["parent"].(map[string]any)
		if parent["$ref"] != "#/$defs/Category" {
			t.Errorf("parent = %v, want a $ref to Category", parent)
		}
	})
	t.Run("name clash across locations", func(t *testing.T) {
		in := schemaOf(t, op(t, shapes, "get_items_id").Tool.RawInputSchema)
		props := in["properties"].(map[string]any)
		if props["path_id"] == nil || props["header_id"] == nil || props["id"] != nil {
			t.Errorf("props = %v, want path_id and header_id", props)
		}
		if req := in["required"].([]any); len(req) != 1 || req[0] != "path_id" {
			t.Errorf("required = %v", req)
		}
	})
	t.Run("an operation that cannot be served is skipped, not fatal", func(t *testing.T) {
		sk := shapes.Skipped()
		if len(sk) != 1 || sk[0].ID != "postXML" || !strings.Contains(sk[0].Reason, "application/xml") {
			t.Errorf("skipped = %+v", sk)
		}
	})
	t.Run("body clashing with a parameter goes under body", func(t *testing.T) {
		in := schemaOf(t, op(t, shapes, "search").Tool.RawInputSchema)
		props := in["properties"].(map[string]any)
		if props["body"] == nil || props["q"] != nil || !slices.Contains(in["required"].([]any), any("body")) {
			t.Errorf("input = %v", in)
		}
	})
	t.Run("3.1 types and non-object output", func(t *testing.T) {
		out := schemaOf(t, op(t, shapes, "get_items_id").Tool.RawOutputSchema)
		note := out["properties"].(map[string]any)["note"].(map[string]any)
		if types, ok := note["type"].([]any); !ok || len(types) != 2 {
			t.Errorf("note = %v, want [string null]", note)
		}
		if op(t, shapes, "search").Tool.RawOutputSchema != nil {
			t.Error("an array response cannot be an MCP output schema")
		}
	})
	t.Run("swagger body and recursion", func(t *testing.T) {
		// User refers to itself: the body stays whole, under body, as a
		// $ref to its definition.
		in := schemaOf(t, op(t, legacy, "updateUser").Tool.RawInputSchema)
		body, _ := in["properties"].(map[string]any)["body"].(map[string]any)
		defs, _ := in["$defs"].(map[string]any)
		if body["$ref"] != "#/$defs/User" || defs["User"] == nil || len(in["required"].([]any)) != 2 {
			t.Errorf("input = %v", in)
		}
	})
	t.Run("annotations from the method", func(t *testing.T) {
		for name, want := range map[string][3]bool{ // readOnly, destructive, idempotent
			"listBooks": {true, false, true}, "createBook": {false, false, false}, "deleteBook": {false, true, true},
		} {
			a := op(t, shop, name).Tool.Annotations
			got := [3]bool{*a.ReadOnlyHint, *a.DestructiveHint, *a.IdempotentHint}
			if got != want || a.OpenWorldHint == nil || !*a.OpenWorldHint {
				t.Errorf("%s: hints %v (openWorld %v), want %v", name, got, a.OpenWorldHint, want)
			}
		}
	})
	t.Run("examples and tags", func(t *testing.T) {
		m, _, _ := catalog.ReadMeta(op(t, shop, "createBook").Tool)
		if len(m.Examples) != 1 || m.Examples[0].Input["title"] != "Dune" || m.AppID != "shop" || m.Tags[0] != "books" {
			t.Errorf("meta = %+v", m)
		}
		m, _, _ = catalog.ReadMeta(op(t, shop, "getBook").Tool)
		if len(m.Examples) != 1 || m.Examples[0].Input["bookId"] != "b-1" {
			t.Errorf("a path-level parameter's example is lost: %+v", m.Examples)
		}
	})
}

// recorder is an API that records the requests it receives.
type recorder struct {
	hits atomic.Int64
	last atomic.Pointer[http.Request]
	body atomic.Pointer[string]
}

func (r *recorder) server(t *testing.T, h http.HandlerFunc) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.hits.Add(1)
		b, _ := io.ReadAll(req.Body)
		s := string(b)
		r.body.Store(&s)
		r.last.Store(req)
		h(w, req)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func callTool(t *testing.T, a *App, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	for _, st := range a.Tools() {
		if st.Tool.Name == name {
			req := mcp.CallToolRequest{}
			req.Params.Name = name
			req.Params.Arguments = args
			res, err := st.Handler(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func errData(res *mcp.CallToolResult) map[string]any {
	if res.Meta == nil {
		return nil
	}
	d, _ := res.Meta.AdditionalFields[toolerr.MetaKey].(map[string]any)
	return d
}

func TestCalls(t *testing.T) {
	var rec recorder
	status := atomic.Int64{}
	status.Store(200)
	var retry atomic.Pointer[string]
	api := rec.server(t, func(w http.ResponseWriter, r *http.Request) {
		if ra := retry.Load(); ra != nil {
			w.Header().Set("Retry-After", *ra)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(status.Load()))
		_, _ = w.Write([]byte(`{"ok":true,"echo":"` + r.URL.Query().Get("api_key") + `"}`))
	})
	redact := strings.NewReplacer("k3y-value", "[redacted]", "t0ken-value", "[redacted]").Replace
	shop := newApp(t, "../examples/openapi/bookshop.yaml", WithBaseURL(api.URL+"/v1"), WithRedactor(redact),
		WithCredentials(Credentials{Headers: map[string]string{"Authorization": "Bearer t0ken-value"}, Query: map[string]string{"api_key": "k3y-value"}}))
	shapes := newApp(t, "testdata/v31.yaml", WithBaseURL(api.URL))

	t.Run("path escaping, query styles, headers, credentials", func(t *testing.T) {
		res := callTool(t, shop, "listBooks", map[string]any{"genre": "scifi", "tags": []any{"a b", "c/d"}, "X-Request-Id": "r1", "limit": 5})
		if res.IsError {
			t.Fatal(res.Content)
		}
		r := rec.last.Load()
		if r.URL.Path != "/v1/books" || r.URL.RawQuery != "genre=scifi&limit=5&tags=a%20b,c%2Fd&api_key=k3y-value" {
			t.Errorf("request = %s?%s", r.URL.Path, r.URL.RawQuery)
		}
		if r.Header.Get("X-Request-Id") != "r1" || r.Header.Get("Authorization") != "Bearer t0ken-value" {
			t.Errorf("headers = %v", r.Header)
		}
		if b, _ := json.Marshal(res); strings.Contains(string(b), "k3y-value") {
			t.Errorf("the query credential came back: %s", b)
		}
		callTool(t, shop, "getBook", map[string]any{"bookId": "b-1/../x?y#z"})
		if got := rec.last.Load().URL.EscapedPath(); got != "/v1/books/b-1%2F..%2Fx%3Fy%23z" {
			t.Errorf("path = %s: a path value must not change the path", got)
		}
	})
	t.Run("JSON body merged", func(t *testing.T) {
		res := callTool(t, shop, "createOrder", map[string]any{"Idempotency-Key": "12345678", "bookId": "b-1", "quantity": 2,
			"shipTo": map[string]any{"street": "1 Main", "city": "Oslo", "country": "NO"}})
		if res.IsError {
			t.Fatal(res.Content)
		}
		r := rec.last.Load()
		var got map[string]any
		_ = json.Unmarshal([]byte(*rec.body.Load()), &got)
		if r.Header.Get("Content-Type") != "application/json" || got["quantity"] != 2.0 || got["Idempotency-Key"] != nil ||
			r.Header.Get("Idempotency-Key") != "12345678" {
			t.Errorf("body %v, headers %v", got, r.Header)
		}
	})
	t.Run("deepObject, cookie, form body", func(t *testing.T) {
		callTool(t, shapes, "get_items_id", map[string]any{"path_id": 7, "filter": map[string]any{"color": "red"}, "session": "s1"})
		r := rec.last.Load()
		if r.URL.Path != "/items/7" || r.URL.RawQuery != "filter%5Bcolor%5D=red" || r.Header.Get("Cookie") != "session=s1" {
			t.Errorf("request = %s?%s cookie %q", r.URL.Path, r.URL.RawQuery, r.Header.Get("Cookie"))
		}
		callTool(t, shapes, "upload", map[string]any{"name": "x y", "tags": []any{"a", "b"}})
		if got := *rec.body.Load(); got != "name=x%20y&tags=a&tags=b" || rec.last.Load().Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			t.Errorf("form body = %q", got)
		}
	})
	t.Run("bad input refused before any request", func(t *testing.T) {
		before := rec.hits.Load()
		for _, args := range []map[string]any{
			{},                                 // missing path parameter
			{"bookId": "b-1", "colour": "red"}, // unknown field
			{"bookId": map[string]any{"a": []any{1}}}, // nested
		} {
			res := callTool(t, shop, "getBook", args)
			if !res.IsError || errData(res)["code"] != string(toolerr.Validation) {
				t.Errorf("%v: %v", args, res.Content)
			}
		}
		if rec.hits.Load() != before {
			t.Error("a refused input reached the API")
		}
	})
	t.Run("HTTP errors become coded tool errors", func(t *testing.T) {
		defer status.Store(200)
		defer retry.Store(nil)
		seven := "7"
		retry.Store(&seven)
		for code, want := range map[int64]struct {
			code  toolerr.Code
			retry bool
			hint  string
		}{
			401: {toolerr.Unauthenticated, false, "asks for: bearerAuth"}, 403: {toolerr.AccessDenied, false, "do not retry"},
			404: {toolerr.NotFound, false, "identifiers"}, 429: {toolerr.Execution, true, "wait 7 seconds"},
			503: {toolerr.Execution, true, "wait 7 seconds"}, 400: {toolerr.Execution, false, "change the input"},
		} {
			status.Store(code)
			res := callTool(t, shop, "getBook", map[string]any{"bookId": "b-1"})
			d := errData(res)
			if !res.IsError || d["code"] != string(want.code) || d["retryable"] != want.retry || !strings.Contains(d["hint"].(string), want.hint) {
				t.Errorf("HTTP %d: %v", code, d)
			}
			if strings.Contains(d["message"].(string), "k3y-value") || !strings.Contains(d["message"].(string), fmt.Sprintf("HTTP %d", code)) {
				t.Errorf("HTTP %d: message %q", code, d["message"])
			}
		}
	})
}

func TestResponseCapAndTimeout(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/orders/slow" {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"big":"` + strings.Repeat("x", 2000) + `"}`))
	}))
	defer api.Close()
	a := newApp(t, "../examples/openapi/bookshop.yaml", WithBaseURL(api.URL), WithMaxResponseBytes(1000),
		WithOverrides(func(r OperationRef) (Override, bool) {
			return Override{Timeout: 100 * time.Millisecond}, r.ID == "getOrder"
		}))
	res := callTool(t, a, "getBook", map[string]any{"bookId": "b-1"})
	if errData(res)["code"] != string(toolerr.Limit) {
		t.Errorf("an oversized response: %v", res.Content)
	}
	res = callTool(t, a, "getOrder", map[string]any{"orderId": "slow"})
	if d := errData(res); d["code"] != string(toolerr.Timeout) || d["retryable"] != true {
		t.Errorf("a slow API: %v", d)
	}
}

func TestSSRFGuard(t *testing.T) {
	var targetHits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		targetHits.Add(1)
		_, _ = w.Write([]byte(`{"secret":"internal"}`))
	}))
	defer target.Close()
	var redirectTo atomic.Pointer[string]
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/books/b-2" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"id":"b-2"}`))
			return
		}
		http.Redirect(w, r, *redirectTo.Load(), http.StatusFound)
	}))
	defer api.Close()
	a := newApp(t, "../examples/openapi/bookshop.yaml", WithBaseURL(api.URL))
	tests := []struct{ name, to, want string }{
		{"loopback on another port", target.URL + "/x", "another origin"},
		{"private range", "http://10.0.0.1/latest/meta-data", "another origin"},
		{"link-local metadata", "http://169.254.169.254/latest/meta-data", "another origin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			redirectTo.Store(&tt.to)
			res := callTool(t, a, "getBook", map[string]any{"bookId": "b-1"})
			if d := errData(res); !res.IsError || d["code"] != string(toolerr.AccessDenied) || !strings.Contains(d["message"].(string), tt.want) {
				t.Errorf("redirect to %s: %v", tt.to, res.Content)
			}
		})
	}
	if targetHits.Load() != 0 {
		t.Error("a redirect reached the other server")
	}
	t.Run("same-origin redirect followed", func(t *testing.T) {
		to := api.URL + "/books/b-2"
		redirectTo.Store(&to)
		if res := callTool(t, a, "getBook", map[string]any{"bookId": "b-1"}); res.IsError {
			t.Errorf("same-origin redirect: %v", res.Content)
		}
	})
	t.Run("a public name resolving to a private address is refused", func(t *testing.T) {
		// localhost.example is not loopback by name, but the guard judges
		// the address dialled: point a public-looking base URL at 127.0.0.1.
		guarded := newApp(t, "../examples/openapi/bookshop.yaml", WithBaseURL("http://api.example.test:1"),
			WithTransport(rewriteHost(guardedTransport(mustURL(t, "http://api.example.test:1"), false), strings.TrimPrefix(api.URL, "http://"))))
		res := callTool(t, guarded, "getBook", map[string]any{"bookId": "b-2"})
		if d := errData(res); d["code"] != string(toolerr.AccessDenied) || !strings.Contains(d["message"].(string), "allowPrivateNetwork") {
			t.Errorf("private address: %v", res.Content)
		}
		allowed := newApp(t, "../examples/openapi/bookshop.yaml", WithBaseURL("http://api.example.test:1"),
			WithTransport(rewriteHost(guardedTransport(mustURL(t, "http://api.example.test:1"), true), strings.TrimPrefix(api.URL, "http://"))))
		if res := callTool(t, allowed, "getBook", map[string]any{"bookId": "b-2"}); res.IsError {
			t.Errorf("allowPrivateNetwork: %v", res.Content)
		}
	})
}

// rewriteHost sends every request to addr through rt, as a DNS answer
// pointing the base URL's name there would.
func rewriteHost(rt http.RoundTripper, addr string) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.URL.Host = addr
		return rt.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
