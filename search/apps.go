package search

import (
	"strings"
	"unicode"
)

// maxAppWords is the most query words one app name may span ("azure dev
// ops").
const maxAppWords = 3

// indexAppNames records the forms under which a query can name each app:
// its id without separators and lower-cased, so that "Azure DevOps",
// "azure-devops" and "AzureDevOps" all name the app azure-devops.
func (ix *Index) indexAppNames() {
	ix.appNames = make(map[string]string, len(ix.apps))
	for la := range ix.apps {
		if k := squash(la); len(k) >= 2 {
			ix.appNames[k] = la
		}
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
