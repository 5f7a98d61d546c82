package search

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxQueryBytes and maxConcepts bound the work one query can cause; longer
// requests are cut. An agent's need fits well within both.
const (
	maxQueryBytes = 2048
	maxConcepts   = 32
)

// variant is one way a concept can appear in a tool: all its terms
// (analysed, i.e. stemmed) must be present. A related form (own false)
// counts less than the query's own words; scale lowers both for guessed
// spellings.
type variant struct {
	terms []string
	own   bool
	scale float64
}

// concept is one unit of meaning in a query: a word or a recognised phrase,
// with the variants that count as a match for it.
type concept struct {
	text     string // the query's own words, for messages
	variants []variant
	// value is true for words that are most likely values for the tool
	// (names, identifiers) rather than words for the need; they count
	// little (see tuning.valueWeight).
	value bool
}

// phrase is a multi-word vocabulary entry recognised in queries.
type phrase struct {
	words []string // lower-cased surface words
	// keys are the words as a query is compared with them: each word's
	// stem, or the word itself when it is a stop word, so that "keeping an
	// eye on" meets "keep an eye on" and "staging" meets "stage".
	keys     []string
	stemmed  bool // keys are stems
	variants []variant
}

// stemmedKey prefixes the lexicon's phrase map keys of phrases compared by
// stem; the others are keyed by their first surface word.
const stemmedKey = "\x00"

// lexicon is an Index's read-only expansion vocabulary: the built-in
// related groups plus the caller's WithRelatedTerms, analysed with the
// index's analyzers.
type lexicon struct {
	ix      *Index
	expand  map[string][]variant // stem of a single word → related variants
	phrases map[string][]phrase  // first key (see stemmedKey) → phrases
	stems   map[string]string    // surface word → stem for vocabulary words
}

// form is a vocabulary member after analysis. lossy is true when stop-word
// removal dropped part of it ("look up" → "look"): such a member is still
// recognised in queries, but never used as an expansion, because what is
// left means something else.
type form struct {
	words []string
	terms []string
	lossy bool
}

func newLexicon(ix *Index, cfg config) *lexicon {
	lx := &lexicon{ix: ix, expand: map[string][]variant{}, phrases: map[string][]phrase{}, stems: map[string]string{}}
	for _, g := range slices.Concat(relatedGroups, thesaurusGroups) {
		forms := make([]form, len(g))
		for i, m := range g {
			forms[i] = lx.form(m)
		}
		for i := range forms {
			var others []variant
			for j, o := range forms {
				if j != i && !o.lossy && len(o.terms) > 0 {
					others = append(others, variant{terms: o.terms, scale: 1})
				}
			}
			lx.relate(forms[i], others)
		}
	}
	// groupOf is what the groups relate each word to, before the one-way
	// entries add theirs: a one-way target brings its group along ("scroll
	// down" → scroll → wheel), one hop further, never a one-way chain.
	groupOf := make(map[string][]variant, len(lx.expand))
	for k, vs := range lx.expand {
		groupOf[k] = vs
	}
	for _, oneWay := range []map[string][]string{relatedOneWay, thesaurusOneWay, cfg.related} {
		keys := make([]string, 0, len(oneWay))
		for k := range oneWay {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			var others []variant
			for _, v := range oneWay[k] {
				if o := lx.form(v); !o.lossy && len(o.terms) > 0 {
					others = append(others, variant{terms: o.terms, scale: 1})
					if len(o.terms) == 1 {
						for _, g := range groupOf[o.terms[0]] {
							others = append(others, variant{terms: g.terms, scale: 1})
						}
					}
				}
			}
			lx.relate(lx.form(k), others)
		}
	}
	for k, ps := range lx.phrases {
		slices.SortStableFunc(ps, func(a, b phrase) int { return len(b.words) - len(a.words) })
		lx.phrases[k] = ps
	}
	return lx
}

// form analyses one vocabulary member.
func (lx *lexicon) form(member string) form {
	var f form
	for _, tok := range lx.ix.surface.Analyze([]byte(expandCompounds(member, splitProse, false))) {
		w := string(tok.Term)
		f.words = append(f.words, w)
		if s := lx.stem(w); s != "" {
			f.terms = append(f.terms, s)
		}
	}
	f.lossy = len(f.terms) < len(f.words)
	return f
}

