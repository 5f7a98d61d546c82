package eval

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/search"
)

// Baseline is plain BM25 over each tool's name and description: one text
// field, English analysis, the name's _ - . : separators read as spaces, and
// the query matched as is. No field weights, no related words, no
// re-ranking. It is what the engine must beat.
type Baseline struct {
	idx   bleve.Index
	tools []*catalog.Tool
}

// NewBaseline indexes tools for the baseline.
func NewBaseline(tools []*catalog.Tool) (*Baseline, error) {
	im := bleve.NewIndexMapping()
	im.ScoringModel = index.BM25Scoring
	dm := bleve.NewDocumentStaticMapping()
	text := bleve.NewTextFieldMapping()
	text.Analyzer = en.AnalyzerName
	dm.AddFieldMappingsAt("text", text)
	app := bleve.NewTextFieldMapping()
	app.Analyzer = keyword.Name
	dm.AddFieldMappingsAt("app", app)
	im.DefaultMapping = dm
	idx, err := bleve.NewUsing("", im, scorch.Name, scorch.Name, nil)
	if err != nil {
		return nil, fmt.Errorf("eval: baseline index: %w", err)
	}
	b := &Baseline{idx: idx, tools: tools}
	batch := idx.NewBatch()
	sep := strings.NewReplacer("_", " ", "-", " ", ".", " ", ":", " ")
	for i, t := range tools {
		doc := map[string]any{"text": sep.Replace(t.Name) + "\n" + t.Description, "app": strings.ToLower(t.AppID)}
		if err := batch.Index(fmt.Sprintf("%06d", i), doc); err != nil {
			_ = idx.Close()
			return nil, fmt.Errorf("eval: baseline index %q: %w", t.Name, err)
		}
	}
	if err := idx.Batch(batch); err != nil {
		_ = idx.Close()
		return nil, fmt.Errorf("eval: baseline index: %w", err)
	}
	return b, nil
}

// Search implements Searcher. Only the AppIDs filter is honoured; scores
// are raw BM25, not normalised, and no warnings are produced.
func (b *Baseline) Search(ctx context.Context, q search.Query) (search.Result, error) {
	k := q.TopK
	if k <= 0 {
		k = search.DefaultTopK
	}
	mq := bleve.NewMatchQuery(q.Text)
	mq.SetField("text")
	var bq query.Query = mq
	if len(q.AppIDs) > 0 {
		apps := make([]query.Query, len(q.AppIDs))
		for i, a := range q.AppIDs {
			tq := bleve.NewTermQuery(strings.ToLower(a))
			tq.SetField("app")
			apps[i] = tq
		}
		bq = &query.BooleanQuery{Should: mq, Filter: bleve.NewDisjunctionQuery(apps...)}
	}
	req := bleve.NewSearchRequestOptions(bq, k, 0, false)
	// Ties are common (the same description in two apps); the document id
	// breaks them, so that results do not depend on indexing order.
	req.SortBy([]string{"-_score", "_id"})
	sr, err := b.idx.SearchInContext(ctx, req)
	if err != nil {
		return search.Result{}, fmt.Errorf("eval: baseline search: %w", err)
	}
	res := search.Result{TotalAvailable: len(b.tools)}
	for _, h := range sr.Hits {
		i, err := strconv.Atoi(h.ID)
		if err != nil {
			return search.Result{}, fmt.Errorf("eval: baseline id %q: %w", h.ID, err)
		}
		res.Hits = append(res.Hits, search.Hit{Tool: b.tools[i], Score: h.Score})
	}
	return res, nil
}

// Close releases the baseline's index.
func (b *Baseline) Close() error { return b.idx.Close() }
