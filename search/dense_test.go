package search

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/codecall-go/codecall/catalog"
)

// topicEmbedder is a deterministic stand-in for an embedding model: each
// word adds 1 to the dimension of its topic, so words of one topic
// ("indemnify", "refund", "money") are similar although they share no
// letters, which is what lexical search cannot see.
type topicEmbedder struct {
	dim    int
	topics map[string]int
	nTopic int
	calls  atomic.Int32
	texts  atomic.Int32
	fail   error
}

func (e *topicEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.calls.Add(1)
	e.texts.Add(int32(len(texts)))
	if e.fail != nil {
		return nil, e.fail
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, e.dim)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !('a' <= r && r <= 'z') }) {
			if d, ok := e.topics[w]; ok {
				v[d] += 1
				continue
			}
			h := fnv.New32a()
			h.Write([]byte(w))
			v[e.nTopic+int(h.Sum32()%uint32(e.dim-e.nTopic))] += 0.2
		}
		out[i] = v
	}
	return out, nil
}

func newTopicEmbedder() *topicEmbedder {
	topics := map[string]int{}
	groups := [][]string{
		{"refund", "indemnify", "money", "charge", "billing"},
		{"issue", "bug", "defect", "ticket"},
		{"message", "chat", "post", "notify", "slack"},
		{"calendar", "meeting", "schedule", "appointment"},
	}
	for d, group := range groups {
		for _, w := range group {
			topics[w] = d
		}
	}
	return &topicEmbedder{dim: 16, topics: topics, nTopic: len(groups)}
}

func denseTools() []*catalog.Tool {
	return []*catalog.Tool{
		{Name: "github.create_issue", AppID: "github", Description: "Create a new issue in a repository."},
		{Name: "billing.create_refund", AppID: "billing", Description: "Refund a charge to the customer's card."},
		{Name: "slack.post_message", AppID: "slack", Description: "Post a message to a Slack channel."},
		{Name: "calendar.book_slot", AppID: "calendar", Description: "Book a meeting in the calendar."},
	}
}

