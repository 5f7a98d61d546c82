package search

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/registry"

	"github.com/codecall-go/codecall/catalog"
)

// DefaultTopK is the number of hits returned when Query.TopK is not
// positive.
const DefaultTopK = 8

// DefaultLowRelevance is the score under which the best hit is reported as
// a weak match (see WithLowRelevance). It is the middle of the range
// (0.32–0.36) that flags the most unanswerable requests of the evaluation
// set's tune split together with the headline rule (docs/search.md,
// "Calibrating low_relevance").
const DefaultLowRelevance = 0.32

// The warning types a Result can carry.
const (
	// WarnNoResults: nothing matched the query within the filter.
	WarnNoResults = "no_results"
	// WarnLowRelevance: the best hit covers little of the query; the
	// catalog probably has no tool for this request.
	WarnLowRelevance = "low_relevance"
	// WarnUnknownApp: a filter app id is not in the catalog.
	WarnUnknownApp = "unknown_app"
	// WarnUnknownTag: a filter tag is on no tool.
	WarnUnknownTag = "unknown_tag"
	// WarnUnknownSource: a filter source is not a valid tool source.
	WarnUnknownSource = "unknown_source"
	// WarnFuzzyMatch: nothing matched the words as written, and the hits
	// are for corrected spellings.
	WarnFuzzyMatch = "fuzzy_match"
	// WarnEmptyQuery: the query has no searchable words; the hits are the
	// filter's tools in catalog order.
	WarnEmptyQuery = "empty_query"
)

// Query is one search request.
type Query struct {
	// Text is the request in the agent's words, or a tool's exact name.
	Text string
	// TopK is the maximum number of hits; DefaultTopK when not positive.
	TopK int
	// AppIDs, Tags and Sources restrict the hits. Within one list a tool
	// needs any one value; across lists it needs all of them. Matching is
	// case-insensitive. Empty lists do not restrict.
	AppIDs  []string
	Tags    []string
	Sources []catalog.Source
	// Explain asks for each hit's Explanation.
	Explain bool
}

// Hit is one tool found by a search.
type Hit struct {
	Tool *catalog.Tool
	// Score is in [0, 1]; see the package documentation for its meaning.
	Score float64
	// Explain is set when the Query asked for it.
	Explain *Explanation
}

// Explanation breaks a hit's score into the factors that made it (see the
// package documentation): Score = Coverage × BM25F × Names × HeadlineFactor,
// or its same-name twin's share (SameNameAs), times the
// other-app factor when OtherApp and the one-of-many factor when
// OneOfMany, then fused with Dense when dense retrieval is on.
type Explanation struct {
	// ExactName: the query is the tool's name; the score is 1.
	ExactName bool
	// Coverage is the weighted share of the query's concepts the tool
	// matches.
	Coverage float64
	// BM25F and Names are the factors for the tool's BM25F score and for
	// the share of its name words the query explains, each relative to
	// the best candidate's.
	BM25F, Names float64
	// OtherApp: the query names an app and this tool is in another.
	OtherApp bool
	// OneOfMany: the query asks for many things and this tool's name
	// says it returns one.
	OneOfMany bool
	// SameNameAs names the tool of another app with the same name (without
	// the app prefix) whose match this tool's score was lifted to (see
	// the package documentation), "" when it was not.
	SameNameAs string
	// Dense is the normalised similarity of the embeddings, -1 when dense
	// retrieval is off.
	Dense float64
	// Headline is the weighted share of the query the tool matches in its
	// name, app, title, tags or summary, its description and parameters
	// left out. A lexical best hit with none gets the low_relevance
	// warning whatever its score (see WithLowRelevance).
	Headline float64
	// HeadlineFactor is the factor Headline gave the score, relative to
	// the best candidate's headline share.
	HeadlineFactor float64
	// Matches says, per concept of the query, where the tool matched it:
	// "ticket=name", "open=desc~" (~ marks a related word), "kubernetes=-".
	Matches []string
}

// Warning tells the client something about a result it should act on.
type Warning struct {
	// Type is one of the Warn* constants.
	Type string
	// Message is a sentence for the client (an LLM) to read.
	Message string
}

// Result is the answer to a Query.
type Result struct {
	// Hits are ordered by descending Score.
	Hits     []Hit
	Warnings []Warning
	// TotalAvailable is the number of indexed tools that pass the query's
	// filters (the whole index when there are none).
	TotalAvailable int
}

