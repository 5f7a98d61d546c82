package search

import (
	"cmp"
	"context"
	"fmt"
	"github.com/codecall-go/codecall/catalog"
	"slices"
	"strings"
)

// Tuning exposes the ranking constants to the package's external tests,
// which explore them against the evaluation sets.
type Tuning = tuning

// DefaultTuning returns the production constants.
func DefaultTuning() Tuning { return defaultTuning() }

// WithTuning replaces the ranking constants.
func WithTuning(t Tuning) Option { return func(c *config) { c.tuning = t } }

// SetBM25Share, SetExpand, SetUnknownWeight, SetField adjust one constant.
func (t *tuning) SetBM25Share(v float64)         { t.bm25Share = v }
func (t *tuning) SetExpand(boost, cover float64) { t.expandBoost, t.expandCover = boost, cover }
func (t *tuning) SetUnknownWeight(v float64)     { t.unknownWeight = v }
func (t *tuning) SetNamePrecision(v float64)     { t.namePrecision = v }
func (t *tuning) SetField(f int, boost, cover float64) {
	t.boost[f], t.cover[f] = boost, cover
}

// Explain describes how ix parses text: each concept with its weight and
// variants, for debugging ranking.
func Explain(ix *Index, text string) string {
	cs := ix.lexicon.parse(text)
	rs := ix.resolve(cs)
	var b strings.Builder
	for i, c := range cs {
		fmt.Fprintf(&b, "%q value=%v w=%.2f:", c.text, c.value, rs[i].weight)
		for _, v := range c.variants {
			fmt.Fprintf(&b, " %v", v.terms)
			if v.own {
				b.WriteString("*")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// ScoreLines lists the top hits of text with their coverage, for debugging.
func ScoreLines(ix *Index, text string, k int) string {
	rs := ix.resolve(ix.lexicon.parse(text))
	res, _ := ix.Search(context.Background(), Query{Text: text, TopK: k})
	var b strings.Builder
	for _, h := range res.Hits {
		d := slices.Index(ix.tools, h.Tool)
		fmt.Fprintf(&b, "%.3f cov=%.3f %s\n", h.Score, ix.coverage(d, rs), h.Tool.Name)
	}
	return b.String()
}

// UnknownConcepts counts the query's concepts no tool mentions, values aside.
func UnknownConcepts(ix *Index, text string) int {
	n := 0
	for _, c := range ix.lexicon.parse(text) {
		if !c.value && !ix.knownConcept(c) {
			n++
		}
	}
	return n
}

// HeavyMiss reports the share of the query's two heaviest concepts' weight
// that tool misses.
func HeavyMiss(ix *Index, text string, tool *catalog.Tool) float64 {
	rs := ix.resolve(ix.lexicon.parse(text))
	d := slices.Index(ix.tools, tool)
	if d < 0 || len(rs) == 0 {
		return 0
	}
	idx := make([]int, len(rs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(rs[b].weight, rs[a].weight) })
	var miss, tot float64
	for _, i := range idx[:min(2, len(idx))] {
		tot += rs[i].weight
		if ix.coverage(d, rs[i:i+1]) == 0 {
			miss += rs[i].weight
		}
	}
	return miss / tot
}
