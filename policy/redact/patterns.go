package redact

import (
	"regexp"
	"strings"
)

// pattern is one value pattern: every match of its regular expression (or
// of its group named "secret", when it has one) that passes check is
// replaced.
//
// Go's regexp scans long text slowly when a pattern starts with a word
// boundary, a case-insensitive word or an alternation, so the built-in
// patterns are searched in two steps: find jumps to the next place a
// match could start (a literal, found with strings.Index or a byte scan,
// and the word-boundary test), and the anchored expression is tried there
// only. ref is the same pattern as one unanchored expression; the tests
// check that both ways find the same matches. User patterns have no find
// and are searched with ref directly.
type pattern struct {
	name string
	// ref is the whole pattern, searched unanchored.
	ref *regexp.Regexp
	// anchored matches at the start of its input only; nil when find is.
	anchored *regexp.Regexp
	// match, when set, replaces anchored: it returns the end of the match
	// that starts at i, or -1. Only for patterns without a secret group.
	match func(s string, i int) int
	// find returns the first index >= from where a match may start, or -1.
	// It must return every such index.
	find func(s string, from int) int
	// skip returns where to look next after no match started at i; nil
	// means i+1. Patterns whose failed attempts can read far ahead skip
	// the run they read, where every later start would fail the same way,
	// which keeps the search linear on hostile text.
	skip func(s string, i int) int
	// needs tells from the bytes a string contains whether a match is
	// possible at all; nil means it may be. It spares short strings, the
	// common case, one scan per pattern.
	needs func(has byteSet) bool
	// group is the index of the "secret" group, or 0 for the whole match.
	group int
	// check confirms a match (the replaced text); nil accepts every match.
	check func(match string) bool
}

// newPattern makes a user pattern.
func newPattern(name string, re *regexp.Regexp) pattern {
	return pattern{name: name, ref: re, group: max(re.SubexpIndex("secret"), 0)}
}

// builtin makes a built-in pattern from expr, which must match only at
// the positions find returns. With wordStart, a match must also start at a
// word boundary (ref begins with \b; find checks it).
func builtin(name, expr string, wordStart bool, find func(s string, from int) int, check func(string) bool) pattern {
	ref := expr
	if wordStart {
		ref = `\b` + expr
		lit := find
		find = func(s string, from int) int {
			for {
				i := lit(s, from)
				if i <= 0 || !isWordByte(s[i-1]) {
					return i
				}
				from = i + 1
			}
		}
	}
	re := regexp.MustCompile(ref)
	return pattern{
		name:     name,
		ref:      re,
		anchored: regexp.MustCompile(`^(?:` + expr + `)`),
		find:     find,
		group:    max(re.SubexpIndex("secret"), 0),
		check:    check,
	}
}

// builtinPatterns are the built-in value patterns in the order they are
// applied; presets.RedactionBuiltinPatterns lists the same names. Patterns
// that replace a whole token come before the ones that replace what follows
// a label, so "token=ghp_..." and "Bearer eyJ..." are each replaced once.
// They are compiled once when the package is initialised and never changed.
var builtinPatterns = []pattern{
	// PEM and PGP private key blocks, to the END line or the end of a
	// truncated text.
	builtin("privateKey", `(?s)-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|\z)`,
		false, literal("-----BEGIN"), nil).withNeeds(all("-")),
	// JSON Web Tokens: base64url header and payload that both begin with
	// '{"', and a signature that may be empty.
	// A failed attempt read the whole base64url run; every start inside
	// it ends the same way.
	builtin("jwt", `eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`,
		true, literal("eyJ"), nil).withSkip(runOf(isBase64URLByte)).withNeeds(all("eyJ.")),
	// The credential after "Bearer " (RFC 6750 token68 characters).
	// looksRandom skips plain words ("bearer authentication").
	builtin("bearer", `(?i)bearer\s+(?P<secret>[A-Za-z0-9\-._~+/]+=*)`,
		true, foldWords("bearer"), looksRandom).withNeeds(func(h byteSet) bool { return h.any("bB") && h.any("rR") }),
	// The password in a URL's user information:
	// postgres://app:[REDACTED]@db:5432/shop.
	// A failed attempt read the whole scheme run, which every later start
	// in it shares.
	builtin("urlCredentials", `[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:(?P<secret>[^/\s@]+)@`,
		true, findScheme, nil).withSkip(runOf(isSchemeByte)).withNeeds(all(":/@")),
	// AWS access key ids (long-term and temporary).
	builtin("awsAccessKey", `(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`,
		true, literal("A"), nil).withNeeds(all("A")),
	// GitHub personal, OAuth, user-to-server, server-to-server and refresh
	// tokens, and fine-grained personal access tokens.
	builtin("githubToken", `(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b`,
		true, literal("gh", "github_pat_"), nil).withNeeds(all("g_")),
	// Slack bot, user, app and configuration tokens.
	builtin("slackToken", `xox[abposer]-[A-Za-z0-9-]{10,}`,
		true, literal("xox"), nil).withNeeds(all("xo-")),
	// The value after a secret-looking label in free text, query strings,
	// headers and JSON kept as text: password=..., "apiKey": "...",
	// Authorization: Basic ...
	builtin("secretAssignment", `(?i)(?:password|passwd|passphrase|secret|token|api[_-]?key|authorization|cookie)`+
		`(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?(?:(?:basic|bearer|digest|token)\s+)?(?P<secret>[^\s"'&,;{}\[\]\\]+)`,
		false, foldWords("pass", "secret", "token", "api", "authorization", "cookie"), notScheme).withNeeds(func(h byteSet) bool { return h.any(":=") }),
	// Payment card numbers: 13 to 19 digits, optionally grouped by spaces
	// or dashes, starting like a card (2 to 6) and passing the Luhn check.
	builtin("cardNumber", `[2-6](?:[ -]?[0-9]){12,18}\b`,
		true, findCardStart, luhn).withMatch(matchCard).withNeeds(func(h byteSet) bool { return h.any("23456") }),
}

