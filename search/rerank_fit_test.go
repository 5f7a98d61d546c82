package search_test

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/codecall-go/codecall/search"
	"github.com/codecall-go/codecall/search/eval"
)

// fitCase is one answerable request with its first-stage candidates.
type fitCase struct {
	cands    []search.Candidate
	expected []string
}

// fitMetrics are the rank metrics of a weight vector over some cases.
type fitMetrics struct{ r1, r5, r10, ndcg float64 }

func (m fitMetrics) String() string {
	return fmt.Sprintf("R@1 %.3f R@5 %.3f R@10 %.3f nDCG@10 %.3f", m.r1, m.r5, m.r10, m.ndcg)
}

// evalWeights ranks each case's candidates by the second stage under w, as
// the engine does (descending score, then catalog order), and averages the
// metrics.
func evalWeights(w []float64, cases []fitCase) fitMetrics {
	var m fitMetrics
	type ranked struct {
		s   float64
		doc int
		n   string
	}
	var buf []ranked
	for _, c := range cases {
		buf = buf[:0]
		for i := range c.cands {
			buf = append(buf, ranked{search.RerankScore(w, &c.cands[i]), c.cands[i].Doc, c.cands[i].Name})
		}
		slices.SortFunc(buf, func(a, b ranked) int {
			if d := cmp.Compare(b.s, a.s); d != 0 {
				return d
			}
			return cmp.Compare(a.doc, b.doc)
		})
		got := make([]string, 0, eval.Depth)
		for _, r := range buf[:min(len(buf), eval.Depth)] {
			got = append(got, r.n)
		}
		o := eval.Score(c.expected, got)
		m.r1 += o.Metrics.RecallAt1
		m.r5 += o.Metrics.RecallAt5
		m.r10 += o.Metrics.RecallAt10
		m.ndcg += o.Metrics.NDCG10
	}
	n := float64(len(cases))
	return fitMetrics{m.r1 / n, m.r5 / n, m.r10 / n, m.ndcg / n}
}

// fitObjective is what the fit maximises: mean nDCG@10, less an L2
// penalty that keeps weights the data does not need at zero.
func fitObjective(w []float64, cases []fitCase, l2 float64) float64 {
	p := 0.0
	for _, x := range w {
		p += x * x
	}
	return evalWeights(w, cases).ndcg - l2*p
}

// fitRerank finds weights by coordinate ascent over a grid: each weight in
// turn takes the grid value that maximises the objective with the others
// fixed (ties go to the value nearest zero), until a sweep changes nothing.
func fitRerank(cases []fitCase, l2 float64) []float64 {
	w := make([]float64, len(search.FeatureNames()))
	var grid []float64
	for v := -30; v <= 30; v++ {
		grid = append(grid, float64(v)/100)
	}
	slices.SortStableFunc(grid, func(a, b float64) int { return cmp.Compare(math.Abs(a), math.Abs(b)) })
	best := fitObjective(w, cases, l2)
	for sweep := 0; sweep < 8; sweep++ {
		changed := false
		for i := range w {
			old := w[i]
			for _, v := range grid {
				w[i] = v
				if o := fitObjective(w, cases, l2); o > best+1e-12 {
					best, old, changed = o, v, true
				}
			}
			w[i] = old
		}
		if !changed {
			break
		}
	}
	return w
}

func loadFitCases(t *testing.T, ix *search.Index, qs []eval.Query) []fitCase {
	t.Helper()
	var out []fitCase
	for _, q := range qs {
		if len(q.Expected) == 0 {
			continue
		}
		cands, err := search.RankFeatures(context.Background(), ix, search.Query{Text: q.Text, AppIDs: q.AppIDs})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fitCase{cands, q.Expected})
	}
	return out
}

// TestFitRerank fits the second stage's weights (search.rerankWeights) on
// the tune split of the evaluation set and prints them with their 5-fold
// cross-validated figures; it runs only with CODECALLTEST_FIT=1 and the
// corpus (see eval.CorpusDir). CODECALLTEST_FIT_L2 sets the L2 penalty
// (default 0.01); CODECALLTEST_FIT_FEATURES, a comma-separated list of
// feature names, restricts the fit to those features. It also prints the
// fitted weights' figures on search/testdata/check-queries.json, the
// validation set; the held-out split is never read here.
func TestFitRerank(t *testing.T) {
	if os.Getenv("CODECALLTEST_FIT") == "" {
		t.Skip("set CODECALLTEST_FIT=1 to fit the rerank weights")
	}
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
	check, err := eval.LoadQueries(filepath.Join("testdata", "check-queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	names := search.FeatureNames()
	zero := make([]float64, len(names))
	ix, err := search.New(c.Tools, search.WithRerank(zero))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	l2 := 0.01
	if v := os.Getenv("CODECALLTEST_FIT_L2"); v != "" {
		if l2, err = strconv.ParseFloat(v, 64); err != nil {
			t.Fatal(err)
		}
	}
	cases := loadFitCases(t, ix, tune)
	checkCases := loadFitCases(t, ix, check)
	if only := os.Getenv("CODECALLTEST_FIT_FEATURES"); only != "" {
		keep := map[int]bool{}
		for _, n := range strings.Split(only, ",") {
			i := slices.Index(names, n)
			if i < 0 {
				t.Fatalf("unknown feature %q; features: %v", n, names)
			}
			keep[i] = true
		}
		for _, cs := range [][]fitCase{cases, checkCases} {
			for _, fc := range cs {
				for j := range fc.cands {
					for i := range fc.cands[j].X {
						if !keep[i] {
							fc.cands[j].X[i] = 0
						}
					}
				}
			}
		}
	}

	const folds = 5
	var before, after []fitCase
	for k := 0; k < folds; k++ {
		var train, test []fitCase
		for i, fc := range cases {
			if i%folds == k {
				test = append(test, fc)
			} else {
				train = append(train, fc)
			}
		}
		w := fitRerank(train, l2)
		t.Logf("fold %d: %v", k, fmtWeights(names, w))
		for _, fc := range test {
			before = append(before, fc)
			after = append(after, rescored(fc, w))
		}
	}
	t.Logf("tune, 5-fold out-of-fold: first stage %v; reranked %v", evalWeights(zero, before), evalWeights(zero, after))
	w := fitRerank(cases, l2)
	t.Logf("fitted on all of tune (l2 %g): %v", l2, fmtWeights(names, w))
	t.Logf("tune (in sample): first stage %v; reranked %v", evalWeights(zero, cases), evalWeights(w, cases))
	t.Logf("check set: first stage %v; reranked %v", evalWeights(zero, checkCases), evalWeights(w, checkCases))
	var lit []string
	for _, x := range w {
		lit = append(lit, strconv.FormatFloat(x, 'f', -1, 64))
	}
	t.Logf("var rerankWeights = [numFeatures]float64{%s}", strings.Join(lit, ", "))
}

// rescored returns fc with each candidate's score replaced by its second
// stage's score under w and the features zeroed, so that evalWeights with
// zero weights ranks it as w does.
func rescored(fc fitCase, w []float64) fitCase {
	out := fitCase{expected: fc.expected, cands: slices.Clone(fc.cands)}
	for i := range out.cands {
		out.cands[i].Score = search.RerankScore(w, &fc.cands[i])
		out.cands[i].X = [len(out.cands[i].X)]float64{}
	}
	return out
}

func fmtWeights(names []string, w []float64) string {
	var parts []string
	for i, x := range w {
		if x != 0 {
			parts = append(parts, fmt.Sprintf("%s=%+.2f", names[i], x))
		}
	}
	return strings.Join(parts, " ")
}
