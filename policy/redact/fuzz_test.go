package redact

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/codecall-go/codecall/presets"
)

// FuzzString checks that String never panics, keeps valid UTF-8 valid, and
// is idempotent: redacting redacted text changes nothing.
func FuzzString(f *testing.F) {
	for _, s := range []string{
		"", "plain", "Bearer " + bearerTok, ghToken, awsKey, jwtToken, slack, visa, pemBlock,
		"postgres://a:b@c/d", "password=x&token=y", `{"apiKey":"k"}`, "4111 1111 1111 1111",
		"Authorization: Basic dXNlcjpw", "-----BEGIN PRIVATE KEY-----", "eyJ.eyJ.", "\xff\xfe",
	} {
		f.Add(s)
	}
	r := Default()
	f.Fuzz(func(t *testing.T, s string) {
		out := r.String(s)
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("String(%q) = %q is not valid UTF-8", s, out)
		}
		if again := r.String(out); again != out {
			t.Fatalf("not idempotent:\n in  %q\n out %q\n again %q", s, out, again)
		}
		// The two-step search finds what the plain expression finds.
		for _, p := range builtinPatterns {
			if got, want := fastSpans(&p, s), refSpans(&p, s); !slices.Equal(got, want) {
				t.Fatalf("%s on %q: fast %v, reference %v", p.name, s, got, want)
			}
		}
	})
}

// FuzzJSON checks that JSON never panics, always returns valid JSON, never
// leaves a planted secret under a secret key, and never modifies its input.
func FuzzJSON(f *testing.F) {
	docs := []string{
		"{}", "[]", "null", `"x"`, `{"password":"p","a":[1,{"token":"t"}]}`,
		`{"text":"{\"secret\":\"s\"}"}`, `[[[[[[[[[[["deep"]]]]]]]]]]]`, `{"a":1e400}`, `{"a":-0}`,
		`{"` + ghToken + `":1,"[REDACTED]":2}`, `{"n":4111111111111111}`, "{", "",
	}
	for _, d := range docs {
		f.Add([]byte(d), []byte(nil))
	}
	schemas := []string{`{"properties":{"a":{"writeOnly":true}}}`, `{"$ref":"#"}`, `{"items":{"$ref":"#/items"}}`, `{"allOf":[{"$ref":"#"}]}`}
	for _, s := range schemas {
		f.Add([]byte(`{"a":"x","b":[1]}`), []byte(s))
	}
	r := Default()
	small, err := New(presets.RedactionConfig{}, WithMaxNodes(6), WithMaxDepth(3))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc, schema []byte) {
		in := string(doc)
		out := r.JSON(doc, schema)
		if string(doc) != in {
			t.Fatal("JSON modified its input")
		}
		if !json.Valid(out) {
			t.Fatalf("JSON(%q) = %q is not valid JSON", doc, out)
		}
		// The walk that only looks agrees with the walk that copies, also
		// when the node and depth budgets run out.
		if v, ok := decodeJSON(doc); ok {
			for _, rr := range []*Redactor{r, small} {
				full := walker{r: rr, budget: rr.maxNodes}
				full.value(v, parseSchema(schema), 0)
				if look := rr.Redacts(v, schema); look != full.changed {
					t.Fatalf("Redacts(%q) = %v, the full walk changed = %v", doc, look, full.changed)
				}
			}
		}
		// Planting a secret under a secret key anywhere the document
		// holds an object must not let it through.
		if strings.HasPrefix(strings.TrimSpace(in), "{") && json.Valid(doc) {
			planted := `{"client_secret":"` + ghToken + `","rest":` + in + `}`
			if got := string(r.JSON(json.RawMessage(planted), schema)); strings.Contains(got, ghToken) {
				t.Fatalf("planted secret leaked: %s", got)
			}
		}
	})
}
