package search

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	blevesearch "github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/codecall-go/codecall/catalog"
)

// TestBM25InEffect checks that the index really scores with BM25: bleve's
// upsidedown engine (bleve.NewMemOnly) silently falls back to TF-IDF, and
// so does scorch when the mapping does not ask for BM25.
func TestBM25InEffect(t *testing.T) {
	tools := []*catalog.Tool{
		{Name: "a.send_message", AppID: "a", Description: "Send a message to a channel."},
		{Name: "a.list_channels", AppID: "a", Description: "List channels, channels and more channels in the workspace."},
		{Name: "a.read_file", AppID: "a", Description: "Read a file."},
	}
	ix, err := New(tools)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()

	q := bleve.NewTermQuery("channel")
	q.SetField(fieldSpecs[fDesc].name)
	req := bleve.NewSearchRequest(q)
	req.Explain = true
	sr, err := ix.bleve.SearchInContext(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(sr.Hits) != 2 {
		t.Fatalf("got %d hits, want 2", len(sr.Hits))
	}
	for _, h := range sr.Hits {
		if h.Expl == nil || !strings.Contains(explainText(h.Expl), "as per "+index.BM25Scoring+" model") {
			t.Fatalf("hit %s not scored with BM25: %s", h.ID, explainText(h.Expl))
		}
	}
	// The same documents under TF-IDF score differently: the setting is
	// what decides, not the defaults.
	im, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	im.ScoringModel = index.TFIDFScoring
	tfidf, err := bleve.NewUsing("", im, scorch.Name, scorch.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tfidf.Close()
	for i, tool := range tools {
		if err := tfidf.Index(strconv.Itoa(i), map[string]any{fieldSpecs[fDesc].name: tool.Description}); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := tfidf.SearchInContext(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Hits) != 2 || tr.Hits[0].Score == sr.Hits[0].Score {
		t.Fatalf("TF-IDF and BM25 agree: %v vs %v", tr.Hits, sr.Hits)
	}
	if !strings.Contains(explainText(tr.Hits[0].Expl), "as per "+index.TFIDFScoring+" model") {
		t.Errorf("control index not scored with TF-IDF: %s", explainText(tr.Hits[0].Expl))
	}
}

func explainText(e *blevesearch.Explanation) string {
	if e == nil {
		return ""
	}
	var b strings.Builder
	var walk func(e *blevesearch.Explanation)
	walk = func(e *blevesearch.Explanation) {
		b.WriteString(e.Message)
		b.WriteByte('\n')
		for _, c := range e.Children {
			walk(c)
		}
	}
	walk(e)
	return b.String()
}
