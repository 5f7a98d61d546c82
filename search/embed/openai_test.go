package embed

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codecall-go/codecall/search"
)

var (
	_ search.Embedder = (*OpenAI)(nil)
	_ search.Embedder = (*Model2Vec)(nil)
)

// fakeServer implements the OpenAI embeddings protocol: each input's
// vector is [len(input), first byte, 1], answered in reverse order with
// explicit indexes, as servers may.
type fakeServer struct {
	requests atomic.Int32
	maxBatch atomic.Int32
	key      string
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, `{"error":{"message":"no route"}}`, http.StatusNotFound)
		return
	}
	if f.key != "" && r.Header.Get("Authorization") != "Bearer "+f.key {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`))
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"bad request"}`))
		return
	}
	if n := int32(len(req.Input)); n > f.maxBatch.Load() {
		f.maxBatch.Store(n)
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []item
	for i := len(req.Input) - 1; i >= 0; i-- {
		in := req.Input[i]
		data = append(data, item{"embedding", i, []float32{float32(len(in)), float32(in[0]), 1}})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": req.Model, "data": data})
}

func TestOpenAIEmbed(t *testing.T) {
	f := &fakeServer{key: "sk-test"}
	srv := httptest.NewServer(f)
	defer srv.Close()

	for _, base := range []string{srv.URL, srv.URL + "/", srv.URL + "/v1", srv.URL + "/v1/embeddings"} {
		e, err := NewOpenAI(base, "nomic-embed-text", WithAPIKey("sk-test"))
		if err != nil {
			t.Fatal(err)
		}
		if e.URL() != srv.URL+"/v1/embeddings" {
			t.Errorf("base %q: URL %q", base, e.URL())
		}
	}

	e, err := NewOpenAI(srv.URL, "m", WithAPIKey("sk-test"), WithBatchSize(3))
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee", "", "g"}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vecs), len(texts))
	}
	for i, v := range vecs {
		in := texts[i]
		if in == "" {
			in = " "
		}
		if v[0] != float32(len(in)) || v[1] != float32(in[0]) {
			t.Errorf("vector %d = %v: out of order", i, v)
		}
	}
	if got := f.requests.Load(); got != 3 {
		t.Errorf("%d requests for 7 texts in batches of 3, want 3", got)
	}
	if got := f.maxBatch.Load(); got != 3 {
		t.Errorf("largest batch %d, want 3", got)
	}
}

func TestOpenAIErrors(t *testing.T) {
	ctx := context.Background()
	handler := func(status int, body string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}))
	}
	cases := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"openai error", 401, `{"error":{"message":"Incorrect API key provided"}}`, "401 Unauthorized: Incorrect API key provided"},
		{"ollama error", 404, `{"error":"model \"nomic\" not found, try pulling it first"}`, `404 Not Found: model "nomic" not found`},
		{"plain error", 500, "boom", "500 Internal Server Error: boom"},
		{"long error", 500, strings.Repeat("x", 5000), "…"},
		{"wrong count", 200, `{"data":[{"index":0,"embedding":[1,2]}]}`, "returned 1 embeddings for 2 inputs"},
		{"dimension", 200, `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2,3]}]}`, "dimension 3, earlier ones had 2"},
		{"repeated index", 200, `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`, "bad or repeated index 0"},
		{"index range", 200, `{"data":[{"index":0,"embedding":[1]},{"index":7,"embedding":[1]}]}`, "bad or repeated index 7"},
		{"empty vector", 200, `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[1]}]}`, "empty embedding for input 0"},
		{"not json", 200, `<html>`, "decode response"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := handler(c.status, c.body)
			defer srv.Close()
			e, err := NewOpenAI(srv.URL, "m")
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Embed(ctx, []string{"a", "b"})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
			if len(err.Error()) > 1000 {
				t.Errorf("error of %d bytes: the server's message is not truncated", len(err.Error()))
			}
		})
	}

	// Dimension drift across calls is caught too.
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			_, _ = w.Write([]byte(`{"data":[{"index":0,"embedding":[1,2]}]}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":[{"index":0,"embedding":[1,2,3]}]}`))
	}))
	defer srv.Close()
	e, _ := NewOpenAI(srv.URL, "m")
	if _, err := e.Embed(ctx, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(ctx, []string{"a"}); err == nil || !strings.Contains(err.Error(), "dimension 3, earlier ones had 2") {
		t.Errorf("dimension drift: %v", err)
	}
}

func TestOpenAILimits(t *testing.T) {
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"data":[{"index":0,"embedding":[` + strings.Repeat("1,", 1000) + `1]}]}`))
	}))
	defer big.Close()
	e, _ := NewOpenAI(big.URL, "m", WithMaxResponseBytes(100))
	if _, err := e.Embed(context.Background(), []string{"a"}); err == nil || !strings.Contains(err.Error(), "larger than 100 bytes") {
		t.Errorf("oversized response: %v", err)
	}

	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // the server notices a gone client only once the body is read
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	e, _ = NewOpenAI(slow.URL, "m", WithTimeout(50*time.Millisecond))
	start := time.Now()
	if _, err := e.Embed(context.Background(), []string{"a"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout: %v", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Error("timeout not honoured")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e, _ = NewOpenAI(slow.URL, "m")
	if _, err := e.Embed(ctx, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}

	for _, c := range []struct{ url, model, want string }{
		{"localhost:11434", "m", "want http:// or https://"},
		{"http://localhost:11434", " ", "no model name"},
	} {
		if _, err := NewOpenAI(c.url, c.model); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewOpenAI(%q, %q): %v, want %q", c.url, c.model, err, c.want)
		}
	}
}
