package meta

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/policy"
)

// DescribeInput is codecall.describe's input.
type DescribeInput struct {
	Tools []string `json:"tools"`
	Max   *int     `json:"max,omitempty"`
}

// DescribedTool is one tool in codecall.describe's result.
type DescribedTool struct {
	Name             string               `json:"name"`
	Title            string               `json:"title,omitempty"`
	Description      string               `json:"description"`
	AppID            string               `json:"appId"`
	Source           string               `json:"source"`
	Tags             []string             `json:"tags,omitempty"`
	InputSchema      json.RawMessage      `json:"inputSchema"`
	OutputSchema     json.RawMessage      `json:"outputSchema,omitempty"`
	Annotations      *catalog.Annotations `json:"annotations,omitempty"`
	Examples         []catalog.Example    `json:"examples,omitempty"`
	RequiresApproval bool                 `json:"requiresApproval,omitempty"`
	TypeScript       string               `json:"typescript,omitempty"`
}

// DescribeOutput is codecall.describe's result.
type DescribeOutput struct {
	Tools    []DescribedTool `json:"tools"`
	NotFound []string        `json:"notFound,omitempty"`
	Warnings []Warning       `json:"warnings,omitempty"`
}

const maxDescribeNames = 256

func (h *handlers) describe(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in DescribeInput
	if field, msg, ok := decodeArgs(req.Params.Arguments, &in, "tools, max"); !ok {
		return invalid(field, msg), nil
	}
	st, release := h.env.Acquire(ctx)
	defer release()
	limit := st.Config.Describe.MaxDefinitions
	switch {
	case len(in.Tools) == 0:
		return invalid("tools", "tools must list at least one tool name, as returned by codecall.search"), nil
	case len(in.Tools) > maxDescribeNames:
		return invalid("tools", fmt.Sprintf("tools lists %d names; at most %d are allowed", len(in.Tools), maxDescribeNames)), nil
	}
	if in.Max != nil {
		if *in.Max < 1 {
			return invalid("max", fmt.Sprintf("max must be at least 1, got %d", *in.Max)), nil
		}
		limit = min(limit, *in.Max)
	}

	out := DescribeOutput{Tools: []DescribedTool{}}
	seen := map[string]bool{}
	var omitted []string
	for _, name := range in.Tools {
		if seen[name] {
			continue
		}
		seen[name] = true
		t, err := st.Gate.Authorize(ctx, st.Catalog, policy.Request{Tool: name, Via: policy.ViaDescribe})
		if err != nil {
			out.NotFound = append(out.NotFound, name)
			continue
		}
		if len(out.Tools) >= limit {
			omitted = append(omitted, name)
			continue
		}
		out.Tools = append(out.Tools, describeTool(t))
	}
	if len(omitted) > 0 {
		out.Warnings = append(out.Warnings, Warning{Type: "truncated",
			Message: fmt.Sprintf("at most %d tools are described per call; describe these in another call: %v", limit, omitted)})
	}
	if len(out.NotFound) > 0 {
		out.Warnings = append(out.Warnings, Warning{Type: "not_found",
			Message: "names are matched exactly; use codecall.search to find the right names"})
	}
	return result(out, false), nil
}

func describeTool(t *catalog.Tool) DescribedTool {
	d := DescribedTool{
		Name: t.Name, Title: t.Title, Description: t.Description, AppID: t.AppID, Source: string(t.Source),
		Tags: t.Tags, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Examples: t.Examples,
		RequiresApproval: t.RequiresApproval, TypeScript: t.TypeScript(),
	}
	if !t.Annotations.IsZero() {
		a := t.Annotations
		d.Annotations = &a
	}
	return d
}
