package search

import (
	"strings"
	"unicode"

	"github.com/codecall-go/codecall/catalog"
)

// maxAppWords is the most query words one app name may span ("azure dev
// ops").
const maxAppWords = 3

// commonAppWord is how many times more tools than an app has may use its
// id as a word before the id counts as an ordinary word: "time range" or
// "fetch the page" do not name the apps time and fetch, while "GitHub" in
// a query does name github even though github-legacy's tools say it too.
const commonAppWord = 3

// indexAppNames records the forms under which a query can name each app:
// its id without separators and lower-cased, so that "Azure DevOps",
// "azure-devops" and "AzureDevOps" all name the app azure-devops. An id
// that is a common word in the catalog is left out.
func (ix *Index) indexAppNames() {
	size := make(map[string]int, len(ix.apps))
	for _, t := range ix.tools {
		size[strings.ToLower(t.AppID)]++
	}
	ix.appNames = make(map[string]string, len(ix.apps))
	for la := range ix.apps {
		k := squash(la)
		if len(k) < 2 {
			continue
		}
		if k == la {
			if id, ok := ix.terms[analyzeWord(ix.en, la)]; ok && int(ix.df[id]) > commonAppWord*size[la] {
				continue
			}
		}
		ix.appNames[k] = la
	}
}

// namedApps returns the lower-cased ids of the apps the query names, nil
// when it names none. A query that names an app wants that app's tools:
// "open an issue on GitHub" is not a request for GitLab's.
func (ix *Index) namedApps(text string) map[string]bool {
	if len(ix.appNames) == 0 {
		return nil
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	var named map[string]bool
	for i := range words {
		key := ""
		for n := 0; n < maxAppWords && i+n < len(words); n++ {
			key += words[i+n]
			if la, ok := ix.appNames[key]; ok {
				if named == nil {
					named = map[string]bool{}
				}
				named[la] = true
			}
		}
	}
	return named
}

// collectionVerbs start the names of tools that return many things.
var collectionVerbs = map[string]bool{"list": true, "search": true, "find": true, "query": true, "browse": true, "enumerate": true}

// returnsMany reports whether t's name says it returns a collection: a
// collection verb anywhere in it (list_issues, workers_list) or a plural
// at its end (get_issues).
func (b *builder) returnsMany(t *catalog.Tool) bool {
	parts := wordsOf(t.Name)
	app := wordsOf(t.AppID)
	for len(parts) > 1 && len(app) > 0 && parts[0] == app[0] {
		parts, app = parts[1:], app[1:]
	}
	if len(parts) == 0 {
		return false
	}
	for _, p := range parts {
		if collectionVerbs[p] {
			return true
		}
	}
	return b.plural(parts[len(parts)-1])
}

// plural reports whether w is the plural of a word: it ends in s (not ss)
// and means the same without it ("tickets", "issues", not "status").
func (b *builder) plural(w string) bool {
	if len(w) < 4 || !strings.HasSuffix(w, "s") || strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "us") {
		return false
	}
	s := b.stem(w)
	return s != "" && s == b.stem(w[:len(w)-1])
}

// pluralQuery reports whether the request asks for many things: "which
// tickets are open", "all pull requests", "list the users". Words joined
// into an identifier ("infra-notes") are values, not the request's words.
func (lx *lexicon) pluralQuery(text string) bool {
	for _, f := range strings.Fields(strings.ToLower(text)) {
		w := strings.Trim(f, ".,;:!?'\"()[]")
		if strings.ContainsFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) {
			continue
		}
		switch w {
		case "all", "every", "list", "each":
			return true
		}
		if len(w) >= 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") {
			// analyzeWord, not lx.stem: the lexicon's cache is written only
			// while the index is built, and searches run concurrently.
			if s := analyzeWord(lx.ix.en, w); s != "" && s == analyzeWord(lx.ix.en, w[:len(w)-1]) && lx.ix.hasTerm(s) {
				return true
			}
		}
	}
	return false
}
