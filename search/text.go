package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// splitMode says how aggressively compound words are broken apart.
type splitMode int

const (
	// splitProse is for descriptions, titles and queries: snake_case,
	// dotted.names and camelCase that starts lower-case are split, but
	// capitalised words such as "GitHub" or "PostgreSQL" are kept whole
	// because they are proper nouns, not identifiers.
	splitProse splitMode = iota
	// splitIdent is for tool names, parameter names, app ids and tags:
	// every case change and separator is a word boundary.
	splitIdent
)

// isSeparator reports whether r joins the parts of an identifier:
// create_issue, API-get-user, jira.search, app:tool, owner/repo.
func isSeparator(r rune) bool {
	switch r {
	case '_', '-', '.', ':', '/':
		return true
	}
	return false
}

// isWordRune reports whether r belongs to a compound word.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || isSeparator(r)
}

// splitWord breaks one compound word into its parts. It returns nil when
// the word has no inner boundary, so callers can keep the word alone.
func splitWord(w string, mode splitMode) []string {
	if mode == splitProse {
		first, _ := utf8.DecodeRuneInString(w)
		if unicode.IsUpper(first) && !strings.ContainsFunc(w, isSeparator) {
			// A capitalised word with no separator: a proper noun or an
			// acronym; splitting "GitHub" into "git hub" loses it.
			return nil
		}
	}
	var parts []string
	runes := []rune(w)
	start := 0
	flush := func(end int) {
		if end > start {
			parts = append(parts, string(runes[start:end]))
		}
	}
	for i, r := range runes {
		if isSeparator(r) {
			flush(i)
			start = i + 1
			continue
		}
		if i == start {
			continue
		}
		prev := runes[i-1]
		switch {
		case unicode.IsLower(prev) && unicode.IsUpper(r):
			// camelCase boundary: createIssue → create | Issue.
			flush(i)
			start = i
		case unicode.IsUpper(prev) && unicode.IsUpper(r) &&
			i+1 < len(runes) && unicode.IsLower(runes[i+1]):
			// Acronym followed by a word: HTTPServer → HTTP | Server.
			flush(i)
			start = i
		}
	}
	flush(len(runes))
	if len(parts) <= 1 {
		return nil
	}
	return parts
}

// expandCompounds rewrites text so that each compound word is followed by
// its parts: "call create_issue" becomes "call create_issue create issue".
// Keeping the original lets an exact identifier still match, while the
// parts let "create issue" match it. With keepOriginal false the compound
// is replaced by its parts (used for queries, where the compound itself
// would be one more term to cover).
func expandCompounds(text string, mode splitMode, keepOriginal bool) string {
	var b strings.Builder
	b.Grow(len(text) + len(text)/4)
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) || isSeparator(r) {
			b.WriteRune(r)
			i += size
			continue
		}
		j := i
		for j < len(text) {
			r2, s2 := utf8.DecodeRuneInString(text[j:])
			if !isWordRune(r2) {
				break
			}
			j += s2
		}
		word := strings.TrimRightFunc(text[i:j], isSeparator)
		rest := text[i+len(word) : j]
		parts := splitWord(word, mode)
		if parts == nil || keepOriginal {
			b.WriteString(word)
		}
		for k, p := range parts {
			if k > 0 || keepOriginal {
				b.WriteByte(' ')
			}
			b.WriteString(p)
		}
		b.WriteString(rest)
		i = j
	}
	return b.String()
}

// shortName returns a tool's name without its app prefix ("github.create_issue"
// → "create_issue"), or "" when the name has no prefix to strip. The prefix
// is the part before the first '.' or ':' (the design's default appId rule),
// or the app id itself followed by any separator.
func shortName(name, appID string) string {
	if appID != "" && len(name) > len(appID)+1 &&
		strings.EqualFold(name[:len(appID)], appID) && isSeparator(rune(name[len(appID)])) {
		return name[len(appID)+1:]
	}
	if i := strings.IndexAny(name, ".:"); i > 0 && i < len(name)-1 {
		return name[i+1:]
	}
	return ""
}