// apply replaces every confirmed match of p in s by placeholder.
func (p *pattern) apply(s, placeholder string) (string, bool) {
	var b strings.Builder
	last, replaced := 0, false
	p.each(s, func(start, end int) {
		if p.check != nil && !p.check(s[start:end]) {
			return
		}
		if !replaced {
			b.Grow(len(s))
		}
		b.WriteString(s[last:start])
		b.WriteString(placeholder)
		last, replaced = end, true
	})
	if !replaced {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// each calls yield with the bounds of the replaced text (the secret group,
// or the whole match) of every match of p in s, left to right, as the
// unanchored ref would find them.
func (p *pattern) each(s string, yield func(start, end int)) {
	if p.find == nil {
		for _, loc := range p.ref.FindAllStringSubmatchIndex(s, -1) {
			if loc[2*p.group] >= 0 {
				yield(loc[2*p.group], loc[2*p.group+1])
			}
		}
		return
	}
	for pos := 0; pos < len(s); {
		i := p.find(s, pos)
		if i < 0 {
			return
		}
		var loc []int
		if p.match != nil {
			if end := p.match(s, i); end >= 0 {
				loc = []int{0, end - i}
			}
		} else {
			loc = p.anchored.FindStringSubmatchIndex(s[i:])
		}
		if loc == nil {
			pos = i + 1
			if p.skip != nil {
				pos = max(p.skip(s, i), pos)
			}
			continue
		}
		if loc[2*p.group] >= 0 {
			yield(i+loc[2*p.group], i+loc[2*p.group+1])
		}
		pos = i + max(loc[1], 1)
	}
}

// literal finds the next occurrence of any of lits, which must all begin
// with the same byte: candidates are found with one IndexByte scan, so
// that a missing literal is not searched for again at every candidate.
func literal(lits ...string) func(s string, from int) int {
	for _, lit := range lits {
		if lit == "" || lit[0] != lits[0][0] {
			panic("redact: literal needs non-empty literals with one first byte")
		}
	}
	first := lits[0][0]
	return func(s string, from int) int {
		for from < len(s) {
			i := strings.IndexByte(s[from:], first)
			if i < 0 {
				return -1
			}
			i += from
			for _, lit := range lits {
				if strings.HasPrefix(s[i:], lit) {
					return i
				}
			}
			from = i + 1
		}
		return -1
	}
}

// withMatch sets p.match.
func (p pattern) withMatch(match func(s string, i int) int) pattern {
	p.match = match
	return p
}

// matchCard is the cardNumber expression [2-6](?:[ -]?[0-9]){12,18}\b
// written out, because it is tried at every digit 2 to 6 of a text and a
// regular expression costs far more per attempt: the longest run of 13 to
// 19 digits from i, with single spaces or dashes between them, that ends at
// a word boundary.
func matchCard(s string, i int) int {
	var ends [19]int // ends[k] is the index after the k+1-th digit
	n, j := 0, i
	for n < len(ends) && j < len(s) {
		k := j
		if n > 0 && (s[k] == ' ' || s[k] == '-') {
			k++
		}
		if k >= len(s) || s[k] < '0' || s[k] > '9' {
			break
		}
		ends[n] = k + 1
		n++
		j = k + 1
	}
	for ; n >= 13; n-- {
		if end := ends[n-1]; end == len(s) || !isWordByte(s[end]) {
			return end
		}
	}
	return -1
}

// withNeeds sets p.needs.
func (p pattern) withNeeds(needs func(has byteSet) bool) pattern {
	p.needs = needs
	return p
}

// byteSet is the set of bytes a string contains.
type byteSet [4]uint64

func newByteSet(s string) byteSet {
	var set byteSet
	for i := 0; i < len(s); i++ {
		set[s[i]>>6] |= 1 << (s[i] & 63)
	}
	return set
}

func (set byteSet) has(c byte) bool { return set[c>>6]&(1<<(c&63)) != 0 }

// any reports whether the set holds any byte of chars.
func (set byteSet) any(chars string) bool {
	for i := 0; i < len(chars); i++ {
		if set.has(chars[i]) {
			return true
		}
	}
	return false
}

// all returns a needs function that asks for every byte of chars.
func all(chars string) func(has byteSet) bool {
	return func(set byteSet) bool {
		for i := 0; i < len(chars); i++ {
			if !set.has(chars[i]) {
				return false
			}
		}
		return true
	}
}

// withSkip sets p.skip.
func (p pattern) withSkip(skip func(s string, i int) int) pattern {
	p.skip = skip
	return p
}

// runOf returns a skip that moves past the run of bytes in the class that
// starts at i.
func runOf(in func(byte) bool) func(s string, i int) int {
	return func(s string, i int) int {
		for i < len(s) && in(s[i]) {
			i++
		}
		return i
	}
}

func isBase64URLByte(c byte) bool { return isWordByte(c) || c == '-' }

// foldWords finds the next occurrence of any of the lower-case ASCII words,
// in any case.
func foldWords(words ...string) func(s string, from int) int {
	return func(s string, from int) int {
		for i := from; i < len(s); i++ {
			c := s[i] | 0x20 // ASCII lower case; harmless for other bytes
			for _, w := range words {
				if c == w[0] && i+len(w) <= len(s) && strings.EqualFold(s[i:i+len(w)], w) {
					return i
				}
			}
		}
		return -1
	}
}

// findScheme finds the next letter at a word boundary inside a run of
// URL-scheme characters followed by "://": the places a urlCredentials
// match can start. Each byte is looked at a bounded number of times.
func findScheme(s string, from int) int {
	for from < len(s) {
		j := strings.Index(s[from:], "://")
		if j < 0 {
			return -1
		}
		j += from
		i := j
		for i > from && isSchemeByte(s[i-1]) {
			i--
		}
		for ; i < j; i++ {
			if c := s[i] | 0x20; c >= 'a' && c <= 'z' && (i == 0 || !isWordByte(s[i-1])) {
				return i
			}
		}
		from = j + 1
	}
	return -1
}

func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-'
}

// findCardStart finds the next digit 2 to 6.
func findCardStart(s string, from int) int {
	for i := from; i < len(s); i++ {
		if s[i] >= '2' && s[i] <= '6' {
			return i
		}
	}
	return -1
}

// isWordByte is regexp's \w: an ASCII letter, digit or underscore.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// notScheme refuses an authentication scheme name as the secret of a
// secretAssignment match: in "Authorization: Bearer [REDACTED]" the bearer
// pattern has already replaced the credential, and "Bearer" is not secret.
func notScheme(s string) bool {
	switch strings.ToLower(s) {
	case "basic", "bearer", "digest", "token":
		return false
	}
	return true
}

// looksRandom tells a credential from a word: at least 8 characters, with a
// digit or a symbol among them.
func looksRandom(s string) bool {
	if len(s) < 8 {
		return false
	}
	return strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
}

// luhn reports whether the digits of s (ignoring separators) are 13 to 19
// long and pass the Luhn checksum.
func luhn(s string) bool {
	sum, n := 0, 0
	for i := len(s) - 1; i >= 0; i-- {
		c := s[i]
		if c < '0' || c > '9' {
			continue
		}
		d := int(c - '0')
		if n%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		n++
	}
	return n >= 13 && n <= 19 && sum%10 == 0
}
