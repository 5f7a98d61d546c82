// Package eval measures search quality: it loads evaluation queries and
// tool corpora, runs a searcher over them and computes Recall@k, nDCG@10 and
// MRR. It also provides a plain-BM25 baseline to compare the engine with.
package eval

import (
	"context"
	"fmt"
	"math"

	"github.com/codecall-go/codecall/search"
)

// Depth is how many hits each query asks for; every metric is computed on
// at most this many.
const Depth = 10

// Query is one evaluation case: a request and the names of the tools that
// answer it.
type Query struct {
	Text     string   `json:"query"`
	Expected []string `json:"expected"`
	// AppIDs optionally restricts the search, as a client's filter would.
	AppIDs []string `json:"appIds,omitempty"`
}

// Searcher is anything that answers search queries: a *search.Index or a
// *Baseline.
type Searcher interface {
	Search(ctx context.Context, q search.Query) (search.Result, error)
}

// Metrics are averages over a query set, each in [0, 1].
//
// With R the expected tools of a query and H its top hits:
// RecallAt(k) = |R ∩ H[:k]| / min(k, |R|), so a perfect ranking scores 1
// even when a query has more answers than k; NDCG10 uses binary gains;
// MRR is the reciprocal rank of the first expected tool in the top Depth
// (0 when none is there).
type Metrics struct {
	Queries    int
	RecallAt1  float64
	RecallAt5  float64
	RecallAt10 float64
	NDCG10     float64
	MRR        float64
}

// String formats the metrics on one line.
func (m Metrics) String() string {
	return fmt.Sprintf("n=%d R@1=%.3f R@5=%.3f R@10=%.3f nDCG@10=%.3f MRR=%.3f",
		m.Queries, m.RecallAt1, m.RecallAt5, m.RecallAt10, m.NDCG10, m.MRR)
}

// Outcome is what one query returned.
type Outcome struct {
	Query Query
	// Got are the names of the top hits, best first.
	Got []string
	// FirstRank is the 1-based rank of the first expected tool, 0 when
	// none is in Got.
	FirstRank int
	Metrics   Metrics
}

// Report is the result of Evaluate.
type Report struct {
	Metrics  Metrics
	Outcomes []Outcome
}

// Run evaluates s on queries and returns the averaged metrics.
func Run(ctx context.Context, s Searcher, queries []Query) (Metrics, error) {
	r, err := Evaluate(ctx, s, queries)
	return r.Metrics, err
}

// Evaluate is Run with the outcome of every query, for failure analysis.
func Evaluate(ctx context.Context, s Searcher, queries []Query) (Report, error) {
	var rep Report
	for _, q := range queries {
		res, err := s.Search(ctx, search.Query{Text: q.Text, TopK: Depth, AppIDs: q.AppIDs})
		if err != nil {
			return rep, fmt.Errorf("eval: query %q: %w", q.Text, err)
		}
		got := make([]string, len(res.Hits))
		for i, h := range res.Hits {
			got[i] = h.Tool.Name
		}
		o := Score(q.Expected, got)
		o.Query = q
		rep.Outcomes = append(rep.Outcomes, o)
		m := &rep.Metrics
		m.RecallAt1 += o.Metrics.RecallAt1
		m.RecallAt5 += o.Metrics.RecallAt5
		m.RecallAt10 += o.Metrics.RecallAt10
		m.NDCG10 += o.Metrics.NDCG10
		m.MRR += o.Metrics.MRR
	}
	if n := len(queries); n > 0 {
		m := &rep.Metrics
		m.Queries = n
		f := float64(n)
		m.RecallAt1 /= f
		m.RecallAt5 /= f
		m.RecallAt10 /= f
		m.NDCG10 /= f
		m.MRR /= f
	}
	return rep, nil
}

// Score computes the metrics of one ranked list against the expected
// names.
func Score(expected, got []string) Outcome {
	o := Outcome{Got: got}
	if len(got) > Depth {
		got = got[:Depth]
	}
	rel := make(map[string]bool, len(expected))
	for _, e := range expected {
		rel[e] = true
	}
	if len(rel) == 0 {
		return o
	}
	var dcg float64
	recall := func(k int) float64 {
		n := 0
		for _, g := range got[:min(k, len(got))] {
			if rel[g] {
				n++
			}
		}
		return float64(n) / float64(min(k, len(rel)))
	}
	for i, g := range got {
		if !rel[g] {
			continue
		}
		dcg += 1 / math.Log2(float64(i+2))
		if o.FirstRank == 0 {
			o.FirstRank = i + 1
		}
	}
	var idcg float64
	for i := 0; i < min(len(rel), Depth); i++ {
		idcg += 1 / math.Log2(float64(i+2))
	}
	o.Metrics = Metrics{
		Queries:    1,
		RecallAt1:  recall(1),
		RecallAt5:  recall(5),
		RecallAt10: recall(10),
		NDCG10:     dcg / idcg,
	}
	if o.FirstRank > 0 {
		o.Metrics.MRR = 1 / float64(o.FirstRank)
	}
	return o
}
