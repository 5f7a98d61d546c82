package search_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/search"
	"github.com/codecall-go/codecall/search/eval"
)

// Word lists for synthetic catalogs: apps that overlap in what they do, the
// resources they manage and the operations on them, so that a generated
// catalog has the shape of a real one (many apps, each a CRUD surface over
// a dozen resources, descriptions of one or two sentences).
var (
	synthApps = []string{"github", "gitlab", "jira", "linear", "asana", "trello", "slack", "teams", "discord",
		"gmail", "outlook", "calendar", "zoom", "notion", "confluence", "drive", "dropbox", "box", "stripe",
		"paypal", "shopify", "salesforce", "hubspot", "zendesk", "intercom", "pagerduty", "datadog", "grafana",
		"sentry", "aws", "gcp", "azure", "cloudflare", "vercel", "netlify", "postgres", "mysql", "redis",
		"snowflake", "bigquery", "twilio", "sendgrid", "mailchimp", "figma", "miro", "airtable", "okta", "auth0"}
	synthResources = []string{"issue", "ticket", "pull_request", "branch", "commit", "repository", "project", "task",
		"comment", "message", "channel", "thread", "user", "team", "member", "file", "folder", "document", "page",
		"database", "table", "record", "invoice", "customer", "subscription", "payment", "refund", "product",
		"order", "price", "coupon", "contact", "deal", "lead", "account", "campaign", "email", "event", "meeting",
		"alert", "incident", "dashboard", "metric", "log", "trace", "deployment", "build", "pipeline", "secret",
		"webhook", "label", "milestone", "sprint", "board", "card", "workspace", "bucket", "instance", "queue", "report"}
	synthVerbs = []string{"create", "get", "list", "update", "delete", "search", "archive", "restore", "assign",
		"close", "merge", "export", "import", "move", "copy", "share", "publish", "cancel", "approve", "sync"}
	synthQualifiers = []string{"", "", "", "", "details", "status", "history", "settings", "permissions",
		"attachments", "by_id", "bulk", "summary", "stats", "members", "tags"}
	synthPhrases = []string{
		"Use this when the user asks about %[2]s records in %[1]s.",
		"Returns the %[2]s with its identifier, owner and timestamps.",
		"Requires the %[1]s workspace to be connected; results are paginated.",
		"Supports filtering by state, owner and creation date.",
		"The caller must have write access to the %[2]s.",
		"Fails when the %[2]s does not exist or was already removed.",
		"Large results are truncated to the first hundred entries.",
	}
	synthParams = []string{"id", "name", "title", "description", "owner", "state", "limit", "cursor", "query",
		"workspace_id", "project_id", "assignee", "labels", "due_date", "priority", "body", "email", "amount",
		"currency", "path", "url", "since", "until", "format"}
	synthQueries = []string{
		"create a new invoice for the customer",
		"file a bug ticket in jira",
		"who is on the design team",
		"post a message to the engineering channel on slack",
		"refund the last payment",
		"list open pull requests waiting for review",
		"archive old documents in notion",
		"export the monthly sales report",
		"find customers in salesforce created last week",
		"cancel a subscription",
		"delete the staging database table",
		"show me the alerts firing in datadog",
		"github.create_issue",
		"schedule a meeting with the sales team tomorrow",
		"what permissions does this user have on the project",
		"order a pizza",
	}
)

