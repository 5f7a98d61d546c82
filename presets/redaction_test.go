package presets

import (
	"slices"
	"strings"
	"testing"
)

func TestRedactionAndAuditKeys(t *testing.T) {
	yaml := `
audit:
  path: /var/log/codecall/audit.jsonl
redaction:
  keys: [ssn, "*_pin"]
  patterns:
    - name: internalTicket
      regex: 'TKT-[0-9]{6}'
    - name: sessionCookie
      regex: 'sid=(?P<secret>[a-f0-9]{32})'
  disabledPatterns: [cardNumber]
  placeholder: "***"
`
	cfg, err := Parse([]byte(yaml), []string{"CODECALL_REDACTION__KEYS=ssn,*_pin,x-*"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Audit.Path != "/var/log/codecall/audit.jsonl" {
		t.Errorf("audit.path = %q", cfg.Audit.Path)
	}
	r := cfg.Redaction
	if !slices.Equal(r.Keys, []string{"ssn", "*_pin", "x-*"}) || len(r.Patterns) != 2 ||
		r.Patterns[1].Name != "sessionCookie" || r.Patterns[0].Regex != "TKT-[0-9]{6}" ||
		!slices.Equal(r.DisabledPatterns, []string{"cardNumber"}) || r.Placeholder != "***" {
		t.Errorf("redaction = %+v", r)
	}
}

func TestRedactionDefaults(t *testing.T) {
	cfg, err := Parse([]byte("redaction:\n  keys: [a]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Redaction.Placeholder != DefaultRedactionPlaceholder || cfg.Audit.Path != "" {
		t.Errorf("defaults = %+v %+v", cfg.Redaction, cfg.Audit)
	}
}

func TestRedactionErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		line int
		key  string
		want string
	}{
		{"bad regex", "redaction:\n  patterns:\n    - name: ticket\n      regex: 'TKT-(['\n", 4, "redaction.patterns[0].regex",
			`pattern "ticket": invalid RE2 regular expression: error parsing regexp: missing closing ]`},
		{"perl-only regex", "redaction:\n  patterns:\n    - {name: look, regex: 'a(?=b)'}\n", 3, "redaction.patterns[0].regex",
			`pattern "look": invalid RE2 regular expression`},
		{"empty match", "redaction:\n  patterns:\n    - {name: opt, regex: 'x*'}\n", 3, "redaction.patterns[0].regex",
			`pattern "opt": regex "x*" matches the empty string`},
		{"missing regex", "redaction:\n  patterns:\n    - {name: none}\n", 3, "redaction.patterns[0].regex", `pattern "none": regex is required`},
		{"missing name", "redaction:\n  patterns:\n    - {regex: abc}\n", 3, "redaction.patterns[0].name", "required"},
		{"bad name", "redaction:\n  patterns:\n    - {name: 'a b', regex: abc}\n", 3, "redaction.patterns[0].name", "use only letters"},
		{"builtin name", "redaction:\n  patterns:\n    - {name: jwt, regex: abc}\n", 3, "redaction.patterns[0].name", "built-in pattern"},
		{"duplicate name", "redaction:\n  patterns:\n    - {name: a, regex: abc}\n    - {name: a, regex: def}\n", 4, "redaction.patterns[1].name", "also the name of redaction.patterns[0]"},
		{"unknown pattern key", "redaction:\n  patterns:\n    - {name: a, regex: abc, pattern: x}\n", 3, "redaction.patterns[0].pattern", "allowed keys: name, regex"},
		{"patterns as mapping", "redaction:\n  patterns: {a: b}\n", 2, "redaction.patterns", "want a list"},
		{"bad key glob", "redaction:\n  keys: ['x[']\n", 2, "redaction.keys[0]", "invalid glob"},
		{"empty key", "redaction:\n  keys: ['  ']\n", 2, "redaction.keys[0]", "empty key name"},
		{"unknown builtin", "redaction:\n  disabledPatterns: [card]\n", 2, "redaction.disabledPatterns[0]", `unknown built-in pattern "card"; allowed: privateKey, jwt`},
		{"long placeholder", "redaction:\n  placeholder: " + strings.Repeat("x", 65) + "\n", 2, "redaction.placeholder", "the limit is 64"},
		{"control placeholder", "redaction:\n  placeholder: \"a\\nb\"\n", 2, "redaction.placeholder", "control"},
		{"blank audit path", "audit:\n  path: '  '\n", 2, "audit.path", "only white space"},
		{"unknown audit key", "audit:\n  file: x\n", 2, "audit.file", "allowed keys: path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), nil)
			p := onlyProblem(t, err)
			if p.Line != tt.line || p.Key != tt.key || !strings.Contains(p.Message, tt.want) {
				t.Errorf("problem = %+v\nwant line %d key %q message containing %q", p, tt.line, tt.key, tt.want)
			}
		})
	}
}

func TestRedactionPatternCompile(t *testing.T) {
	re, err := RedactionPattern{Name: "t", Regex: `TKT-\d+`}.Compile()
	if err != nil || !re.MatchString("see TKT-42") {
		t.Fatalf("Compile = %v, %v", re, err)
	}
	if _, err := (RedactionPattern{Name: "t", Regex: `(`}).Compile(); err == nil || !strings.Contains(err.Error(), `pattern "t"`) {
		t.Errorf("error %v does not name the pattern", err)
	}
}

func TestRedactionBuiltinPatternsIsACopy(t *testing.T) {
	a := RedactionBuiltinPatterns()
	a[0] = "changed"
	if RedactionBuiltinPatterns()[0] == "changed" {
		t.Error("RedactionBuiltinPatterns shares its slice")
	}
}

func TestValidateRedactionFromGo(t *testing.T) {
	c := Default()
	c.Redaction = RedactionConfig{
		Keys:             []string{"ok", "[x"},
		Patterns:         []RedactionPattern{{Name: "fine", Regex: "abc"}, {Name: "broken", Regex: "a{2,1}"}},
		DisabledPatterns: []string{"jwt", "JWT"},
	}
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate accepted broken redaction settings")
	}
	for _, want := range []string{
		"redaction.keys[1]: invalid glob",
		`redaction.patterns[1].regex: pattern "broken": invalid RE2 regular expression`,
		`redaction.disabledPatterns[1]: unknown built-in pattern "JWT"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	c.Redaction = RedactionConfig{} // an empty placeholder means the default
	if err := c.Validate(); err != nil {
		t.Errorf("zero RedactionConfig: %v", err)
	}
}
