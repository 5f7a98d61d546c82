package search

import (
	"cmp"
	"container/list"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/codecall-go/codecall/catalog"
)

// Embedder turns texts into dense vectors for semantic retrieval. It is the
// one thing search needs from an embedding model, so that any model (a
// remote server, a static model in process, a test double) can be plugged in
// without search depending on it.
//
// Embed returns one vector per text, in order. Every vector an Embedder
// returns must have the same dimension: the index compares query vectors
// with the tool vectors it computed at build time. Vectors need not be
// normalised. An implementation may split texts into batches of its own;
// search already sends at most DenseBatchSize texts per call. Embed must be
// safe for concurrent use and should honour ctx.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// DefaultDenseWeight is the share of the fused score given to dense
// similarity when WithEmbedder is called with a weight <= 0. It keeps the
// lexical ranking in charge (its coverage score is what the
// low_relevance threshold was tuned on) while letting the embedding model
// reorder near ties and bring in tools that share no word with the query.
const DefaultDenseWeight = 0.3

// DenseBatchSize is the most tool texts sent to the Embedder in one call
// while an index is built: large enough to amortise a round trip, small
// enough to stay under the request limits of common embedding servers.
const DenseBatchSize = 64

// Dense retrieval constants.
const (
	// denseCandidates is how many tools dense similarity adds to the
	// lexical candidates at least, so that a tool with no word in common
	// with the query can still be found (the vocabulary gap).
	denseCandidates = 20
	// queryCacheSize bounds the per-index cache of query vectors. The index
	// is rebuilt for every catalog version, so the cache never mixes
	// versions and is dropped with its index.
	queryCacheSize = 1024
	// maxDescSentences and maxDescRunes bound how much of a description a
	// tool's embedding text takes: the first sentences say what the tool
	// does; the rest (caveats, examples) dilutes a mean-pooled vector.
	maxDescSentences = 2
	maxDescRunes     = 300
)

// denseConfig is what WithEmbedder and NewContext put in the config.
type denseConfig struct {
	embedder Embedder
	weight   float64
	// ctx bounds the embedding of the catalog at build time; nil means
	// context.Background (New takes no context).
	ctx context.Context
}

// WithEmbedder turns on dense retrieval: at build time every tool's text
// (name words, app id, title, the first sentences of its description and
// its parameter names) is embedded with e, and each search embeds the query
// and fuses the cosine similarity into the lexical score (see fuseDense).
// weight in [0, 1] is the share of the fused score given to dense
// similarity; weight <= 0 means DefaultDenseWeight, and a weight above 1
// counts as 1. A nil e leaves dense retrieval off.
//
// When the catalog cannot be embedded, New still succeeds with lexical
// search only and DenseErr reports why.
func WithEmbedder(e Embedder, weight float64) Option {
	return func(c *config) {
		if weight <= 0 || math.IsNaN(weight) {
			weight = DefaultDenseWeight
		}
		c.dense.embedder, c.dense.weight = e, min(weight, 1)
	}
}

// NewContext is New with a context that bounds embedding the catalog when
// WithEmbedder is given (the only part of building an index that may wait on
// something outside the process). Cancelling ctx during the build leaves the
// index lexical-only, as any other embedding failure does.
func NewContext(ctx context.Context, tools []*catalog.Tool, opts ...Option) (*Index, error) {
	opts = append(slices.Clip(opts), func(c *config) { c.dense.ctx = ctx })
	return New(tools, opts...)
}

// DenseErr reports why dense retrieval is off although an Embedder was
// given: the catalog could not be embedded when the index was built. It is
// nil when dense retrieval works or was never asked for. The index answers
// with lexical search alone either way; callers log this as a warning.
func (ix *Index) DenseErr() error { return ix.denseErr }

// Dense reports whether searches on ix fuse dense similarity.
func (ix *Index) Dense() bool { return ix.dense != nil }

// denseIndex holds the tool vectors of an index.
type denseIndex struct {
	embedder Embedder
	weight   float64
	dim      int
	// vecs holds one L2-normalised row of dim values per tool, in the
	// order of Index.tools: one flat slice is a third the size of a slice
	// of slices and scans linearly.
	vecs  []float32
	cache *vectorCache
}