// synthTools returns n deterministic synthetic tools.
func synthTools(n int) []*catalog.Tool {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	tools := make([]*catalog.Tool, 0, n)
	seen := map[string]bool{}
	for len(tools) < n {
		app := synthApps[r.IntN(len(synthApps))]
		verb := synthVerbs[r.IntN(len(synthVerbs))]
		res := synthResources[r.IntN(len(synthResources))]
		qual := synthQualifiers[r.IntN(len(synthQualifiers))]
		name := app + "." + verb + "_" + res
		if qual != "" {
			name += "_" + qual
		}
		if seen[name] {
			name = fmt.Sprintf("%s_%d", name, len(tools))
		}
		seen[name] = true
		noun := strings.ReplaceAll(res, "_", " ")
		var desc strings.Builder
		fmt.Fprintf(&desc, "%s a %s in %s.", strings.ToUpper(verb[:1])+verb[1:], noun, app)
		for i, k := 0, 1+r.IntN(3); i < k; i++ {
			desc.WriteByte(' ')
			fmt.Fprintf(&desc, synthPhrases[r.IntN(len(synthPhrases))], app, noun)
		}
		props := map[string]any{}
		for i, k := 0, 1+r.IntN(5); i < k; i++ {
			p := synthParams[r.IntN(len(synthParams))]
			props[p] = map[string]any{"type": "string", "description": fmt.Sprintf("The %s of the %s.", strings.ReplaceAll(p, "_", " "), noun)}
		}
		schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
		tools = append(tools, &catalog.Tool{
			Name: name, Title: verb + " " + noun, Description: desc.String(), AppID: app,
			Source: catalog.Sources[r.IntN(len(catalog.Sources))], Tags: []string{res}, InputSchema: schema, Enabled: true,
		})
	}
	return tools
}

func benchmarkSearch(b *testing.B, n int) {
	ix, err := search.New(synthTools(n))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	durations := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := search.Query{Text: synthQueries[i%len(synthQueries)], TopK: 8}
		start := time.Now()
		if _, err := ix.Search(ctx, q); err != nil {
			b.Fatal(err)
		}
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, durations)
}

// reportPercentiles adds the median and 95th percentile latency to the
// benchmark output: the design's targets are medians.
func reportPercentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(d[len(d)*95/100].Microseconds()), "p95-µs")
}

// BenchmarkSearch1k: target < 1 ms median.
func BenchmarkSearch1k(b *testing.B) { benchmarkSearch(b, 1000) }

// BenchmarkSearch10k: target < 3 ms median.
func BenchmarkSearch10k(b *testing.B) { benchmarkSearch(b, 10000) }

// BenchmarkBuild1k: target < 1 s.
func BenchmarkBuild1k(b *testing.B) {
	tools := synthTools(1000)
	durations := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		ix, err := search.New(tools)
		if err != nil {
			b.Fatal(err)
		}
		durations = append(durations, time.Since(start))
		b.StopTimer()
		_ = ix.Close()
		b.StartTimer()
	}
	b.StopTimer()
	reportPercentiles(b, durations)
}

// BenchmarkScale measures the scale targets on generated catalogs
// of 1k, 10k and 50k tools (50k is left out under -short), and on the
// real-tool corpus replicated to 10k when it is present:
//
//   - <catalog>/search: p50-µs and p95-µs over a fixed query list (each
//     op runs the whole list once, so -benchtime 1x still yields a
//     distribution); targets p50 < 1 ms at 1k, < 3 ms at 10k, p95 < 3× p50;
//   - <catalog>/build: ms/1k-tools (target ≤ 1000) and B/tool, the heap in
//     use after GC that the index adds, the tools themselves excluded
//     (target ≤ 10 KB).
//
// CI runs every benchmark once (-benchtime 1x) on two cores; the two
// 50k builds take under a minute there with the bleve engine.
func BenchmarkScale(b *testing.B) {
	sizes := []int{1000, 10000}
	if !testing.Short() {
		sizes = append(sizes, 50000)
	}
	for _, n := range sizes {
		name := fmt.Sprintf("synthetic-%dk", n/1000)
		b.Run(name+"/search", func(b *testing.B) { benchScaleSearch(b, synthTools(n), synthQueries) })
		b.Run(name+"/build", func(b *testing.B) { benchScaleBuild(b, func() []*catalog.Tool { return synthTools(n) }) })
	}
	b.Run("real-918/search", func(b *testing.B) {
		tools, queries := realCorpus(b, 918)
		benchScaleSearch(b, tools, queries)
	})
	b.Run("real-10k/search", func(b *testing.B) {
		tools, queries := realCorpus(b, 10000)
		benchScaleSearch(b, tools, queries)
	})
	b.Run("real-10k/build", func(b *testing.B) {
		benchScaleBuild(b, func() []*catalog.Tool { tools, _ := realCorpus(b, 10000); return tools })
	})
}

