package meta

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

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
	// RequiresApproval is true when a call would wait for a person's
	// approval in this session: the policy's decision, asked of nobody
	// (policy.Gate.WouldAsk).
	RequiresApproval bool `json:"requiresApproval"`
	// SandboxProfile is how the server behind the tool runs (an upstream:
	// default, default+network, none, remote); empty when not known.
	SandboxProfile string `json:"sandboxProfile,omitempty"`
	// DefaultTimeoutMs is the tool's own timeout of one call in
	// milliseconds (tools.<glob>.timeout, an upstream's timeout, the
	// tool's metadata); a client's deadline or a plan's remaining time
	// may end a call sooner. Left out when the tool has none.
	DefaultTimeoutMs int64 `json:"defaultTimeoutMs,omitempty"`
	// AllowsStreaming is false: a tool's result reaches the caller whole
	// (an MCP tools/call has one result; progress notifications are not
	// output).
	AllowsStreaming bool `json:"allowsStreaming"`
	// Unavailable is true when the tool's server is down (see the
	// upstream_unavailable warning): a call fails until it is back.
	Unavailable bool `json:"unavailable,omitempty"`
	// Effect is what a call does, from the tool's own annotations:
	// read-only, writes or destructive; empty when the tool does not say.
	// The four hints themselves are in describe (DescribedTool.Hints):
	// here they would cost about 20 tokens a hit.
	Effect string `json:"effect,omitempty"`
}

// Hints are a tool's side-effect hints as its author declared them in its
// MCP annotations. A hint the author did not set is left out, and none is
// shown when the four are exactly the values mcp.NewTool fills in by
// itself (catalog.Annotations.Defaulted): those say nothing about the tool.
type Hints struct {
	ReadOnly    *bool `json:"readOnly,omitempty"`
	Destructive *bool `json:"destructive,omitempty"`
	Idempotent  *bool `json:"idempotent,omitempty"`
	OpenWorld   *bool `json:"openWorld,omitempty"`
}

// hintsOf returns t's declared hints, nil when it declares none.
func hintsOf(t *catalog.Tool) *Hints {
	a := t.Annotations
	if a.Defaulted || (a.ReadOnlyHint == nil && a.DestructiveHint == nil && a.IdempotentHint == nil && a.OpenWorldHint == nil) {
		return nil
	}
	return &Hints{ReadOnly: a.ReadOnlyHint, Destructive: a.DestructiveHint, Idempotent: a.IdempotentHint, OpenWorld: a.OpenWorldHint}
}

// Effects a search hit reports.
const (
	EffectReadOnly    = "read-only"
	EffectWrites      = "writes"
	EffectDestructive = "destructive"
)

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
	if field, msg, ok := searchArgs.decode(req.Params.Arguments, &in); !ok {
		return searchArgs.invalid(field, msg), nil
	}
	st, release := h.env.Acquire(ctx)
	defer release()
	var notes atomic.Int64
	_, token := listeners(ctx, progressToken(req))
	out, field, err := st.search(ctx, in, func(ctx context.Context, name string) bool {
		_, err := st.Gate.Authorize(ctx, st.Catalog, policy.Request{Tool: name, Via: policy.ViaSearch})
		return err == nil
	}, progressNotifier(ctx, token, &notes))
	switch {
	case field != "":
		return searchArgs.invalid(field, err.Error()), nil
	case err != nil:
		return refused(err), nil
	}
	return result(out, false), nil
}

