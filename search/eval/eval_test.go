package eval

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/search"
)

func TestScore(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	tests := []struct {
		name          string
		expected, got []string
		want          Metrics
		first         int
	}{
		{"first", []string{"a"}, []string{"a", "b"}, Metrics{Queries: 1, RecallAt1: 1, RecallAt5: 1, RecallAt10: 1, NDCG10: 1, MRR: 1}, 1},
		{"third", []string{"a"}, []string{"x", "y", "a"}, Metrics{Queries: 1, RecallAt5: 1, RecallAt10: 1, NDCG10: 0.5, MRR: 1.0 / 3}, 3},
		{"missing", []string{"a"}, []string{"x", "y"}, Metrics{Queries: 1}, 0},
		{"two of two", []string{"a", "b"}, []string{"b", "a"}, Metrics{Queries: 1, RecallAt1: 1, RecallAt5: 1, RecallAt10: 1, NDCG10: 1, MRR: 1}, 1},
		{"one of two", []string{"a", "b"}, []string{"a", "x"}, Metrics{Queries: 1, RecallAt1: 1, RecallAt5: 0.5, RecallAt10: 0.5, NDCG10: 1 / (1 + 1/math.Log2(3)), MRR: 1}, 1},
		{"beyond depth", []string{"a"}, []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "a"}, Metrics{Queries: 1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Score(tt.expected, tt.got)
			m := o.Metrics
			if o.FirstRank != tt.first || m.Queries != tt.want.Queries || !near(m.RecallAt1, tt.want.RecallAt1) ||
				!near(m.RecallAt5, tt.want.RecallAt5) || !near(m.RecallAt10, tt.want.RecallAt10) ||
				!near(m.NDCG10, tt.want.NDCG10) || !near(m.MRR, tt.want.MRR) {
				t.Errorf("Score = %+v first %d, want %+v first %d", m, o.FirstRank, tt.want, tt.first)
			}
		})
	}
}

func TestToolName(t *testing.T) {
	for in, want := range map[string]string{"github/create_issue": "github.create_issue", "plain": "plain", "a/b/c": "a.b/c"} {
		if got := ToolName(in); got != want {
			t.Errorf("ToolName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRunAndBaseline(t *testing.T) {
	tools := []*catalog.Tool{
		{Name: "a.create_issue", AppID: "a", Description: "Create an issue."},
		{Name: "b.send_message", AppID: "b", Description: "Send a chat message."},
	}
	queries := []Query{{Text: "create issue", Expected: []string{"a.create_issue"}}, {Text: "send message", Expected: []string{"b.send_message"}}}
	base, err := NewBaseline(tools)
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	ix, err := search.New(tools)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for name, s := range map[string]Searcher{"baseline": base, "engine": ix} {
		m, err := Run(context.Background(), s, queries)
		if err != nil {
			t.Fatal(err)
		}
		if m.Queries != 2 || m.RecallAt1 != 1 || m.MRR != 1 {
			t.Errorf("%s: %v", name, m)
		}
	}
	res, err := base.Search(context.Background(), search.Query{Text: "message", AppIDs: []string{"a"}})
	if err != nil || len(res.Hits) != 0 {
		t.Errorf("baseline ignores the app filter: %v %v", res.Hits, err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadCorpus(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing corpus: %v", err)
	}
	tools := `[{"id":"git/status","app":"git","name":"status","description":"Show status","input_schema":{"type":"object"},"annotations":{"title":"Status"}}]`
	queries := `[{"query":"what changed","expected":["git/status"]}]`
	if err := os.WriteFile(filepath.Join(dir, "tools.json"), []byte(tools), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCorpus(dir)
	if err != nil || len(c.Tools) != 1 || c.Dev != nil {
		t.Fatalf("LoadCorpus without queries: %+v, %v", c, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "queries-dev.json"), []byte(queries), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = LoadCorpus(dir)
	if err != nil {
		t.Fatal(err)
	}
	tool := c.Tools[0]
	if tool.Name != "git.status" || tool.AppID != "git" || tool.Annotations.Title != "Status" || tool.Source != catalog.SourceUpstream {
		t.Errorf("tool %+v", tool)
	}
	if len(c.Dev) != 1 || c.Dev[0].Expected[0] != "git.status" {
		t.Errorf("queries %+v", c.Dev)
	}
}
