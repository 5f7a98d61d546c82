package search

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/internal/editdist"
)

// Ranking constants; see the package documentation.
const (
	// fuzzyWeight scales the weight of a spelling correction: a guessed
	// word is weaker evidence than a word the agent wrote.
	fuzzyWeight = 0.85
	// minCandidates is how many BM25 hits are re-ranked at least.
	minCandidates = 100
	// maxListedApps bounds the app list in an unknown_app warning.
	maxListedApps = 10
)

// Search runs q against the index. It returns an error only when the index
// cannot answer (closed, context cancelled); a query that finds nothing
// returns a Result with a warning. An empty query (no searchable words)
// lists the filter's tools in catalog order, with score 0 and an
// "empty_query" warning.
func (ix *Index) Search(ctx context.Context, q Query) (Result, error) {
	if ix.closed.Load() {
		return Result{}, ErrClosed
	}
	topK := q.TopK
	if topK <= 0 {
		topK = DefaultTopK
	}
	var res Result
	f := ix.newFilter(q, &res)
	if f.none {
		res.Warnings = append(res.Warnings, Warning{Type: WarnNoResults,
			Message: "No tool matches the filter, so nothing was searched."})
		return res, nil
	}
	res.TotalAvailable = f.count(ix)
	text := strings.TrimSpace(q.Text)
	// The request's reading is bounded as its parse is (see maxQueryBytes).
	head := text[:min(len(text), maxQueryBytes)]
	if f.apps == nil {
		f.named = ix.namedApps(head)
	}
	f.many = ix.lexicon.pluralQuery(head)

	exact := ix.exactHits(text, f)
	concepts := ix.lexicon.parse(text)
	if len(concepts) == 0 && len(exact) == 0 {
		for i, t := range ix.tools {
			if len(res.Hits) == topK {
				break
			}
			if f.pass(t) {
				res.Hits = append(res.Hits, Hit{Tool: ix.tools[i]})
			}
		}
		res.Warnings = append(res.Warnings, Warning{Type: WarnEmptyQuery,
			Message: "The query has no searchable words; describe the task (e.g. \"create an issue\"). Listing tools in catalog order."})
		return res, nil
	}

	hits, rs, err := ix.rank(ctx, concepts, f, topK+len(exact))
	// used are the concepts the hits were ranked by: the query's own, or
	// their spelling corrections.
	used := concepts
	if err != nil {
		return Result{}, err
	}
	if len(hits) == 0 && len(exact) == 0 && len(concepts) > 0 {
		if fixed, fixes := ix.correct(concepts); len(fixes) > 0 {
			hits, rs, err = ix.rank(ctx, fixed, f, topK)
			if err != nil {
				return Result{}, err
			}
			used = fixed
			if len(hits) > 0 {
				res.Warnings = append(res.Warnings, Warning{Type: WarnFuzzyMatch,
					Message: "No tool matched the words as written; showing results for " + strings.Join(fixes, ", ") + "."})
			}
		}
	}

	if ix.dense != nil {
		if hits, err = ix.withDense(ctx, text, f, hits, topK+len(exact)); err != nil {
			return Result{}, err
		}
	}
	res.Hits = make([]Hit, 0, min(topK, len(exact)+len(hits)))
	taken := map[int]bool{}
	for _, d := range exact {
		if len(res.Hits) < topK && !taken[d] {
			taken[d] = true
			hit := Hit{Tool: ix.tools[d], Score: 1}
			if q.Explain {
				hit.Explain = &Explanation{ExactName: true, Dense: -1}
			}
			res.Hits = append(res.Hits, hit)
		}
	}
	// top is the best hit when the lexical ranking (not an exact name)
	// put it first: the low-relevance decision reads how it matched.
	var top *scored
	for i, h := range hits {
		if len(res.Hits) == topK {
			break
		}
		if !taken[h.doc] {
			taken[h.doc] = true
			if len(res.Hits) == 0 {
				top = &hits[i]
			}
			hit := Hit{Tool: ix.tools[h.doc], Score: h.score}
			if q.Explain {
				hit.Explain = ix.explain(used, h)
			}
			res.Hits = append(res.Hits, hit)
		}
	}

	switch {
	case len(res.Hits) == 0:
		res.Warnings = append(res.Warnings, Warning{Type: WarnNoResults,
			Message: fmt.Sprintf("No tool matched %q among %d available; try other words for the task or a wider filter.", clip(text, 80), res.TotalAvailable)})
	case ix.cfg.lowRelevance > 0:
		if msg := ix.lowRelevanceMessage(res.Hits[0], top, used, rs); msg != "" {
			res.Warnings = append(res.Warnings, Warning{Type: WarnLowRelevance, Message: msg})
		}
	}
	return res, nil
}

