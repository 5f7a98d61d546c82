package presets

import (
	"errors"
	"testing"
)

// FuzzParse checks that no file or environment makes Parse panic, that every
// failure is a *ValidationError with at least one problem, and that every
// configuration Parse accepts also passes Validate.
func FuzzParse(f *testing.F) {
	seeds := []struct{ yaml, env string }{
		{"", ""},
		{"preset: balanced\nvm: {timeout: 10s, maxLogBytes: 1MiB}\n", "CODECALL_VM__TIMEOUT=5s"},
		{"tools:\n  \"billing.*\": {appId: billing, tags: [a], examples: [{input: {1: x}}]}\n", "CODECALL_EXCLUDE=a.*,{b,c}"},
		{"mode: [\n", "CODECALL_NOPE=1"},
		{"a: &a [*a, *a]\nb: *a\n", ""},
		{"- 1\n- 2\n", "CODECALL_VM=1"},
		{"vm: {timeout: 5, memoryBytes: 1.5B}\n", "CODECALL_SEARCH__TOPK=x"},
		{"? [a, b]\n: c\n", ""},
		{"search: {lowRelevance: .nan, topK: 1e300}\n", ""},
		{"x: 1\n---\ny: 2\n", "CODECALL_TOOLS__A=1"},
		{"tools: {a: {examples: [~, {input: []}]}}\n", ""},
		{"redaction: {keys: [a, '*_pin'], patterns: [{name: t, regex: 'x(?P<secret>y+)'}, ~], placeholder: '#'}\n", "CODECALL_AUDIT__PATH=-"},
		{"redaction: {patterns: [{name: jwt, regex: '('}], disabledPatterns: [x]}\n", "CODECALL_REDACTION__PATTERNS=a"},
	}
	for _, s := range seeds {
		f.Add([]byte(s.yaml), s.env)
	}
	f.Fuzz(func(t *testing.T, data []byte, envVar string) {
		cfg, err := Parse(data, []string{envVar})
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) == 0 {
				t.Fatalf("Parse error %v is not a *ValidationError with problems", err)
			}
			_ = err.Error()
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Parse accepted a configuration Validate rejects: %v", err)
		}
	})
}
