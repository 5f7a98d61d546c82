package benchmarks

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/examples/demo"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
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
// the demo: the text blocks of every answer (what most hosts hand the
// model) and the whole results (text and structuredContent), in o200k
// tokens.
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
	var textTotal, wholeTotal int
	for _, step := range realisticSession {
		req := mcp.CallToolRequest{}
		req.Params.Name = step.tool
		req.Params.Arguments = step.args
		res, err := c.CallTool(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", step.tool, err)
		}
		if res.IsError {
			t.Fatalf("%s failed: %s", step.tool, textOf(res))
		}
		whole, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		text, all := tokens(textOf(res)), tokens(string(whole))
		textTotal += text
		wholeTotal += all
		t.Logf("%-18s text %5d tokens, whole result %5d tokens (%d bytes)", step.tool, text, all, len(whole))
	}
	t.Logf("session: text %d tokens, whole results %d tokens", textTotal, wholeTotal)
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