// headlineFields are the fields that say what a tool is for. A best hit
// that matches none of the request in them (only words of its long
// description or of its parameters) does something else, whatever its
// score: on the evaluation set's tune split that separates requests no
// tool serves from answered ones that score as low (docs/search.md,
// "Calibrating low_relevance").
const headlineFields uint8 = 1<<fName | 1<<fApp | 1<<fTitle | 1<<fTags | 1<<fSummary

// maxUnmatchedWords bounds the words a low_relevance message names.
const maxUnmatchedWords = 5

// lowRelevanceMessage decides whether the best hit is too weak a match to
// present without a warning, and says why: its score is under the
// threshold (WithLowRelevance), or a lexical best hit matches the request
// only outside its headline fields. top is the best hit's ranking when
// the lexical ranking put it first (nil for an exact name). With dense
// retrieval the headline rule does not apply: a dense match needs no
// shared word. The message names the request's words the hit matches
// nowhere, so that a client can tell what is missing.
func (ix *Index) lowRelevanceMessage(best Hit, top *scored, cs []concept, rs []resolved) string {
	low := best.Score < ix.cfg.lowRelevance
	if top == nil {
		if !low {
			return ""
		}
		return fmt.Sprintf("The best match scores %.2f (below %.2f): no tool may do this; check the results before using them, or rephrase.", best.Score, ix.cfg.lowRelevance)
	}
	if len(rs) != len(cs) {
		rs = ix.resolve(cs)
	}
	offHeadline := top.dense < 0 && ix.headline(rs, top.doc) == 0
	if !low && !offHeadline {
		return ""
	}
	var b strings.Builder
	if low {
		fmt.Fprintf(&b, "The best match, %s, scores %.2f (below %.2f)", best.Tool.Name, best.Score, ix.cfg.lowRelevance)
		if offHeadline {
			b.WriteString(" and matches the request only in its description or parameters")
		}
	} else {
		fmt.Fprintf(&b, "The best match, %s, matches the request only in its description or parameters, not in its name, title or summary", best.Tool.Name)
	}
	if unmatched := ix.unmatched(cs, rs, top.doc); len(unmatched) > 0 {
		if len(unmatched) > maxUnmatchedWords {
			unmatched = append(unmatched[:maxUnmatchedWords:maxUnmatchedWords], "…")
		}
		fmt.Fprintf(&b, "; nothing in it matches %s", strings.Join(unmatched, ", "))
	}
	b.WriteString(": no tool may do this; check the results before using them, or rephrase.")
	return b.String()
}

// headline returns the weighted share of the request (as coverage weighs
// it) that tool doc matches in its headline fields.
func (ix *Index) headline(rs []resolved, doc int) float64 {
	var got, total float64
	for _, r := range rs {
		total += r.weight
		best := 0.0
		for _, v := range r.variants {
			if ix.variantMask(doc, v)&headlineFields != 0 {
				best = max(best, v.weight)
			}
		}
		got += r.weight * best
	}
	if total == 0 {
		return 0
	}
	return got / total
}