// Option configures an Index.
type Option func(*config)

type config struct {
	lowRelevance float64
	related      map[string][]string
	dense        denseConfig // see WithEmbedder
	wordnet      bool        // see WithWordNet
	tuning
}

// tuning holds the ranking constants. They are fixed in production (see
// defaultTuning) and vary only in tests that explore them.
type tuning struct {
	// bm25Share is the part of the score that follows BM25 relative to the
	// best candidate; the rest is coverage alone.
	bm25Share float64
	// expandBoost scales the BM25 boost of related words; expandCover is
	// how much a related word counts toward coverage.
	expandBoost, expandCover float64
	// unknownWeight scales the mean concept weight given to a concept the
	// catalog does not mention at all.
	unknownWeight float64
	// valueWeight scales the weight and boost of value words (see
	// concept.value).
	valueWeight float64
	// namePrecision is the share of the score that depends on how many
	// of the tool's name words the query explains: of two siblings that
	// cover the query alike, create_issue beats create_issue_link when
	// the query says nothing about links.
	namePrecision float64
	// otherApp scales the score of a tool whose app the query does not
	// name when it names some app.
	otherApp float64
	// oneOfMany scales the score of a tool that returns one thing when
	// the request asks for many.
	oneOfMany float64
	// sameName is the share of its best same-name twin's score a tool is
	// lifted to (see Index.sameName); 0 turns the rule off.
	sameName float64
	// headlineShare is the part of the score that depends on how much of
	// the query a tool matches in its headline fields (name, app, title,
	// tags, summary) relative to the best candidate: of two tools that
	// cover a request alike, the one whose headline says it wins over the
	// one that mentions it in passing.
	headlineShare float64
	// boost is each field's BM25 boost, cover its coverage weight.
	boost, cover [numFields]float64
	// wordnetScale and wordnetHyperScale scale the weight of a WordNet
	// synonym and hypernym relative to a curated related word (0 leaves
	// them out); wordnetMerge adds WordNet's synonyms to words the curated
	// vocabulary already relates, not only to the others.
	wordnetScale, wordnetHyperScale float64
	wordnetMerge                    bool
}

func defaultTuning() tuning {
	t := tuning{bm25Share: 0.5, expandBoost: 0.4, expandCover: 0.7, unknownWeight: 1, valueWeight: 0.25, namePrecision: 0.15, otherApp: 0.75, oneOfMany: 0.95, sameName: 0.98, headlineShare: 0.3,
		wordnetScale: 0.7}
	for f, spec := range fieldSpecs {
		t.boost[f], t.cover[f] = spec.boost, spec.cover
	}
	return t
}

// WithLowRelevance sets the score under which the best hit gets a
// "low_relevance" warning. The default is DefaultLowRelevance; 0 turns the
// warning off altogether. While it is on, a best hit found by the lexical
// ranking also gets the warning, whatever its score, when it matches none
// of the request in its name, app, title, tags or summary (only words of
// its description or parameters): such a tool does something else that
// mentions the request's words in passing. Exact tool names never get the
// warning, and with dense retrieval only the score counts. The warning
// says which signal fired and which of the request's words the best hit
// matches nowhere.
func WithLowRelevance(threshold float64) Option {
	return func(c *config) { c.lowRelevance = threshold }
}

// WithWordNet turns on or off the general-English thesaurus derived from
// WordNet 3.0: a query verb that the built-in vocabulary does not relate
// is widened with the synonyms of its most frequent sense that the catalog
// uses ("mend" → repair, "acquire" → get), at 0.7 of the weight of a
// curated related word. It is on by default: on the project's evaluation
// sets it answers one more request of the check set at ranks 1 and 5 and
// lowers no figure of the tune split, the check set or the corpus's dev
// set (docs/search.md, "Third round").
// The thesaurus is embedded in the binary and decoded once per process,
// when the first Index that uses it is built; an Index without it never
// decodes it.
func WithWordNet(on bool) Option {
	return func(c *config) { c.wordnet = on }
}

// WithRelatedTerms extends the built-in vocabulary of related words. Each
// key (a word or a phrase) also matches the words listed for it, at the
// weight of expanded terms. Relations are one-way: add the reverse entry
// for a synonym that should work both ways. Use it for a domain's jargon,
// e.g. {"sku": {"product"}, "po": {"purchase order"}}.
func WithRelatedTerms(extra map[string][]string) Option {
	return func(c *config) {
		if c.related == nil {
			c.related = map[string][]string{}
		}
		for k, v := range extra {
			c.related[k] = append(c.related[k], v...)
		}
	}
}

