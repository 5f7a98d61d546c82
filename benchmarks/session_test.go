package benchmarks

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/examples/demo"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// sessionStep is one request of the realistic session TestSessionTokens
// replays, with the arguments a model would send.
type sessionStep struct {
	tool string
	args map[string]any
}

// realisticSession is what a model does for one task on the demo: search,
// read three definitions, run one plan of three calls.
var realisticSession = []sessionStep{
	{"codecall.search", map[string]any{"query": "find a customer's unpaid invoices"}},
	{"codecall.describe", map[string]any{"tools": []string{"crm.find_contacts", "crm.get_contact", "billing.list_invoices"}}},
	{"codecall.execute", map[string]any{"script": `const found = await callTool('crm.find_contacts', {query: 'ava'});
const id = found.contacts[0].id;
const [contact, invoices] = await Promise.all([
  callTool('crm.get_contact', {contact_id: id}),
  callTool('billing.list_invoices', {customer_id: id}),
]);
return {name: contact.name, invoices: invoices.invoices.map(i => ({id: i.id, status: i.status}))};`}},
}

// TestSessionTokens counts what a model reads in a realistic session on
// the demo (search, describe three tools, one plan of three calls): the
// text blocks of every answer, which is what most hosts hand the model,
// and the whole results (text and structuredContent), in o200k tokens, for
// each describe format and output format. The default pair (ts, json) is
// the first line.
func TestSessionTokens(t *testing.T) {
	srv := demo.New()
	cc, err := middleware.Wrap(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := mcptest.Connect(t, srv, mcptest.Modern())
	encs, err := encodings()
	if err != nil {
		t.Fatal(err)
	}
	tokens := func(s string) int { return len(encs["o200k_base"].Encode(s, nil, nil)) }
	for _, f := range []struct{ describe, output string }{
		{"ts", "json"}, {"ts", "compact"}, {"ts", "toon"}, {"json", "json"}, {"both", "json"},
	} {
		var text, whole [3]int
		for i, step := range realisticSession {
			args := maps.Clone(step.args)
			switch step.tool {
			case "codecall.describe":
				args["format"] = f.describe
			case "codecall.execute":
				args["output"] = map[string]any{"format": f.output}
			}
			req := mcp.CallToolRequest{}
			req.Params.Name = step.tool
			req.Params.Arguments = args
			res, err := c.CallTool(context.Background(), req)
			if err != nil {
				t.Fatalf("%s: %v", step.tool, err)
			}
			if res.IsError {
				t.Fatalf("%s failed: %s", step.tool, textOf(res))
			}
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			text[i], whole[i] = tokens(textOf(res)), tokens(string(b))
		}
		t.Logf("describe %-4s output %-7s text: search %4d, describe %5d, execute %4d = %5d tokens; whole results %5d tokens",
			f.describe, f.output, text[0], text[1], text[2], text[0]+text[1]+text[2], whole[0]+whole[1]+whole[2])
	}
}

func textOf(res *mcp.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			s += tc.Text
		}
	}
	return s
}

// TestDescribeFormatTokens describes every tool of the demo and of the
// corpus in each describe format and counts the text blocks' o200k
// tokens: the measurement behind the default format.
func TestDescribeFormatTokens(t *testing.T) {
	skipTokenCountsUnderRace(t)
	for _, set := range []struct {
		name string
		srv  func(testing.TB) *server.MCPServer
	}{{"demo", func(testing.TB) *server.MCPServer { return demo.New() }}, {"corpus", corpusServer}} {
		t.Run(set.name, func(t *testing.T) {
			srv := set.srv(t)
			cfg := presets.Default()
			cfg.Describe.MaxDefinitions = 256
			cc, err := middleware.Wrap(srv, middleware.WithConfig(cfg))
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			c := mcptest.Connect(t, srv, mcptest.Modern())
			encs, err := encodings()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for n := range srv.ListTools() {
				if !strings.HasPrefix(n, "codecall.") {
					names = append(names, n)
				}
			}
			slices.Sort(names)
			for _, format := range []string{"ts", "json", "both"} {
				total := 0
				for batch := range slices.Chunk(names, 256) {
					req := mcp.CallToolRequest{}
					req.Params.Name = "codecall.describe"
					req.Params.Arguments = map[string]any{"tools": batch, "format": format}
					res, err := c.CallTool(context.Background(), req)
					if err != nil || res.IsError {
						t.Fatalf("describe: %v %v", err, res)
					}
					total += len(encs["o200k_base"].Encode(textOf(res), nil, nil))
				}
				t.Logf("%s: %d tools, format %-4s %7d o200k tokens (%d per tool)", set.name, len(names), format, total, total/len(names))
			}
		})
	}
}

// skipTokenCountsUnderRace skips a test that counts the tokens of the
// whole corpus under the race detector: the count is single-threaded
// string work where the detector finds nothing and which it slows to
// minutes. .ci/run runs these tests without it (go test ./benchmarks).
func skipTokenCountsUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("counts the corpus's tokens, minutes under the race detector; run go test ./benchmarks without -race (.ci/run does)")
	}
}