// unmatched returns the request's words, values left out, that tool doc
// matches in no field, quoted.
func (ix *Index) unmatched(cs []concept, rs []resolved, doc int) []string {
	var out []string
	for i, r := range rs {
		if cs[i].value || slices.ContainsFunc(r.variants, func(v resolvedVariant) bool { return ix.variantMask(doc, v) != 0 }) {
			continue
		}
		out = append(out, strconv.Quote(cs[i].text))
	}
	return out
}

// variantMask returns the fields of tool doc that hold every term of v.
func (ix *Index) variantMask(doc int, v resolvedVariant) uint8 {
	if len(v.ids) == 0 {
		return 0
	}
	var mask uint8 = 0xff
	for _, id := range v.ids {
		mask &= ix.termMask(doc, id)
	}
	return mask
}

// exactHits returns the tools that text names: their full name or their
// name without the app prefix, compared case-insensitively, then the same
// without separators. Full-name matches come first. Only a query of one
// word can be a name.
func (ix *Index) exactHits(text string, f *filter) []int {
	key := strings.ToLower(strings.Trim(text, "`'\" "))
	if key == "" || strings.ContainsFunc(key, unicode.IsSpace) {
		return nil
	}
	sk := squash(key)
	var found []uint32
	for _, k := range []string{key, sk} {
		for _, d := range ix.exact[k] {
			if !slices.Contains(found, d) && f.pass(ix.tools[d]) {
				found = append(found, d)
			}
		}
	}
	type match struct{ doc, tier int }
	ms := make([]match, 0, len(found))
	for _, d := range found {
		doc := int(d)
		name := strings.ToLower(ix.tools[doc].Name)
		short := shortName(name, strings.ToLower(ix.tools[doc].AppID))
		tier := 3
		switch {
		case name == key:
			tier = 0
		case short == key:
			tier = 1
		case squash(name) == sk:
			tier = 2
		}
		ms = append(ms, match{doc, tier})
	}
	slices.SortFunc(ms, func(a, b match) int {
		if a.tier != b.tier {
			return cmp.Compare(a.tier, b.tier)
		}
		return cmp.Compare(a.doc, b.doc)
	})
	docs := make([]int, len(ms))
	for i, m := range ms {
		docs[i] = m.doc
	}
	return docs
}

type scored struct {
	doc   int
	score float64
	// The factors of score, kept for Query.Explain.
	coverage, bm25, names float32
	head                  float32 // the headline factor
	otherApp, oneOfMany   bool
	dense                 float32 // -1 when dense retrieval had no part
	same                  int32   // the same-name tool whose match this one took, -1 if none
}

// resolved is a concept prepared for coverage: term ids instead of terms,
// and its weight in the catalog.
type resolved struct {
	weight   float64
	variants []resolvedVariant
}

type resolvedVariant struct {
	ids    []uint32
	weight float64
	own    bool
}

// resolve looks up every variant's terms and weighs each concept by the
// inverse document frequency of its own form (or, when no tool has that,
// of its best-known related form). A concept nothing in the catalog
// mentions gets the mean weight of the known ones.
func (ix *Index) resolve(cs []concept) []resolved {
	out := make([]resolved, len(cs))
	var sum float64
	var known int
	for i, c := range cs {
		own, related := -1.0, -1.0
		for _, v := range c.variants {
			ids := make([]uint32, 0, len(v.terms))
			vw := 0.0
			for _, t := range v.terms {
				id, ok := ix.terms[t]
				if !ok {
					ids = nil
					break
				}
				ids = append(ids, id)
				vw = max(vw, ix.idf(ix.df[id]))
			}
			if ids == nil {
				continue
			}
			out[i].variants = append(out[i].variants, resolvedVariant{ids: ids, weight: ix.cfg.coverWeight(v), own: v.own})
			if v.own {
				own = vw
			} else {
				related = max(related, vw)
			}
		}
		w := own
		if w < 0 {
			w = related
		}
		if c.value && w > 0 {
			w *= ix.cfg.valueWeight
		}
		out[i].weight = w
		if w > 0 {
			sum += w
			known++
		}
	}
	mean := 1.0
	if known > 0 {
		mean = sum / float64(known)
	}
	for i := range out {
		if out[i].weight <= 0 {
			out[i].weight = mean * ix.cfg.unknownWeight
			if cs[i].value {
				out[i].weight = mean * ix.cfg.valueWeight
			}
		}
	}
	return out
}