// Field layout. The boost weighs a field's term frequencies in BM25F; the
// cover weight is how much a
// match in the field counts toward query coverage (see the package
// documentation).
const (
	fName = iota
	fApp
	fTitle
	fTags
	fSummary
	fDesc
	fParams
	fParamDesc
	numFields
)

type fieldSpec struct {
	name  string
	boost float64
	cover float64
	mode  splitMode
	// expand is false for fields where related words add more noise than
	// recall: parameters mention every verb under the sun.
	expand bool
}

var fieldSpecs = [numFields]fieldSpec{
	fName:      {"name", 3.0, 1.0, splitIdent, true},
	fApp:       {"app", 2.5, 1.0, splitIdent, true},
	fTitle:     {"title", 2.0, 0.9, splitProse, true},
	fTags:      {"tags", 1.5, 0.8, splitIdent, true},
	fSummary:   {"summary", 0.5, 0.7, splitProse, true},
	fDesc:      {"desc", 1.0, 0.6, splitProse, true},
	fParams:    {"params", 0.8, 0.45, splitIdent, false},
	fParamDesc: {"paramdesc", 0.3, 0.3, splitProse, false},
}

// Index is a searchable, immutable set of tools. It is safe for concurrent
// use; Close releases it.
type Index struct {
	cfg    config
	tools  []*catalog.Tool
	closed atomic.Bool

	// postings is the inverted index: for each term id, the tools that
	// hold it with their BM25F weight. exact maps the lower-cased forms of
	// every tool's name (see keywordForms) to the tools that have them.
	postings [][]posting
	exact    map[string][]uint32
	acc      accPool

	// nameGrams holds every run of two or more consecutive name parts,
	// joined and lower-cased ("pullrequest" from create_pull_request):
	// a compound word in a query that is not in it is a value.
	nameGrams map[string]bool
	// apps maps a lower-cased app id to its spelling in the catalog.
	apps    map[string]string
	appList []string // sorted spellings, for warnings
	// appNames maps the forms a query may name an app in to its
	// lower-cased id (see indexAppNames).
	appNames map[string]string
	tags     map[string]bool

	en, surface analysis.Analyzer

	// Coverage data: a term dictionary, per-term document frequency, and
	// for each tool the sorted list of (termID<<8 | field mask).
	terms map[string]uint32
	df    []uint32
	docs  [][]uint32
	// nameParts are the term ids of each tool's name words, without the
	// words of its app id: what a query should explain (see tuning.namePrecision).
	nameParts [][]uint32
	// many is true for each tool whose name says it returns a collection
	// (list_issues, search_users): see pluralQuery.
	many []bool
	// sameName gives, for each tool, a group shared by the tools of other
	// apps with the same name without the app prefix
	// (github.create_pull_request and github-legacy.create_pull_request),
	// -1 for a tool no other app has the name of.
	sameName []int32
	vocab    map[int][]surfaceWord // by rune length, for fuzzy correction
	lexicon  *lexicon

	// dense holds the tool vectors when WithEmbedder is given and the
	// catalog could be embedded (see dense.go); denseErr says why not.
	dense    *denseIndex
	denseErr error
}

type surfaceWord struct {
	word string
	stem string
	df   int
	// strong is true when the word appears in a name, app id, title or
	// tag: the words agents look for, preferred among equal corrections.
	strong bool
}

// New builds an Index over exactly the given tools. Nil tools are skipped.
// Tool names should be unique; a duplicate name is indexed twice.
func New(tools []*catalog.Tool, opts ...Option) (*Index, error) {
	cfg := config{lowRelevance: DefaultLowRelevance, wordnet: true, tuning: defaultTuning()}
	for _, o := range opts {
		o(&cfg)
	}
	ix := &Index{
		cfg:       cfg,
		nameGrams: map[string]bool{},
		apps:      map[string]string{},
		tags:      map[string]bool{},
		terms:     map[string]uint32{},
		vocab:     map[int][]surfaceWord{},
		exact:     map[string][]uint32{},
	}
	var err error
	if ix.en, ix.surface, err = analyzers(); err != nil {
		return nil, err
	}
	for _, t := range tools {
		if t != nil {
			ix.tools = append(ix.tools, t)
		}
	}
	b := newBuilder(ix)
	for i, t := range ix.tools {
		b.add(i, t)
	}
	b.finish()
	ix.groupSameNames()
	ix.lexicon = newLexicon(ix, cfg)
	if cfg.wordnet {
		// Decoded once per process, while an index is built, so that no
		// search pays for it.
		wordnet()
	}
	ix.buildDense()
	return ix, nil
}

