package middleware_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// moneyServer is an OpenAI-compatible embeddings server whose model knows
// one topic: words about money point one way, everything else another.
func moneyServer(t *testing.T, inputs *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		inputs.Add(int32(len(req.Input)))
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		data := make([]item, len(req.Input))
		for i, in := range req.Input {
			v := []float32{0, 0.2}
			for _, w := range []string{"refund", "indemnify", "payment", "money"} {
				if strings.Contains(strings.ToLower(in), w) {
					v[0]++
				}
			}
			data[i] = item{i, v}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestSearchEmbeddingsOpenAI(t *testing.T) {
	var inputs atomic.Int32
	emb := moneyServer(t, &inputs)
	t.Setenv("CODECALL_TEST_EMBED_KEY", "sk-test")
	srv := newShop(t)
	wrap(t, srv, middleware.WithConfig(config(func(c *presets.Config) {
		c.Search.Embeddings = presets.EmbeddingsConfig{Provider: presets.EmbeddingsOpenAI, URL: emb.URL,
			Model: "m", APIKeyEnv: "CODECALL_TEST_EMBED_KEY", Weight: 0.3}
	})))
	if inputs.Load() == 0 {
		t.Fatal("the catalog was not embedded")
	}
	s := connect(t, srv)
	// No word of the request is in any tool; the embedding model connects it.
	names := s.searchNames("indemnify the purchaser", nil)
	if len(names) == 0 || names[0] != "billing.refund_payment" {
		t.Errorf("search = %v, want billing.refund_payment first", names)
	}
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestSearchEmbeddingsUnavailable(t *testing.T) {
	for name, e := range map[string]presets.EmbeddingsConfig{
		"missing model":  {Provider: presets.EmbeddingsModel2Vec, Path: t.TempDir(), Weight: 0.3},
		"server down":    {Provider: presets.EmbeddingsOpenAI, URL: "http://127.0.0.1:1", Model: "m", Weight: 0.3},
		"key not in env": {Provider: presets.EmbeddingsOpenAI, URL: "http://127.0.0.1:1", Model: "m", APIKeyEnv: "CODECALL_TEST_NO_SUCH_KEY", Weight: 0.3},
	} {
		t.Run(name, func(t *testing.T) {
			var logs syncBuffer
			srv := newShop(t)
			wrap(t, srv, middleware.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
				middleware.WithConfig(config(func(c *presets.Config) { c.Search.Embeddings = e })))
			s := connect(t, srv)
			if names := s.searchNames("refund a payment", nil); len(names) == 0 || names[0] != "billing.refund_payment" {
				t.Errorf("lexical search broken: %v", names)
			}
			if !strings.Contains(logs.String(), "embeddings") || !strings.Contains(logs.String(), "level=WARN") {
				t.Errorf("no warning logged:\n%s", logs.String())
			}
		})
	}
}

func TestNewEmbedderOff(t *testing.T) {
	e, err := middleware.NewEmbedder(presets.EmbeddingsConfig{})
	if e != nil || err != nil {
		t.Errorf("provider off: %v, %v", e, err)
	}
}