// stem analyses one vocabulary word, with a cache. It writes the cache, so
// only the lexicon's construction may call it: a search analyses its words
// with analyzeWord.
func (lx *lexicon) stem(w string) string {
	if s, ok := lx.stems[w]; ok {
		return s
	}
	s := analyzeWord(lx.ix.en, w)
	lx.stems[w] = s
	return s
}

// phraseKeys returns the comparison keys of a phrase's surface words (see
// phrase.keys), and whether they are stems. A phrase of fewer than two
// words with a stem is compared as written: "gist of" is a summary, "gists
// of" are gists.
func (lx *lexicon) phraseKeys(words []string) ([]string, bool) {
	keys := make([]string, len(words))
	n := 0
	for i, w := range words {
		keys[i] = w
		if s := lx.stem(w); s != "" {
			keys[i] = s
			n++
		}
	}
	if n < 2 {
		return words, false
	}
	return keys, true
}

// wordKey is phraseKeys for one query word, without the lexicon's cache,
// so that a search does not write to it.
func (lx *lexicon) wordKey(w string) string {
	if s := analyzeWord(lx.ix.en, w); s != "" {
		return s
	}
	return w
}

// relate records that member f expands to others.
func (lx *lexicon) relate(f form, others []variant) {
	switch {
	case len(f.words) == 0:
		return
	case len(f.words) == 1:
		if len(f.terms) == 1 {
			lx.expand[f.terms[0]] = mergeVariants(lx.expand[f.terms[0]], others, f.terms)
		}
	default:
		if f.lossy {
			// What is left of "on call" or "who am i" after stop words
			// means little; the phrase's alternatives carry its meaning, as
			// fully as the agent's own words would.
			for i := range others {
				others[i].own = true
			}
		}
		// A lossy phrase does not carry its own remaining terms ("scroll"
		// of "scroll down"), so an alternative equal to them is kept: it is
		// the phrase's meaning, not a repetition.
		own := f.terms
		if f.lossy {
			own = nil
		}
		keys, stemmed := lx.phraseKeys(f.words)
		first := keys[0]
		if stemmed {
			first = stemmedKey + first
		}
		for i, p := range lx.phrases[first] {
			if slices.Equal(p.keys, keys) {
				lx.phrases[first][i].variants = mergeVariants(p.variants, others, own)
				return
			}
		}
		var vs []variant
		if len(f.terms) > 0 && !f.lossy {
			vs = append(vs, variant{terms: f.terms, own: true, scale: 1})
		}
		lx.phrases[first] = append(lx.phrases[first], phrase{words: f.words, keys: keys, stemmed: stemmed, variants: mergeVariants(vs, others, own)})
	}
}

// mergeVariants adds add to vs, skipping the member's own form (the query
// carries it already) and duplicates.
func mergeVariants(vs, add []variant, own []string) []variant {
	for _, a := range add {
		if !slices.Equal(a.terms, own) && !slices.ContainsFunc(vs, func(v variant) bool { return slices.Equal(v.terms, a.terms) }) {
			vs = append(vs, a)
		}
	}
	return vs
}

// parse turns query text into concepts: quoted literals are dropped (they
// are data, not the need), phrases from the vocabulary are recognised,
// filler and stop words and bare numbers are dropped, and every remaining
// word becomes a concept with its own form and its related words.
func (lx *lexicon) parse(text string) []concept {
	if len(text) > maxQueryBytes {
		text = text[:maxQueryBytes]
	}
	cs := lx.parseText(stripQuoted(text))
	if len(cs) == 0 {
		cs = lx.parseText(text)
	}
	return cs
}

