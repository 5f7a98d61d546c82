// Package eval measures search quality: it loads evaluation queries and
// tool corpora, runs a searcher over them and computes Recall@k, nDCG@10 and
// MRR. It also provides a plain-BM25 baseline to compare the engine with.
package eval

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/codecall-go/codecall/search"
)

// Depth is how many hits each query asks for; every metric is computed on
// at most this many.
const Depth = 10

// Query is one evaluation case: a request and the names of the tools that
// answer it. An empty Expected marks an unanswerable request: no tool in the
// corpus serves it, and the searcher should say so (see Metrics.NegFlagged).
type Query struct {
	Text     string   `json:"query"`
	Expected []string `json:"expected"`
	// AppIDs optionally restricts the search, as a client's filter would.
	AppIDs []string `json:"appIds,omitempty"`
	// Style is how the request is worded: StyleKeyword, StyleTask or
	// StyleParaphrase; empty in sets that do not say.
	Style string `json:"style,omitempty"`
	// Split is SplitTune or SplitHeldout; empty in sets that do not say.
	Split string `json:"split,omitempty"`
	// AppScoped marks a request that names its app in the text, or sets
	// AppIDs, or both.
	AppScoped bool `json:"appScoped,omitempty"`
}

// The query styles of the evaluation set.
const (
	// StyleKeyword is a short, tool-like request ("list github pull
	// requests").
	StyleKeyword = "keyword"
	// StyleTask is what a user or agent wants done, in context.
	StyleTask = "task"
	// StyleParaphrase is the need in other words than the tool's own.
	StyleParaphrase = "paraphrase"
)

// The splits of the evaluation set.
const (
	// SplitTune queries may be looked at while improving the ranking.
	SplitTune = "tune"
	// SplitHeldout queries are for measuring only.
	SplitHeldout = "heldout"
	// SplitAll selects every query in FilterSplit.
	SplitAll = "all"
)

// FilterSplit returns the queries of split (SplitTune or SplitHeldout), or
// all of them for SplitAll or "". It returns an error for any other split.
func FilterSplit(queries []Query, split string) ([]Query, error) {
	switch split {
	case "", SplitAll:
		return queries, nil
	case SplitTune, SplitHeldout:
	default:
		return nil, fmt.Errorf("eval: unknown split %q (want %s, %s or %s)", split, SplitTune, SplitHeldout, SplitAll)
	}
	var out []Query
	for _, q := range queries {
		if q.Split == split {
			out = append(out, q)
		}
	}
	return out, nil
}

// Searcher is anything that answers search queries: a *search.Index or a
// *Baseline.
type Searcher interface {
	Search(ctx context.Context, q search.Query) (search.Result, error)
}

// Metrics summarise a query set.
//
// The rank metrics are averages over the answerable queries (those with
// expected tools), each in [0, 1]. With R the expected tools of a query and
// H its top hits: RecallAt(k) = |R ∩ H[:k]| / min(k, |R|), so a perfect
// ranking scores 1 even when a query has more answers than k; NDCG10 uses
// binary gains; MRR is the reciprocal rank of the first expected tool in the
// top Depth (0 when none is there).
//
// The flag rates measure the low-relevance warning: NegFlagged is the
// fraction of unanswerable queries whose result carries
// search.WarnLowRelevance or search.WarnNoResults (higher is better);
// Top1Flagged is the fraction of the queries answered right at rank 1
// whose result yet carries search.WarnLowRelevance (lower is better): how
// often the warning doubts a right answer.
type Metrics struct {
	// Queries is the number of answerable queries the averages are over.
	Queries    int
	RecallAt1  float64
	RecallAt5  float64
	RecallAt10 float64
	NDCG10     float64
	MRR        float64
	// Unanswerable is the number of queries with no expected tool.
	Unanswerable int
	NegFlagged   float64
	Top1Flagged  float64
}

// String formats the metrics on one line.
func (m Metrics) String() string {
	s := fmt.Sprintf("n=%d R@1=%.3f R@5=%.3f R@10=%.3f nDCG@10=%.3f MRR=%.3f",
		m.Queries, m.RecallAt1, m.RecallAt5, m.RecallAt10, m.NDCG10, m.MRR)
	if m.Unanswerable > 0 {
		s += fmt.Sprintf(" unanswerable=%d neg-flagged=%.3f", m.Unanswerable, m.NegFlagged)
	}
	return s + fmt.Sprintf(" top1-flagged=%.3f", m.Top1Flagged)
}

