package search

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"slices"
	"strings"
	"sync"
)

// wordnetData is the general-English thesaurus derived from WordNet 3.0 by
// search/internal/genthesaurus (see that command for what it keeps, and
// search/LICENSE-WordNet for WordNet's licence). Keys and synonyms are
// analysed terms (Porter stems).
//
//go:embed wordnet.txt.gz
var wordnetData []byte

// wordnetEntry is what WordNet relates to one key stem: synonyms and
// (optionally) direct hypernyms, each a list of one or two terms.
type wordnetEntry struct {
	syn, hyper [][]string
}

// wordnet returns the thesaurus, decoded on first use and read-only after.
// An Index that does not use WordNet never decodes it.
var wordnet = sync.OnceValue(func() map[string]wordnetEntry {
	m := map[string]wordnetEntry{}
	zr, err := gzip.NewReader(bytes.NewReader(wordnetData))
	if err != nil {
		return m
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 2 {
			continue
		}
		var e wordnetEntry
		e.syn = splitTermLists(cols[1])
		if len(cols) > 2 {
			e.hyper = splitTermLists(cols[2])
		}
		m[cols[0]] = e
	}
	return m
})

func splitTermLists(s string) [][]string {
	if s == "" {
		return nil
	}
	var out [][]string
	for _, m := range strings.Split(s, ",") {
		out = append(out, strings.Fields(m))
	}
	return out
}

// wordnetVariants returns the WordNet expansions of the query word whose
// stem is s, restricted to those every term of which the catalog has, at
// the WordNet weights of the tuning. Synonyms the curated vocabulary
// already gives are left out (curated is lx.expand[s]).
func (lx *lexicon) wordnetVariants(s string, curated []variant) []variant {
	t := &lx.ix.cfg.tuning
	if !lx.ix.cfg.wordnet || (len(curated) > 0 && !t.wordnetMerge) {
		return nil
	}
	e, ok := wordnet()[s]
	if !ok {
		return nil
	}
	var out []variant
	add := func(lists [][]string, scale float64) {
		if scale <= 0 {
			return
		}
		for _, terms := range lists {
			if !slices.ContainsFunc(terms, func(t string) bool { return !lx.ix.hasTerm(t) }) {
				out = mergeVariants(out, []variant{{terms: terms, scale: scale}}, []string{s})
			}
		}
	}
	add(e.syn, t.wordnetScale)
	add(e.hyper, t.wordnetHyperScale)
	return slices.DeleteFunc(out, func(v variant) bool {
		return slices.ContainsFunc(curated, func(c variant) bool { return slices.Equal(c.terms, v.terms) })
	})
}
