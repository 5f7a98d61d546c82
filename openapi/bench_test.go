package openapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// generatedDoc is an OpenAPI 3.0 document with n operations (n/4 paths,
// each with GET, PUT, POST and DELETE), path, query and header parameters,
// a JSON body and responses that share $ref'd component schemas, one of
// them recursive: the shape of a large real API.
func generatedDoc(n int) []byte {
	paths := map[string]any{}
	for i := 0; i < n/4; i++ {
		id := map[string]any{"name": "id", "in": "path", "required": true, "schema": map[string]any{"type": "string"}}
		limit := map[string]any{"name": "limit", "in": "query", "schema": map[string]any{"type": "integer", "minimum": 1, "maximum": 100}}
		trace := map[string]any{"name": "X-Trace", "in": "header", "schema": map[string]any{"type": "string"}}
		ok := func(schema string) map[string]any {
			return map[string]any{"200": map[string]any{"description": "ok", "content": map[string]any{
				"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/" + schema}}}}}
		}
		body := map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{
			"schema": map[string]any{"$ref": "#/components/schemas/NewThing"}}}}
		paths[fmt.Sprintf("/res%d/{id}", i)] = map[string]any{
			"parameters": []any{id},
			"get":        map[string]any{"operationId": fmt.Sprintf("get%d", i), "tags": []any{fmt.Sprintf("t%d", i%20)}, "summary": fmt.Sprintf("Get resource %d", i), "parameters": []any{limit, trace}, "responses": ok("Thing")},
			"put":        map[string]any{"operationId": fmt.Sprintf("put%d", i), "summary": fmt.Sprintf("Replace resource %d", i), "requestBody": body, "responses": ok("Thing")},
			"post":       map[string]any{"operationId": fmt.Sprintf("post%d", i), "summary": fmt.Sprintf("Act on resource %d", i), "requestBody": body, "responses": ok("Node")},
			"delete":     map[string]any{"operationId": fmt.Sprintf("delete%d", i), "summary": fmt.Sprintf("Delete resource %d", i), "responses": map[string]any{"204": map[string]any{"description": "gone"}}},
		}
	}
	doc := map[string]any{
		"openapi": "3.0.3", "info": map[string]any{"title": "Generated", "version": "1"},
		"servers": []any{map[string]any{"url": "https://api.example.com"}},
		"paths":   paths,
		"components": map[string]any{"schemas": map[string]any{
			"NewThing": map[string]any{"type": "object", "required": []any{"name"}, "properties": map[string]any{
				"name": map[string]any{"type": "string"}, "size": map[string]any{"type": "integer"},
				"kind": map[string]any{"type": "string", "enum": []any{"a", "b", "c"}}}},
			"Thing": map[string]any{"allOf": []any{map[string]any{"$ref": "#/components/schemas/NewThing"},
				map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string", "readOnly": true}}}}},
			"Node": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"},
				"children": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/components/schemas/Node"}}}},
		}},
	}
	b, _ := json.Marshal(doc)
	return b
}

// BenchmarkCatalogBuild measures reading a 1,000-operation document and
// building its tools (Parse + New), the work an OpenAPI app does at start
// and on each reload.
func BenchmarkCatalogBuild(b *testing.B) {
	data := generatedDoc(1000)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	var tools int
	for b.Loop() {
		doc, err := Parse(context.Background(), data, nil)
		if err != nil {
			b.Fatal(err)
		}
		a, err := New(doc)
		if err != nil {
			b.Fatal(err)
		}
		tools = len(a.Operations())
	}
	if tools != 1000 {
		b.Fatalf("built %d tools, want 1000", tools)
	}
	b.ReportMetric(float64(tools), "tools")
	b.ReportMetric(retainedMB(b, data), "retained-MB")
}

// retainedMB is the heap an app built from data keeps alive: the document
// and its tools, after garbage collection.
func retainedMB(b *testing.B, data []byte) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	doc, err := Parse(context.Background(), data, nil)
	if err != nil {
		b.Fatal(err)
	}
	a, err := New(doc)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(a)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
}

// BenchmarkCallOverhead compares, against the same local server, a direct
// HTTP request, the same request through an OpenAPI tool's handler (input
// check, serialisation, result), and through the app's MCP server with an
// in-process client (what package gateway does for every call).
func BenchmarkCallOverhead(b *testing.B) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"b-1","title":"Dune","genre":"scifi","price":9.5,"authorId":"a-1"}`))
	}))
	defer api.Close()
	a, err := New(load(b, "../examples/openapi/bookshop.yaml"), WithBaseURL(api.URL))
	if err != nil {
		b.Fatal(err)
	}
	args := map[string]any{"bookId": "b-1"}
	b.Run("direct-http", func(b *testing.B) {
		hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		b.ReportAllocs()
		for b.Loop() {
			req, _ := http.NewRequest(http.MethodGet, api.URL+"/books/b-1", nil)
			req.Header.Set("Accept", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var v map[string]any
			if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v); err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
	})
	var handler func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error)
	for _, st := range a.Tools() {
		if st.Tool.Name == "getBook" {
			handler = st.Handler
		}
	}
	b.Run("openapi-handler", func(b *testing.B) {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "getBook", args
		b.ReportAllocs()
		for b.Loop() {
			res, err := handler(context.Background(), req)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
	b.Run("openapi-mcp-inprocess", func(b *testing.B) {
		c, err := client.NewInProcessClient(a.Server("bench", "1"))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		ctx := context.Background()
		if err := c.Start(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: mcp.LATEST_LEGACY_PROTOCOL_VERSION}}); err != nil {
			b.Fatal(err)
		}
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "getBook", args
		b.ReportAllocs()
		for b.Loop() {
			res, err := c.CallTool(ctx, req)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
}
