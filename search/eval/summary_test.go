package eval

import (
	"context"
	"math"
	"testing"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/search"
)

// fakeSearcher answers each query text with fixed hits and warnings.
type fakeSearcher map[string]search.Result

func (f fakeSearcher) Search(_ context.Context, q search.Query) (search.Result, error) {
	return f[q.Text], nil
}

func fakeResult(warn string, names ...string) search.Result {
	var r search.Result
	for i, n := range names {
		r.Hits = append(r.Hits, search.Hit{Tool: &catalog.Tool{Name: n}, Score: 1 - float64(i)/10})
	}
	if warn != "" {
		r.Warnings = []search.Warning{{Type: warn}}
	}
	return r
}

func TestEvalSummarize(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	low, none := search.WarnLowRelevance, search.WarnNoResults
	tests := []struct {
		name    string
		queries []Query
		results fakeSearcher
		want    Metrics
	}{
		{
			name:    "empty",
			queries: nil,
			want:    Metrics{},
		},
		{
			name:    "answerable only",
			queries: []Query{{Text: "a", Expected: []string{"x"}}, {Text: "b", Expected: []string{"y"}}},
			results: fakeSearcher{"a": fakeResult("", "x"), "b": fakeResult("", "z", "y")},
			want:    Metrics{Queries: 2, RecallAt1: 0.5, RecallAt5: 1, RecallAt10: 1, NDCG10: (1 + 1/math.Log2(3)) / 2, MRR: 0.75},
		},
		{
			// Unanswerable queries do not pull the rank metrics down.
			name:    "unanswerable left out of the averages",
			queries: []Query{{Text: "a", Expected: []string{"x"}}, {Text: "n1"}, {Text: "n2", Expected: []string{}}},
			results: fakeSearcher{"a": fakeResult("", "x"), "n1": fakeResult("", "x"), "n2": fakeResult("", "x")},
			want:    Metrics{Queries: 1, RecallAt1: 1, RecallAt5: 1, RecallAt10: 1, NDCG10: 1, MRR: 1, Unanswerable: 2},
		},
		{
			name:    "negatives flagged by low relevance or no results",
			queries: []Query{{Text: "n1"}, {Text: "n2"}, {Text: "n3"}, {Text: "n4"}},
			results: fakeSearcher{"n1": fakeResult(low, "x"), "n2": fakeResult(none), "n3": fakeResult("", "x"), "n4": fakeResult(search.WarnFuzzyMatch, "x")},
			want:    Metrics{Unanswerable: 4, NegFlagged: 0.5},
		},
		{
			// Only a correct top hit that carries the warning counts; a
			// wrong one, flagged or not, does not.
			name: "correct top-1 flagged",
			queries: []Query{
				{Text: "a", Expected: []string{"x"}}, {Text: "b", Expected: []string{"x"}},
				{Text: "c", Expected: []string{"x"}}, {Text: "d", Expected: []string{"x"}},
			},
			results: fakeSearcher{"a": fakeResult(low, "x"), "b": fakeResult("", "x"), "c": fakeResult(low, "y", "x"), "d": fakeResult(none)},
			want:    Metrics{Queries: 4, RecallAt1: 0.5, RecallAt5: 0.75, RecallAt10: 0.75, NDCG10: (2 + 1/math.Log2(3)) / 4, MRR: 2.5 / 4, Top1Flagged: 0.5}, // 1 of the 2 right at rank 1
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Evaluate(context.Background(), tt.results, tt.queries)
			if err != nil {
				t.Fatal(err)
			}
			m, w := rep.Metrics, tt.want
			if m.Queries != w.Queries || m.Unanswerable != w.Unanswerable || !near(m.RecallAt1, w.RecallAt1) ||
				!near(m.RecallAt5, w.RecallAt5) || !near(m.RecallAt10, w.RecallAt10) || !near(m.NDCG10, w.NDCG10) ||
				!near(m.MRR, w.MRR) || !near(m.NegFlagged, w.NegFlagged) || !near(m.Top1Flagged, w.Top1Flagged) {
				t.Errorf("metrics\n got %+v\nwant %+v", m, w)
			}
			if len(rep.Outcomes) != len(tt.queries) {
				t.Errorf("%d outcomes for %d queries", len(rep.Outcomes), len(tt.queries))
			}
		})
	}
}

func TestEvalOutcome(t *testing.T) {
	rep, err := Evaluate(context.Background(), fakeSearcher{
		"a": fakeResult(search.WarnLowRelevance, "p", "q", "r", "s", "t", "x"),
		"b": fakeResult("", "x"),
		"n": fakeResult(search.WarnNoResults),
	}, []Query{{Text: "a", Expected: []string{"x"}}, {Text: "b", Expected: []string{"x"}}, {Text: "n"}})
	if err != nil {
		t.Fatal(err)
	}
	a, b, n := rep.Outcomes[0], rep.Outcomes[1], rep.Outcomes[2]
	if !a.Miss(5) || a.Miss(6) || b.Miss(5) || n.Miss(5) {
		t.Errorf("Miss: a(5)=%v a(6)=%v b=%v n=%v", a.Miss(5), a.Miss(6), b.Miss(5), n.Miss(5))
	}
	if !a.Flagged() || b.Flagged() || !n.Flagged() || n.Answerable() || !a.Answerable() {
		t.Errorf("Flagged/Answerable wrong: %+v %+v %+v", a, b, n)
	}
	if len(a.Scores) != 6 || a.Scores[0] != 1 || a.Got[5] != "x" {
		t.Errorf("outcome hits %v %v", a.Got, a.Scores)
	}
}

func TestEvalGroups(t *testing.T) {
	queries := []Query{
		{Text: "a", Expected: []string{"x"}, Style: StyleKeyword, Split: SplitTune},
		{Text: "b", Expected: []string{"x"}, Style: StyleTask, Split: SplitHeldout, AppScoped: true},
		{Text: "c", Expected: []string{"x"}, Style: StyleKeyword, Split: SplitHeldout},
		{Text: "n", Style: StyleTask, Split: SplitTune},
		{Text: "u", Expected: []string{"x"}},
	}
	rep, err := Evaluate(context.Background(), fakeSearcher{"a": fakeResult("", "x"), "b": fakeResult("", "y"), "c": fakeResult("", "x")}, queries)
	if err != nil {
		t.Fatal(err)
	}
	groups := rep.GroupBy(func(q Query) string { return q.Style })
	if len(groups) != 2 || groups[0].Name != StyleKeyword || groups[1].Name != StyleTask {
		t.Fatalf("groups %+v", groups)
	}
	if m := groups[0].Report.Metrics; m.Queries != 2 || m.RecallAt1 != 1 {
		t.Errorf("keyword %v", m)
	}
	if m := groups[1].Report.Metrics; m.Queries != 1 || m.Unanswerable != 1 || m.RecallAt1 != 0 {
		t.Errorf("task %v", m)
	}
	if m := rep.Subset(func(q Query) bool { return q.AppScoped }).Metrics; m.Queries != 1 || m.RecallAt1 != 0 {
		t.Errorf("app-scoped %v", m)
	}
	for _, tt := range []struct {
		split string
		want  int
	}{{"", 5}, {SplitAll, 5}, {SplitTune, 2}, {SplitHeldout, 2}} {
		got, err := FilterSplit(queries, tt.split)
		if err != nil || len(got) != tt.want {
			t.Errorf("FilterSplit(%q) = %d queries, %v; want %d", tt.split, len(got), err, tt.want)
		}
	}
	if _, err := FilterSplit(queries, "test"); err == nil {
		t.Error("FilterSplit accepts an unknown split")
	}
}
