package search

import (
	"context"
	"fmt"
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

// Candidate is one first-stage candidate with its second-stage features,
// for the fitting helper (TestFitRerank).
type Candidate struct {
	Doc   int
	Name  string
	Score float64
	X     [numFeatures]float64
}

// FeatureNames names the second stage's features in the order of
// Candidate.X.
func FeatureNames() []string { return featureNames[:] }

// RerankScore is the second stage's score of a candidate under weights w.
func RerankScore(w []float64, c *Candidate) float64 {
	var t tuning
	copy(t.rerank[:], w)
	return t.rerankScore(c.Score, &c.X)
}

// WithRerank replaces the second stage's weights.
func WithRerank(w []float64) Option {
	return func(c *config) { copy(c.rerank[:], w) }
}

// RankFeatures runs the first stage for a request as Search does (an exact
// name and spelling corrections aside) and returns every candidate with
// its features, unordered.
func RankFeatures(ctx context.Context, ix *Index, q Query) ([]Candidate, error) {
	var res Result
	f := ix.newFilter(q, &res)
	if f.none {
		return nil, nil
	}
	head := q.Text[:min(len(q.Text), maxQueryBytes)]
	if f.apps == nil {
		f.named = ix.namedApps(head)
	}
	f.many = ix.lexicon.pluralQuery(head)
	var out []Candidate
	_, _, err := ix.rank(ctx, ix.lexicon.parse(q.Text), f, DefaultTopK, func(doc int, s float64, x *[numFeatures]float64) {
		out = append(out, Candidate{Doc: doc, Name: ix.tools[doc].Name, Score: s, X: *x})
	})
	return out, err
}
