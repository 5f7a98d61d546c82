package presets

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// maxPlaceholderLen bounds redaction.placeholder: it is written once per
// redacted value, so a long one multiplies the size of what it protects.
const maxPlaceholderLen = 64

// Compile compiles the pattern's regular expression and checks that it can
// serve as a redaction pattern. Validation and the redactor both call it, so
// they accept exactly the same patterns. The error names the pattern.
func (p RedactionPattern) Compile() (*regexp.Regexp, error) {
	if p.Regex == "" {
		return nil, fmt.Errorf("pattern %q: regex is required", p.Name)
	}
	re, err := regexp.Compile(p.Regex)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: invalid RE2 regular expression: %w", p.Name, err)
	}
	if re.MatchString("") {
		// A pattern that matches nothing would put a placeholder between
		// every two characters of every string.
		return nil, fmt.Errorf("pattern %q: regex %q matches the empty string; make at least one character required", p.Name, p.Regex)
	}
	return re, nil
}

// Validate checks the redaction section on its own, with the rules
// Config.Validate applies to it; problems are keyed redaction.*. The
// policy/redact package calls it, so a RedactionConfig built in Go is held to
// the same rules as a file.
func (r RedactionConfig) Validate() error {
	var problems []Problem
	for _, is := range r.issues(keyPath{}.field("redaction")) {
		problems = append(problems, Problem{Key: is.path.String(), Message: is.msg})
	}
	return validationError(problems)
}

func (r RedactionConfig) issues(p keyPath) []issue {
	var out []issue
	for i, k := range r.Keys {
		if strings.TrimSpace(k) == "" {
			out = append(out, newIssue(p.field("keys").index(i), "empty key name"))
			continue
		}
		if !strings.ContainsFunc(k, func(r rune) bool {
			return unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("*?[{", r)
		}) {
			out = append(out, newIssue(p.field("keys").index(i), "%q has no letters, digits or wildcards; key names are compared without separators", k))
			continue
		}
		if _, err := CompileGlob(k); err != nil {
			out = append(out, newIssue(p.field("keys").index(i), "%v", err))
		}
	}
	seen := map[string]int{}
	for i, pat := range r.Patterns {
		ip := p.field("patterns").index(i)
		switch {
		case pat.Name == "":
			out = append(out, newIssue(ip.field("name"), "required: a name for the pattern, such as internalTicket"))
		case !isPatternName(pat.Name):
			out = append(out, newIssue(ip.field("name"), "%q: use only letters, digits, '_' and '-'", pat.Name))
		case slices.Contains(redactionBuiltinPatterns, pat.Name):
			out = append(out, newIssue(ip.field("name"), "%q is the name of a built-in pattern; choose another name (turn the built-in off with redaction.disabledPatterns)", pat.Name))
		default:
			if j, dup := seen[pat.Name]; dup {
				out = append(out, newIssue(ip.field("name"), "%q is also the name of redaction.patterns[%d]; names must be unique", pat.Name, j))
			}
			seen[pat.Name] = i
		}
		if _, err := pat.Compile(); err != nil {
			out = append(out, newIssue(ip.field("regex"), "%v", err))
		}
	}
	for i, name := range r.DisabledPatterns {
		if !slices.Contains(redactionBuiltinPatterns, name) {
			out = append(out, newIssue(p.field("disabledPatterns").index(i), "unknown built-in pattern %q; allowed: %s", name, strings.Join(redactionBuiltinPatterns, ", ")))
		}
	}
	if msg := checkPlaceholder(r.Placeholder); msg != "" {
		out = append(out, newIssue(p.field("placeholder"), "%s", msg))
	}
	return out
}

// checkPlaceholder returns why s cannot be the placeholder, or "". The empty
// string stands for the default.
func checkPlaceholder(s string) string {
	if len(s) > maxPlaceholderLen {
		return fmt.Sprintf("is %d bytes long; the limit is %d", len(s), maxPlaceholderLen)
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return fmt.Sprintf("%q contains the control or invalid character %q", s, r)
		}
	}
	return ""
}

func isPatternName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return s != ""
}

func (a AuditConfig) issues(p keyPath) []issue {
	if strings.ContainsRune(a.Path, 0) {
		return []issue{newIssue(p.field("path"), "contains a NUL byte")}
	}
	if a.Path != "" && strings.TrimSpace(a.Path) == "" {
		return []issue{newIssue(p.field("path"), "is only white space; leave it empty to write no audit log, or use \"-\" for standard error")}
	}
	return nil
}
