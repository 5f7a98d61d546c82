package meta

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/policy"
)

// DescribeInput is codecall.describe's input.
type DescribeInput struct {
	Tools []string `json:"tools"`
	Max   *int     `json:"max,omitempty"`
	// Format chooses how types are given: "ts" (the default) TypeScript
	// declarations only, "json" JSON Schemas only, "both" both.
	Format string `json:"format,omitempty"`
}

// Describe formats. TypeScript is the default: the declarations carry the
// schemas' descriptions and constraints as doc comments, in fewer tokens
// than the JSON Schemas (BENCHMARKS.md, "What the model reads").
const (
	DescribeTS   = "ts"
	DescribeJSON = "json"
	DescribeBoth = "both"
)

// DescribedTool is one tool in codecall.describe's result.
type DescribedTool struct {
	Name         string               `json:"name"`
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description,omitempty"`
	AppID        string               `json:"appId"`
	Source       string               `json:"source"`
	Tags         []string             `json:"tags,omitempty"`
	InputSchema  json.RawMessage      `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage      `json:"outputSchema,omitempty"`
	Annotations  *catalog.Annotations `json:"annotations,omitempty"`
	Examples     []catalog.Example    `json:"examples,omitempty"`
	// RequiresApproval, SandboxProfile, DefaultTimeoutMs, AllowsStreaming:
	// as in a search hit (SearchHit). Hints are the tool's declared
	// side-effect hints, in every format (the annotations are left out of
	// format ts).
	RequiresApproval bool   `json:"requiresApproval"`
	SandboxProfile   string `json:"sandboxProfile,omitempty"`
	DefaultTimeoutMs int64  `json:"defaultTimeoutMs,omitempty"`
	AllowsStreaming  bool   `json:"allowsStreaming"`
	Hints            *Hints `json:"hints,omitempty"`
	// Cwd is the directory the server behind the tool runs in, when the
	// gateway says (a stdio upstream).
	Cwd         string `json:"cwd,omitempty"`
	Unavailable bool   `json:"unavailable,omitempty"`
	TypeScript  string `json:"typescript,omitempty"`
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
	if field, msg, ok := describeArgs.decode(req.Params.Arguments, &in); !ok {
		return describeArgs.invalid(field, msg), nil
	}
	st, release := h.env.Acquire(ctx)
	defer release()
	limit := st.Config.Describe.MaxDefinitions
	switch {
	case len(in.Tools) == 0:
		return describeArgs.invalid("tools", "tools must list at least one tool name, as returned by codecall.search"), nil
	case len(in.Tools) > maxDescribeNames:
		return describeArgs.invalid("tools", fmt.Sprintf("tools lists %d names; at most %d are allowed", len(in.Tools), maxDescribeNames)), nil
	}
	switch in.Format {
	case "":
		in.Format = DescribeTS
	case DescribeTS, DescribeJSON, DescribeBoth:
	default:
		return describeArgs.invalid("format", fmt.Sprintf("format must be ts, json or both, not %q", in.Format)), nil
	}
	if in.Max != nil {
		if *in.Max < 1 {
			return describeArgs.invalid("max", fmt.Sprintf("max must be at least 1, got %d", *in.Max)), nil
		}
		limit = min(limit, *in.Max)
	}

	out := st.describe(ctx, in.Tools, limit, in.Format, func(ctx context.Context, name string) (*catalog.Tool, bool) {
		t, err := st.Gate.Authorize(ctx, st.Catalog, policy.Request{Tool: name, Via: policy.ViaDescribe})
		return t, err == nil
	})
	return result(out, false), nil
}

// describe describes names for codecall.describe and a plan's
// describeTools: at most limit tools, each in format, among those offered
// says the caller may see; the others are notFound.
func (st *State) describe(ctx context.Context, names []string, limit int, format string, offered func(context.Context, string) (*catalog.Tool, bool)) DescribeOutput {
	out := DescribeOutput{Tools: []DescribedTool{}}
	seen := map[string]bool{}
	down := st.unavailable()
	warned := map[string]bool{}
	var omitted []string
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		t, ok := offered(ctx, name)
		if !ok {
			out.NotFound = append(out.NotFound, name)
			continue
		}
		if len(out.Tools) >= limit {
			omitted = append(omitted, name)
			continue
		}
		d := describeTool(t, format)
		d.RequiresApproval = st.Gate.WouldAsk(ctx, t, SessionID(ctx))
		if s, ok := down[d.AppID]; ok {
			d.Unavailable = true
			if !warned[s.ID] {
				warned[s.ID] = true
				out.Warnings = append(out.Warnings, unavailableWarning(s, time.Now()))
			}
		}
		out.Tools = append(out.Tools, d)
	}
	if len(omitted) > 0 {
		out.Warnings = append(out.Warnings, Warning{Type: "truncated",
			Message: fmt.Sprintf("at most %d tools are described per call; describe these in another call: %v", limit, omitted)})
	}
	if len(out.NotFound) > 0 {
		out.Warnings = append(out.Warnings, Warning{Type: "not_found",
			Message: "names are matched exactly; use search to find the right names"})
	}
	return out
}

// describeTool is a tool's definition in the given format: the TypeScript
// declaration, the JSON Schemas, or both. The declaration carries the
// description, the title and the annotations as its doc comment, so in
// format ts they are not repeated beside it (a description too long for
// the comment is kept).
func describeTool(t *catalog.Tool, format string) DescribedTool {
	d := DescribedTool{
		Name: t.Name, Title: t.Title, Description: t.Description, AppID: t.AppID, Source: string(t.Source),
		Tags: t.Tags, Examples: t.Examples, RequiresApproval: t.RequiresApproval, SandboxProfile: t.SandboxProfile,
		DefaultTimeoutMs: t.Timeout.Milliseconds(), Hints: hintsOf(t), Cwd: t.Cwd,
	}
	if format != DescribeTS {
		d.InputSchema, d.OutputSchema = t.InputSchema, t.OutputSchema
		if !t.Annotations.IsZero() {
			a := t.Annotations
			d.Annotations = &a
		}
	}
	if format != DescribeJSON {
		d.TypeScript = t.TypeScript()
	}
	if format == DescribeTS {
		d.Title = ""
		if len(d.Description) <= maxDescriptionInDeclaration {
			d.Description = ""
		}
	}
	return d
}

// maxDescriptionInDeclaration is the longest description the TypeScript
// declaration's doc comment keeps whole.
const maxDescriptionInDeclaration = 2048