func (lx *lexicon) parseText(text string) []concept {
	words := lx.queryWords(dropValues(text))
	var cs []concept
	seen := map[string]bool{}
	add := func(c concept) {
		key := c.text
		if len(c.variants) > 0 {
			key = strings.Join(c.variants[0].terms, " ")
		}
		if seen[key] || len(cs) >= maxConcepts {
			return
		}
		seen[key] = true
		cs = append(cs, c)
	}
	surface := make([]string, len(words))
	keys := make([]string, len(words))
	for i, w := range words {
		surface[i] = w.text
		keys[i] = lx.wordKey(w.text)
	}
	negated := false
	// split are the particles of phrasal verbs already read with their
	// verb ("hand the ticket over"): skipped when reached.
	var split map[int]bool
	for i := 0; i < len(words); {
		if split[i] {
			i++
			continue
		}
		if n := fillerPhrase(surface, i); n > 0 {
			i += n
			continue
		}
		if p, j, ok := lx.matchSplitPhrasal(surface, keys, i); ok && !lx.startsPhrase(surface, keys, i) {
			// A phrasal verb whose object sits between its words: "hand
			// SUP-20 over", "wake the project up".
			if split == nil {
				split = map[int]bool{}
			}
			split[j] = true
			split[j-1] = split[j-1] || surface[j-1] == "back"
			if !negated {
				add(concept{text: surface[i] + " " + surface[j], variants: p.variants})
			}
			negated = false
			i++
			continue
		}
		if p, ok := lx.matchPhrase(surface, keys, i); ok {
			c := concept{text: strings.Join(surface[i:i+len(p.words)], " "), variants: p.variants}
			if cc, n := lx.compound(words, i); n == len(p.words) {
				// The catalog writes the phrase as one word ("data
				// sources", datasources): that is its own form.
				cc.variants = mergeVariants(cc.variants, p.variants, nil)
				c = cc
			}
			if !negated {
				add(c)
			}
			negated = false
			i += len(p.words)
			continue
		}
		if c, n := lx.compound(words, i); n > 0 {
			if !negated {
				add(c)
			}
			negated = false
			i += n
			continue
		}
		w := words[i]
		i++
		if negationWords[w.text] {
			// "draft an email but do not send it": the word after a
			// negation names what the agent does not want.
			negated = true
			continue
		}
		if queryFillerWords[w.text] || isNumber(w.text) {
			continue
		}
		s := analyzeWord(lx.ix.en, w.text)
		if s == "" {
			continue
		}
		if negated {
			negated = false
			// "not staged" means "unstaged" when the catalog says so.
			if un := analyzeWord(lx.ix.en, "un"+w.text); un != "" && lx.ix.hasTerm(un) {
				add(lx.wordConcept("un"+w.text, un, 1))
			}
			continue
		}
		if stateWords[w.text] && len(cs) > 0 &&
			((i < len(words) && lx.contentWord(words[i].text)) || (i >= 2 && beWords[words[i-2].text])) {
			// "list a customer's open tickets", "which PRs are open": after
			// the request's verb, a state word before a noun or after "is"
			// describes the things wanted; it does not ask to open, close
			// or create anything, and a tool named for doing so is the
			// wrong one.
			continue
		}
		c := lx.wordConcept(w.text, s, 1)
		// A capitalised word the catalog does not know is a name ("ask
		// Priya", "flights to Lisbon"): a value for the tool, not the need.
		c.value = w.value || (w.capital && !lx.ix.knownConcept(c))
		add(c)
	}
	return cs
}

// stateWords are words that name an operation as verbs and a state as
// adjectives ("open a ticket" vs "open tickets").
var stateWords = map[string]bool{
	"open": true, "closed": true, "close": true, "running": true,
	"active": true, "pending": true, "failed": true, "failing": true,
	"stopped": true, "paused": true, "archived": true, "deleted": true,
	"merged": true, "draft": true, "published": true, "resolved": true,
	"completed": true, "finished": true, "scheduled": true, "started": true,
	"locked": true, "muted": true, "disabled": true, "enabled": true,
	"assigned": true, "unassigned": true, "unread": true, "starred": true,
}

// beWords introduce a state: "which PRs are open".
var beWords = map[string]bool{"is": true, "are": true, "was": true, "were": true, "still": true, "being": true, "been": true}

// contentWord reports whether w can name what a request is about: not a
// stop word, filler, negation or number.
func (lx *lexicon) contentWord(w string) bool {
	return !queryFillerWords[w] && !negationWords[w] && !isNumber(w) && analyzeWord(lx.ix.en, w) != ""
}

