package search

import (
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
