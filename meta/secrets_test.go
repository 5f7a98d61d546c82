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