// benchScaleSearch builds one index over tools and times every query of
// the list, once per op.
func benchScaleSearch(b *testing.B, tools []*catalog.Tool, queries []string) {
	ix, err := search.New(tools)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	// One pass before timing: the first queries would otherwise pay for
	// lazily built state and cold caches, which a server pays once.
	for _, q := range queries {
		if _, err := ix.Search(ctx, search.Query{Text: q, TopK: search.DefaultTopK}); err != nil {
			b.Fatal(err)
		}
	}
	durations := make([]time.Duration, 0, b.N*len(queries))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, q := range queries {
			start := time.Now()
			if _, err := ix.Search(ctx, search.Query{Text: q, TopK: search.DefaultTopK}); err != nil {
				b.Fatal(err)
			}
			durations = append(durations, time.Since(start))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(len(queries)), "queries/op")
	reportPercentiles(b, durations)
}

// benchScaleBuild times builds of the index over the tools makeTools
// returns and measures the heap each one adds. The tools are made, and
// the heap settled, before each measurement, so that B/tool is the
// index's own cost.
func benchScaleBuild(b *testing.B, makeTools func() []*catalog.Tool) {
	tools := makeTools()
	var perTool, perToolLive float64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		before := settledHeap()
		b.StartTimer()
		ix, err := search.New(tools)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		after := settledHeap()
		perTool = float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / float64(len(tools))
		perToolLive = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(len(tools))
		runtime.KeepAlive(tools)
		_ = ix.Close()
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/(float64(len(tools))/1000), "ms/1k-tools")
	b.ReportMetric(perTool, "B/tool")
	b.ReportMetric(perToolLive, "live-B/tool")
}

// settledHeap returns the memory statistics after a full collection, so
// that only what is reachable is counted.
func settledHeap() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

// realCorpus returns the real-tool corpus replicated to n tools (each
// copy's app ids suffixed, so names stay unique and apps multiply as they
// would in a large deployment) and queries over it: the repository's own
// task-style corpus queries and the corpus's dev queries. It skips when
// the corpus is absent (it lives beside the repository, not in it).
func realCorpus(tb testing.TB, n int) ([]*catalog.Tool, []string) {
	tb.Helper()
	dir := eval.CorpusDir(filepath.Join("..", "..", "shared", "corpus"))
	if _, err := os.Stat(filepath.Join(dir, "tools.json")); err != nil {
		tb.Skipf("real-tool corpus not found at %s (set %s to its directory): %v", dir, eval.CorpusDirEnv, err)
	}
	c, err := eval.LoadCorpus(dir)
	if err != nil {
		tb.Fatal(err)
	}
	if len(c.Tools) == 0 {
		tb.Skip("the real-tool corpus is empty")
	}
	tools := make([]*catalog.Tool, 0, n)
	for copyNo := 0; len(tools) < n; copyNo++ {
		for _, t := range c.Tools {
			if len(tools) == n {
				break
			}
			r := *t
			if copyNo > 0 {
				r.AppID = fmt.Sprintf("%s-%d", t.AppID, copyNo)
				r.Name = r.AppID + strings.TrimPrefix(t.Name, t.AppID)
			}
			tools = append(tools, &r)
		}
	}
	var queries []string
	if own, err := eval.LoadQueries(filepath.Join("testdata", "corpus-queries.json")); err == nil {
		for _, q := range own {
			queries = append(queries, q.Text)
		}
	}
	for _, q := range c.Dev {
		queries = append(queries, q.Text)
	}
	if len(queries) == 0 {
		queries = synthQueries
	}
	return tools, queries
}
