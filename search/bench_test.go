package search_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/search"
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
