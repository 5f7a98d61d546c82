package jsonpos

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestLocate(t *testing.T) {
	tests := []struct {
		name, doc string
		into      any
		want      string
	}{
		{"missing comma", "{\n  \"a\": 1\n  \"b\": 2\n}", &map[string]int{}, "line 3, column 3"},
		{"trailing comma", "[1,\n 2,\n]", &[]int{}, "line 3, column 1"},
		{"wrong type", "{\n  \"a\": \"x\"\n}", &struct{ A int }{}, "line 2, column 10"},
		{"unicode before", "{\"é\": 1,\n \"ü\" 2}", &map[string]int{}, "line 2, column 6"},
		{"truncated", "{\"a\": [1, 2", &map[string]any{}, "line 1, column 11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Locate([]byte(tt.doc), 0, json.Unmarshal([]byte(tt.doc), tt.into))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want+": ") {
				t.Errorf("got %v, want it to start with %q", err, tt.want)
			}
		})
	}
	if err := Locate(nil, 0, json.Unmarshal([]byte("1"), new(int))); err != nil {
		t.Errorf("no error must stay no error, got %v", err)
	}
}

func TestOffsets(t *testing.T) {
	doc := []byte("{\"other\": [1, {\"x\": 2}],\n \"servers\": {\n  \"a\": {\"command\": \"x\"},\n  \"b\" :  [true]\n }}")
	offs, err := MemberOffsets(doc, "servers")
	if err != nil {
		t.Fatal(err)
	}
	if got := At(doc, offs["a"]); got != (Position{3, 8}) {
		t.Errorf("a at %v", got)
	}
	if got := At(doc, offs["b"]); got != (Position{4, 10}) {
		t.Errorf("b at %v", got)
	}
	arr := []byte("[ {\"a\": 1},\n  {\"b\": 2} ]")
	els, err := ElementOffsets(arr)
	if err != nil || len(els) != 2 || At(arr, els[1]) != (Position{2, 3}) {
		t.Errorf("elements %v %v", els, err)
	}
}