// search runs a search for codecall.search and a plan's searchTools: it
// checks the input (a refusal names the field), queries the index and keeps
// the hits offered says the caller may see. While the index of a large
// catalog is still being built it waits (see awaitIndex), reporting
// through progress when that is not nil.
func (st *State) search(ctx context.Context, in SearchInput, offered func(context.Context, string) bool, progress func(string)) (out SearchOutput, field string, err error) {
	cfg := st.Config
	ctx, span := st.tracer().Start(ctx, "codecall.search", trace.WithAttributes(attribute.Int("codecall.query_bytes", len(in.Query))))
	defer span.End()
	bad := func(field, msg string) (SearchOutput, string, error) { return SearchOutput{}, field, errors.New(msg) }

	q := strings.TrimSpace(in.Query)
	switch {
	case q == "":
		return bad("query", "query must be a non-empty string describing the task, e.g. \"refund a customer's last payment\"")
	case len(q) > maxQueryBytes:
		return bad("query", fmt.Sprintf("query is %d bytes; at most %d are allowed", len(q), maxQueryBytes))
	}
	topK := cfg.Search.TopK
	if in.TopK != nil {
		if *in.TopK < 1 || *in.TopK > cfg.Search.MaxTopK {
			return bad("topK", fmt.Sprintf("topK must be between 1 and %d, got %d", cfg.Search.MaxTopK, *in.TopK))
		}
		topK = *in.TopK
	}
	query := search.Query{Text: q, TopK: topK}
	if f := in.Filter; f != nil {
		if len(f.AppIDs) > maxFilterValues || len(f.Tags) > maxFilterValues || len(f.Sources) > maxFilterValues {
			return bad("filter", fmt.Sprintf("a filter list may hold at most %d values", maxFilterValues))
		}
		sources, field, msg := sourceFilter(f)
		if msg != "" {
			return bad(field, msg)
		}
		query.AppIDs, query.Tags, query.Sources = f.AppIDs, f.Tags, sources
		if sources != nil && len(sources) == 0 {
			return SearchOutput{Tools: []SearchHit{}, TotalAvailableTools: len(st.Catalog.Enabled()),
				Warnings: []Warning{{Type: "no_results", Message: "the source filter excludes every source"}}}, "", nil
		}
	}

	if err := st.awaitIndex(ctx, progress); err != nil {
		return SearchOutput{}, "", err
	}
	res, err := st.Index.Search(ctx, query)
	var building *search.BuildingError
	switch {
	case errors.As(err, &building):
		return SearchOutput{}, "", indexError(ctx, building)
	case err != nil:
		return SearchOutput{}, "", &toolerr.Error{Code: toolerr.Execution, Message: "search failed: " + err.Error()}
	}
	out = SearchOutput{Tools: make([]SearchHit, 0, len(res.Hits)), TotalAvailableTools: res.TotalAvailable}
	down := st.unavailable()
	for _, hit := range res.Hits {
		// The index holds only enabled tools, but the gate has the last word
		// on every path.
		if !offered(ctx, hit.Tool.Name) {
			continue
		}
		h := searchHit(hit.Tool, hit.Score)
		_, h.Unavailable = down[h.AppID]
		h.RequiresApproval = st.Gate.WouldAsk(ctx, hit.Tool, SessionID(ctx))
		out.Tools = append(out.Tools, h)
	}
	now := time.Now()
	for _, id := range slices.Sorted(maps.Keys(down)) {
		out.Warnings = append(out.Warnings, unavailableWarning(down[id], now))
	}
	for _, w := range res.Warnings {
		out.Warnings = append(out.Warnings, Warning{Type: w.Type, Message: w.Message})
	}
	span.SetAttributes(attribute.Int("codecall.results", len(out.Tools)), attribute.Int("codecall.warnings", len(out.Warnings)))
	return out, "", nil
}

// searchHit is a tool as a search lists it: enough to choose by, and what
// calling it involves (a person's approval, side effects).
func searchHit(t *catalog.Tool, score float64) SearchHit {
	h := SearchHit{
		Name: t.Name, Description: summary(t.Description, maxHitDescription),
		AppID: t.AppID, Source: string(t.Source), Score: math.Round(score*1000) / 1000,
		RequiresApproval: t.RequiresApproval, SandboxProfile: t.SandboxProfile,
		DefaultTimeoutMs: t.Timeout.Milliseconds(),
	}
	if a := t.Annotations; !a.Defaulted {
		switch {
		case a.ReadOnlyHint != nil && *a.ReadOnlyHint:
			h.Effect = EffectReadOnly
		case a.DestructiveHint != nil && !*a.DestructiveHint:
			h.Effect = EffectWrites
		case a.ReadOnlyHint != nil || a.DestructiveHint != nil:
			// MCP's default for a tool that is not read-only is destructive.
			h.Effect = EffectDestructive
		}
	}
	return h
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