// buildDense embeds the catalog when an Embedder is configured. A failure
// is kept in ix.denseErr, not returned: dense retrieval is an improvement
// over lexical search, and its absence must not take search down.
func (ix *Index) buildDense() {
	dc := ix.cfg.dense
	if dc.embedder == nil {
		return
	}
	ctx := dc.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	d, err := newDenseIndex(ctx, dc, ix.tools)
	if err != nil {
		ix.denseErr = fmt.Errorf("search: dense retrieval off, lexical only: %w", err)
		return
	}
	ix.dense = d
}

func newDenseIndex(ctx context.Context, dc denseConfig, tools []*catalog.Tool) (*denseIndex, error) {
	d := &denseIndex{embedder: dc.embedder, weight: dc.weight, cache: newVectorCache(queryCacheSize)}
	texts := make([]string, len(tools))
	for i, t := range tools {
		texts[i] = denseText(t)
	}
	for start := 0; start < len(texts); start += DenseBatchSize {
		batch := texts[start:min(start+DenseBatchSize, len(texts))]
		vecs, err := d.embedder.Embed(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("embed tools %d-%d of %d: %w", start+1, start+len(batch), len(texts), err)
		}
		if len(vecs) != len(batch) {
			return nil, fmt.Errorf("embed tools %d-%d: got %d vectors for %d texts", start+1, start+len(batch), len(vecs), len(batch))
		}
		for k, v := range vecs {
			if d.dim == 0 {
				if len(v) == 0 {
					return nil, fmt.Errorf("embed tool %q: empty vector", tools[start+k].Name)
				}
				d.dim = len(v)
				d.vecs = make([]float32, 0, d.dim*len(texts))
			}
			if len(v) != d.dim {
				return nil, fmt.Errorf("embed tool %q: dimension %d, want %d like the first tool", tools[start+k].Name, len(v), d.dim)
			}
			d.vecs = append(d.vecs, normalized(v)...)
		}
	}
	return d, nil
}

// denseText is the text of a tool that is embedded: what the tool is and
// does in a few words. Long descriptions are cut to their first sentences,
// and parameter descriptions are left out, because a mean-pooled or
// truncated embedding of a long text says less about the tool's purpose.
func denseText(t *catalog.Tool) string {
	var b strings.Builder
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s == "" {
			return
		}
		if b.Len() > 0 {
			if strings.ContainsAny(b.String()[b.Len()-1:], ".!?") {
				b.WriteString(" ")
			} else {
				b.WriteString(". ")
			}
		}
		b.WriteString(s)
	}
	add(strings.Join(wordsOf(t.Name), " "))
	if t.AppID != "" && !strings.EqualFold(t.AppID, t.Name) {
		add(t.AppID)
	}
	title := t.Title
	if title == "" {
		title = t.Annotations.Title
	}
	add(title)
	add(leadSentences(t.Description, maxDescSentences, maxDescRunes))
	if names, _ := schemaText(t.InputSchema); names != "" {
		add("parameters: " + strings.Join(strings.Fields(names), ", "))
	}
	return b.String()
}

// leadSentences returns the first n sentences of s, at most maxRunes runes,
// with whitespace collapsed.
func leadSentences(s string, n, maxRunes int) string {
	s = strings.Join(strings.Fields(s), " ")
	end := len(s)
	count := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '.', '!', '?':
			if i+1 == len(s) || s[i+1] == ' ' {
				count++
				if count == n {
					end = i + 1
				}
			}
		}
		if count == n {
			break
		}
	}
	s = s[:end]
	if r := []rune(s); len(r) > maxRunes {
		s = string(r[:maxRunes])
	}
	return s
}

