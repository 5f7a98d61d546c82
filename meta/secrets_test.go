package meta

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/codecall-go/codecall/policy/redact"
)

func TestRunSecrets(t *testing.T) {
	tests := []struct {
		name   string
		result string
		schema string
		secret string
	}{
		{"secret key", `{"user":"ada","apiKey":"k-9f8e7d6c5b"}`, "", "k-9f8e7d6c5b"},
		{"pattern inside a string", `{"note":"use Authorization: Bearer abc.def-123456 today"}`, "", "abc.def-123456"},
		{"JSON text in a string", `{"raw":"{\"password\":\"hunter22\"}"}`, "", "hunter22"},
		{"schema hint", `{"pin":"493021"}`, `{"type":"object","properties":{"pin":{"type":"string","writeOnly":true}}}`, "493021"},
		{"nested array", `{"items":[{"secret":"s3cr3t-value"}]}`, "", "s3cr3t-value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &runSecrets{r: redact.Default()}
			var schema json.RawMessage
			if tt.schema != "" {
				schema = json.RawMessage(tt.schema)
			}
			s.learn(json.RawMessage(tt.result), schema)
			moved := "the plan logged " + tt.secret + " under an innocent name"
			if got := s.scrub(moved); strings.Contains(got, tt.secret) {
				t.Errorf("scrub kept the secret: %q", got)
			}
			doc, _ := json.Marshal(map[string]any{"old": tt.secret, "list": []string{"x " + tt.secret}})
			if got := s.scrubJSON(doc); strings.Contains(string(got), tt.secret) || !json.Valid(got) {
				t.Errorf("scrubJSON: %s", got)
			}
			if got := s.scrubValue(map[string]any{"old": tt.secret}); got["old"] == tt.secret {
				t.Errorf("scrubValue kept the secret: %v", got)
			}
		})
	}
	s := &runSecrets{r: redact.Default()}
	s.learn(json.RawMessage(`{"token":"abc"}`), nil) // too short to blank safely
	if got := s.scrub("abc def"); got != "abc def" {
		t.Errorf("a short value was remembered: %q", got)
	}
}

// TestMayHoldSecret checks learn's shortcut: a result it skips is one in
// which the whole decode-and-redact finds nothing, and results with a
// secret the redactor recognises are never skipped.
func TestMayHoldSecret(t *testing.T) {
	tests := []struct {
		result string
		want   bool
	}{
		{`{"ok":true}`, false},
		{`{"count":12,"done":false,"next":null}`, false},
		{`{"apiKey":"abc"}`, false},            // too short to be remembered
		{`{"password_hash_of_user":1}`, false}, // a long key is not a value
		{`{"a" : "12345", "longerKeyName"  :  2}`, false},
		{`[1,2,3,true,null,"x"]`, false},
		{`"short"`, false},
		{``, false},
		{`{"apiKey":"k-9f8e7d6c5b"}`, true},
		{`{"pin":493021}`, true}, // a long number
		{`{"pin":-1.5e10}`, true},
		{`"a bare string value"`, true},
		{`{"note":"use Authorization: Bearer abc.def-123456 today"}`, true},
		{`{"raw":"{\"password\":\"hunter22\"}"}`, true},
		{`{"k":"\u00e9\u00e9"}`, true}, // escapes count as written: conservative
		{`{"items":[{"secret":"s3cr3t-value"}]}`, true},
		{`{"key"` + "\n\t" + `:"value-long-enough"}`, true},
		{`{"unterminated":"abcdefgh`, true},
	}
	for _, tt := range tests {
		t.Run(tt.result, func(t *testing.T) {
			if got := mayHoldSecret([]byte(tt.result)); got != tt.want {
				t.Errorf("mayHoldSecret = %v, want %v", got, tt.want)
			}
		})
	}
	// Whatever the shortcut skips, the whole path learns nothing from,
	// under the built-in key rules and a schema that marks everything.
	schema := json.RawMessage(`{"type":"object","additionalProperties":{"writeOnly":true}}`)
	for _, raw := range []string{`{"ok":true}`, `{"pin":12345}`, `{"token":"abc12"}`, `{"secret":"x","apiKey":"yy"}`,
		`{"card":41111}`, `{"password":"\"q\""}`, `{"sk_live_0123456789abcdef":true}`} {
		if mayHoldSecret([]byte(raw)) {
			t.Errorf("%s: expected the shortcut to skip it", raw)
			continue
		}
		for _, sc := range []json.RawMessage{nil, schema} {
			s := &runSecrets{r: redact.Default()}
			s.learnAll(json.RawMessage(raw), sc)
			if len(s.values) > 0 {
				t.Errorf("%s (schema %s): the shortcut skipped a result the whole path learns %q from", raw, sc, s.values)
			}
		}
	}
}