// coverage is the weighted share of the query's concepts that tool doc
// matches (see the package documentation).
func (ix *Index) coverage(doc int, rs []resolved) float64 {
	var got, total float64
	for _, r := range rs {
		total += r.weight
		best := 0.0
		for _, v := range r.variants {
			if v.weight <= best {
				continue
			}
			m := 1.0
			for _, id := range v.ids {
				m = min(m, ix.cfg.fieldWeight(ix.termMask(doc, id)))
				if m == 0 {
					break
				}
			}
			best = max(best, m*v.weight)
		}
		got += r.weight * best
	}
	if total == 0 {
		return 0
	}
	return got / total
}

// relative is the factor that gives v, compared with the best value, a
// share of the score: 1 for the best, 1-share for nothing.
func relative(v, best, share float64) float64 {
	if best <= 0 {
		return 1 - share
	}
	return (1 - share) + share*v/best
}

// namePrecision is the share of tool doc's name words that the query's
// terms (its own words or related ones) account for.
func (ix *Index) namePrecision(doc int, queryTerms map[uint32]bool) float64 {
	parts := ix.nameParts[doc]
	if len(parts) == 0 {
		return 1
	}
	n := 0
	for _, id := range parts {
		if queryTerms[id] {
			n++
		}
	}
	return float64(n) / float64(len(parts))
}

// fieldWeight is the coverage weight of the strongest field in mask.
func (t *tuning) fieldWeight(mask uint8) float64 {
	w := 0.0
	for f := 0; f < numFields; f++ {
		if mask&(1<<f) != 0 {
			w = max(w, t.cover[f])
		}
	}
	return w
}

// coverWeight is how much a match on v counts toward its concept.
func (t *tuning) coverWeight(v variant) float64 {
	if v.own {
		return v.scale
	}
	return v.scale * t.expandCover
}

// boostWeight is the BM25 boost factor of v's terms.
func (t *tuning) boostWeight(v variant) float64 {
	if v.own {
		return v.scale
	}
	return v.scale * t.expandBoost
}

