package staticcatalog_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/staticcatalog"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, data string
		want       []string
	}{
		{"empty", ``, []string{"JSON array"}},
		{"object", `{"name":"x"}`, []string{"JSON array"}},
		{"syntax", "[\n{\"name\": \"a\"},\n{\"name\": }\n]", []string{"line 3, column 10"}},
		{"syntax after leading space", "\n\n  [{\"name\": \"a\",}]", []string{"line 3, column 17"}},
		{"missing name", `[{"description":"x"}]`, []string{"entry 0", "name is missing"}},
		{"duplicate", `[{"name":"a"},{"name":"b"},{"name":"a"}]`, []string{`entry 2 ("a")`, "duplicate", "entry 0"}},
		{"duplicate via app", `[{"name":"x.y"},{"app":"x","name":"y"}]`, []string{"duplicate"}},
		{"bad schema", `[{"name":"a","inputSchema":[1]}]`, []string{"inputSchema must be a JSON Schema object"}},
		{"schema type", `[{"name":"a","input_schema":{"type":"string"}}]`, []string{`type "object"`}},
		{"space", `[{"name":"a b"}]`, []string{"white space"}},
		{"wrong type", "[{\"name\": \"a\"},\n  {\"name\": 3}]", []string{"entry 1: line 2, column 12"}},
		{"all reported", `[{"name":""},{"name":"a b"}]`, []string{"entry 0", "entry 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := staticcatalog.Parse([]byte(tt.data))
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestServeEchoesValidatedInput(t *testing.T) {
	tools, err := staticcatalog.Parse([]byte(`[
		{"app": "notes", "name": "create", "description": "Create a note.", "extra": {"ignored": true},
		 "input_schema": {"properties": {"text": {"type": "string"}}, "required": ["text"]},
		 "annotations": {"readOnlyHint": false}}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	srv := staticcatalog.NewServer("test", "1", tools)
	c := mcptest.Connect(t, srv, mcptest.Modern())
	ctx := context.Background()
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil || len(list.Tools) != 1 || list.Tools[0].Name != "notes.create" {
		t.Fatalf("list = %+v %v", list, err)
	}
	raw, _ := json.Marshal(list.Tools[0])
	if !strings.Contains(string(raw), `"type":"object"`) {
		t.Errorf("a schema without a type must be served as an object schema: %s", raw)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "notes.create"
	req.Params.Arguments = map[string]any{"text": "hi"}
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError {
		t.Fatalf("call: %+v %v", res, err)
	}
	tc, _ := mcp.AsTextContent(res.Content[0])
	if tc.Text != `{"input":{"text":"hi"},"tool":"notes.create"}` {
		t.Errorf("echo = %s", tc.Text)
	}
	req.Params.Arguments = map[string]any{}
	res, err = c.CallTool(ctx, req)
	if err != nil || !res.IsError {
		t.Errorf("missing required input must be refused: %+v %v", res, err)
	}
}

func TestLoadCorpus(t *testing.T) {
	dir := os.Getenv("CODECALLTEST_CORPUS_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "corpus")
	}
	path := filepath.Join(dir, "tools.json")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("corpus not found at %s (set CODECALLTEST_CORPUS_DIR): %v", path, err)
	}
	tools, err := staticcatalog.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 918 {
		t.Errorf("loaded %d tools, want 918", len(tools))
	}
	for _, tool := range tools {
		if tool.App == "" || !strings.HasPrefix(tool.FullName(), tool.App+".") {
			t.Fatalf("tool %q is not named app.name", tool.FullName())
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := staticcatalog.Load(filepath.Join(t.TempDir(), "none.json")); err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Errorf("err = %v, want it to name the file", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`[{"name":"a","inputSchema":{"type":"object"}}]`))
	f.Add([]byte(`[{"app":"x","name":"y","input_schema":{"properties":{}}}]`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tools, err := staticcatalog.Parse(data)
		if err == nil {
			seen := map[string]bool{}
			for _, tool := range tools {
				if tool.Name == "" || seen[tool.FullName()] {
					t.Fatalf("Parse accepted an empty or duplicate name: %+v", tool)
				}
				seen[tool.FullName()] = true
			}
		}
	})
}
