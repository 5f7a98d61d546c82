package presets

import (
	"strings"
	"unicode"
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
	bestDist := -1
	for _, c := range candidates {
		d := editDistance(w, fold(c))
		if d <= typoBudget(len(w)) && (bestDist < 0 || d < bestDist) {
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

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and transpositions of two adjacent
// letters each count one, so "searhc" is one edit from "search".
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	// Three rows suffice: the transposition looks two rows back.
	prev2 := make([]int, len(y)+1)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
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
