package search_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/codecall-go/codecall/search"
	"github.com/codecall-go/codecall/search/eval"
)

// TestExploreTuning prints the tune split's and the check set's figures
// for variations of the ranking constants, side by side, so that a change
// is kept only when it helps both; it runs only with
// CODECALLTEST_EXPLORE=fields (field weights) or
// CODECALLTEST_EXPLORE=wordnet (WordNet expansion) and the corpus;
// search/testdata/negative-queries.json gives a second NEG-FLAGGED. The held-out split is never read.
func TestExploreTuning(t *testing.T) {
	if os.Getenv("CODECALLTEST_EXPLORE") == "" {
		t.Skip("set CODECALLTEST_EXPLORE=1 to explore ranking constants on tune and the check set")
	}
	c, tune := loadTune(t)
	check, err := eval.LoadQueries(filepath.Join("testdata", "check-queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	neg, err := eval.LoadQueries(filepath.Join("testdata", "negative-queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	type knob struct {
		label     string
		set       func(*search.Tuning)
		noWordNet bool // builds the index WithWordNet(false)
	}
	knobs := []knob{{"default", func(*search.Tuning) {}, false}}
	if os.Getenv("CODECALLTEST_EXPLORE") == "wordnet" {
		knobs = append(knobs, knob{"wordnet off", func(*search.Tuning) {}, true})
		for _, sc := range []float64{0.5, 0.85, 1} {
			knobs = append(knobs, knob{fmt.Sprintf("wordnet scale %.2f", sc), func(tu *search.Tuning) { tu.SetWordNet(sc, false) }, false})
		}
		knobs = append(knobs, knob{"wordnet merge", func(tu *search.Tuning) { tu.SetWordNet(0.7, true) }, false})
	}
	fields := []string{"name", "app", "title", "tags", "summary", "desc", "params", "paramdesc"}
	base := search.DefaultTuning()
	for f, name := range fields {
		if os.Getenv("CODECALLTEST_EXPLORE") != "fields" {
			break
		}
		b, cv := base.Field(f)
		for _, m := range []float64{0.5, 1.5} {
			knobs = append(knobs, knob{fmt.Sprintf("%s boost×%.1f", name, m), func(tu *search.Tuning) { tu.SetField(f, b*m, cv) }, false})
		}
		for _, d := range []float64{-0.1, 0.1} {
			if cv+d > 0 && cv+d <= 1 {
				knobs = append(knobs, knob{fmt.Sprintf("%s cover%+.1f", name, d), func(tu *search.Tuning) { tu.SetField(f, b, cv+d) }, false})
			}
		}
	}
	ctx := context.Background()
	for _, k := range knobs {
		tu := search.DefaultTuning()
		k.set(&tu)
		ix, err := search.New(c.Tools, search.WithTuning(tu), search.WithWordNet(!k.noWordNet))
		if err != nil {
			t.Fatal(err)
		}
		mt, err := eval.Run(ctx, ix, tune)
		if err != nil {
			t.Fatal(err)
		}
		mc, err := eval.Run(ctx, ix, check)
		if err != nil {
			t.Fatal(err)
		}
		mn, err := eval.Run(ctx, ix, neg)
		if err != nil {
			t.Fatal(err)
		}
		_ = ix.Close()
		fmt.Printf("%-22s tune R@1 %.3f R@5 %.3f R@10 %.3f nDCG %.3f NEG %.3f T1F %.3f | check R@1 %.3f R@5 %.3f R@10 %.3f nDCG %.3f T1F %.3f | negatives NEG %.3f\n",
			k.label, mt.RecallAt1, mt.RecallAt5, mt.RecallAt10, mt.NDCG10, mt.NegFlagged, mt.Top1Flagged, mc.RecallAt1, mc.RecallAt5, mc.RecallAt10, mc.NDCG10, mc.Top1Flagged, mn.NegFlagged)
	}
}