// groupSameNames fills ix.sameName: tools of different apps whose names
// without the app prefix are equal (case-insensitively) do the same thing
// on different servers.
func (ix *Index) groupSameNames() {
	ix.sameName = make([]int32, len(ix.tools))
	byName := map[string][]int{}
	for i, t := range ix.tools {
		short := shortName(t.Name, t.AppID)
		if short == "" || t.AppID == "" {
			continue
		}
		k := strings.ToLower(short)
		byName[k] = append(byName[k], i)
	}
	for i := range ix.sameName {
		ix.sameName[i] = -1
	}
	var next int32
	keys := make([]string, 0, len(byName))
	for k := range byName {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		docs := byName[k]
		apps := map[string]bool{}
		for _, d := range docs {
			apps[strings.ToLower(ix.tools[d].AppID)] = true
		}
		if len(apps) < 2 {
			continue
		}
		for _, d := range docs {
			ix.sameName[d] = next
		}
		next++
	}
}

// analyzers returns the English analyzer (tokenizer, possessives, lower
// case, stop words, Porter stemming), which gives the index its terms,
// and the surface analyzer (words, lower-cased), which gives the words a
// fuzzy correction can suggest.
func analyzers() (english, surface analysis.Analyzer, err error) {
	english, err = registry.NewCache().AnalyzerNamed(en.AnalyzerName)
	if err != nil {
		return nil, nil, fmt.Errorf("search: English analyzer: %w", err)
	}
	// The guard goes right before the stemmer, the analyzer's last filter.
	if d, ok := english.(*analysis.DefaultAnalyzer); ok && len(d.TokenFilters) > 0 {
		n := len(d.TokenFilters)
		fs := slices.Concat(d.TokenFilters[:n-1], []analysis.TokenFilter{stemGuard(guardedStems)}, d.TokenFilters[n-1:])
		english = &analysis.DefaultAnalyzer{CharFilters: d.CharFilters, Tokenizer: d.Tokenizer, TokenFilters: fs}
	}
	surface = &analysis.DefaultAnalyzer{
		Tokenizer:    unicode.NewUnicodeTokenizer(),
		TokenFilters: []analysis.TokenFilter{lowercase.NewLowerCaseFilter()},
	}
	return english, surface, nil
}

// guardedStems are words that Porter stemming conflates with words of
// another meaning in tool catalogs, mapped to a stem of their own:
// "manager" is not "manage", "general" not "generate", "news" not "new",
// "authority" not "author". A request to email a manager must not match
// every tool that manages something.
var guardedStems = map[string]string{
	"general": "general", "generals": "general", "generally": "general",
	"manager": "manager", "managers": "manager",
	"news":       "news",
	"experience": "experience", "experiences": "experience",
	"authority": "authority", "authorities": "authority",
	"community": "community", "communities": "community",
}

// stemGuard gives the words it maps their own stem and marks them so that
// the stemmer leaves them alone.
type stemGuard map[string]string

// Filter implements analysis.TokenFilter.
func (g stemGuard) Filter(ts analysis.TokenStream) analysis.TokenStream {
	for _, t := range ts {
		if s, ok := g[string(t.Term)]; ok {
			t.Term, t.KeyWord = []byte(s), true
		}
	}
	return ts
}

// builder collects the index's tables tool by tool.
type builder struct {
	ix       *Index
	stems    map[string]string // surface word → stem ("" for a stop word)
	surfaces map[string]*surfaceWord
	masks    map[uint32]uint8
	seen     map[string]bool
	pb       postingsBuilder
}

func newBuilder(ix *Index) *builder {
	return &builder{ix: ix, stems: map[string]string{}, surfaces: map[string]*surfaceWord{}, masks: map[uint32]uint8{}, seen: map[string]bool{}}
}

