package redact

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// Text redacts a text meant for people or a model, such as an MCP text
// block: a text that holds a JSON object or array is parsed and redacted as
// a value described by schema (key rules and schema hints apply inside it,
// and it is re-encoded only if something changed); any other text gets the
// value patterns, as String does.
func (r *Redactor) Text(s string, schema json.RawMessage) string {
	w := walker{r: r.orDefault()}
	w.budget = w.r.maxNodes
	out, _ := w.textWith(s, parseSchema(schema), 0).(string)
	return out
}

// ToolResult returns a redacted copy of a tool result, for showing it to a
// client or a model: text blocks and embedded text resources as Text does,
// structured content as Value does, both with the tool's output schema.
// Images, audio, blobs and resource links are kept as they are, and so is
// _meta. res itself is not modified; a nil res gives nil.
func (r *Redactor) ToolResult(res *mcp.CallToolResult, outputSchema json.RawMessage) *mcp.CallToolResult {
	if res == nil {
		return nil
	}
	r = r.orDefault()
	out := *res
	if res.Content != nil {
		out.Content = make([]mcp.Content, len(res.Content))
		for i, c := range res.Content {
			out.Content[i] = r.content(c, outputSchema)
		}
	}
	if res.StructuredContent != nil {
		out.StructuredContent = r.Value(res.StructuredContent, outputSchema)
	}
	if len(res.RawStructuredContent) > 0 {
		// mcp-go writes these bytes, when set, instead of StructuredContent.
		out.RawStructuredContent = r.JSON(res.RawStructuredContent, outputSchema)
	}
	return &out
}

func (r *Redactor) content(c mcp.Content, schema json.RawMessage) mcp.Content {
	switch c := c.(type) {
	case mcp.TextContent:
		c.Text = r.Text(c.Text, schema)
		return c
	case *mcp.TextContent:
		if c == nil {
			return c
		}
		cp := *c
		cp.Text = r.Text(c.Text, schema)
		return &cp
	case mcp.EmbeddedResource:
		c.Resource = r.resource(c.Resource)
		return c
	case *mcp.EmbeddedResource:
		if c == nil {
			return c
		}
		cp := *c
		cp.Resource = r.resource(c.Resource)
		return &cp
	default:
		return c
	}
}

func (r *Redactor) resource(rc mcp.ResourceContents) mcp.ResourceContents {
	switch rc := rc.(type) {
	case mcp.TextResourceContents:
		rc.Text = r.Text(rc.Text, nil)
		return rc
	case *mcp.TextResourceContents:
		if rc == nil {
			return rc
		}
		cp := *rc
		cp.Text = r.Text(rc.Text, nil)
		return &cp
	default:
		return rc
	}
}
