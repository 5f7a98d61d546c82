// Command genthesaurus writes search/wordnet.txt.gz, the general-English
// thesaurus that package search can use to widen a query word with its
// synonyms (see search.WithWordNet). It reads the WordNet 3.0 database
// (Debian/Ubuntu package wordnet-base, /usr/share/wordnet):
//
//	go run ./search/internal/genthesaurus
//
// Only lemma lists (synonym sets) are used; no definitions or examples are
// copied. The choices, which keep the file small and its expansions close to
// what a word usually means. The defaults are the variant that measured
// best on the tune split of the project's query set (docs/search.md,
// "WordNet expansion (experiment)"); the flags reproduce the others:
//
//   - Parts of speech: verbs (-pos v; "vn" adds nouns). Adjectives and
//     adverbs rarely name a tool's operation or object; nouns added nothing
//     measurable and made the file three times larger.
//   - Keys: single-word lemmas written in lower case (no proper nouns) that
//     occur at least once in WordNet's sense-tagged corpus (tagsense_cnt in
//     index.verb/index.noun > 0), WordNet's own measure of a common word.
//     With -dict, the words of a word list (e.g. wamerican's
//     /usr/share/dict/american-english) instead, tagged or not.
//   - Senses: only the first sense of a lemma (-senses 1; WordNet orders
//     senses by frequency in the tagged corpus), and with -senses > 1 only
//     further senses that were tagged at least once: a rare sense drags in
//     words the request almost never means. The second sense cost more on
//     the project's dev queries than it gained on the tune split.
//   - Synonyms: the other lemmas of those synsets, in lower case, of one or
//     two words (split at '_' and '-'), none of them a stop word.
//   - Hypernyms (-hypernyms): optionally, the lemmas of the direct
//     hypernyms of a noun's first sense, written to a second column that the
//     engine weighs lower.
//
// Keys and synonyms are written as the terms of package search's English
// analysis (lower case, stop words removed, Porter stems), so that the
// engine looks a query word up by the stem it already has and needs no
// analysis at query time. Lemmas that stem alike ("generate", "general")
// share a key only when they have the same part of speech; of those, the
// most frequent lemma (largest tagsense_cnt) supplies the synonyms.
//
// Each line of the output is
//
//	key<TAB>syn,syn syn,...[<TAB>hyp,...]
//
// where a synonym of two words is two stems separated by a space. Lines are
// sorted by key; the file is gzip-compressed.
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/registry"
)

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0 database `dir`")
	out := flag.String("o", filepath.Join("search", "wordnet.txt.gz"), "output `file`")
	senses := flag.Int("senses", 1, "senses per lemma, most frequent first")
	pos := flag.String("pos", "v", "parts of speech: v (verbs), n (nouns) or vn")
	hyper := flag.Bool("hypernyms", false, "add the direct hypernyms of a noun's first sense")
	dict := flag.String("dict", "", "word list `file` (e.g. /usr/share/dict/american-english): keep the keys it lists, tagged or not, instead of the tagged ones")
	flag.Parse()

	a, err := registry.NewCache().AnalyzerNamed(en.AnalyzerName)
	if err != nil {
		log.Fatal(err)
	}
	g := &gen{an: a, senses: *senses, hyper: *hyper, syn: map[string][]string{}, hyp: map[string][]string{}}
	if *dict != "" {
		b, err := os.ReadFile(*dict)
		if err != nil {
			log.Fatal(err)
		}
		g.dict = map[string]bool{}
		for _, w := range strings.Fields(string(b)) {
			g.dict[w] = true
		}
	}
	for _, p := range *pos {
		name := map[rune]string{'v': "verb", 'n': "noun"}[p]
		if name == "" {
			log.Fatalf("-pos: unknown part of speech %q", p)
		}
		if err := g.read(*dir, name); err != nil {
			log.Fatal(err)
		}
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	keys := make([]string, 0, len(g.syn))
	for k := range g.syn {
		keys = append(keys, k)
	}
	for k := range g.hyp {
		if _, ok := g.syn[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	n := 0
	for _, k := range keys {
		line := k + "\t" + strings.Join(g.syn[k], ",")
		if h := g.hyp[k]; len(h) > 0 {
			line += "\t" + strings.Join(h, ",")
		}
		fmt.Fprintln(zw, line)
		n++
	}
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("%s: %d keys, %d bytes", *out, n, buf.Len())
}

type gen struct {
	an       analysis.Analyzer
	senses   int
	hyper    bool
	dict     map[string]bool     // nil: keep the tagged lemmas
	syn, hyp map[string][]string // key stem → synonyms / hypernyms (stems)
}

// read adds the lemmas of one part of speech.
func (g *gen) read(dir, pos string) error {
	data, err := os.ReadFile(filepath.Join(dir, "data."+pos))
	if err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(dir, "index."+pos))
	if err != nil {
		return err
	}
	defer f.Close()

	type entry struct {
		tagged     int
		syn, hyper []string
	}
	best := map[string]entry{} // key stem → most frequent lemma's entry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, " ") {
			continue // licence header
		}
		fs := strings.Fields(line)
		lemma := fs[0]
		if !isWord(lemma) {
			continue
		}
		nsyn, _ := strconv.Atoi(fs[2])
		nptr, _ := strconv.Atoi(fs[3])
		rest := fs[4+nptr:]
		tagged, _ := strconv.Atoi(rest[1])
		offsets := rest[2 : 2+nsyn]
		if (g.dict == nil && tagged == 0) || (g.dict != nil && !g.dict[lemma]) {
			continue
		}
		key := g.stem(lemma)
		if key == "" {
			continue
		}
		var e entry
		e.tagged = tagged
		for i, off := range offsets {
			if i >= g.senses || (i > 0 && i >= tagged) {
				break
			}
			words, hypers := synset(data, off)
			if !slices.Contains(words, lemma) {
				continue // the lemma is capitalised here: a proper noun
			}
			for _, w := range words {
				if w != lemma {
					e.syn = g.add(e.syn, w, key)
				}
			}
			if g.hyper && pos == "noun" && i == 0 {
				for _, h := range hypers {
					hw, _ := synset(data, h)
					for _, w := range hw {
						e.hyper = g.add(e.hyper, w, key)
					}
				}
			}
		}
		if len(e.syn)+len(e.hyper) == 0 {
			continue
		}
		if old, ok := best[key]; !ok || e.tagged > old.tagged {
			best[key] = e
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	for k, e := range best {
		for _, s := range e.syn {
			g.syn[k] = appendNew(g.syn[k], s)
		}
		for _, s := range e.hyper {
			if !slices.Contains(g.syn[k], s) {
				g.hyp[k] = appendNew(g.hyp[k], s)
			}
		}
	}
	return nil
}

// add appends lemma w, as stems, to list when it is one or two lower-case
// words without stop words and differs from the key.
func (g *gen) add(list []string, w, key string) []string {
	if w != strings.ToLower(w) {
		return list
	}
	parts := strings.FieldsFunc(w, func(r rune) bool { return r == '_' || r == '-' })
	if len(parts) == 0 || len(parts) > 2 {
		return list
	}
	stems := make([]string, len(parts))
	for i, p := range parts {
		if !isWord(p) {
			return list
		}
		if stems[i] = g.stem(p); stems[i] == "" {
			return list
		}
	}
	s := strings.Join(stems, " ")
	if s == key {
		return list
	}
	return appendNew(list, s)
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func (g *gen) stem(w string) string {
	toks := g.an.Analyze([]byte(w))
	if len(toks) != 1 {
		return ""
	}
	return string(toks[0].Term)
}

// isWord reports whether w is made of lower-case ASCII letters only.
func isWord(w string) bool {
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return len(w) > 1
}

// synset returns the words of the synset at byte offset off of a data file,
// and the offsets of its hypernyms (pointer symbols @ and @i).
func synset(data []byte, off string) (words, hypers []string) {
	o, err := strconv.Atoi(off)
	if err != nil || o >= len(data) {
		return nil, nil
	}
	line := data[o:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	if i := bytes.IndexByte(line, '|'); i >= 0 {
		line = line[:i] // the gloss is never read
	}
	fs := strings.Fields(string(line))
	n, _ := strconv.ParseInt(fs[3], 16, 32)
	for i := 0; i < int(n); i++ {
		w := fs[4+2*i]
		if j := strings.IndexByte(w, '('); j > 0 {
			w = w[:j] // adjective markers
		}
		words = append(words, w)
	}
	p := 4 + 2*int(n)
	np, _ := strconv.Atoi(fs[p])
	for i := 0; i < np; i++ {
		sym, target := fs[p+1+4*i], fs[p+2+4*i]
		if sym == "@" || sym == "@i" {
			hypers = append(hypers, target)
		}
	}
	return words, hypers
}