// add records tool i.
func (b *builder) add(i int, t *catalog.Tool) {
	ix := b.ix
	var text [numFields]string
	text[fName] = t.Name
	text[fApp] = t.AppID
	text[fTitle] = t.Title
	if text[fTitle] == "" {
		text[fTitle] = t.Annotations.Title
	}

	text[fTags] = strings.Join(t.Tags, " ")
	text[fSummary] = firstSentence(t.Description)
	text[fDesc] = t.Description
	text[fParams], text[fParamDesc] = schemaText(t.InputSchema)

	clear(b.masks)
	clear(b.seen)
	b.pb.begin()
	for f, spec := range fieldSpecs {
		if text[f] == "" {
			continue
		}
		prepared := expandCompounds(text[f], spec.mode, true)
		for _, tok := range ix.surface.Analyze([]byte(prepared)) {
			w := string(tok.Term)
			stem := b.stem(w)
			if stem == "" {
				continue
			}
			id, ok := ix.terms[stem]
			if !ok {
				id = uint32(len(ix.df))
				ix.terms[stem] = id
				ix.df = append(ix.df, 0)
			}
			b.masks[id] |= 1 << f
			b.pb.count(id, f)
			// Surface words feed the fuzzy fallback. Parameter prose is
			// long free text, too noisy to suggest spellings from.
			if f != fParamDesc && !b.seen[w] && len(w) >= 3 {
				b.seen[w] = true
				sw := b.surfaces[w]
				if sw == nil {
					sw = &surfaceWord{word: w, stem: stem}
					b.surfaces[w] = sw
				}
				sw.df++
			}
			if f <= fTags && b.surfaces[w] != nil {
				b.surfaces[w].strong = true
			}
		}
	}
	packed := make([]uint32, 0, len(b.masks))
	for id, m := range b.masks {
		packed = append(packed, id<<8|uint32(m))
		ix.df[id]++
	}
	slices.Sort(packed)
	ix.docs = append(ix.docs, packed)
	b.pb.end()

	appStems := map[string]bool{}
	for _, p := range wordsOf(t.AppID) {
		appStems[b.stem(p)] = true
	}
	var np []uint32
	for _, p := range wordsOf(t.Name) {
		stem := b.stem(p)
		if id, ok := ix.terms[stem]; ok && stem != "" && !appStems[stem] && !slices.Contains(np, id) {
			np = append(np, id)
		}
	}
	ix.nameParts = append(ix.nameParts, np)
	ix.many = append(ix.many, b.returnsMany(t))

	parts := splitWord(t.Name, splitIdent)
	for i := range parts {
		for j := i + 2; j <= len(parts); j++ {
			ix.nameGrams[strings.ToLower(strings.Join(parts[i:j], ""))] = true
		}
	}
	// The exact-name path looks names up as written (case-insensitive)
	// and without separators, so that "createIssue", "github/create_issue"
	// and "create-issue" find create_issue too.
	lname := strings.ToLower(t.Name)
	forms := keywordForms(lname)
	if s := shortName(lname, strings.ToLower(t.AppID)); s != "" {
		forms = append(forms, keywordForms(s)...)
	}
	for _, k := range forms {
		if docs := ix.exact[k]; len(docs) == 0 || docs[len(docs)-1] != uint32(i) {
			ix.exact[k] = append(docs, uint32(i))
		}
	}
	if t.AppID != "" {
		la := strings.ToLower(t.AppID)
		if _, ok := ix.apps[la]; !ok {
			ix.apps[la] = t.AppID
			ix.appList = append(ix.appList, t.AppID)
		}
	}
	for _, tag := range t.Tags {
		ix.tags[strings.ToLower(tag)] = true
	}
}

// stem returns the English-analyzer form of one lower-cased word, "" for a
// stop word. Results are cached for the build.
func (b *builder) stem(w string) string {
	if s, ok := b.stems[w]; ok {
		return s
	}
	s := analyzeWord(b.ix.en, w)
	b.stems[w] = s
	return s
}

func (b *builder) finish() {
	b.ix.postings = b.pb.build(len(b.ix.df), b.ix.cfg.boost, b.ix.df)
	b.ix.indexAppNames()
	for _, sw := range b.surfaces {
		n := len([]rune(sw.word))
		b.ix.vocab[n] = append(b.ix.vocab[n], *sw)
	}
	for _, ws := range b.ix.vocab {
		sort.Slice(ws, func(i, j int) bool { return ws[i].word < ws[j].word })
	}
	sort.Slice(b.ix.appList, func(i, j int) bool {
		return strings.ToLower(b.ix.appList[i]) < strings.ToLower(b.ix.appList[j])
	})
}

