package search_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/search"
	"github.com/codecall-go/codecall/search/eval"
)

type fixtureTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	AppID       string          `json:"appId"`
	Source      catalog.Source  `json:"source"`
	Tags        []string        `json:"tags"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// fixtureTools loads testdata/tools.json: a small multi-app catalog with
// overlapping actions (three issue trackers, two chat apps, email and a
// calendar that both schedule meetings).
func fixtureTools(tb testing.TB) []*catalog.Tool {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "tools.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var raw []fixtureTool
	if err := json.Unmarshal(b, &raw); err != nil {
		tb.Fatal(err)
	}
	tools := make([]*catalog.Tool, len(raw))
	for i, r := range raw {
		tools[i] = &catalog.Tool{Name: r.Name, Title: r.Title, Description: r.Description, AppID: r.AppID,
			Source: r.Source, Tags: r.Tags, InputSchema: r.InputSchema, Enabled: true}
	}
	return tools
}

func fixtureIndex(tb testing.TB, opts ...search.Option) *search.Index {
	tb.Helper()
	ix, err := search.New(fixtureTools(tb), opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = ix.Close() })
	return ix
}

func mustSearch(tb testing.TB, ix *search.Index, q search.Query) search.Result {
	tb.Helper()
	res, err := ix.Search(context.Background(), q)
	if err != nil {
		tb.Fatalf("Search(%+v): %v", q, err)
	}
	return res
}

func names(res search.Result) []string {
	out := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = h.Tool.Name
	}
	return out
}

func hasWarning(res search.Result, typ string) bool {
	return slices.ContainsFunc(res.Warnings, func(w search.Warning) bool { return w.Type == typ })
}

// TestFixtureQuality checks ranking on agent-style requests over the
// fixture and compares it with plain BM25 over names and descriptions.
func TestFixtureQuality(t *testing.T) {
	tools := fixtureTools(t)
	queries, err := eval.LoadQueries(filepath.Join("testdata", "queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := search.New(tools)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	base, err := eval.NewBaseline(tools)
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()

	ctx := context.Background()
	er, err := eval.Evaluate(ctx, ix, queries)
	if err != nil {
		t.Fatal(err)
	}
	br, err := eval.Evaluate(ctx, base, queries)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fixture engine   %v", er.Metrics)
	t.Logf("fixture baseline %v", br.Metrics)
	logFailures(t, "fixture", er)
	if er.Metrics.RecallAt5 < 0.9 {
		t.Errorf("Recall@5 = %.3f, want >= 0.9", er.Metrics.RecallAt5)
	}
	if er.Metrics.RecallAt5 <= br.Metrics.RecallAt5 || er.Metrics.NDCG10 <= br.Metrics.NDCG10 || er.Metrics.MRR <= br.Metrics.MRR {
		t.Errorf("engine %v does not beat plain BM25 %v", er.Metrics, br.Metrics)
	}
}

func TestFilters(t *testing.T) {
	ix := fixtureIndex(t)
	tests := []struct {
		name  string
		q     search.Query
		check func(*catalog.Tool) bool
	}{
		{"one app", search.Query{Text: "create an issue", AppIDs: []string{"linear"}},
			func(t *catalog.Tool) bool { return t.AppID == "linear" }},
		{"app case-insensitive", search.Query{Text: "send a message", AppIDs: []string{"SLACK"}},
			func(t *catalog.Tool) bool { return t.AppID == "slack" }},
		{"two apps", search.Query{Text: "post a message to the team", AppIDs: []string{"slack", "teams"}},
			func(t *catalog.Tool) bool { return t.AppID == "slack" || t.AppID == "teams" }},
		{"tag", search.Query{Text: "list everything", Tags: []string{"payments"}},
			func(t *catalog.Tool) bool { return slices.Contains(t.Tags, "payments") }},
		{"source", search.Query{Text: "search", Sources: []catalog.Source{catalog.SourceOpenAPI}},
			func(t *catalog.Tool) bool { return t.Source == catalog.SourceOpenAPI }},
		{"source and tag", search.Query{Text: "send", Sources: []catalog.Source{catalog.SourceOpenAPI}, Tags: []string{"email"}},
			func(t *catalog.Tool) bool {
				return t.Source == catalog.SourceOpenAPI && slices.Contains(t.Tags, "email")
			}},
		{"app and tag", search.Query{Text: "create", AppIDs: []string{"github", "linear"}, Tags: []string{"planning"}},
			func(t *catalog.Tool) bool { return t.AppID == "linear" }},
		{"exact name outside filter", search.Query{Text: "slack.post_message", AppIDs: []string{"teams"}},
			func(t *catalog.Tool) bool { return t.AppID == "teams" }},
		{"empty query", search.Query{Text: "", AppIDs: []string{"db"}},
			func(t *catalog.Tool) bool { return t.AppID == "db" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustSearch(t, ix, tt.q)
			if len(res.Hits) == 0 {
				t.Fatalf("no hits; warnings %v", res.Warnings)
			}
			for _, h := range res.Hits {
				if !tt.check(h.Tool) {
					t.Errorf("hit %s (app %s, tags %v, source %s) is outside the filter", h.Tool.Name, h.Tool.AppID, h.Tool.Tags, h.Tool.Source)
				}
			}
			if res.TotalAvailable >= ix.Len() {
				t.Errorf("TotalAvailable = %d, want the filtered count (< %d)", res.TotalAvailable, ix.Len())
			}
		})
	}
}

func TestExactName(t *testing.T) {
	ix := fixtureIndex(t)
	tests := []struct{ query, want string }{
		{"github.create_issue", "github.create_issue"},
		{"create_issue", "github.create_issue"},
		{"linear.createIssue", "linear.createIssue"},
		{"createissue", "linear.createIssue"},
		{"  Slack.Post_Message ", "slack.post_message"},
		{"`fs.read_file`", "fs.read_file"},
		{"navigate", "browser.navigate"},
		{"db.list_tables", "db.list_tables"},
		{"list_tables", "db.list_tables"},
		{"github/create_issue", "github.create_issue"},
		{"create-issue", "github.create_issue"},
		{"Linear:CreateIssue", "linear.createIssue"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			res := mustSearch(t, ix, search.Query{Text: tt.query})
			if len(res.Hits) == 0 || res.Hits[0].Tool.Name != tt.want {
				t.Fatalf("first hit = %v, want %s", names(res), tt.want)
			}
			if res.Hits[0].Score != 1 {
				t.Errorf("exact match score = %v, want 1", res.Hits[0].Score)
			}
		})
	}
}

func TestLowRelevance(t *testing.T) {
	ix := fixtureIndex(t)
	unrelated := []string{
		"order a large pepperoni pizza",
		"book a flight to Lisbon",
		"what is the weather in Paris tomorrow",
		"translate this paragraph into German",
		"play some relaxing jazz music",
		"quantum chromodynamics lattice simulation",
		"adopt a puppy from the shelter",
	}
	for _, q := range append(unrelated, unrelatedQueries...) {
		t.Run(q, func(t *testing.T) {
			res := mustSearch(t, ix, search.Query{Text: q})
			if len(res.Hits) > 0 && !hasWarning(res, search.WarnLowRelevance) {
				t.Errorf("no low_relevance warning; best %s at %.3f", res.Hits[0].Tool.Name, res.Hits[0].Score)
			}
			if len(res.Hits) == 0 && !hasWarning(res, search.WarnNoResults) {
				t.Errorf("no hits and no no_results warning: %v", res.Warnings)
			}
		})
	}
	// Requests the catalog serves, and that the engine answers right,
	// should rarely be flagged. (Flagging a wrong answer is fine.)
	queries, err := eval.LoadQueries(filepath.Join("testdata", "queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	flagged, right := 0, 0
	for _, q := range queries {
		res := mustSearch(t, ix, search.Query{Text: q.Text, AppIDs: q.AppIDs})
		if len(res.Hits) == 0 || !slices.Contains(q.Expected, res.Hits[0].Tool.Name) {
			continue
		}
		right++
		if hasWarning(res, search.WarnLowRelevance) {
			flagged++
			t.Logf("right answer flagged low relevance: %q (%.3f %s)", q.Text, res.Hits[0].Score, res.Hits[0].Tool.Name)
		}
	}
	if max := right / 5; flagged > max {
		t.Errorf("%d of %d right answers flagged low relevance, want at most %d", flagged, right, max)
	}
}

func TestFuzzyFallback(t *testing.T) {
	ix := fixtureIndex(t)
	tests := []struct{ query, want string }{
		{"transiton tikcet", "jira.transition_ticket"},
		{"silnce alrets", "monitoring.silence_alert"},
		{"screenshoot", "browser.screenshot"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			res := mustSearch(t, ix, search.Query{Text: tt.query})
			if !hasWarning(res, search.WarnFuzzyMatch) {
				t.Errorf("no fuzzy_match warning: %v", res.Warnings)
			}
			if len(res.Hits) == 0 || res.Hits[0].Tool.Name != tt.want {
				t.Errorf("hits = %v, want %s first", names(res), tt.want)
			}
		})
	}
}

func TestEmptyIndex(t *testing.T) {
	ix, err := search.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.Len() != 0 {
		t.Errorf("Len = %d", ix.Len())
	}
	for _, q := range []search.Query{{Text: "create an issue"}, {Text: ""}, {Text: "x", AppIDs: []string{"github"}}} {
		res := mustSearch(t, ix, q)
		if len(res.Hits) != 0 || res.TotalAvailable != 0 {
			t.Errorf("%+v: got %v, total %d", q, names(res), res.TotalAvailable)
		}
	}
}

func TestUnknownApp(t *testing.T) {
	ix := fixtureIndex(t)
	res := mustSearch(t, ix, search.Query{Text: "create a ticket", AppIDs: []string{"jirra"}})
	if len(res.Hits) != 0 {
		t.Errorf("hits %v for an unknown app", names(res))
	}
	if !hasWarning(res, search.WarnUnknownApp) {
		t.Fatalf("no unknown_app warning: %v", res.Warnings)
	}
	msg := res.Warnings[slices.IndexFunc(res.Warnings, func(w search.Warning) bool { return w.Type == search.WarnUnknownApp })].Message
	if !strings.Contains(msg, `"jira"`) || !strings.Contains(msg, "github") {
		t.Errorf("warning should suggest jira and list known apps: %s", msg)
	}

	// A known app next to an unknown one still filters by the known one.
	res = mustSearch(t, ix, search.Query{Text: "create a ticket", AppIDs: []string{"jira", "nope"}})
	if len(res.Hits) == 0 || res.Hits[0].Tool.AppID != "jira" || !hasWarning(res, search.WarnUnknownApp) {
		t.Errorf("got %v %v", names(res), res.Warnings)
	}
}

func TestTopK(t *testing.T) {
	ix := fixtureIndex(t)
	for _, k := range []int{-3, 0, 1, 3, 100} {
		res := mustSearch(t, ix, search.Query{Text: "list", TopK: k})
		want := k
		if k <= 0 {
			want = search.DefaultTopK
		}
		if len(res.Hits) > want || len(res.Hits) == 0 {
			t.Errorf("TopK %d: %d hits", k, len(res.Hits))
		}
		for i := 1; i < len(res.Hits); i++ {
			if res.Hits[i].Score > res.Hits[i-1].Score {
				t.Errorf("TopK %d: hits not sorted by score at %d", k, i)
			}
		}
		for _, h := range res.Hits {
			if h.Score < 0 || h.Score > 1 {
				t.Errorf("score %v out of [0,1]", h.Score)
			}
		}
	}
}

func TestEmptyQuery(t *testing.T) {
	ix := fixtureIndex(t)
	for _, q := range []string{"", "   ", "the of and", "please"} {
		res := mustSearch(t, ix, search.Query{Text: q, TopK: 3})
		if len(res.Hits) != 3 || !hasWarning(res, search.WarnEmptyQuery) {
			t.Errorf("%q: %v %v", q, names(res), res.Warnings)
		}
	}
}

func TestRelatedTermsOption(t *testing.T) {
	ix := fixtureIndex(t, search.WithRelatedTerms(map[string][]string{"standup": {"event", "meeting"}}))
	res := mustSearch(t, ix, search.Query{Text: "standup", AppIDs: []string{"calendar"}})
	if len(res.Hits) == 0 {
		t.Fatalf("custom related term found nothing: %v", res.Warnings)
	}
}

func TestClosed(t *testing.T) {
	ix, err := search.New(fixtureTools(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"create issue", "github.create_issue", ""} {
		if _, err := ix.Search(context.Background(), search.Query{Text: q}); !errors.Is(err, search.ErrClosed) {
			t.Errorf("search %q after Close: %v, want ErrClosed", q, err)
		}
	}
	if err := ix.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestConcurrentSearch(t *testing.T) {
	ix := fixtureIndex(t)
	queries := []string{"file a bug", "post to slack", "github.create_issue", "screenshoot", "order pizza", "", "which pull requests are open", "list all channels", "data sources"}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				q := search.Query{Text: queries[(g+i)%len(queries)]}
				if i%3 == 0 {
					q.AppIDs = []string{"github", "slack"}
				}
				if _, err := ix.Search(context.Background(), q); err != nil {
					errs <- fmt.Errorf("goroutine %d: %w", g, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestQueryReading checks the ways a request's words are read that plain
// matching gets wrong: a compound written as two words, a state word that
// is not the verb, an app named in the request, a file name standing for
// a file.
func TestQueryReading(t *testing.T) {
	tools := []*catalog.Tool{
		{Name: "grafana.list_datasources", AppID: "grafana", Description: "List all datasources."},
		{Name: "grafana.list_sources_of_alerts", AppID: "grafana", Description: "List where alerts come from."},
		{Name: "support.list_tickets", AppID: "support", Description: "List tickets, filtered by status and customer."},
		{Name: "support.open_ticket", AppID: "support", Description: "Open a support ticket for a customer."},
		{Name: "github.create_issue", AppID: "github", Description: "Create an issue in a repository."},
		{Name: "gitlab.create_issue", AppID: "gitlab", Description: "Create an issue in a project."},
		{Name: "files.read_file", AppID: "files", Description: "Read a file from disk."},
		{Name: "graph.open_nodes", AppID: "graph", Description: "Open nodes of the knowledge graph by name."},
	}
	ix, err := search.New(tools)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	tests := []struct{ query, first string }{
		{"show me all data sources", "grafana.list_datasources"},
		{"list a customer's open support tickets", "support.list_tickets"},
		{"which tickets are open", "support.list_tickets"},
		{"open a ticket for a customer", "support.open_ticket"},
		{"open an issue on GitLab", "gitlab.create_issue"},
		{"open notes.txt", "files.read_file"},
	}
	for _, tt := range tests {
		res, err := ix.Search(context.Background(), search.Query{Text: tt.query, TopK: 3, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 || res.Hits[0].Tool.Name != tt.first {
			var got []string
			for _, h := range res.Hits {
				got = append(got, fmt.Sprintf("%s %.2f (%s)", h.Tool.Name, h.Score, h.Explain))
			}
			t.Errorf("%q: want %s first, got %v", tt.query, tt.first, got)
		}
	}
}

// TestLowRelevanceDecision checks the two signals of the low_relevance
// warning and what its message says: a best hit under the score
// threshold, and a best hit that matches the request only outside its
// name, app, title, tags and summary, whatever its score.
func TestLowRelevanceDecision(t *testing.T) {
	tools := []*catalog.Tool{
		{Name: "auth.reset_password", AppID: "auth", Title: "Reset password", Description: "Reset a user's password and send them a login link."},
		{Name: "ops.list_services", AppID: "ops", Description: "List the services of an account. Services can run on Kubernetes clusters or virtual machines."},
		{Name: "files.read_file", AppID: "files", Description: "Read a file from disk."},
	}
	tests := []struct {
		name, query string
		threshold   float64 // 0: DefaultLowRelevance; -1: off
		first       string
		warn        bool
		says        []string // substrings of the message
	}{
		{name: "headline match", query: "reset a user's password", first: "auth.reset_password"},
		{name: "exact name", query: "auth.reset_password", first: "auth.reset_password"},
		{name: "description only", query: "kubernetes clusters", first: "ops.list_services", warn: true,
			says: []string{"ops.list_services", "only in its description or parameters", "not in its name, title or summary"}},
		{name: "description only, words named", query: "kubernetes clusters with gpu", first: "ops.list_services", warn: true,
			says: []string{"only in its description or parameters", `nothing in it matches "gpu"`}},
		{name: "score under threshold", query: "reset a user's password", threshold: 0.99, first: "auth.reset_password", warn: true,
			says: []string{"auth.reset_password, scores", "(below 0.99)"}},
		{name: "low score, words named", query: "reset the thermostat heating schedule", first: "auth.reset_password", warn: true,
			says: []string{"below 0.32", `"thermostat"`, `"schedule"`}},
		{name: "off", query: "kubernetes clusters", threshold: -1, first: "ops.list_services"},
		{name: "off, low score", query: "reset the thermostat heating schedule", threshold: -1, first: "auth.reset_password"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []search.Option
			switch {
			case tt.threshold < 0:
				opts = append(opts, search.WithLowRelevance(0))
			case tt.threshold > 0:
				opts = append(opts, search.WithLowRelevance(tt.threshold))
			}
			ix, err := search.New(tools, opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			res := mustSearch(t, ix, search.Query{Text: tt.query, Explain: true})
			if len(res.Hits) == 0 || res.Hits[0].Tool.Name != tt.first {
				t.Fatalf("want %s first, got %v", tt.first, res.Hits)
			}
			var msg string
			for _, w := range res.Warnings {
				if w.Type == search.WarnLowRelevance {
					msg = w.Message
				}
			}
			if (msg != "") != tt.warn {
				t.Fatalf("low_relevance = %q, want it %v (best %.2f, %s)", msg, tt.warn, res.Hits[0].Score, res.Hits[0].Explain)
			}
			for _, s := range tt.says {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q does not say %q", msg, s)
				}
			}
			if e := res.Hits[0].Explain; e != nil && !e.ExactName && !strings.Contains(e.String(), "headline ") {
				t.Errorf("explanation %q does not show the headline share", e)
			}
		})
	}
}
