package search

import (
	"slices"
	"strings"
	"testing"
)

// TestThesaurusWellFormed checks the built-in thesaurus: every member and
// every one-way entry means something after analysis (is not made only of
// stop words), and no group is degenerate or repeated.
func TestThesaurusWellFormed(t *testing.T) {
	ix, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	lx := ix.lexicon

	seen := map[string]int{}
	for i, g := range thesaurusGroups {
		if len(g) < 2 {
			t.Errorf("group %d %q: fewer than 2 members", i, g)
		}
		members := map[string]bool{}
		for _, m := range g {
			if members[m] {
				t.Errorf("group %d %q: duplicate member %q", i, g, m)
			}
			members[m] = true
			if f := lx.form(m); len(f.terms) == 0 {
				t.Errorf("group %d: member %q is only stop words", i, m)
			}
		}
		sorted := slices.Clone(g)
		slices.Sort(sorted)
		key := strings.Join(sorted, "\x00")
		if j, ok := seen[key]; ok {
			t.Errorf("group %d %q duplicates group %d", i, g, j)
		}
		seen[key] = i
	}

	for k, vs := range thesaurusOneWay {
		if f := lx.form(k); len(f.terms) == 0 {
			t.Errorf("one-way key %q is only stop words", k)
		}
		if len(vs) == 0 {
			t.Errorf("one-way key %q: no targets", k)
		}
		for _, v := range vs {
			if f := lx.form(v); len(f.terms) == 0 {
				t.Errorf("one-way %q: target %q is only stop words", k, v)
			}
			if f := lx.form(v); f.lossy {
				t.Errorf("one-way %q: target %q loses words to the stop list and is never used", k, v)
			}
		}
	}
}