// firstSentence returns the first sentence of a description, where tools
// say what they do; the rest is usually how.
func firstSentence(d string) string {
	d = strings.TrimSpace(d)
	for i := 0; i < len(d); i++ {
		switch d[i] {
		case '\n':
			if i > 0 {
				return d[:i]
			}
		case '.', '!', '?':
			if i+1 == len(d) || d[i+1] == ' ' || d[i+1] == '\n' {
				return d[:i]
			}
		}
	}
	return d
}

// keywordForms returns a lower-cased name and, when it differs, the name
// without separators.
func keywordForms(name string) []string {
	if n := squash(name); n != name {
		return []string{name, n}
	}
	return []string{name}
}

// squash removes identifier separators: "create_issue" → "createissue".
func squash(s string) string {
	return strings.Map(func(r rune) rune {
		if isSeparator(r) {
			return -1
		}
		return r
	}, s)
}

// wordsOf returns the lower-cased parts of an identifier.
func wordsOf(ident string) []string {
	parts := splitWord(ident, splitIdent)
	if parts == nil && ident != "" {
		parts = []string{ident}
	}
	for i, p := range parts {
		parts[i] = strings.ToLower(p)
	}
	return parts
}

// analyzeWord runs the English analyzer on a single word and returns its
// one term, or "" when the analyzer drops it (stop word).
func analyzeWord(a analysis.Analyzer, w string) string {
	toks := a.Analyze([]byte(w))
	if len(toks) == 0 {
		return ""
	}
	return string(toks[0].Term)
}

// schemaText extracts parameter names and parameter descriptions (with
// enum values, which often name the operations of a multi-purpose tool)
// from a JSON Schema. Nested objects and array items are followed a few
// levels deep. An invalid schema contributes nothing: search must not fail
// because one tool's schema is odd.
func schemaText(raw json.RawMessage) (names, descs string) {
	if len(raw) == 0 {
		return "", ""
	}
	var root any
	if err := json.Unmarshal(raw, &root); err != nil {
		return "", ""
	}
	var nb, db strings.Builder
	var walk func(node any, depth int)
	walk = func(node any, depth int) {
		obj, ok := node.(map[string]any)
		if !ok || depth > 4 {
			return
		}
		if props, ok := obj["properties"].(map[string]any); ok {
			keys := make([]string, 0, len(props))
			for k := range props {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				nb.WriteString(k)
				nb.WriteByte(' ')
				p, _ := props[k].(map[string]any)
				if d, ok := p["description"].(string); ok {
					db.WriteString(d)
					db.WriteString(" \n")
				}
				if enum, ok := p["enum"].([]any); ok {
					for _, e := range enum {
						if s, ok := e.(string); ok {
							db.WriteString(s)
							db.WriteByte(' ')
						}
					}
					db.WriteString("\n")
				}
				walk(p, depth+1)
			}
		}
		if items, ok := obj["items"]; ok {
			walk(items, depth+1)
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf"} {
			if alts, ok := obj[k].([]any); ok {
				for _, a := range alts {
					walk(a, depth+1)
				}
			}
		}
	}
	walk(root, 0)
	return nb.String(), db.String()
}

// Len returns the number of indexed tools.
func (ix *Index) Len() int { return len(ix.tools) }

// ErrClosed is returned by Search on a closed Index.
var ErrClosed = errors.New("search: index closed")

// Close releases the index. Searches after Close fail with ErrClosed;
// closing twice is harmless.
func (ix *Index) Close() error {
	ix.closed.Store(true)
	return nil
}

// idf is the BM25 inverse document frequency of a term over the catalog.
func (ix *Index) idf(df uint32) float64 {
	n := float64(len(ix.tools))
	return math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
}

// hasTerm reports whether any tool contains the analysed term t.
func (ix *Index) hasTerm(t string) bool {
	_, ok := ix.terms[t]
	return ok
}

// termMask returns the fields of tool doc that contain term id.
func (ix *Index) termMask(doc int, id uint32) uint8 {
	packed := ix.docs[doc]
	k := sort.Search(len(packed), func(i int) bool { return packed[i]>>8 >= id })
	if k < len(packed) && packed[k]>>8 == id {
		return uint8(packed[k])
	}
	return 0
}
