package middleware

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestInternalRequest checks the hand-assembled tools/call against what
// encoding/json makes of the same request: the same JSON value for every
// name a plan can give (quotes, backslashes, control characters,
// non-ASCII) and for any arguments, and an error, not a message, for
// arguments JSON cannot hold.
func TestInternalRequest(t *testing.T) {
	c := &CodeCall{idBase: "0a1b2c"}
	c.callPrefix = callPrefix(c.idBase)
	tests := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"plain", "crm.get_contact", map[string]any{}},
		{"nil arguments", "bench.noop", nil},
		{"nested arguments", "crm.search", map[string]any{"q": "a\"b", "filter": map[string]any{"n": 1.5, "tags": []any{"x", nil, true}}}},
		{"quote and backslash in name", `we"ird\name`, map[string]any{"k": "v"}},
		{"control character in name", "tab\there\x01", map[string]any{}},
		{"non-ASCII name", "café.überprüfen", map[string]any{"é": "ü"}},
		{"HTML characters", "a<b>&c", map[string]any{"html": "<script>&</script>"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := c.internalRequest(tt.tool, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			var got, want map[string]any
			if err := json.Unmarshal(msg, &got); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, msg)
			}
			ref, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "cc-0a1b2c-" + string(rune('1'+i)), "method": "tools/call",
				"params": map[string]any{"name": tt.tool, "arguments": tt.args}})
			if err := json.Unmarshal(ref, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %s\nwant %s", msg, ref)
			}
		})
	}
	if _, err := c.internalRequest("x", map[string]any{"n": math.Inf(1)}); err == nil || !strings.Contains(err.Error(), "unsupported value") {
		t.Errorf("arguments JSON cannot hold: err = %v, want encoding/json's unsupported value", err)
	}
}