// compound recognises a word the catalog writes as one and the query as
// two ("data sources" for datasources), or the reverse ("datasources" for
// "data source"). It returns the concept and the number of query words it
// spans, 0 when there is none at words[i].
func (lx *lexicon) compound(words []queryWord, i int) (concept, int) {
	w := words[i].text
	if i+1 < len(words) && lx.contentWord(w) && lx.contentWord(words[i+1].text) {
		next := words[i+1].text
		joined := analyzeWord(lx.ix.en, w+next)
		if joined != "" && lx.ix.hasTerm(joined) {
			a, b := analyzeWord(lx.ix.en, w), analyzeWord(lx.ix.en, next)
			return concept{text: w + " " + next, variants: []variant{
				{terms: []string{joined}, own: true, scale: 1},
				{terms: []string{a, b}, own: true, scale: 1},
			}}, 2
		}
	}
	const minPart = 3
	s := analyzeWord(lx.ix.en, w)
	if s == "" || lx.ix.hasTerm(s) || len(w) < 2*minPart || !lx.contentWord(w) {
		return concept{}, 0
	}
	for k := len(w) - minPart; k >= minPart; k-- {
		a, b := analyzeWord(lx.ix.en, w[:k]), analyzeWord(lx.ix.en, w[k:])
		if a != "" && b != "" && lx.ix.hasTerm(a) && lx.ix.hasTerm(b) {
			c := lx.wordConcept(w, s, 1)
			c.variants = append(c.variants, variant{terms: []string{a, b}, own: true, scale: 1})
			return c, 1
		}
	}
	return concept{}, 0
}

// queryWord is one lower-cased word of a query. value marks a part of an
// identifier that names no tool (a value such as test_project_root);
// capital marks a capitalised word other than the first.
type queryWord struct {
	text           string
	value, capital bool
}

// queryWords tokenises a query. Compound words (snake_case, camelCase,
// dotted) are split into their parts; when the compound is not part of any
// tool name, the parts are marked as values.
func (lx *lexicon) queryWords(text string) []queryWord {
	var out []queryWord
	for k, tok := range lx.ix.surface.Analyze([]byte(text)) {
		raw := text[tok.Start:tok.End]
		parts := splitWord(raw, splitProse)
		if slices.ContainsFunc(parts, func(p string) bool { return len([]rune(p)) < 2 }) {
			parts = nil // iPhone, e.g: a word with a capital, not an identifier
		}
		if parts == nil {
			first, _ := utf8.DecodeRuneInString(raw)
			out = append(out, queryWord{text: string(tok.Term), capital: k > 0 && unicode.IsUpper(first)})
			continue
		}
		value := !lx.ix.nameGrams[strings.ToLower(strings.Join(parts, ""))]
		for _, p := range parts {
			out = append(out, queryWord{text: strings.ToLower(p), value: value})
		}
	}
	return out
}

// fillerPhrase returns the length of the filler phrase that starts at
// words[i], or 0.
func fillerPhrase(words []string, i int) int {
	for _, p := range queryFillerPhrases {
		if i+len(p) <= len(words) && slices.Equal(words[i:i+len(p)], p) {
			return len(p)
		}
	}
	return 0
}

// negationWords make the next content word of a query not count.
var negationWords = map[string]bool{
	"not": true, "don't": true, "dont": true, "never": true, "without": true,
	"doesn't": true, "shouldn't": true, "won't": true, "except": true,
}

// wordConcept is the concept for one word whose stem is s; scale lowers
// every weight (used for spelling corrections).
func (lx *lexicon) wordConcept(w, s string, scale float64) concept {
	vs := []variant{{terms: []string{s}, own: true, scale: scale}}
	for _, v := range lx.expand[s] {
		vs = append(vs, variant{terms: v.terms, scale: scale})
	}
	for _, v := range lx.wordnetVariants(s, lx.expand[s]) {
		vs = append(vs, variant{terms: v.terms, scale: scale * v.scale})
	}
	return concept{text: w, variants: vs}
}

