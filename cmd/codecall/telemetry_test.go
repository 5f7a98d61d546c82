package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
)

// TestServeExportsSpans runs codecall serve with OTEL_EXPORTER_OTLP_ENDPOINT
// pointing at a local collector: a plan's spans arrive there, and without
// the variable no exporter is set up.
func TestServeExportsSpans(t *testing.T) {
	if otlpConfigured(func(string) string { return "" }) {
		t.Fatal("no variables must mean no exporter")
	}
	var posts atomic.Int64
	var body atomic.Value
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/traces" {
			b, _ := io.ReadAll(r.Body)
			body.Store(string(b))
			posts.Add(1)
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)

	inR, inW := io.Pipe()
	var out, errb mcptest.Buffer
	done := make(chan int)
	go func() { done <- run(context.Background(), []string{"serve"}, inR, &out, &errb) }()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"codecall.execute","arguments":{"script":"return (await callTool('crm.find_contacts', {query: 'ada'})).contacts.length"}}}`,
	} {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), `"id":2`) {
		if time.Now().After(deadline) {
			t.Fatalf("no answer to the plan; stderr:\n%s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	inW.Close() // end of input: serve stops and flushes its spans
	if code := <-done; code != 0 {
		t.Fatalf("serve exited with %d; stderr:\n%s", code, errb.String())
	}
	if posts.Load() == 0 {
		t.Fatalf("no spans reached the collector; stderr:\n%s", errb.String())
	}
	got, _ := body.Load().(string)
	for _, span := range []string{"codecall.execute", "codecall.tool_call"} {
		if !strings.Contains(got, span) {
			t.Errorf("the export holds no %s span", span)
		}
	}
}