func TestDenseVocabularyGap(t *testing.T) {
	ctx := context.Background()
	emb := newTopicEmbedder()
	lexical, err := New(denseTools())
	if err != nil {
		t.Fatal(err)
	}
	defer lexical.Close()
	// No word of the query is in any tool: lexical search finds nothing.
	q := Query{Text: "indemnify the purchaser"}
	res, err := lexical.Search(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 0 {
		t.Fatalf("lexical hits %v, want none (the test needs a vocabulary gap)", res.Hits[0].Tool.Name)
	}

	ix, err := New(denseTools(), WithEmbedder(emb, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if !ix.Dense() || ix.DenseErr() != nil {
		t.Fatalf("dense off: %v", ix.DenseErr())
	}
	if got := emb.calls.Load(); got != 1 {
		t.Errorf("%d embed calls at build, want 1 batch", got)
	}
	res, err = ix.Search(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].Tool.Name != "billing.create_refund" {
		t.Fatalf("hits %v, want billing.create_refund first", res.Hits)
	}
	if s := res.Hits[0].Score; s > DefaultDenseWeight+1e-9 || s <= 0 {
		t.Errorf("dense-only score %v, want in (0, %v]", s, DefaultDenseWeight)
	}
	if len(res.Warnings) == 0 || res.Warnings[0].Type != WarnLowRelevance {
		t.Errorf("warnings %v, want low_relevance for a dense-only match", res.Warnings)
	}

	// The filter holds for dense candidates too.
	res, err = ix.Search(ctx, Query{Text: "indemnify the purchaser", AppIDs: []string{"slack"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits {
		if h.Tool.AppID != "slack" {
			t.Errorf("hit %s passes no filter", h.Tool.Name)
		}
	}

	// A lexical match stays first, and an exact name still scores 1.
	res, err = ix.Search(ctx, Query{Text: "open a ticket for the bug"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Hits[0].Tool.Name != "github.create_issue" {
		t.Errorf("hits %v, want github.create_issue first", res.Hits)
	}
	res, err = ix.Search(ctx, Query{Text: "slack.post_message"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Hits[0].Tool.Name != "slack.post_message" || res.Hits[0].Score != 1 {
		t.Errorf("exact hit %v", res.Hits[0])
	}
}

func TestDenseQueryCache(t *testing.T) {
	ctx := context.Background()
	emb := newTopicEmbedder()
	ix, err := New(denseTools(), WithEmbedder(emb, 0.5))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	before := emb.calls.Load()
	for range 3 {
		if _, err := ix.Search(ctx, Query{Text: "notify the team"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := emb.calls.Load() - before; got != 1 {
		t.Errorf("%d query embed calls for one repeated query, want 1", got)
	}
	c := newVectorCache(2)
	c.put("a", []float32{1})
	c.put("b", []float32{2})
	c.get("a")
	c.put("c", []float32{3})
	if _, ok := c.get("b"); ok {
		t.Error("least recently used entry kept")
	}
	if _, ok := c.get("a"); !ok || c.len() != 2 {
		t.Errorf("cache holds %d, a kept %v", c.len(), ok)
	}
}

func TestDenseBuildFailureKeepsLexical(t *testing.T) {
	emb := newTopicEmbedder()
	emb.fail = errors.New("connection refused")
	ix, err := New(denseTools(), WithEmbedder(emb, 0.3))
	if err != nil {
		t.Fatalf("New failed with the embedder down: %v", err)
	}
	defer ix.Close()
	if ix.Dense() || ix.DenseErr() == nil || !strings.Contains(ix.DenseErr().Error(), "connection refused") {
		t.Fatalf("Dense %v, DenseErr %v", ix.Dense(), ix.DenseErr())
	}
	res, err := ix.Search(context.Background(), Query{Text: "create an issue"})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].Tool.Name != "github.create_issue" {
		t.Fatalf("lexical search broken: %v %v", res.Hits, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ix2, err := NewContext(ctx, denseTools(), WithEmbedder(newTopicEmbedder(), 0.3))
	if err != nil {
		t.Fatal(err)
	}
	defer ix2.Close()
	if !errors.Is(ix2.DenseErr(), context.Canceled) {
		t.Errorf("DenseErr %v, want context.Canceled", ix2.DenseErr())
	}
}

// badDims returns vectors of the wrong dimension after the first.
type badDims struct{ n int }

func (b *badDims) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		b.n++
		out[i] = make([]float32, 3+b.n%2)
		out[i][0] = 1
	}
	return out, nil
}

// shortEmbedder returns one vector too few.
type shortEmbedder struct{}

func (shortEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	return make([][]float32, len(texts)-1), nil
}

func TestDenseBuildChecks(t *testing.T) {
	for name, e := range map[string]Embedder{"dimension": &badDims{}, "count": shortEmbedder{}} {
		ix, err := New(denseTools(), WithEmbedder(e, 0.3))
		if err != nil {
			t.Fatal(err)
		}
		if ix.DenseErr() == nil {
			t.Errorf("%s: no DenseErr", name)
		} else {
			t.Logf("%s: %v", name, ix.DenseErr())
		}
		ix.Close()
	}
	// Batches: more tools than one batch.
	var tools []*catalog.Tool
	for i := range DenseBatchSize + 5 {
		tools = append(tools, &catalog.Tool{Name: "t" + strings.Repeat("x", i), Description: "Post a message."})
	}
	emb := newTopicEmbedder()
	ix, err := New(tools, WithEmbedder(emb, 0.3))
	if err != nil || ix.DenseErr() != nil {
		t.Fatal(err, ix.DenseErr())
	}
	defer ix.Close()
	if emb.calls.Load() != 2 || emb.texts.Load() != int32(len(tools)) {
		t.Errorf("%d calls for %d texts", emb.calls.Load(), emb.texts.Load())
	}
	if len(ix.dense.vecs) != len(tools)*emb.dim {
		t.Errorf("flat vectors %d, want %d", len(ix.dense.vecs), len(tools)*emb.dim)
	}
}

func TestDenseEmptyCatalog(t *testing.T) {
	ix, err := New(nil, WithEmbedder(newTopicEmbedder(), 0.3))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Search(context.Background(), Query{Text: "refund"}); err != nil {
		t.Fatal(err)
	}
}

func TestFuseAndNorm(t *testing.T) {
	for _, c := range []struct{ cos, floor, best, want float64 }{
		{0.8, 0.2, 0.8, 1},
		{0.5, 0.2, 0.8, 0.5},
		{0.1, 0.2, 0.8, 0},
		{0.5, 0.5, 0.5, 0},
	} {
		if got := denseNorm(c.cos, c.floor, c.best); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("denseNorm(%v, %v, %v) = %v, want %v", c.cos, c.floor, c.best, got, c.want)
		}
	}
	if got := fuseDense(0.6, 1, 0.3); math.Abs(got-0.72) > 1e-9 {
		t.Errorf("fuseDense = %v, want 0.72", got)
	}
	if got := fuseDense(1, 1, 0.3); math.Abs(got-1) > 1e-9 {
		t.Errorf("fuseDense of two perfect scores = %v, want 1", got)
	}
}

func TestDenseText(t *testing.T) {
	tool := &catalog.Tool{
		Name: "github.createIssue", AppID: "github", Title: "Create issue",
		Description: "Create a new issue. It is assigned to nobody.   Use labels to triage! Never closes.",
		InputSchema: []byte(`{"type":"object","properties":{"repo":{"type":"string"},"title":{"type":"string"}}}`),
	}
	got := denseText(tool)
	want := "github create issue. github. Create issue. Create a new issue. It is assigned to nobody. parameters: repo, title"
	if got != want {
		t.Errorf("denseText =\n%q\nwant\n%q", got, want)
	}
	if got := leadSentences("No full stop here", 2, 5); got != "No fu" {
		t.Errorf("leadSentences = %q", got)
	}
}
