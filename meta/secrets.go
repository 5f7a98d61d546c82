package meta

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/codecall-go/codecall/policy/redact"
)

// minSecretLen is the shortest value remembered as a secret: shorter
// values ("yes", "123") would blank out unrelated text.
const minSecretLen = 6

// maxSecrets bounds what one run remembers.
const maxSecrets = 256

// runSecrets are the secret values a plan has received from its tools, as
// the redactor recognised them there (by key, schema hint or pattern).
// Recognition is contextual: once a plan moves such a value under an
// innocent key, into a log line or into another tool's arguments, no rule
// sees it any more. Remembering the values closes that gap for the rest of
// the run: they are blanked wherever the run's output goes (its result,
// logs, errors and approval prompts).
type runSecrets struct {
	r *redact.Redactor

	mu     sync.Mutex
	values []string
}

// learn remembers the secrets the redactor finds in a tool's result.
func (s *runSecrets) learn(raw json.RawMessage, schema json.RawMessage) {
	if mayHoldSecret(raw) {
		s.learnAll(raw, schema)
	}
}

// learnAll is learn without its shortcut: it decodes and redacts the
// whole result.
func (s *runSecrets) learnAll(raw json.RawMessage, schema json.RawMessage) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return
	}
	if !s.r.Redacts(v, schema) {
		return // nothing secret: no copy to diff
	}
	red := s.r.Value(v, schema)
	var found []string
	diffSecrets(v, red, s.r.Placeholder(), &found)
	if len(found) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range found {
		if len(s.values) >= maxSecrets {
			return
		}
		s.values = append(s.values, f)
	}
}

// mayHoldSecret reports whether a result has a value learn could
// remember: a string or number whose JSON text is at least minSecretLen
// bytes long. A value's text is never shorter than the value (escapes only
// shrink), and learn keeps nothing shorter, so a result without one (a
// boolean, a count, an object of short fields) teaches nothing and is not
// decoded and redacted a second time on every call of a plan. Object keys
// are not values: learn never remembers a key. Malformed JSON may go
// either way; learn's own decoding then refuses it.
func mayHoldSecret(raw []byte) bool {
	scalar := 0 // length of the number or literal being read
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '"' {
			switch {
			case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
				if scalar++; scalar >= minSecretLen {
					return true
				}
			default:
				scalar = 0
			}
			continue
		}
		scalar = 0
		start := i + 1
		for i++; i < len(raw) && raw[i] != '"'; i++ {
			if raw[i] == '\\' {
				i++
			}
		}
		if i-start < minSecretLen {
			continue
		}
		j := i + 1
		for j < len(raw) && (raw[j] == ' ' || raw[j] == '\t' || raw[j] == '\n' || raw[j] == '\r') {
			j++
		}
		if j >= len(raw) || raw[j] != ':' {
			return true // a value, not a key
		}
	}
	return false
}

// diffSecrets walks a value and its redacted copy side by side and
// collects what the redactor removed.
func diffSecrets(orig, red any, placeholder string, out *[]string) {
	switch o := orig.(type) {
	case map[string]any:
		r, ok := red.(map[string]any)
		if !ok {
			return
		}
		for k, ov := range o {
			diffSecrets(ov, r[k], placeholder, out)
		}
	case []any:
		r, ok := red.([]any)
		if !ok || len(r) != len(o) {
			return
		}
		for i := range o {
			diffSecrets(o[i], r[i], placeholder, out)
		}
	case string:
		r, ok := red.(string)
		if !ok || r == o {
			return
		}
		if r == placeholder {
			addSecret(o, out)
			return
		}
		// A string holding JSON was redacted as a value.
		var ov, rv any
		if json.Unmarshal([]byte(o), &ov) == nil && json.Unmarshal([]byte(r), &rv) == nil {
			diffSecrets(ov, rv, placeholder, out)
			return
		}
		// A pattern replaced part of the string: the secret is what lies
		// between the common prefix and suffix.
		p := commonPrefix(o, r)
		q := commonSuffix(o[p:], r[p:])
		addSecret(o[p:len(o)-q], out)
	case json.Number:
		if r, ok := red.(string); ok && r == placeholder {
			addSecret(o.String(), out)
		}
	}
}

func addSecret(s string, out *[]string) {
	if s = strings.TrimSpace(s); len(s) >= minSecretLen {
		*out = append(*out, s)
	}
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func commonSuffix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	return n
}

func (s *runSecrets) snapshot() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.values
}

// scrub blanks the remembered secrets in text.
func (s *runSecrets) scrub(text string) string {
	for _, v := range s.snapshot() {
		text = strings.ReplaceAll(text, v, s.r.Placeholder())
	}
	return text
}

// scrubJSON blanks the remembered secrets in a JSON document, as they
// appear there once encoded.
func (s *runSecrets) scrubJSON(b []byte) []byte {
	values := s.snapshot()
	if len(values) == 0 {
		return b
	}
	ph, _ := json.Marshal(s.r.Placeholder())
	ph = ph[1 : len(ph)-1]
	for _, v := range values {
		enc, _ := json.Marshal(v)
		b = bytes.ReplaceAll(b, enc[1:len(enc)-1], ph)
	}
	return b
}

// scrubValue returns a copy of v with the remembered secrets blanked in
// every string.
func (s *runSecrets) scrubValue(v map[string]any) map[string]any {
	if len(s.snapshot()) == 0 {
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out map[string]any
	if json.Unmarshal(s.scrubJSON(b), &out) != nil {
		return v
	}
	return out
}
