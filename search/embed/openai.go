// Package embed provides implementations of search.Embedder, for the
// optional dense retrieval of package search.
//
// OpenAI calls a server that speaks the OpenAI embeddings API
// (POST /v1/embeddings), as OpenAI, Ollama, llama.cpp's server and vLLM
// do. Model2Vec runs a model2vec static embedding model in process, in pure
// Go: a table lookup and a mean per text, fast enough to embed a whole
// catalog at startup on a CPU.
//
// No model weights are shipped with CodeCall: the user supplies the server
// or the model directory.
package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Defaults of the OpenAI embedder.
const (
	// DefaultBatchSize is the most texts sent in one request: servers
	// limit the inputs of a request (OpenAI to 2048, some local servers to
	// far fewer, or by total tokens), and 64 short tool texts fit all.
	DefaultBatchSize = 64
	// DefaultTimeout bounds one request, so that a stuck server delays a
	// search or an index build by seconds, not forever.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxResponseBytes bounds the body read from the server: 64
	// vectors of 4096 dimensions in JSON are about 6 MiB.
	DefaultMaxResponseBytes = 64 << 20
	// maxErrorBody is how much of a server's error message an error quotes.
	maxErrorBody = 512
)

// OpenAI is a search.Embedder for an OpenAI-compatible embeddings endpoint.
// It is safe for concurrent use.
type OpenAI struct {
	url      string
	model    string
	apiKey   string
	batch    int
	timeout  time.Duration
	maxBytes int64
	client   *http.Client

	// dim is the dimension of the first vector received; every later
	// vector must match it, or the index would compare unlike vectors.
	mu  sync.Mutex
	dim int
}

// Option configures an OpenAI embedder.
type Option func(*OpenAI)

// WithAPIKey sends key as a Bearer token. Local servers (Ollama,
// llama.cpp) need none.
func WithAPIKey(key string) Option { return func(o *OpenAI) { o.apiKey = key } }

// WithBatchSize sets the most texts per request (DefaultBatchSize when n <=
// 0), for servers that accept fewer.
func WithBatchSize(n int) Option {
	return func(o *OpenAI) {
		if n > 0 {
			o.batch = n
		}
	}
}

// WithTimeout bounds each request (DefaultTimeout when d <= 0). The context
// passed to Embed can end it sooner.
func WithTimeout(d time.Duration) Option {
	return func(o *OpenAI) {
		if d > 0 {
			o.timeout = d
		}
	}
}

// WithHTTPClient sets the client requests go through (http.DefaultClient
// otherwise), for proxies, TLS settings or tests.
func WithHTTPClient(c *http.Client) Option {
	return func(o *OpenAI) {
		if c != nil {
			o.client = c
		}
	}
}

// WithMaxResponseBytes bounds the response body read per request
// (DefaultMaxResponseBytes when n <= 0); a larger body is an error.
func WithMaxResponseBytes(n int64) Option {
	return func(o *OpenAI) {
		if n > 0 {
			o.maxBytes = n
		}
	}
}

// NewOpenAI returns an embedder that posts to {baseURL}/v1/embeddings, or
// to {baseURL}/embeddings when baseURL already ends in /v1 (as
// "http://localhost:11434/v1" for Ollama). model is the server's model
// name, such as "nomic-embed-text".
func NewOpenAI(baseURL, model string, opts ...Option) (*OpenAI, error) {
	base := strings.TrimRight(strings.TrimSpace(baseURL), "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("embed: base URL %q: want http:// or https://", baseURL)
	}
	if strings.TrimSpace(model) == "" {
		return nil, errors.New("embed: no model name")
	}
	o := &OpenAI{model: model, batch: DefaultBatchSize, timeout: DefaultTimeout,
		maxBytes: DefaultMaxResponseBytes, client: http.DefaultClient}
	switch {
	case strings.HasSuffix(base, "/embeddings"):
		o.url = base
	case strings.HasSuffix(base, "/v1"):
		o.url = base + "/embeddings"
	default:
		o.url = base + "/v1/embeddings"
	}
	for _, opt := range opts {
		opt(o)
	}
	return o, nil
}

// URL returns the endpoint the embedder posts to.
func (o *OpenAI) URL() string { return o.url }

// Embed returns one vector per text, sending the texts in batches.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += o.batch {
		batch := texts[start:min(start+o.batch, len(texts))]
		vecs, err := o.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

type embeddingsRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embeddingsResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

func (o *OpenAI) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	// Servers reject empty inputs; a blank text embeds like a space.
	input := make([]string, len(texts))
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			t = " "
		}
		input[i] = t
	}
	body, err := json.Marshal(embeddingsRequest{Model: o.model, Input: input})
	if err != nil {
		return nil, fmt.Errorf("embed: encode request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if o.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.apiKey)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embed: POST %s: %w", o.url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, o.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("embed: POST %s: read response: %w", o.url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("embed: POST %s: %s: %s", o.url, resp.Status, serverMessage(raw))
	}
	if int64(len(raw)) > o.maxBytes {
		return nil, fmt.Errorf("embed: POST %s: response larger than %d bytes", o.url, o.maxBytes)
	}
	var r embeddingsResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("embed: POST %s: decode response: %w", o.url, err)
	}
	if len(r.Data) != len(texts) {
		return nil, fmt.Errorf("embed: model %q returned %d embeddings for %d inputs", o.model, len(r.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for k, d := range r.Data {
		i := k // servers that omit index answer in order
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i >= len(texts) || out[i] != nil {
			return nil, fmt.Errorf("embed: model %q returned a bad or repeated index %d", o.model, i)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embed: model %q returned an empty embedding for input %d", o.model, i)
		}
		if err := o.checkDim(len(d.Embedding)); err != nil {
			return nil, err
		}
		out[i] = d.Embedding
	}
	return out, nil
}

// checkDim fixes the dimension on the first vector and holds later ones to
// it: a server that switched models between calls must not be mixed.
func (o *OpenAI) checkDim(n int) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dim == 0 {
		o.dim = n
		return nil
	}
	if n != o.dim {
		return fmt.Errorf("embed: model %q returned a vector of dimension %d, earlier ones had %d", o.model, n, o.dim)
	}
	return nil
}

// serverMessage extracts the error message of an error response:
// {"error":{"message":…}} (OpenAI, vLLM, llama.cpp), {"error":"…"}
// (Ollama), or the body itself, truncated.
func serverMessage(raw []byte) string {
	var r struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	msg := ""
	if json.Unmarshal(raw, &r) == nil {
		var s string
		var obj struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(r.Error, &s) == nil && s != "":
			msg = s
		case json.Unmarshal(r.Error, &obj) == nil && obj.Message != "":
			msg = obj.Message
		case r.Message != "":
			msg = r.Message
		}
	}
	if msg == "" {
		msg = strings.TrimSpace(string(raw))
	}
	if msg == "" {
		return "(empty body)"
	}
	return truncate(msg, maxErrorBody)
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
