package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/meta"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/search"
)

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func searchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("search", stderr)
	var src source
	var apps stringList
	fs.StringVar(&src.configFile, "config", "", "CodeCall YAML config `file`")
	fs.StringVar(&src.catalogFile, "catalog", "", "search a static catalog `file` instead of the demo")
	fs.StringVar(&src.upstreamsFile, "upstreams", "", "search the tools of the MCP servers in `file` ({\"mcpServers\": ...})")
	openapiFlag(fs, &src)
	fs.Var(&apps, "app", "only tools of this `app` (repeatable)")
	top := fs.Int("top", 0, "number of results (default: the config's search.topK)")
	asJSON := fs.Bool("json", false, "print codecall.search's JSON result")
	explain := fs.Bool("explain", false, "show how each hit's score was made: coverage, BM25F, name and app factors, dense similarity, and where each word of the query matched")
	var lf logFlags
	lf.register(fs, "warn")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	query := strings.Join(fs.Args(), " ")
	if strings.TrimSpace(query) == "" {
		return fmt.Errorf("search needs a query, e.g. codecall search \"refund a payment\"")
	}
	b, err := buildOnce(ctx, src, lf, stderr)
	if err != nil {
		return err
	}
	defer b.Close()
	srv, cc := b.srv, b.cc
	st, release := cc.Acquire(ctx)
	searchTool := meta.NamesFor(st.Config).Search
	// A large catalog's index is built in the background, and
	// codecall.search waits for it only so long; a one-shot search from
	// the command line has nothing better to do than wait it out.
	if b, ok := st.Index.(interface{ Wait(context.Context) error }); ok {
		if err := b.Wait(ctx); err != nil {
			release()
			return fmt.Errorf("building the search index: %w", err)
		}
	}
	release()

	c, err := client.NewInProcessClient(srv)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return err
	}
	initReq := mcp.InitializeRequest{}
	initReq.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	initReq.Params.ClientInfo = mcp.Implementation{Name: "codecall-search", Version: version}
	if _, err := c.Initialize(ctx, initReq); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	input := map[string]any{"query": query}
	if *top != 0 {
		input["topK"] = *top
	}
	if len(apps) > 0 {
		input["filter"] = map[string]any{"appIds": []string(apps)}
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = searchTool
	req.Params.Arguments = input
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return err
	}
	text := meta.ResultText(res)
	if res.IsError {
		return fmt.Errorf("search refused: %s", text)
	}
	if *asJSON {
		fmt.Fprintln(stdout, text)
		return nil
	}
	var out meta.SearchOutput
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return fmt.Errorf("reading the search result: %w", err)
	}
	var why map[string]string
	if *explain {
		if why, err = explainHits(ctx, cc, query, len(out.Tools), apps); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tSCORE\tTOOL\tAPP\tDESCRIPTION")
	for i, h := range out.Tools {
		fmt.Fprintf(tw, "%d\t%.3f\t%s\t%s\t%s\n", i+1, h.Score, h.Name, h.AppID, truncate(h.Description, 80))
		if e, ok := why[h.Name]; ok {
			fmt.Fprintf(tw, "\t\t\t\t↳ %s\n", e)
		}
	}
	tw.Flush()
	for _, w := range out.Warnings {
		fmt.Fprintf(stdout, "warning (%s): %s\n", w.Type, w.Message)
	}
	fmt.Fprintf(stdout, "%d of %d tools shown\n", len(out.Tools), out.TotalAvailableTools)
	return nil
}

// explainHits runs the query again on the index codecall.search used,
// asking for explanations, and returns them by tool name.
func explainHits(ctx context.Context, cc *middleware.CodeCall, query string, topK int, apps []string) (map[string]string, error) {
	st, release := cc.Acquire(ctx)
	defer release()
	// codecall.search left out the hits the gate hides and shows the ones
	// after them instead: ask for as many as a search may return, so that
	// every hit shown has its explanation.
	res, err := st.Index.Search(ctx, search.Query{Text: query, TopK: max(topK, st.Config.Search.MaxTopK), AppIDs: apps, Explain: true})
	if err != nil {
		return nil, fmt.Errorf("explaining the search: %w", err)
	}
	why := make(map[string]string, len(res.Hits))
	for _, h := range res.Hits {
		why[h.Tool.Name] = h.Explain.String()
	}
	return why, nil
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
