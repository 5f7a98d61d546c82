package search_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codecall-go/codecall/search"
	"github.com/codecall-go/codecall/search/eval"
)

// corpusDir returns the real-tool corpus directory or skips: the corpus
// lives beside the repository, not in it, and a fresh clone has none.
func corpusDir(tb testing.TB) string {
	tb.Helper()
	dir := eval.CorpusDir(filepath.Join("..", "..", "shared", "corpus"))
	if _, err := os.Stat(filepath.Join(dir, "tools.json")); err != nil {
		tb.Skipf("real-tool corpus not found at %s (set %s to its directory): %v", dir, eval.CorpusDirEnv, err)
	}
	return dir
}

// logFailures lists the queries whose expected tools are not in the top 5,
// when CODECALLTEST_EVAL_VERBOSE is set.
func logFailures(t *testing.T, label string, rep eval.Report) {
	t.Helper()
	if os.Getenv("CODECALLTEST_EVAL_VERBOSE") == "" {
		return
	}
	for _, o := range rep.Outcomes {
		if o.Metrics.RecallAt5 < 1 || (os.Getenv("CODECALLTEST_EVAL_VERBOSE") == "2" && o.FirstRank != 1) {
			got := o.Got
			if len(got) > 5 {
				got = got[:5]
			}
			t.Logf("%s miss (rank %d): %q want %v got %s", label, o.FirstRank, o.Query.Text, o.Query.Expected, strings.Join(got, ", "))
		}
	}
}

// TestCorpusQuality reports engine and plain-BM25 figures on the real
// corpus: the dev queries (lexical, close to the tools' words) and our own
// paraphrased, task-style queries, which are what agents really send.
func TestCorpusQuality(t *testing.T) {
	dir := corpusDir(t)
	c, err := eval.LoadCorpus(dir)
	if err != nil {
		t.Fatal(err)
	}
	own, err := eval.LoadQueries(filepath.Join("testdata", "corpus-queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := search.New(c.Tools)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	base, err := eval.NewBaseline(c.Tools)
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()

	ctx := context.Background()
	sets := []struct {
		name    string
		queries []eval.Query
	}{
		{"dev", c.Dev},
		{"paraphrased", own},
	}
	for _, s := range sets {
		if len(s.queries) == 0 {
			t.Logf("%s: no queries", s.name)
			continue
		}
		er, err := eval.Evaluate(ctx, ix, s.queries)
		if err != nil {
			t.Fatal(err)
		}
		br, err := eval.Evaluate(ctx, base, s.queries)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("corpus %-11s engine   %v", s.name, er.Metrics)
		t.Logf("corpus %-11s baseline %v", s.name, br.Metrics)
		logFailures(t, s.name, er)
		// Floors a little under the measured figures, to catch regressions.
		// The 60 paraphrased queries were the ranking's tuning set before
		// the project's own set with its held-out split (TestHeldOutQuality)
		// took that role; their floor only catches a collapse.
		floor := map[string]float64{"dev": 0.95, "paraphrased": 0.80}[s.name]
		if er.Metrics.RecallAt5 < floor {
			t.Errorf("%s: Recall@5 = %.3f, want >= %.2f", s.name, er.Metrics.RecallAt5, floor)
		}
		if s.name == "paraphrased" {
			if er.Metrics.RecallAt5 <= br.Metrics.RecallAt5 || er.Metrics.NDCG10 <= br.Metrics.NDCG10 {
				t.Errorf("engine does not beat plain BM25 on paraphrased queries: %v vs %v", er.Metrics, br.Metrics)
			}
		}
	}
}

func corpusIndex(tb testing.TB) *search.Index {
	tb.Helper()
	c, err := eval.LoadCorpus(corpusDir(tb))
	if err != nil {
		tb.Fatal(err)
	}
	ix, err := search.New(c.Tools)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = ix.Close() })
	return ix
}

// heldOutRecallAt5 is the engine's Recall@5 on the held-out part of the
// project's own evaluation set, as committed in docs/search.md and
// BENCHMARKS.md. Change it only with those figures.
const heldOutRecallAt5 = 0.788

// heldOutNegFlagged and heldOutTop1Flagged are the low_relevance rates on
// the held-out queries, as committed in docs/search.md and BENCHMARKS.md:
// the share of unanswerable requests flagged (higher is better) and of
// right top-1 answers flagged all the same (lower is better).
const (
	heldOutNegFlagged  = 0.583
	heldOutTop1Flagged = 0.139
)

// TestHeldOutQuality fails when a change costs more than two points of
// Recall@5, or of either low_relevance rate, on the held-out queries: the split no change is tuned on, so a
// loss there is a loss on queries nobody has seen.
func TestHeldOutQuality(t *testing.T) {
	c, err := eval.LoadCorpus(corpusDir(t))
	if err != nil {
		t.Fatal(err)
	}
	own, err := eval.LoadOwn()
	if err != nil {
		t.Fatal(err)
	}
	heldOut, err := eval.FilterSplit(own, eval.SplitHeldout)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := search.New(c.Tools)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	rep, err := eval.Evaluate(context.Background(), ix, heldOut)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("held-out: %v", rep.Metrics)
	if floor := heldOutRecallAt5 - 0.02; rep.Metrics.RecallAt5 < floor {
		t.Errorf("held-out Recall@5 = %.3f, more than 2 points under the committed %.3f", rep.Metrics.RecallAt5, heldOutRecallAt5)
	}
	if floor := heldOutNegFlagged - 0.02; rep.Metrics.NegFlagged < floor {
		t.Errorf("held-out NEG-FLAGGED = %.3f, more than 2 points under the committed %.3f", rep.Metrics.NegFlagged, heldOutNegFlagged)
	}
	if ceiling := heldOutTop1Flagged + 0.02; rep.Metrics.Top1Flagged > ceiling {
		t.Errorf("held-out TOP1-FLAGGED = %.3f, more than 2 points over the committed %.3f", rep.Metrics.Top1Flagged, heldOutTop1Flagged)
	}
}