// normalized returns v scaled to unit length. A zero or non-finite vector
// becomes all zeros: it is similar to nothing rather than poisoning every
// score with NaN.
func normalized(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return out
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// denseScores returns the cosine similarity of text with every tool, by
// document index (an index into ix.tools). Query vectors are cached.
func (ix *Index) denseScores(ctx context.Context, text string) ([]float32, error) {
	d := ix.dense
	if d == nil {
		return nil, errors.New("search: dense retrieval is off")
	}
	if d.dim == 0 {
		return nil, nil // an empty catalog: nothing to compare with
	}
	q, ok := d.cache.get(text)
	if !ok {
		vecs, err := d.embedder.Embed(ctx, []string{text})
		if err != nil {
			return nil, fmt.Errorf("search: embed query: %w", err)
		}
		if len(vecs) != 1 {
			return nil, fmt.Errorf("search: embed query: got %d vectors for 1 text", len(vecs))
		}
		if len(vecs[0]) != d.dim {
			return nil, fmt.Errorf("search: embed query: dimension %d, want %d like the tools", len(vecs[0]), d.dim)
		}
		q = normalized(vecs[0])
		d.cache.put(text, q)
	}
	out := make([]float32, len(d.vecs)/d.dim)
	for doc := range out {
		row := d.vecs[doc*d.dim : (doc+1)*d.dim]
		var dot float32
		for i, x := range row {
			dot += x * q[i]
		}
		out[doc] = dot
	}
	return out, nil
}

// denseTop returns the n documents passing f with the highest similarity,
// best first, ties in catalog order.
func (ix *Index) denseTop(scores []float32, f *filter, n int) []int {
	docs := make([]int, 0, len(scores))
	for doc := range scores {
		if f.pass(ix.tools[doc]) {
			docs = append(docs, doc)
		}
	}
	slices.SortStableFunc(docs, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	return docs[:min(n, len(docs))]
}

// fuseDense combines a lexical score in [0, 1] with a normalised dense
// similarity in [0, 1] (see denseNorm): a weighted mean, weight being the
// dense share. A weighted mean keeps the fused score in [0, 1] and keeps its
// reading: a tool only the embedding model connects to the query scores at
// most weight, under the default low-relevance threshold for the default
// weight, so such a result still tells the client to check it.
func fuseDense(lexical, dense, weight float64) float64 {
	return (1-weight)*lexical + weight*dense
}

// denseNorm maps a cosine similarity to [0, 1] relative to the query's
// other similarities: floor (the mean over the filter's tools) and below
// map to 0, the best tool's similarity to 1, linearly between. Raw cosines
// are not comparable across models (one model's unrelated pairs score 0.1,
// another's 0.5), their order and spread for one query are. When the tools
// are all alike (best - floor is tiny) dense similarity says nothing and
// maps to 0.
func denseNorm(cos, floor, best float64) float64 {
	if best-floor < 1e-6 {
		return 0
	}
	return min(1, max(0, (cos-floor)/(best-floor)))
}

// withDense adds the dense candidates to the lexical hits and fuses their
// scores: the one step of a search that dense retrieval changes. topK is
// how many hits the caller needs; at least denseCandidates dense ones are
// considered. When the query cannot be embedded the lexical hits are
// returned as they are; only a cancelled ctx is an error.
func (ix *Index) withDense(ctx context.Context, text string, f *filter, hits []scored, topK int) ([]scored, error) {
	scores, err := ix.denseScores(ctx, text)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return hits, nil
	}
	var sum, best float64
	n := 0
	best = math.Inf(-1)
	for doc, s := range scores {
		if f.pass(ix.tools[doc]) {
			sum += float64(s)
			best = max(best, float64(s))
			n++
		}
	}
	if n == 0 {
		return hits, nil
	}
	floor := sum / float64(n)
	lex := make(map[int]scored, len(hits)+denseCandidates)
	for _, h := range hits {
		lex[h.doc] = h
	}
	for _, doc := range ix.denseTop(scores, f, max(topK, denseCandidates)) {
		if _, ok := lex[doc]; !ok {
			lex[doc] = scored{doc: doc, same: -1}
		}
	}
	out := make([]scored, 0, len(lex))
	for doc, h := range lex {
		d := denseNorm(float64(scores[doc]), floor, best)
		h.score = fuseDense(h.score, d, ix.dense.weight)
		h.dense = float32(d)
		if h.score > 0 {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.doc, b.doc)
	})
	return out, nil
}

// vectorCache is a small LRU of query vectors. Agents repeat queries (the
// same request retried, the same task in several sessions); a remote
// embedding call costs a round trip each time.
type vectorCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *cacheEntry, most recent first
	items map[string]*list.Element
}

type cacheEntry struct {
	key string
	vec []float32
}

func newVectorCache(n int) *vectorCache {
	return &vectorCache{max: n, order: list.New(), items: map[string]*list.Element{}}
}

func (c *vectorCache) get(key string) ([]float32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cacheEntry).vec, true
}

func (c *vectorCache) put(key string, vec []float32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		e.Value.(*cacheEntry).vec = vec
		c.order.MoveToFront(e)
		return
	}
	c.items[key] = c.order.PushFront(&cacheEntry{key: key, vec: vec})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*cacheEntry).key)
	}
}

// len returns the number of cached vectors.
func (c *vectorCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
