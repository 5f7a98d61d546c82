package openapi

import (
	"io"
	"strings"
	"testing"
)

// TestSerializeStyles follows the style examples of the OpenAPI
// specification (parameter "color"), with object keys in sorted order (a
// JSON object has none of its own).
func TestSerializeStyles(t *testing.T) {
	arr := []any{"blue", "black", "brown"}
	obj := map[string]any{"R": 100.0, "G": 200.0, "B": 150.0}
	tests := []struct {
		in, style string
		explode   bool
		v         any
		want      string
	}{
		{"path", styleSimple, false, "blue", "blue"},
		{"path", styleSimple, false, arr, "blue,black,brown"},
		{"path", styleSimple, false, obj, "B,150,G,200,R,100"},
		{"path", styleSimple, true, obj, "B=150,G=200,R=100"},
		{"path", styleLabel, false, "blue", ".blue"},
		{"path", styleLabel, false, arr, ".blue,black,brown"},
		{"path", styleLabel, true, arr, ".blue.black.brown"},
		{"path", styleLabel, true, obj, ".B=150.G=200.R=100"},
		{"path", styleMatrix, false, "blue", ";color=blue"},
		{"path", styleMatrix, false, arr, ";color=blue,black,brown"},
		{"path", styleMatrix, true, arr, ";color=blue;color=black;color=brown"},
		{"path", styleMatrix, true, obj, ";B=150;G=200;R=100"},
		{"path", styleSimple, false, "a/b c", "a%2Fb%20c"},
		{"query", styleForm, true, "blue", "color=blue"},
		{"query", styleForm, false, arr, "color=blue,black,brown"},
		{"query", styleForm, true, arr, "color=blue&color=black&color=brown"},
		{"query", styleForm, false, obj, "color=B,150,G,200,R,100"},
		{"query", styleForm, true, obj, "B=150&G=200&R=100"},
		{"query", styleSpaceDelimited, false, arr, "color=blue%20black%20brown"},
		{"query", stylePipeDelimited, false, arr, "color=blue|black|brown"},
		{"query", styleDeepObject, true, obj, "color%5BB%5D=150&color%5BG%5D=200&color%5BR%5D=100"},
		{"query", styleForm, true, "a&b=c#d", "color=a%26b%3Dc%23d"},
		{"query", styleForm, true, true, "color=true"},
		{"query", styleForm, true, 1.5, "color=1.5"},
		{"query", styleForm, true, 1e21, "color=1000000000000000000000"},
		{"header", styleSimple, false, arr, "blue,black,brown"},
		{"header", styleSimple, true, obj, "B=150,G=200,R=100"},
		{"cookie", styleForm, false, "blue", "color=blue"},
	}
	for _, tt := range tests {
		p := param{name: "color", in: tt.in, style: tt.style, explode: tt.explode}
		got, err := serialize(p, tt.v)
		if err != nil || got != tt.want {
			t.Errorf("%s %s explode=%v %v: got %q, %v; want %q", tt.in, tt.style, tt.explode, tt.v, got, err, tt.want)
		}
	}
}

func TestSerializeRefusals(t *testing.T) {
	tests := []struct {
		p    param
		v    any
		want string
	}{
		{param{name: "x", in: "query", style: styleForm}, []any{map[string]any{"a": 1.0}}, "flat list"},
		{param{name: "x", in: "query", style: styleDeepObject}, []any{"a"}, "takes an object"},
		{param{name: "x", in: "header", style: styleSimple}, "a\r\nX-Evil: 1", "line break"},
		{param{name: "x", in: "path", style: "tabular"}, "a", "not one of simple, label, matrix"},
		{param{name: "x", in: "body"}, "a", "not supported"},
	}
	for _, tt := range tests {
		if _, err := serialize(tt.p, tt.v); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v %v: %v, want an error with %q", tt.p, tt.v, err, tt.want)
		}
	}
}

func TestEncodeBody(t *testing.T) {
	tests := []struct {
		mediaType string
		v         any
		wantCT    string
		want      []string // substrings of the body
		err       string
	}{
		{"application/json", map[string]any{"a": 1.0}, "application/json", []string{`{"a":1}`}, ""},
		{"application/vnd.api+json", []any{1.0}, "application/vnd.api+json", []string{`[1]`}, ""},
		{"application/x-www-form-urlencoded", map[string]any{"a b": "c&d", "n": []any{1.0, 2.0}}, "application/x-www-form-urlencoded",
			[]string{"a%20b=c%26d&n=1&n=2"}, ""},
		{"multipart/form-data", map[string]any{"name": "x", "meta": map[string]any{"k": "v"}}, "multipart/form-data; boundary=",
			[]string{`name="name"`, "\r\n\r\nx\r\n", `name="meta"`, `{"k":"v"}`}, ""},
		{"text/plain", "hello", "text/plain", []string{"hello"}, ""},
		{"text/plain", 1.0, "", nil, "must be a string"},
		{"application/x-www-form-urlencoded", "x", "", nil, "must be an object"},
		{"application/xml", "<a/>", "", nil, "cannot be sent"},
	}
	for _, tt := range tests {
		r, ct, err := encodeBody(tt.mediaType, tt.v)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s %v: %v, want an error with %q", tt.mediaType, tt.v, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.mediaType, err)
			continue
		}
		b, _ := io.ReadAll(r)
		if !strings.HasPrefix(ct, tt.wantCT) {
			t.Errorf("%s: content type %q", tt.mediaType, ct)
		}
		for _, w := range tt.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s: body %q lacks %q", tt.mediaType, b, w)
			}
		}
	}
}
