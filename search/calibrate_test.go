package search_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/codecall-go/codecall/search"
	"github.com/codecall-go/codecall/search/eval"
)

// TestCalibrationSignals prints, for the tune split and the check set, the
// signals a low-relevance rule can read about each best hit (tab-separated:
// set, kind, signals), where kind is "neg" for an unanswerable request,
// "right" for a right first answer and "wrong" for a wrong one. It runs
// only with CODECALLTEST_CALIBRATE=1 and the corpus; the held-out split is
// never read.
func TestCalibrationSignals(t *testing.T) {
	if os.Getenv("CODECALLTEST_CALIBRATE") == "" {
		t.Skip("set CODECALLTEST_CALIBRATE=1 to print the low-relevance signals")
	}
	c, tune := loadTune(t)
	sets := map[string][]eval.Query{"tune": tune}
	for _, name := range []string{"check-queries.json", "negative-queries.json"} {
		path := filepath.Join("testdata", name)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		qs, err := eval.LoadQueries(path)
		if err != nil {
			t.Fatal(err)
		}
		sets[name] = qs
	}
	ix, err := search.New(c.Tools)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	fmt.Println("set\tkind\tscore\tnext\theadline\theadlineOwn\tcovered\tcoveredOwn\tunknown\tconcepts\ttop\tquery\tupper")
	for name, qs := range sets {
		for _, q := range qs {
			s, ok, err := search.TopSignals(context.Background(), ix, search.Query{Text: q.Text, AppIDs: q.AppIDs})
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				continue
			}
			kind := "neg"
			if len(q.Expected) > 0 {
				kind = "wrong"
				if slices.Contains(q.Expected, s.Top) {
					kind = "right"
				}
			}
			fmt.Printf("%s\t%s\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%d\t%s\t%s\t%.4f\n", name, kind, s.Score, s.Next, s.Headline, s.HeadlineOwn, s.Covered, s.CoveredOwn, s.Unknown, s.Concepts, s.Top, q.Text, s.Upper)
		}
	}
}

// loadTune loads the shared corpus and the tune split of the project's own
// queries for the opt-in exploration tests, or skips without the corpus.
// The held-out split is never read.
func loadTune(t *testing.T) (*eval.Corpus, []eval.Query) {
	t.Helper()
	dir := eval.CorpusDir(filepath.Join("..", "..", "shared", "corpus"))
	if dir == "" {
		t.Skip("no corpus")
	}
	c, err := eval.LoadCorpus(dir)
	if err != nil {
		t.Fatal(err)
	}
	own, err := eval.LoadOwn()
	if err != nil {
		t.Fatal(err)
	}
	tune, err := eval.FilterSplit(own, eval.SplitTune)
	if err != nil {
		t.Fatal(err)
	}
	return c, tune
}
