// Package staticcatalog serves a list of tool definitions read from a JSON
// file as an MCP server whose tools echo their validated input. It lets
// anyone try CodeCall's search, describe and plans over their own tool list
// without running the real tools.
package staticcatalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/internal/jsonpos"
)

// Tool is one tool definition in a catalog file. Both snake_case and
// camelCase schema keys are accepted, so files exported from other tools
// load as they are; unknown keys are ignored.
type Tool struct {
	Name         string          `json:"name"`
	App          string          `json:"app,omitempty"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  *mcp.ToolAnnotation
}

type fileTool struct {
	Name              string              `json:"name"`
	App               string              `json:"app"`
	Title             string              `json:"title"`
	Description       string              `json:"description"`
	InputSchema       json.RawMessage     `json:"inputSchema"`
	InputSchemaSnake  json.RawMessage     `json:"input_schema"`
	OutputSchema      json.RawMessage     `json:"outputSchema"`
	OutputSchemaSnake json.RawMessage     `json:"output_schema"`
	Annotations       *mcp.ToolAnnotation `json:"annotations"`
}

// FullName is the name the tool is served under: app.name when the file
// gives an app, else the name.
func (t Tool) FullName() string {
	if t.App != "" {
		return t.App + "." + t.Name
	}
	return t.Name
}

// Load reads a catalog file.
func Load(path string) ([]Tool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("catalog file: %w", err)
	}
	tools, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("catalog file %s: %w", path, err)
	}
	return tools, nil
}

// Parse reads a catalog: a JSON array of tool definitions. Every problem is
// reported, each with the index and name of the entry.
func Parse(data []byte) ([]Tool, error) {
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '[' {
		return nil, errors.New("a catalog must be a JSON array of tool definitions, e.g. [{\"name\": \"search_issues\", \"inputSchema\": {\"type\": \"object\"}}]")
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", jsonpos.Locate(data, 0, err))
	}
	// Where each entry starts, so that a problem inside one has a line and
	// a column; the array is valid JSON by now, so this cannot fail.
	offsets, _ := jsonpos.ElementOffsets(data)
	var errs []error
	seen := map[string]int{}
	tools := make([]Tool, 0, len(raw))
	for i, r := range raw {
		var ft fileTool
		if err := json.Unmarshal(r, &ft); err != nil {
			if i < len(offsets) {
				err = jsonpos.Locate(data, offsets[i], err)
			}
			errs = append(errs, fmt.Errorf("entry %d: %w", i, err))
			continue
		}
		t := Tool{Name: ft.Name, App: ft.App, Title: ft.Title, Description: ft.Description, Annotations: ft.Annotations,
			InputSchema: first(ft.InputSchema, ft.InputSchemaSnake), OutputSchema: first(ft.OutputSchema, ft.OutputSchemaSnake)}
		where := fmt.Sprintf("entry %d (%q)", i, t.FullName())
		if err := checkTool(t); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
			continue
		}
		if j, dup := seen[t.FullName()]; dup {
			errs = append(errs, fmt.Errorf("%s: duplicate tool name; entry %d has the same name", where, j))
			continue
		}
		seen[t.FullName()] = i
		t.InputSchema = objectSchema(t.InputSchema)
		tools = append(tools, t)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return tools, nil
}

// objectSchema makes a schema's object type explicit: MCP clients require
// inputSchema.type to be "object", and many published schemas leave it out.
func objectSchema(s json.RawMessage) json.RawMessage {
	if len(s) == 0 {
		return json.RawMessage(`{"type":"object"}`)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(s, &obj) != nil {
		return s
	}
	if _, ok := obj["type"]; ok {
		return s
	}
	obj["type"] = json.RawMessage(`"object"`)
	b, err := json.Marshal(obj)
	if err != nil {
		return s
	}
	return b
}

func first(a, b json.RawMessage) json.RawMessage {
	if len(a) > 0 && string(a) != "null" {
		return a
	}
	if string(b) == "null" {
		return nil
	}
	return b
}

func checkTool(t Tool) error {
	switch {
	case t.Name == "":
		return errors.New("name is missing")
	case len(t.FullName()) > 128:
		return fmt.Errorf("name is %d bytes; at most 128 are allowed", len(t.FullName()))
	case strings.ContainsAny(t.FullName(), " \t\r\n"):
		return errors.New("name contains white space")
	}
	for key, s := range map[string]json.RawMessage{"inputSchema": t.InputSchema, "outputSchema": t.OutputSchema} {
		if len(s) == 0 {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal(s, &obj); err != nil {
			return fmt.Errorf("%s must be a JSON Schema object: %w", key, err)
		}
		if ty, ok := obj["type"]; ok && ty != "object" {
			return fmt.Errorf("%s must have type \"object\", not %v", key, ty)
		}
	}
	return nil
}

// Register adds the tools to srv. Each answers with {tool, input}, the
// input it received after the server's schema validation; create the server
// with server.WithInputSchemaValidation so invalid input is refused.
func Register(srv *server.MCPServer, tools []Tool) {
	st := make([]server.ServerTool, 0, len(tools))
	for _, t := range tools {
		mt := mcp.NewToolWithRawSchema(t.FullName(), t.Description, t.InputSchema)
		mt.Title = t.Title
		if len(t.OutputSchema) > 0 {
			mt.RawOutputSchema = t.OutputSchema
		}
		if t.Annotations != nil {
			mt.Annotations = *t.Annotations
		}
		st = append(st, server.ServerTool{Tool: mt, Handler: echo(mt.Name)})
	}
	srv.AddTools(st...)
}

// NewServer returns a server named name that serves the tools with input
// validation on.
func NewServer(name, version string, tools []Tool) *server.MCPServer {
	srv := server.NewMCPServer(name, version, server.WithToolCapabilities(true), server.WithInputSchemaValidation())
	Register(srv, tools)
	return srv
}

func echo(name string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		out := map[string]any{"tool": name, "input": req.GetArguments()}
		b, err := json.Marshal(out)
		if err != nil {
			return mcp.NewToolResultError("input cannot be echoed: " + err.Error()), nil
		}
		return mcp.NewToolResultStructured(json.RawMessage(b), string(b)), nil
	}
}
