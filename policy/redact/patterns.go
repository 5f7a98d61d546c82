package redact

import (
	"regexp"
	"strings"
)

// pattern is one value pattern: every match of re (or of its group named
// "secret", when it has one) that passes check is replaced.
type pattern struct {
	name string
	re   *regexp.Regexp
	// group is the index of the "secret" group, or 0 for the whole match.
	group int
	// maybe is a cheap test that a string could match; nil means always.
	maybe func(s string) bool
	// check confirms a match (the replaced text); nil accepts every match.
	check func(match string) bool
}

func newPattern(name string, re *regexp.Regexp) pattern {
	return withGroups([]pattern{{name: name, re: re}})[0]
}

// builtinPatterns are the built-in value patterns in the order they are
// applied; presets.RedactionBuiltinPatterns lists the same names. Patterns
// that replace a whole token come before the ones that replace what follows
// a label, so "token=ghp_..." and "Bearer eyJ..." are each replaced once.
// The regular expressions are constants, compiled once when the package is
// initialised, and never changed.
var builtinPatterns = withGroups([]pattern{
	{
		// PEM and PGP private key blocks, to the END line or the end of
		// a truncated text.
		name:  "privateKey",
		re:    regexp.MustCompile(`(?s)-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|\z)`),
		maybe: func(s string) bool { return strings.Contains(s, "PRIVATE KEY") },
	},
	{
		// JSON Web Tokens: base64url header and payload that both begin
		// with '{"', and a signature that may be empty.
		name:  "jwt",
		re:    regexp.MustCompile(`\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`),
		maybe: func(s string) bool { return strings.Contains(s, "eyJ") },
	},
	{
		// The credential after "Bearer " (RFC 6750 token68 characters).
		// check skips plain words ("bearer authentication").
		name:  "bearer",
		re:    regexp.MustCompile(`(?i)\bbearer\s+(?P<secret>[A-Za-z0-9\-._~+/]+=*)`),
		maybe: func(s string) bool { return containsFold(s, "bearer") },
		check: looksRandom,
	},
	{
		// The password in a URL's user information:
		// postgres://app:[REDACTED]@db:5432/shop.
		name:  "urlCredentials",
		re:    regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:(?P<secret>[^/\s@]+)@`),
		maybe: func(s string) bool { return strings.Contains(s, "://") && strings.Contains(s, "@") },
	},
	{
		// AWS access key ids (long-term and temporary).
		name: "awsAccessKey",
		re:   regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`),
		maybe: func(s string) bool {
			return strings.Contains(s, "AKIA") || strings.Contains(s, "ASIA") || strings.Contains(s, "ABIA") || strings.Contains(s, "ACCA")
		},
	},
	{
		// GitHub personal, OAuth, user-to-server, server-to-server and
		// refresh tokens, and fine-grained personal access tokens.
		name:  "githubToken",
		re:    regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b`),
		maybe: func(s string) bool { return strings.Contains(s, "gh") || strings.Contains(s, "github_pat_") },
	},
	{
		// Slack bot, user, app and configuration tokens.
		name:  "slackToken",
		re:    regexp.MustCompile(`\bxox[abposer]-[A-Za-z0-9-]{10,}`),
		maybe: func(s string) bool { return strings.Contains(s, "xox") },
	},
	{
		// The value after a secret-looking label in free text, query
		// strings, headers and JSON kept as text: password=..., "apiKey":
		// "...", Authorization: Basic ...
		name: "secretAssignment",
		re: regexp.MustCompile(`(?i)(?:password|passwd|passphrase|secret|token|api[_-]?key|authorization|cookie)` +
			`(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?(?:(?:basic|bearer|digest|token)\s+)?(?P<secret>[^\s"'&,;{}\[\]\\]+)`),
		maybe: func(s string) bool {
			return strings.ContainsAny(s, ":=") && containsAnyFold(s, "pass", "secret", "token", "key", "authorization", "cookie")
		},
		check: notScheme,
	},
	{
		// Payment card numbers: 13 to 19 digits, optionally grouped by
		// spaces or dashes, starting like a card (2 to 6) and passing the
		// Luhn check.
		name:  "cardNumber",
		re:    regexp.MustCompile(`\b[2-6](?:[ -]?[0-9]){12,18}\b`),
		maybe: func(s string) bool { return hasDigitRun(s, 13) },
		check: luhn,
	},
})

// withGroups fills in the "secret" group index of each pattern.
func withGroups(ps []pattern) []pattern {
	for i := range ps {
		ps[i].group = max(ps[i].re.SubexpIndex("secret"), 0)
	}
	return ps
}

// apply replaces every confirmed match of p in s by placeholder.
func (p *pattern) apply(s, placeholder string) (string, bool) {
	if p.maybe != nil && !p.maybe(s) {
		return s, false
	}
	locs := p.re.FindAllStringSubmatchIndex(s, -1)
	if locs == nil {
		return s, false
	}
	var b strings.Builder
	last, replaced := 0, false
	for _, loc := range locs {
		start, end := loc[2*p.group], loc[2*p.group+1]
		if start < 0 || start < last || (p.check != nil && !p.check(s[start:end])) {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(placeholder)
		last, replaced = end, true
	}
	if !replaced {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
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

// containsFold reports whether s contains the lower-case ASCII word w in any
// case, without allocating.
func containsFold(s, w string) bool {
	return containsAnyFold(s, w)
}

// containsAnyFold reports whether s contains any of the lower-case ASCII
// words in any case. It looks at each byte once and compares a word only
// where its first letter appears, which makes it a cheap filter in front
// of case-insensitive regular expressions (slow on long text).
func containsAnyFold(s string, words ...string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20 // ASCII lower case; harmless for other bytes
		for _, w := range words {
			if c == w[0] && i+len(w) <= len(s) && strings.EqualFold(s[i:i+len(w)], w) {
				return true
			}
		}
	}
	return false
}

// hasDigitRun reports whether s has n digits in a row, allowing one space
// or dash between two digits, as a card number is written.
func hasDigitRun(s string, n int) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			run++
			if run >= n {
				return true
			}
		case (c == ' ' || c == '-') && run > 0 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			// a separator inside a number
		default:
			run = 0
		}
	}
	return false
}