// Outcome is what one query returned.
type Outcome struct {
	Query Query
	// Got are the names of the top hits, best first, and Scores their
	// scores.
	Got    []string
	Scores []float64
	// Warnings are the types of the result's warnings.
	Warnings []string
	// FirstRank is the 1-based rank of the first expected tool, 0 when
	// none is in Got.
	FirstRank int
	Metrics   Metrics
}

// Answerable reports whether the query has expected tools.
func (o Outcome) Answerable() bool { return len(o.Query.Expected) > 0 }

// Flagged reports whether the result says the catalog may have no tool for
// the request: a low-relevance or no-results warning.
func (o Outcome) Flagged() bool {
	for _, w := range o.Warnings {
		if w == search.WarnLowRelevance || w == search.WarnNoResults {
			return true
		}
	}
	return false
}

// Miss reports whether the query is answerable and no expected tool is in
// the top k hits.
func (o Outcome) Miss(k int) bool {
	return o.Answerable() && (o.FirstRank == 0 || o.FirstRank > k)
}

// Report is the result of Evaluate.
type Report struct {
	Metrics  Metrics
	Outcomes []Outcome
}

// Subset returns the report restricted to the queries keep accepts, with
// its metrics recomputed.
func (r Report) Subset(keep func(Query) bool) Report {
	var out Report
	for _, o := range r.Outcomes {
		if keep(o.Query) {
			out.Outcomes = append(out.Outcomes, o)
		}
	}
	out.Metrics = Summarize(out.Outcomes)
	return out
}

// Group is a named part of a report.
type Group struct {
	Name   string
	Report Report
}

// GroupBy splits the report by key, in order of first appearance; queries
// whose key is "" are left out.
func (r Report) GroupBy(key func(Query) string) []Group {
	var groups []Group
	at := map[string]int{}
	for _, o := range r.Outcomes {
		k := key(o.Query)
		if k == "" {
			continue
		}
		i, ok := at[k]
		if !ok {
			i = len(groups)
			at[k] = i
			groups = append(groups, Group{Name: k})
		}
		groups[i].Report.Outcomes = append(groups[i].Report.Outcomes, o)
	}
	for i := range groups {
		groups[i].Report.Metrics = Summarize(groups[i].Report.Outcomes)
	}
	return groups
}

// Run evaluates s on queries and returns the metrics.
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
		scores := make([]float64, len(res.Hits))
		for i, h := range res.Hits {
			got[i] = h.Tool.Name
			scores[i] = h.Score
		}
		o := Score(q.Expected, got)
		o.Query = q
		o.Scores = scores
		for _, w := range res.Warnings {
			o.Warnings = append(o.Warnings, w.Type)
		}
		rep.Outcomes = append(rep.Outcomes, o)
	}
	rep.Metrics = Summarize(rep.Outcomes)
	return rep, nil
}

// Summarize computes the metrics of a set of outcomes: the rank metrics
// averaged over the answerable ones, and the flag rates.
func Summarize(outcomes []Outcome) Metrics {
	var m Metrics
	var negFlagged, top1Right, top1Flagged int
	for _, o := range outcomes {
		if !o.Answerable() {
			m.Unanswerable++
			if o.Flagged() {
				negFlagged++
			}
			continue
		}
		m.Queries++
		m.RecallAt1 += o.Metrics.RecallAt1
		m.RecallAt5 += o.Metrics.RecallAt5
		m.RecallAt10 += o.Metrics.RecallAt10
		m.NDCG10 += o.Metrics.NDCG10
		m.MRR += o.Metrics.MRR
		if o.FirstRank == 1 {
			top1Right++
			if slices.Contains(o.Warnings, search.WarnLowRelevance) {
				top1Flagged++
			}
		}
	}
	if m.Queries > 0 {
		f := float64(m.Queries)
		m.RecallAt1 /= f
		m.RecallAt5 /= f
		m.RecallAt10 /= f
		m.NDCG10 /= f
		m.MRR /= f
	}
	if top1Right > 0 {
		m.Top1Flagged = float64(top1Flagged) / float64(top1Right)
	}
	if m.Unanswerable > 0 {
		m.NegFlagged = float64(negFlagged) / float64(m.Unanswerable)
	}
	return m
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
