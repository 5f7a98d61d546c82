package redact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/codecall-go/codecall/presets"
)

// TestKeyVerdictsInLargeDocuments checks the walk that remembers its key
// verdicts: a secret key is redacted wherever it appears, before and after
// the walk starts remembering (fewKeys), the first time and every time
// again, under the built-in rules and an operator's; and a key that is not
// secret is kept every time.
func TestKeyVerdictsInLargeDocuments(t *testing.T) {
	custom, err := New(presets.RedactionConfig{Keys: []string{"internal_ref"}})
	if err != nil {
		t.Fatal(err)
	}
	rows := func(n int, secretKey string) json.RawMessage {
		var b strings.Builder
		b.WriteString(`{"rows":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"row%d","%s":"value%d","note":"plain%d"}`, i, secretKey, i, i)
		}
		b.WriteString(`]}`)
		return json.RawMessage(b.String())
	}
	tests := []struct {
		name      string
		r         *Redactor
		doc       json.RawMessage
		secretKey string
	}{
		{name: "built-in key, past the threshold", r: Default(), doc: rows(3*fewKeys, "apiKey"), secretKey: "apiKey"},
		{name: "operator's key, past the threshold", r: custom, doc: rows(3*fewKeys, "internalRef"), secretKey: "internalRef"},
		{name: "built-in key, within a JSON string", r: Default(), secretKey: "password",
			doc: func() json.RawMessage {
				b, _ := json.Marshal(map[string]string{"text": string(rows(3*fewKeys, "password"))})
				return b
			}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := string(tt.r.JSON(tt.doc, nil))
			for i := range 3 * fewKeys {
				if strings.Contains(out, fmt.Sprintf(`value%d"`, i)) || strings.Contains(out, fmt.Sprintf(`value%d\"`, i)) {
					t.Fatalf("row %d: the value of %s leaked: %.300s", i, tt.secretKey, out)
				}
				if !strings.Contains(out, fmt.Sprintf("plain%d", i)) {
					t.Fatalf("row %d: the note, not secret, was redacted: %.300s", i, out)
				}
			}
		})
	}
}
