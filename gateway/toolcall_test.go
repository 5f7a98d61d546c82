package gateway

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestDecodeToolResult holds the one-pass decoding to mcp-go's: the same
// result, or the same error, for every shape of result, and the fast path
// taken only where it is exact.
func TestDecodeToolResult(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		fast bool // decoded in one pass
	}{
		{"one text item", `{"content":[{"type":"text","text":"{\"id\":1,\"notes\":\"a \\\"quoted\\\" word\"}"}]}`, true},
		{"text with annotations and meta", `{"_meta":{"progressToken":"p","k":1},"content":[{"type":"text","text":"hi","annotations":{"audience":["user"],"priority":0.5},"_meta":{"x":"y"}}],"isError":true}`, true},
		{"several text items", `{"content":[{"type":"text","text":"a"},{"type":"text","text":""},{"type":"text"}]}`, true},
		{"empty content", `{"content":[]}`, true},
		{"structured content", `{"content":[{"type":"text","text":"{\"n\":2}"}],"structuredContent":{"n":2,"list":[1,"two",null]}}`, true},
		{"unknown fields", `{"content":[{"type":"text","text":"a","extra":1}],"other":{"deep":[1]}}`, true},
		{"an image", `{"content":[{"type":"text","text":"a"},{"type":"image","data":"AAAA","mimeType":"image/png"}]}`, false},
		{"an embedded resource", `{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"x"}}]}`, false},
		{"a resource link", `{"content":[{"type":"resource_link","uri":"file:///a","name":"a"}]}`, false},
		{"no content", `{"isError":false}`, false},
		{"null content", `{"content":null}`, false},
		{"item without a type", `{"content":[{"text":"a"}]}`, false},
		{"item with a numeric type", `{"content":[{"type":1,"text":"a"}]}`, false},
		{"text that is not a string", `{"content":[{"type":"text","text":5}]}`, false},
		{"asking for input", `{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object"}}}},"requestState":"s"}`, false},
		{"content not a list", `{"content":{"type":"text"}}`, false},
		{"not an object", `[1,2]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := json.RawMessage(tt.raw)
			want, wantErr := mcp.ParseCallToolResult(&raw)
			got, err := decodeToolResult(raw)
			if (err != nil) != (wantErr != nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("error %v, mcp-go's %v", err, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("result\n%#v\nmcp-go's\n%#v", got, want)
			}
			var r textResult
			fast := json.Unmarshal(raw, &r) == nil && r.plain()
			if fast != tt.fast {
				t.Errorf("fast path %v, want %v", fast, tt.fast)
			}
			if want == nil {
				return
			}
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(want)
			if string(a) != string(b) {
				t.Errorf("encoded\n%s\nmcp-go's\n%s", a, b)
			}
		})
	}
}
