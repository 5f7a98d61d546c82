package meta

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSummary(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"Refund a payment. Refunds cannot be undone.", 240, "Refund a payment."},
		{"Short", 240, "Short"},
		{"  spaced\n\tout   text ", 240, "spaced out text"},
		{"one two three four five six", 14, "one two three…"},
		{strings.Repeat("é", 20), 9, "éééé…"},
	}
	for _, tt := range tests {
		got := summary(tt.in, tt.n)
		if got != tt.want {
			t.Errorf("summary(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("summary(%q) is not valid UTF-8", tt.in)
		}
	}
}

func TestDecodeArgs(t *testing.T) {
	tests := []struct {
		args        string
		field, want string
	}{
		{`{"query":"x","topK":"3"}`, "topK", "topK must be an integer"},
		{`{"q":"x"}`, "q", `unknown argument "q"`},
		{`{"query":["x"]}`, "query", "query must be a string"},
		{`{"query":"x","filter":{"appIds":"crm"}}`, "filter.appIds", "must be an array"},
		{`{"query":"x","filter":[]}`, "filter", "must be an object"},
	}
	for _, tt := range tests {
		var args any
		if err := json.Unmarshal([]byte(tt.args), &args); err != nil {
			t.Fatal(err)
		}
		var in SearchInput
		field, msg, ok := searchArgs.decode(args, &in)
		if ok || field != tt.field || !strings.Contains(msg, tt.want) {
			t.Errorf("%s: field %q msg %q ok %v; want field %q and %q", tt.args, field, msg, ok, tt.field, tt.want)
		}
	}
}

func FuzzDecodeSearchArgs(f *testing.F) {
	f.Add([]byte(`{"query":"refund","topK":3,"filter":{"appIds":["billing"],"includeOpenApi":false}}`))
	f.Add([]byte(`{"query":1e400}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var args any
		if json.Unmarshal(data, &args) != nil {
			return
		}
		var in SearchInput
		field, msg, ok := searchArgs.decode(args, &in)
		if !ok && msg == "" {
			t.Fatalf("refusal without a message (field %q) for %s", field, data)
		}
		if in.Filter != nil {
			_, _, _ = sourceFilter(in.Filter)
		}
	})
}
