package search_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/search"
	"github.com/codecall-go/codecall/search/eval"
)

// unrelatedQueries are requests no tool in either catalog serves.
var unrelatedQueries = []string{
	"order a large pepperoni pizza",
	"book a flight to Lisbon",
	"what is the weather in Paris tomorrow",
	"translate this paragraph into German",
	"play some relaxing jazz music",
	"quantum chromodynamics lattice simulation",
	"adopt a puppy from the shelter",
	"recommend a good novel to read on holiday",
	"how many calories are in a banana",
	"water the plants in the garden",
	"write a sonnet about autumn leaves",
	"what is the capital of Australia",
	"find a vegetarian lasagna recipe",
	"convert 100 dollars to euros",
	"tune my guitar to drop D",
	"suggest a name for my new cat",
	"how tall is Mount Everest",
	"rent a car at the airport",
	"buy concert tickets for Saturday",
	"solve this sudoku puzzle",
	"track my daily running distance",
	"find a dentist near me",
	"learn to say hello in Japanese",
	"calculate my mortgage payments",
	"who won the football match last night",
}

type tuneSet struct {
	name    string
	tools   []*catalog.Tool
	queries []eval.Query
}

// TestTune explores the ranking constants; it runs only with
// CODECALLTEST_TUNE=1 and prints one line per setting.
func TestTune(t *testing.T) {
	if os.Getenv("CODECALLTEST_TUNE") == "" {
		t.Skip("set CODECALLTEST_TUNE=1 to explore ranking constants")
	}
	fq, err := eval.LoadQueries(filepath.Join("testdata", "queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	sets := []tuneSet{{"fixture", fixtureTools(t), fq}}
	if dir := eval.CorpusDir(filepath.Join("..", "..", "shared", "corpus")); dir != "" {
		if c, err := eval.LoadCorpus(dir); err == nil {
			own, err := eval.LoadQueries(filepath.Join("testdata", "corpus-queries.json"))
			if err != nil {
				t.Fatal(err)
			}
			sets = append(sets, tuneSet{"corpus", c.Tools, own})
			if os.Getenv("CODECALLTEST_TUNE") == "dev" {
				sets = append(sets, tuneSet{"dev", c.Tools, c.Dev})
			}
		}
	}
	type knob struct {
		label string
		set   func(*search.Tuning)
	}
	knobs := []knob{{"default", func(*search.Tuning) {}}}
	if os.Getenv("CODECALLTEST_TUNE_GRID") != "" {
		for _, u := range []float64{0.5, 0.75, 1} {
			for _, e := range []float64{0.6, 0.7} {
				for _, np := range []float64{0, 0.15} {
					knobs = append(knobs, knob{fmt.Sprintf("u=%.2f e=%.1f np=%.2f", u, e, np), func(tu *search.Tuning) {
						tu.SetUnknownWeight(u)
						tu.SetExpand(0.4, e)
						tu.SetNamePrecision(np)
					}})
				}
			}
		}
	} else {
		for _, v := range []float64{0.3, 0.7} {
			knobs = append(knobs, knob{fmt.Sprintf("bm25Share=%.1f", v), func(tu *search.Tuning) { tu.SetBM25Share(v) }})
		}
		for _, v := range [][2]float64{{0.25, 0.7}, {0.6, 0.7}, {0.4, 0.6}, {0.4, 0.8}} {
			knobs = append(knobs, knob{fmt.Sprintf("expand=%v", v), func(tu *search.Tuning) { tu.SetExpand(v[0], v[1]) }})
		}
		for _, v := range []float64{0.25, 0.75, 1} {
			knobs = append(knobs, knob{fmt.Sprintf("unknown=%.2f", v), func(tu *search.Tuning) { tu.SetUnknownWeight(v) }})
		}
		for _, v := range []float64{0, 0.3} {
			knobs = append(knobs, knob{fmt.Sprintf("namePrecision=%.2f", v), func(tu *search.Tuning) { tu.SetNamePrecision(v) }})
		}
	}
	ctx := context.Background()
	for _, k := range knobs {
		tu := search.DefaultTuning()
		k.set(&tu)
		line := fmt.Sprintf("%-22s", k.label)
		for _, s := range sets {
			ix, err := search.New(s.tools, search.WithTuning(tu))
			if err != nil {
				t.Fatal(err)
			}
			m, err := eval.Run(ctx, ix, s.queries)
			if err != nil {
				t.Fatal(err)
			}
			var in []float64
			for _, q := range s.queries {
				res := mustSearch(t, ix, search.Query{Text: q.Text, AppIDs: q.AppIDs})
				if o := eval.Score(q.Expected, names(res)); o.FirstRank > 0 && o.FirstRank <= 5 {
					in = append(in, res.Hits[0].Score)
				}
			}
			var out []float64
			for _, q := range unrelatedQueries {
				res := mustSearch(t, ix, search.Query{Text: q})
				if len(res.Hits) > 0 {
					out = append(out, res.Hits[0].Score)
				} else {
					out = append(out, 0)
				}
			}
			slices.Sort(in)
			slices.Sort(out)
			line += fmt.Sprintf(" | %s R@1=%.2f R@5=%.3f nDCG=%.3f MRR=%.3f in[p5=%.2f p10=%.2f p25=%.2f] out[max=%.2f p80=%.2f] flagged@.25/.30/.35: out %d/%d/%d/%d in %d/%d/%d/%d",
				s.name, m.RecallAt1, m.RecallAt5, m.NDCG10, m.MRR, in[len(in)/20], in[len(in)/10], in[len(in)/4], out[len(out)-1], out[len(out)*8/10], below(out, 0.25), below(out, 0.30), below(out, 0.35), len(out), below(in, 0.25), below(in, 0.30), below(in, 0.35), len(in))
			_ = ix.Close()
		}
		t.Log(line)
	}
}

func below(xs []float64, th float64) int {
	n := 0
	for _, x := range xs {
		if x < th {
			n++
		}
	}
	return n
}
