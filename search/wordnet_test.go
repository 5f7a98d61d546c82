package search

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/codecall-go/codecall/catalog"
)

// TestWordNetLoads checks the embedded thesaurus: it decodes, is not
// trivially small, every entry is well formed, and common verbs have the
// synonyms of their first sense.
func TestWordNetLoads(t *testing.T) {
	wn := wordnet()
	if len(wn) < 1000 {
		t.Fatalf("wordnet: %d keys, want at least 1000", len(wn))
	}
	for k, e := range wn {
		if k == "" || strings.ContainsAny(k, " \t,") {
			t.Errorf("malformed key %q", k)
		}
		for _, terms := range slices.Concat(e.syn, e.hyper) {
			if len(terms) == 0 || len(terms) > 2 {
				t.Errorf("key %q: synonym %q is not one or two terms", k, terms)
			}
			if len(terms) == 1 && terms[0] == k {
				t.Errorf("key %q lists itself", k)
			}
		}
	}
	for _, c := range []struct{ key, want string }{
		{"repair", "fix"},   // repair → fix, mend
		{"purchas", "bui"},  // purchase → buy
		{"shut", "close"},   // shut → close
		{"show", "exhibit"}, // show → exhibit, present
	} {
		if !slices.ContainsFunc(wn[c.key].syn, func(s []string) bool { return slices.Equal(s, []string{c.want}) }) {
			t.Errorf("wordnet[%q] = %q, want it to contain %q", c.key, wn[c.key].syn, c.want)
		}
	}
}

func wordnetTestIndex(t *testing.T, opts ...Option) *Index {
	t.Helper()
	tools := []*catalog.Tool{
		{Name: "repair_volume", AppID: "storage", Description: "Repair a damaged volume's file system.", Enabled: true},
		{Name: "list_volumes", AppID: "storage", Description: "List the volumes of the account.", Enabled: true},
		{Name: "resize_volume", AppID: "storage", Description: "Resize a volume.", Enabled: true},
	}
	ix, err := New(tools, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	return ix
}

// TestWordNetExpandsQuery checks that an Index widens a verb the curated
// vocabulary does not relate with its WordNet synonyms that the catalog
// has, by default, one way and at a lower weight than a related word, and
// that WithWordNet(false) leaves the query alone.
func TestWordNetExpandsQuery(t *testing.T) {
	on := wordnetTestIndex(t)
	cs := on.lexicon.parse("mend a volume")
	if len(cs) == 0 {
		t.Fatal("no concepts")
	}
	i := slices.IndexFunc(cs[0].variants, func(v variant) bool { return slices.Equal(v.terms, []string{"repair"}) })
	if i < 0 {
		t.Fatalf("mend: variants %+v, want repair", cs[0].variants)
	}
	if v := cs[0].variants[i]; v.own || v.scale != on.cfg.wordnetScale {
		t.Errorf("repair variant = %+v, want a related variant at scale %v", v, on.cfg.wordnetScale)
	}
	for _, v := range cs[0].variants[1:] { // [0] is the query's own word
		if !on.hasTerm(v.terms[0]) {
			t.Errorf("variant %q is not in the catalog", v.terms)
		}
	}
	res, err := on.Search(context.Background(), Query{Text: "mend a volume"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].Tool.Name != "repair_volume" {
		t.Errorf("with WordNet, mend a volume: got %v, want repair_volume first", res.Hits)
	}

	off := wordnetTestIndex(t, WithWordNet(false))
	for _, v := range off.lexicon.parse("mend a volume")[0].variants {
		if slices.Equal(v.terms, []string{"repair"}) {
			t.Error("with WithWordNet(false), mend expands to repair")
		}
	}
}

// TestWordNetLazy checks that an Index built with WithWordNet(false) never
// decodes the thesaurus, neither when it is built nor when it searches.
func TestWordNetLazy(t *testing.T) {
	saved := wordnet
	t.Cleanup(func() { wordnet = saved })
	wordnet = func() map[string]wordnetEntry {
		t.Error("the WordNet thesaurus was decoded by an Index that does not use it")
		return nil
	}
	ix := wordnetTestIndex(t, WithWordNet(false))
	for _, q := range []string{"mend a volume", "repair the list", "show me everything"} {
		if _, err := ix.Search(context.Background(), Query{Text: q}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWordNetDecodedAtBuild checks that an Index with WordNet on (the
// default) decodes the thesaurus while it is built, so that its first
// search does not pay for it.
func TestWordNetDecodedAtBuild(t *testing.T) {
	saved := wordnet
	t.Cleanup(func() { wordnet = saved })
	calls := 0
	wordnet = func() map[string]wordnetEntry {
		calls++
		return saved()
	}
	ix := wordnetTestIndex(t)
	if calls == 0 {
		t.Fatal("building an Index with WordNet on did not decode the thesaurus")
	}
	built := calls
	if _, err := ix.Search(context.Background(), Query{Text: "mend a volume"}); err != nil {
		t.Fatal(err)
	}
	if calls == built {
		t.Error("the search did not read the thesaurus it was built with")
	}
}

// TestWordNetDataCurrent regenerates the thesaurus from the WordNet
// database, when it is installed (package wordnet-base), and checks that
// the embedded file is what the generator writes.
func TestWordNetDataCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator")
	}
	if _, err := os.Stat("/usr/share/wordnet/data.verb"); err != nil {
		t.Skip("WordNet 3.0 database not installed")
	}
	out := filepath.Join(t.TempDir(), "wordnet.txt.gz")
	cmd := exec.Command("go", "run", "./internal/genthesaurus", "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("genthesaurus: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, wordnetData) {
		t.Error("search/wordnet.txt.gz is not what go run ./search/internal/genthesaurus writes; regenerate it")
	}
}
