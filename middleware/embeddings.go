package middleware

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/search"
	"github.com/codecall-go/codecall/search/embed"
)

// embedBuildTimeout bounds embedding a catalog when a generation is built:
// a stalled embedding server must not hold up a reload for long, and the
// index falls back to lexical search when the time runs out.
const embedBuildTimeout = 2 * time.Minute

// NewEmbedder returns the embedding model search.embeddings asks for, or
// nil when dense retrieval is off. The OpenAI provider reads its API key
// from the environment variable named by apiKeyEnv; a model2vec model is
// loaded from disk here, which takes a moment for large models.
func NewEmbedder(cfg presets.EmbeddingsConfig) (search.Embedder, error) {
	switch cfg.Provider {
	case presets.EmbeddingsOff:
		return nil, nil
	case presets.EmbeddingsOpenAI:
		var opts []embed.Option
		if cfg.APIKeyEnv != "" {
			key := os.Getenv(cfg.APIKeyEnv)
			if key == "" {
				return nil, fmt.Errorf("search.embeddings: the environment variable %s (apiKeyEnv) is empty or unset", cfg.APIKeyEnv)
			}
			opts = append(opts, embed.WithAPIKey(key))
		}
		e, err := embed.NewOpenAI(cfg.URL, cfg.Model, opts...)
		if err != nil {
			return nil, fmt.Errorf("search.embeddings: %w", err)
		}
		return e, nil
	case presets.EmbeddingsModel2Vec:
		m, err := embed.LoadModel2Vec(cfg.Path)
		if err != nil {
			return nil, fmt.Errorf("search.embeddings: %w", err)
		}
		return m, nil
	}
	return nil, fmt.Errorf("search.embeddings: unknown provider %q", cfg.Provider)
}

// embedders keeps the embedding model across generations: a reload that
// leaves search.embeddings alone must not load a model again, nor log its
// failure again.
type embedders struct {
	mu  sync.Mutex
	key presets.EmbeddingsConfig // weight left out: it does not change the model
	set bool
	e   search.Embedder
	err error
}

// searchOptions returns the index options for cfg: the low-relevance
// threshold and, when configured and loadable, the embedding model. A
// model that cannot be made is logged as a warning, once per
// configuration, and search stays lexical.
func (c *CodeCall) searchOptions(ctx context.Context, cfg presets.SearchConfig) []search.Option {
	opts := []search.Option{search.WithLowRelevance(cfg.LowRelevance)}
	if cfg.Embeddings.Provider == presets.EmbeddingsOff {
		return opts
	}
	key := cfg.Embeddings
	key.Weight = 0
	c.emb.mu.Lock()
	if !c.emb.set || c.emb.key != key {
		c.emb.key, c.emb.set = key, true
		c.emb.e, c.emb.err = NewEmbedder(cfg.Embeddings)
		if c.emb.err != nil {
			c.log.WarnContext(ctx, "codecall: embeddings unavailable, search is lexical only", "error", c.emb.err)
		}
	}
	e := c.emb.e
	c.emb.mu.Unlock()
	if e == nil {
		return opts
	}
	return append(opts, search.WithEmbedder(e, cfg.Embeddings.Weight))
}

// buildIndex builds a generation's search index, with dense retrieval when
// configured. Dense retrieval failing is a warning, never a failed build.
func (c *CodeCall) buildIndex(cfg presets.SearchConfig, tools []*catalog.Tool) (*search.Index, error) {
	ctx, cancel := context.WithTimeout(context.Background(), embedBuildTimeout)
	defer cancel()
	idx, err := search.NewContext(ctx, tools, c.searchOptions(ctx, cfg)...)
	if err != nil {
		return nil, err
	}
	if derr := idx.DenseErr(); derr != nil {
		c.log.Warn("codecall: search index built without embeddings", "error", derr)
	}
	return idx, nil
}
