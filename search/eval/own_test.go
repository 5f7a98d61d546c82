package eval

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The minimums docs/search.md promises for the own set.
const (
	minOwnQueries      = 240
	minOwnUnanswerable = 25
	minOwnAppScoped    = 35
	minOwnParaphrase   = 90
)

func TestEvalOwnSet(t *testing.T) {
	qs, err := LoadOwn()
	if err != nil {
		t.Fatal(err)
	}
	var unanswerable, scoped, heldout int
	styles := map[string]int{}
	seen := map[string]bool{}
	for i, q := range qs {
		text := strings.ToLower(strings.TrimSpace(q.Text))
		if text == "" {
			t.Errorf("query %d is empty", i)
		}
		if seen[text] {
			t.Errorf("query %d %q is a duplicate", i, q.Text)
		}
		seen[text] = true
		switch q.Style {
		case StyleKeyword, StyleTask, StyleParaphrase:
		default:
			t.Errorf("query %q: style %q", q.Text, q.Style)
		}
		styles[q.Style]++
		switch q.Split {
		case SplitTune:
		case SplitHeldout:
			heldout++
		default:
			t.Errorf("query %q: split %q", q.Text, q.Split)
		}
		if len(q.Expected) == 0 {
			unanswerable++
		}
		if q.AppScoped || len(q.AppIDs) > 0 {
			scoped++
		}
		if len(q.AppIDs) > 0 && !q.AppScoped {
			t.Errorf("query %q has appIds but is not marked appScoped", q.Text)
		}
		for _, e := range q.Expected {
			if !strings.Contains(e, ".") {
				t.Errorf("query %q: expected %q is not app/name", q.Text, e)
			}
		}
	}
	for _, c := range []struct {
		what      string
		got, want int
	}{
		{"queries", len(qs), minOwnQueries},
		{"unanswerable", unanswerable, minOwnUnanswerable},
		{"app-scoped", scoped, minOwnAppScoped},
		{"paraphrase", styles[StyleParaphrase], minOwnParaphrase},
	} {
		if c.got < c.want {
			t.Errorf("%d %s queries, want at least %d", c.got, c.what, c.want)
		}
	}
	if share := float64(heldout) / float64(len(qs)); share < 0.35 || share > 0.45 {
		t.Errorf("held-out share %.2f, want about 0.40", share)
	}
	// The split rule: within each style, the n-th query (from 0, in file
	// order) is held out when n mod 5 is 1 or 3.
	n := map[string]int{}
	for _, q := range qs {
		want := SplitTune
		if k := n[q.Style] % 5; k == 1 || k == 3 {
			want = SplitHeldout
		}
		n[q.Style]++
		if q.Split != want {
			t.Errorf("query %q: split %q, the rule gives %q", q.Text, q.Split, want)
		}
	}
}

func TestEvalOwnSetCorpus(t *testing.T) {
	dir := CorpusDir(filepath.Join("..", "..", "..", "shared", "corpus"))
	c, err := LoadCorpus(dir)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("real-tool corpus not found at %s (set %s to its directory): %v", dir, CorpusDirEnv, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	qs, err := LoadOwn()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckExpected(qs, c.Tools); err != nil {
		t.Error(err)
	}
	apps := map[string]bool{}
	for _, tool := range c.Tools {
		apps[tool.AppID] = true
	}
	covered := map[string]bool{}
	for _, q := range qs {
		for _, a := range q.AppIDs {
			if !apps[a] {
				t.Errorf("query %q: app filter %q is not a corpus app", q.Text, a)
			}
		}
		for _, e := range q.Expected {
			app, _, _ := strings.Cut(e, ".")
			covered[app] = true
		}
	}
	if len(covered) < 25 {
		t.Errorf("the set covers %d apps, want at least 25", len(covered))
	}
	// No query may repeat a tool's description: the corpus texts must
	// not enter the repository.
	for _, q := range qs {
		for _, tool := range c.Tools {
			if strings.Contains(strings.ToLower(tool.Description), strings.ToLower(q.Text)) {
				t.Errorf("query %q is taken from the description of %s", q.Text, tool.Name)
			}
		}
	}
}