// matchPhrase returns the longest vocabulary phrase whose keys the query's
// keys start with at i. A phrase with nothing to offer (no variant the
// vocabulary could analyse) does not match, so that its words are read
// one by one.
func (lx *lexicon) matchPhrase(surface, keys []string, i int) (phrase, bool) {
	var best phrase
	found := false
	for _, ps := range [2][]phrase{lx.phrases[surface[i]], lx.phrases[stemmedKey+keys[i]]} {
		for _, p := range ps {
			ks := surface
			if p.stemmed {
				ks = keys
			}
			if len(p.variants) > 0 && i+len(p.keys) <= len(ks) && slices.Equal(ks[i:i+len(p.keys)], p.keys) &&
				(!found || len(p.words) > len(best.words)) {
				best, found = p, true
			}
		}
	}
	return best, found
}

// particles are the adverbs that make a phrasal verb ("hand over", "wake
// up", "shut down").
var particles = map[string]bool{"up": true, "down": true, "over": true, "off": true, "out": true, "back": true, "in": true}

// maxSplit is the most words a phrasal verb's object may put between the
// verb and its particle.
const maxSplit = 4

// matchSplitPhrasal finds a two-word vocabulary phrase of a verb and a
// particle whose words are apart in the query: the verb at i, the particle
// at j, with one to maxSplit words between. A particle between ends the
// search ("log in and look the user up": "in" belongs to "log"), and so
// does a first particle that makes no phrase with the verb.
func (lx *lexicon) matchSplitPhrasal(surface, keys []string, i int) (phrase, int, bool) {
	byWord, byStem := lx.phrases[surface[i]], lx.phrases[stemmedKey+keys[i]]
	if len(byWord) == 0 && len(byStem) == 0 {
		return phrase{}, 0, false
	}
	for j := i + 2; j < len(surface) && j <= i+1+maxSplit; j++ {
		w := surface[j]
		if particles[surface[j-1]] && j-1 > i {
			return phrase{}, 0, false
		}
		if !particles[w] {
			continue
		}
		if w == "back" && j+1 < len(surface) && particles[surface[j+1]] {
			// "wake the project back up": "back" doubles the particle.
			j++
			w = surface[j]
		}
		for _, ps := range [2][]phrase{byWord, byStem} {
			for _, p := range ps {
				if len(p.words) == 2 && p.words[1] == w && len(p.variants) > 0 {
					return p, j, true
				}
			}
		}
		return phrase{}, 0, false
	}
	return phrase{}, 0, false
}

// startsPhrase reports whether a vocabulary phrase starts at i.
func (lx *lexicon) startsPhrase(surface, keys []string, i int) bool {
	_, ok := lx.matchPhrase(surface, keys, i)
	return ok
}

func isNumber(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) && r != '.' && r != ',' {
			return false
		}
	}
	return w != ""
}

// dropValues removes words that are values for a tool rather than words
// for the need: paths and URLs (anything with a slash) and file names
// (name.ext). Split into parts, "./test_project_root/src/main.py" would
// otherwise add "test", "project", "root" and "main" to the query. A file
// name or a URL leaves its kind behind ("file", "url"): "open a.txt and
// b.txt" asks for a tool that reads files. So do decimal coordinates
// ("coordinates"), an AS number ("asn"), an issue key ("issue") and an
// emoji shortcode ("emoji"); a name the request gives ("called
// infra-notes") goes with its naming word, and short words joined by a
// slash ("lat/long") are words.
func dropValues(s string) string {
	s = dropNamed(s)
	s = latLng.ReplaceAllString(s, " coordinates ")
	s = asNumber.ReplaceAllString(s, " asn ")
	s = issueKey.ReplaceAllStringFunc(s, func(m string) string {
		if notIssueKeys[m[:strings.IndexByte(m, '-')]] {
			return m
		}
		return " issue "
	})
	s = emojiCode.ReplaceAllString(s, " emoji ")
	fields := strings.Fields(s)
	changed := false
	for i, f := range fields {
		w := strings.TrimRight(f, ".,;:!?)]}'\"")
		switch {
		case strings.Contains(w, "://"):
			// The kind of a value says what the tool takes: a URL.
			fields[i] = "url"
		case isFileName(w):
			fields[i] = "file"
		case shortPair.MatchString(w):
			// "lat/long", "ci/cd", "tcp/ip": short words joined by a
			// slash are words, not a path.
			fields[i] = strings.ReplaceAll(w, "/", " ")
		case strings.ContainsAny(w, "/\\"):
			fields[i] = ""
		default:
			continue
		}
		changed = true
	}
	if !changed {
		return s
	}
	return strings.Join(fields, " ")
}

