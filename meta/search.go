package meta

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/search"
	"github.com/codecall-go/codecall/toolerr"
)

// SearchInput is codecall.search's input.
type SearchInput struct {
	Query  string        `json:"query"`
	TopK   *int          `json:"topK,omitempty"`
	Filter *SearchFilter `json:"filter,omitempty"`
}

// SearchFilter narrows a search.
type SearchFilter struct {
	AppIDs         []string `json:"appIds,omitempty"`
	Tags           []string `json:"tags,omitempty"`
	Sources        []string `json:"sources,omitempty"`
	IncludeOpenAPI *bool    `json:"includeOpenApi,omitempty"`
	IncludeInline  *bool    `json:"includeInline,omitempty"`
}

// SearchHit is one tool in codecall.search's result.
type SearchHit struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	AppID       string  `json:"appId"`
	Source      string  `json:"source"`
	Score       float64 `json:"score"`
}

// SearchOutput is codecall.search's result.
type SearchOutput struct {
	Tools               []SearchHit `json:"tools"`
	Warnings            []Warning   `json:"warnings,omitempty"`
	TotalAvailableTools int         `json:"totalAvailableTools"`
}

const (
	maxQueryBytes   = 1024
	maxFilterValues = 64
	// Search results carry a description short enough to choose by; the
	// whole text is one describe away.
	maxHitDescription = 240
)

func (h *handlers) search(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in SearchInput
	if field, msg, ok := decodeArgs(req.Params.Arguments, &in, "query, topK, filter"); !ok {
		return invalid(field, msg), nil
	}
	st, release := h.env.Acquire(ctx)
	defer release()
	cfg := st.Config
	ctx, span := st.tracer().Start(ctx, "codecall.search", trace.WithAttributes(attribute.Int("codecall.query_bytes", len(in.Query))))
	defer span.End()

	q := strings.TrimSpace(in.Query)
	switch {
	case q == "":
		return invalid("query", "query must be a non-empty string describing the task, e.g. \"refund a customer's last payment\""), nil
	case len(q) > maxQueryBytes:
		return invalid("query", fmt.Sprintf("query is %d bytes; at most %d are allowed", len(q), maxQueryBytes)), nil
	}
	topK := cfg.Search.TopK
	if in.TopK != nil {
		if *in.TopK < 1 || *in.TopK > cfg.Search.MaxTopK {
			return invalid("topK", fmt.Sprintf("topK must be between 1 and %d, got %d", cfg.Search.MaxTopK, *in.TopK)), nil
		}
		topK = *in.TopK
	}
	query := search.Query{Text: q, TopK: topK}
	if f := in.Filter; f != nil {
		if len(f.AppIDs) > maxFilterValues || len(f.Tags) > maxFilterValues || len(f.Sources) > maxFilterValues {
			return invalid("filter", fmt.Sprintf("a filter list may hold at most %d values", maxFilterValues)), nil
		}
		sources, field, msg := sourceFilter(f)
		if msg != "" {
			return invalid(field, msg), nil
		}
		query.AppIDs, query.Tags, query.Sources = f.AppIDs, f.Tags, sources
		if sources != nil && len(sources) == 0 {
			return result(SearchOutput{Tools: []SearchHit{}, TotalAvailableTools: len(st.Catalog.Enabled()),
				Warnings: []Warning{{Type: "no_results", Message: "the source filter excludes every source"}}}, false), nil
		}
	}

	res, err := st.Index.Search(ctx, query)
	if err != nil {
		return refused(&toolerr.Error{Code: toolerr.Execution, Message: "search failed: " + err.Error()}), nil
	}
	out := SearchOutput{Tools: make([]SearchHit, 0, len(res.Hits)), TotalAvailableTools: res.TotalAvailable}
	for _, hit := range res.Hits {
		// The index holds only enabled tools, but the gate has the last word
		// on every path.
		if _, err := st.Gate.Authorize(ctx, st.Catalog, policy.Request{Tool: hit.Tool.Name, Via: policy.ViaSearch}); err != nil {
			continue
		}
		out.Tools = append(out.Tools, SearchHit{
			Name: hit.Tool.Name, Description: summary(hit.Tool.Description, maxHitDescription),
			AppID: hit.Tool.AppID, Source: string(hit.Tool.Source), Score: math.Round(hit.Score*1000) / 1000,
		})
	}
	for _, w := range res.Warnings {
		out.Warnings = append(out.Warnings, Warning{Type: w.Type, Message: w.Message})
	}
	span.SetAttributes(attribute.Int("codecall.results", len(out.Tools)), attribute.Int("codecall.warnings", len(out.Warnings)))
	return result(out, false), nil
}

// sourceFilter merges sources with includeOpenApi/includeInline. A nil
// result means no restriction.
func sourceFilter(f *SearchFilter) (sources []catalog.Source, field, msg string) {
	if len(f.Sources) == 0 && f.IncludeOpenAPI == nil && f.IncludeInline == nil {
		return nil, "", ""
	}
	allowed := slices.Clone(catalog.Sources)
	if len(f.Sources) > 0 {
		allowed = allowed[:0]
		for i, s := range f.Sources {
			if !slices.Contains(catalog.Sources, catalog.Source(s)) {
				return nil, fmt.Sprintf("filter.sources[%d]", i), fmt.Sprintf("unknown source %q; allowed: %s", s, joinSources())
			}
			allowed = append(allowed, catalog.Source(s))
		}
	}
	drop := func(src catalog.Source, include *bool) {
		if include != nil && !*include {
			allowed = slices.DeleteFunc(allowed, func(s catalog.Source) bool { return s == src })
		}
	}
	drop(catalog.SourceOpenAPI, f.IncludeOpenAPI)
	drop(catalog.SourceInline, f.IncludeInline)
	return allowed, "", ""
}

func joinSources() string {
	s := make([]string, len(catalog.Sources))
	for i, src := range catalog.Sources {
		s[i] = string(src)
	}
	return strings.Join(s, ", ")
}

// summary shortens a description to its first sentence or n bytes,
// whichever is shorter, cutting on a word boundary.
func summary(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i > 0 && i < n {
		return s[:i+1]
	}
	if len(s) <= n {
		return s
	}
	cut := s[:n]
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	// Never split a UTF-8 sequence.
	for len(cut) > 0 && cut[len(cut)-1]&0xC0 == 0x80 {
		cut = cut[:len(cut)-1]
	}
	if len(cut) > 0 && cut[len(cut)-1] >= 0xC0 {
		cut = cut[:len(cut)-1]
	}
	return cut + "…"
}