// rank scores the tools with BM25F over the concepts' terms and re-ranks
// the best candidates by coverage. It returns the resolved concepts too
// (nil when nothing was scored), for the low-relevance decision.
func (ix *Index) rank(ctx context.Context, cs []concept, f *filter, topK int) ([]scored, []resolved, error) {
	if len(cs) == 0 {
		return nil, nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("search: %w", err)
	}
	weights := map[uint32]float64{}
	for _, c := range cs {
		scale := 1.0
		if c.value {
			scale = ix.cfg.valueWeight
		}
		for _, v := range c.variants {
			for _, t := range v.terms {
				if id, ok := ix.terms[t]; ok {
					weights[id] = max(weights[id], scale*ix.cfg.boostWeight(v))
				}
			}
		}
	}
	if len(weights) == 0 {
		return nil, nil, nil
	}
	terms := make([]weightedTerm, 0, len(weights))
	for id, w := range weights {
		terms = append(terms, weightedTerm{id: id, weight: w * ix.idf(ix.df[id]), narrow: w < fuzzyWeight})
	}
	// A fixed term order keeps float sums, and so ties, stable.
	slices.SortFunc(terms, func(a, b weightedTerm) int { return cmp.Compare(a.id, b.id) })
	var keep func(int) bool
	if f.restricted {
		keep = func(d int) bool { return f.pass(ix.tools[d]) }
	}
	cands := ix.bm25Candidates(terms, max(minCandidates, 4*topK), keep)
	if len(cands) == 0 {
		return nil, nil, nil
	}
	rs := ix.resolve(cs)
	queryTerms := map[uint32]bool{}
	for _, r := range rs {
		for _, v := range r.variants {
			for _, id := range v.ids {
				queryTerms[id] = true
			}
		}
	}
	// BM25 and name precision shape the order relative to the best
	// candidate, so that the best hit's score stays its coverage.
	bestBM25, bestPrec := cands[0].score, 0.0
	prec := make([]float64, len(cands))
	heads := make([]float64, len(cands))
	bestHead := 0.0
	for i, c := range cands {
		prec[i] = ix.namePrecision(c.doc, queryTerms)
		bestPrec = max(bestPrec, prec[i])
		if ix.cfg.headlineShare > 0 {
			heads[i] = ix.headline(rs, c.doc)
			bestHead = max(bestHead, heads[i])
		}
	}
	out := make([]scored, 0, len(cands))
	var bestSame map[int32]int // same-name group → index in out of its best match
	for i, c := range cands {
		cov := ix.coverage(c.doc, rs)
		bm, np := relative(c.score, bestBM25, ix.cfg.bm25Share), relative(prec[i], bestPrec, ix.cfg.namePrecision)
		hf := 1.0
		if ix.cfg.headlineShare > 0 {
			hf = relative(heads[i], bestHead, ix.cfg.headlineShare)
		}
		s := cov * bm * np * hf
		if s <= 0 {
			continue
		}
		out = append(out, scored{doc: c.doc, score: s, coverage: float32(cov), bm25: float32(bm), names: float32(np), head: float32(hf), dense: -1, same: -1})
		if g := ix.sameName[c.doc]; g >= 0 && ix.cfg.sameName > 0 {
			if bestSame == nil {
				bestSame = map[int32]int{}
			}
			if j, ok := bestSame[g]; !ok || s > out[j].score {
				bestSame[g] = len(out) - 1
			}
		}
	}
	for i := range out {
		h := &out[i]
		// The same operation on another server (github and
		// github-legacy, gitlab) matches the request as well as its best
		// twin: their descriptions differ in wording, not in what they do.
		if g := ix.sameName[h.doc]; g >= 0 && bestSame != nil {
			if j := bestSame[g]; j != i && ix.cfg.sameName*out[j].score > h.score {
				h.score, h.same = ix.cfg.sameName*out[j].score, int32(out[j].doc)
			}
		}
		if h.otherApp = f.named != nil && !f.named[strings.ToLower(ix.tools[h.doc].AppID)]; h.otherApp {
			h.score *= ix.cfg.otherApp
		}
		if h.oneOfMany = f.many && !ix.many[h.doc]; h.oneOfMany {
			h.score *= ix.cfg.oneOfMany
		}
	}
	slices.SortFunc(out, byScore)
	return out, rs, nil
}

// correct replaces each concept that no tool mentions with the closest
// catalog word (edit distance 1 for words of 4–6 letters, 2 for longer).
// It returns the corrected concepts and a description of each fix.
func (ix *Index) correct(cs []concept) ([]concept, []string) {
	var fixes []string
	out := make([]concept, 0, len(cs))
	for _, c := range cs {
		if ix.knownConcept(c) || strings.Contains(c.text, " ") {
			out = append(out, c)
			continue
		}
		sw, ok := ix.nearest(c.text)
		if !ok {
			out = append(out, c)
			continue
		}
		fixes = append(fixes, fmt.Sprintf("%q → %q", c.text, sw.word))
		out = append(out, ix.lexicon.wordConcept(sw.word, sw.stem, fuzzyWeight))
	}
	return out, fixes
}

