package search

import (
	"context"
	"fmt"
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

// Signals are what a low-relevance rule can read about a search's best
// lexical hit, for the calibration helper (TestCalibrationSignals).
type Signals struct {
	Top         string
	Score, Next float64 // the best and second scores
	Headline    float64 // weighted share matched in headline fields
	HeadlineOwn float64 // the same, the request's own words only
	Covered     float64 // weighted share matched anywhere, any form
	CoveredOwn  float64 // weighted share matched anywhere by own words
	Unknown     float64 // weighted share of concepts no tool mentions
	Upper       float64 // coverage if each concept got its best match in any tool
	Concepts    int
}

// TopSignals searches q and computes Signals for its best hit; ok is false
// when there is no lexical best hit (no hits, or an exact name).
func TopSignals(ctx context.Context, ix *Index, q Query) (Signals, bool, error) {
	res, err := ix.Search(ctx, q)
	if err != nil || len(res.Hits) == 0 || res.Hits[0].Score == 1 {
		return Signals{}, false, err
	}
	s := Signals{Top: res.Hits[0].Tool.Name, Score: res.Hits[0].Score}
	if len(res.Hits) > 1 {
		s.Next = res.Hits[1].Score
	}
	doc := slices.Index(ix.tools, res.Hits[0].Tool)
	cs := ix.lexicon.parse(q.Text)
	rs := ix.resolve(cs)
	s.Concepts = len(cs)
	var total float64
	for _, r := range rs {
		total += r.weight
		var head, headOwn, any, anyOwn float64
		for _, v := range r.variants {
			m := ix.variantMask(doc, v)
			if m == 0 {
				continue
			}
			any = max(any, v.weight)
			if v.own {
				anyOwn = 1
			}
			if m&headlineFields != 0 {
				head = max(head, v.weight)
				if v.own {
					headOwn = 1
				}
			}
		}
		s.Headline += r.weight * head
		s.HeadlineOwn += r.weight * headOwn
		s.Covered += r.weight * any
		s.CoveredOwn += r.weight * anyOwn
		if len(r.variants) == 0 {
			s.Unknown += r.weight
		}
	}
	for _, r := range rs {
		best := 0.0
		for d := range ix.tools {
			for _, v := range r.variants {
				if m := ix.variantMask(d, v); m != 0 {
					best = max(best, ix.cfg.fieldWeight(m)*v.weight)
				}
			}
		}
		s.Upper += r.weight * best
	}
	if total > 0 {
		s.Upper /= total
		s.Headline /= total
		s.HeadlineOwn /= total
		s.Covered /= total
		s.CoveredOwn /= total
		s.Unknown /= total
	}
	return s, true, nil
}

// Field returns one field's BM25 boost and coverage weight.
func (t *tuning) Field(f int) (boost, cover float64) { return t.boost[f], t.cover[f] }

// SetWordNet sets the WordNet synonyms' scale and whether they are merged
// into words the curated vocabulary relates.
func (t *tuning) SetWordNet(scale float64, merge bool) { t.wordnetScale, t.wordnetMerge = scale, merge }
