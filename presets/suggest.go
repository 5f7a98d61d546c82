package presets

import (
	"strings"
	"unicode"

	"github.com/codecall-go/codecall/internal/editdist"
)

// nearest returns the candidate closest to word by edit distance, ignoring
// case and underscores, when it is close enough to be a likely typo:
// "searhc" for search, "timeot" for timeout, "TOP_K" for topK. ok is false
// when no candidate is that close, so that a message never suggests a key
// that merely shares a few letters.
func nearest(word string, candidates []string) (best string, ok bool) {
	w := fold(word)
	if w == "" {
		return "", false
	}
	bestDist, budget := -1, typoBudget(len(w))
	for _, c := range candidates {
		d := editdist.Distance(w, fold(c), budget)
		if d <= budget && (bestDist < 0 || d < bestDist) {
			best, bestDist = c, d
		}
	}
	return best, bestDist >= 0
}

// typoBudget is how many edits a word of n letters may be away from a key
// and still be read as a typo of it: none for very short words (every
// two-letter word is two edits from every other), one for short ones, two
// for the rest.
func typoBudget(n int) int {
	switch {
	case n <= 2:
		return 0
	case n <= 4:
		return 1
	default:
		return 2
	}
}

// fold lower-cases s and drops underscores, the two ways a key's spelling
// may differ between YAML (maxToolCalls) and the environment (MAX_TOOL_CALLS).
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// envName spells a key as an environment variable name part:
// maxToolCalls as MAX_TOOL_CALLS.
func envName(key string) string {
	var b strings.Builder
	for i, r := range key {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// fieldKeys lists the keys of fields.
func fieldKeys(fields []fieldInfo) []string {
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.key
	}
	return keys
}