func (ix *Index) knownConcept(c concept) bool {
	for _, v := range c.variants {
		all := len(v.terms) > 0
		for _, t := range v.terms {
			if _, ok := ix.terms[t]; !ok {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// nearest finds the catalog word closest to w in spelling.
func (ix *Index) nearest(w string) (surfaceWord, bool) {
	n := len([]rune(w))
	maxd := 0
	switch {
	case n >= 7:
		maxd = 2
	case n >= 4:
		maxd = 1
	default:
		return surfaceWord{}, false
	}
	var best surfaceWord
	bestd := maxd + 1
	for l := n - maxd; l <= n+maxd; l++ {
		for _, sw := range ix.vocab[l] {
			d := editdist.Distance(w, sw.word, maxd)
			if d < bestd || (d == bestd && betterCorrection(sw, best)) {
				best, bestd = sw, d
			}
		}
	}
	return best, bestd <= maxd
}

// betterCorrection breaks ties between corrections at the same distance:
// a word from names and titles first, then the more frequent word.
func betterCorrection(a, b surfaceWord) bool {
	if a.strong != b.strong {
		return a.strong
	}
	return a.df > b.df
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// filter is a Query's restrictions, prepared once per search.
type filter struct {
	apps, tags, sources map[string]bool
	restricted          bool // some tools may not pass
	// named are the apps the query's words name, when the query is not
	// restricted to apps already; other apps' tools rank lower.
	named map[string]bool
	// many is true when the request asks for many things; tools that
	// return one rank a little lower then.
	many bool
	none bool // the filter can match no tool
}

func (ix *Index) newFilter(q Query, res *Result) *filter {
	f := &filter{}
	if len(q.AppIDs) > 0 {
		f.apps = map[string]bool{}
		var unknown []string
		for _, a := range q.AppIDs {
			la := strings.ToLower(strings.TrimSpace(a))
			if _, ok := ix.apps[la]; ok {
				f.apps[la] = true
			} else {
				unknown = append(unknown, a)
			}
		}
		if len(unknown) > 0 {
			res.Warnings = append(res.Warnings, Warning{Type: WarnUnknownApp, Message: ix.unknownAppsMessage(unknown)})
		}
		if len(f.apps) == 0 {
			f.none = true
			return f
		}
		f.restricted = true
	}
	if len(q.Tags) > 0 {
		f.tags = map[string]bool{}
		var unknown []string
		for _, t := range q.Tags {
			lt := strings.ToLower(strings.TrimSpace(t))
			if ix.tags[lt] {
				f.tags[lt] = true
			} else {
				unknown = append(unknown, strconv.Quote(t))
			}
		}
		if len(unknown) > 0 {
			res.Warnings = append(res.Warnings, Warning{Type: WarnUnknownTag,
				Message: "No tool has the tag " + strings.Join(unknown, ", ") + "."})
		}
		if len(f.tags) == 0 {
			f.none = true
			return f
		}
		f.restricted = true
	}
	if len(q.Sources) > 0 {
		f.sources = map[string]bool{}
		var unknown []string
		for _, s := range q.Sources {
			ls := strings.ToLower(strings.TrimSpace(string(s)))
			if slices.Contains(catalog.Sources, catalog.Source(ls)) {
				f.sources[ls] = true
			} else {
				unknown = append(unknown, strconv.Quote(string(s)))
			}
		}
		if len(unknown) > 0 {
			res.Warnings = append(res.Warnings, Warning{Type: WarnUnknownSource,
				Message: fmt.Sprintf("Unknown source %s; valid sources are %q.", strings.Join(unknown, ", "), catalog.Sources)})
		}
		if len(f.sources) == 0 {
			f.none = true
			return f
		}
		f.restricted = true
	}
	return f
}

// pass reports whether t satisfies the filter.
func (f *filter) pass(t *catalog.Tool) bool {
	if f.none {
		return false
	}
	if f.apps != nil && !f.apps[strings.ToLower(t.AppID)] {
		return false
	}
	if f.sources != nil && !f.sources[strings.ToLower(string(t.Source))] {
		return false
	}
	if f.tags != nil && !slices.ContainsFunc(t.Tags, func(tag string) bool { return f.tags[strings.ToLower(tag)] }) {
		return false
	}
	return true
}

// count returns the number of tools that pass the filter.
func (f *filter) count(ix *Index) int {
	if !f.restricted {
		return len(ix.tools)
	}
	n := 0
	for _, t := range ix.tools {
		if f.pass(t) {
			n++
		}
	}
	return n
}

// unknownAppsMessage names the unknown app ids, suggests a close spelling,
// and lists a few known apps (closest first) without flooding the context.
func (ix *Index) unknownAppsMessage(unknown []string) string {
	var b strings.Builder
	for i, u := range unknown {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "Unknown appId %q", u)
		if s := ix.closestApp(u); s != "" {
			fmt.Fprintf(&b, " (did you mean %q?)", s)
		}
	}
	b.WriteString(". Known apps: ")
	apps := ix.appList
	if len(apps) > maxListedApps {
		fmt.Fprintf(&b, "%s, … (%d in all).", strings.Join(apps[:maxListedApps], ", "), len(apps))
	} else {
		b.WriteString(strings.Join(apps, ", "))
		b.WriteString(".")
	}
	return b.String()
}

func (ix *Index) closestApp(u string) string {
	lu := strings.ToLower(u)
	best, bestd := "", 3
	for _, a := range ix.appList {
		la := strings.ToLower(a)
		d := editdist.Distance(lu, la, 2)
		if strings.HasPrefix(la, lu) || strings.HasPrefix(lu, la) {
			d = min(d, 1)
		}
		if d < bestd {
			best, bestd = a, d
		}
	}
	return best
}

// explain describes how h was scored for the concepts.
func (ix *Index) explain(cs []concept, h scored) *Explanation {
	e := &Explanation{Coverage: float64(h.coverage), BM25F: float64(h.bm25), Names: float64(h.names),
		OtherApp: h.otherApp, OneOfMany: h.oneOfMany, Dense: float64(h.dense), HeadlineFactor: float64(h.head)}
	if h.same >= 0 {
		e.SameNameAs = ix.tools[h.same].Name
	}
	rs := ix.resolve(cs)
	e.Headline = ix.headline(rs, h.doc)
	for i, r := range rs {
		where, related := "-", false
		best := 0.0
		for _, v := range r.variants {
			var mask uint8 = 0xff
			for _, id := range v.ids {
				mask &= ix.termMask(h.doc, id)
			}
			if w := ix.cfg.fieldWeight(mask) * v.weight; mask != 0 && w > best {
				best, related = w, !v.own
				where = fieldSpecs[strongestField(&ix.cfg.tuning, mask)].name
			}
		}
		if related {
			where += "~"
		}
		e.Matches = append(e.Matches, cs[i].text+"="+where)
	}
	return e
}

// strongestField returns the field of mask with the largest cover weight.
func strongestField(t *tuning, mask uint8) int {
	best, bw := 0, -1.0
	for f := range numFields {
		if mask&(1<<f) != 0 && t.cover[f] > bw {
			best, bw = f, t.cover[f]
		}
	}
	return best
}

// String formats the explanation on one line, for people tuning a
// catalog: "coverage 0.62 × bm25f 0.91 × names 0.97 × headline 0.95 · headline share 0.40 ·
// ticket=name open=desc~".
func (e *Explanation) String() string {
	if e == nil {
		return ""
	}
	if e.ExactName {
		return "exact name"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "coverage %.2f × bm25f %.2f × names %.2f", e.Coverage, e.BM25F, e.Names)
	if e.HeadlineFactor > 0 {
		fmt.Fprintf(&b, " × headline %.2f", e.HeadlineFactor)
	}
	if e.OtherApp {
		b.WriteString(" × other app")
	}
	if e.OneOfMany {
		b.WriteString(" × one of many")
	}
	if e.SameNameAs != "" {
		fmt.Fprintf(&b, ", as %s", e.SameNameAs)
	}
	if e.Dense >= 0 {
		fmt.Fprintf(&b, ", dense %.2f", e.Dense)
	}
	fmt.Fprintf(&b, " · headline share %.2f", e.Headline)
	if len(e.Matches) > 0 {
		b.WriteString(" · ")
		b.WriteString(strings.Join(e.Matches, " "))
	}
	return b.String()
}