// namedValue matches a naming word and the word after it: "a repository
// called infra-notes", "a page titled Roadmap".
var namedValue = regexp.MustCompile(`(?i)\b(called|named|titled)\s+(\S+)`)

// dropNamed removes a name a request gives ("called infra-notes") with the
// word that introduces it, as stripQuoted does for a quoted one: the name
// is a value for the tool, and "called" is not a request to call anything.
// A naming word followed by an article or preposition ("who called the
// API") is left alone.
func dropNamed(s string) string {
	return namedValue.ReplaceAllStringFunc(s, func(m string) string {
		next := strings.ToLower(namedValue.FindStringSubmatch(m)[2])
		if namingStop[next] {
			return m
		}
		return " "
	})
}

// namingStop are words after a naming word that show it is not
// introducing a name ("who called the API", "named after").
var namingStop = map[string]bool{"the": true, "a": true, "an": true, "by": true, "for": true, "to": true, "in": true, "on": true, "with": true, "from": true, "after": true, "as": true, "it": true, "this": true, "that": true, "my": true, "our": true}

// latLng matches a latitude and longitude in decimal degrees
// ("40.7128,-74.0060"): like a file name, it leaves its kind behind.
var latLng = regexp.MustCompile(`-?\b\d{1,3}\.\d+\s*,\s*-?\d{1,3}\.\d+\b`)

// asNumber matches an autonomous system number ("AS13335"), which leaves
// its kind too.
var asNumber = regexp.MustCompile(`\bAS\d{1,10}\b`)

// issueKey matches an issue key ("PROJ-88", "SUP-20"): a value, which
// the tokenizer would otherwise split into a word and a number.
var issueKey = regexp.MustCompile(`\b[A-Z][A-Z0-9]{1,9}-\d+\b`)

// notIssueKeys are prefixes of names in the same shape that are not issue
// keys: encodings, hashes, standards, versions, vulnerabilities.
var notIssueKeys = map[string]bool{
	"UTF": true, "SHA": true, "MD": true, "ISO": true, "RFC": true, "HTTP": true,
	"TLS": true, "SSL": true, "CVE": true, "GHSA": true, "GPT": true, "COVID": true, "IPV": true,
}

// emojiCode matches an emoji shortcode (":tada:"), which leaves "emoji".
var emojiCode = regexp.MustCompile(`(^|\s):[a-z0-9_+-]+:`)

// shortPair matches two or three short words joined by slashes.
var shortPair = regexp.MustCompile(`^[A-Za-z]{1,5}(/[A-Za-z]{1,5}){1,2}$`)

// isFileName reports whether w looks like name.ext: a dot followed by a
// short alphanumeric extension, and no other dots.
func isFileName(w string) bool {
	i := strings.LastIndexByte(w, '.')
	if i <= 0 || i == len(w)-1 || len(w)-i-1 > 5 || strings.Count(w, ".") > 1 {
		return false
	}
	for _, r := range w[i+1:] {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// stripQuoted removes text between double quotes, backticks, or single
// quotes that open at the start of a word: in "create an issue titled
// 'Login fails'" the title is a value for the tool, not part of the need.
func stripQuoted(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		opens := r == '"' || r == '`' || r == '“' ||
			(r == '\'' && (i == 0 || unicode.IsSpace(rs[i-1]) || rs[i-1] == '('))
		if opens {
			closer := r
			if r == '“' {
				closer = '”'
			}
			if j := slices.Index(rs[i+1:], closer); j >= 0 {
				b.WriteByte(' ')
				i += j + 1
				continue
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}
