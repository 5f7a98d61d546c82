package middleware_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/internal/mcptest"
)

// TestExecuteEnvelope checks the envelope of every execute result: digests
// of the script and of the result as sent, and the run's approval state.
func TestExecuteEnvelope(t *testing.T) {
	const approvalPlan = `try { await callTool('shop.delete_order', {id: 'o1'}); return 'deleted'; } catch (e) { return e.code; }`
	cases := []struct {
		name, script, answer string
		delay                time.Duration
		elicit               bool
		wantState, wantOut   string
	}{
		{"no approval needed", `return {a: 1}`, "", 0, true, "NOT_REQUIRED", `{"a":1}`},
		{"approved", approvalPlan, "approve", 0, true, "APPROVED", `"deleted"`},
		{"denied", approvalPlan, "deny", 0, true, "DENIED", `"APPROVAL_DENIED"`},
		{"expired", approvalPlan, "approve", time.Second, true, "EXPIRED", `"APPROVAL_EXPIRED"`},
		{"nobody to ask", approvalPlan, "", 0, false, "DENIED", `"APPROVAL_REQUIRED"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newApprovalShop(t, nil)
			opts := []mcptest.Option{era(false)}
			if tc.elicit {
				opts = append(opts, mcptest.WithElicitation(&elicitor{answer: tc.answer, delay: tc.delay}))
			}
			c := mcptest.Connect(t, s.srv, opts...)
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = "codecall.execute", map[string]any{"script": tc.script}
			res, err := c.CallTool(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var out struct {
				Status, InputDigest, OutputDigest, ApprovalState string
				Result                                           json.RawMessage
			}
			text := mcp.GetTextFromContent(res.Content[0])
			if err := json.Unmarshal([]byte(text), &out); err != nil {
				t.Fatal(err)
			}
			digest := func(s string) string { sum := sha256.Sum256([]byte(s)); return "sha256:" + hex.EncodeToString(sum[:]) }
			switch {
			case out.Status != "ok" || string(out.Result) != tc.wantOut:
				t.Errorf("result %s", text)
			case out.InputDigest != digest(tc.script):
				t.Errorf("inputDigest %s, want the script's", out.InputDigest)
			case out.OutputDigest != digest(string(out.Result)):
				t.Errorf("outputDigest %s, want the digest of %s", out.OutputDigest, out.Result)
			case out.ApprovalState != tc.wantState:
				t.Errorf("approvalState %s, want %s", out.ApprovalState, tc.wantState)
			}
		})
	}
}

// TestExecuteOutputFormats checks that output.format shapes only the text
// block: structuredContent is the same JSON whatever the format.
func TestExecuteOutputFormats(t *testing.T) {
	s := newApprovalShop(t, nil)
	c := mcptest.Connect(t, s.srv)
	const script = `return {orders: [{id: 'o1', total: 5}, {id: 'o2', total: 7}], note: 'two orders'}`
	var structured []string
	for format, want := range map[string]string{
		"":        `"result":{"orders":[{"id":"o1","total":5},{"id":"o2","total":7}],"note":"two orders"}`,
		"json":    `"result":{"orders":[{"id":"o1","total":5},{"id":"o2","total":7}],"note":"two orders"}`,
		"compact": "result:\n  orders:\n    - id: o1\n      total: 5\n",
		"toon":    "result:\n  orders[2]{id,total}:\n    o1,5\n    o2,7\n  note: two orders",
	} {
		args := map[string]any{"script": script}
		if format != "" {
			args["output"] = map[string]any{"format": format}
		}
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "codecall.execute", args
		res, err := c.CallTool(context.Background(), req)
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", format, err, res)
		}
		if text := mcp.GetTextFromContent(res.Content[0]); !strings.Contains(text, want) {
			t.Errorf("format %q: text block\n%s\nwant it to contain\n%s", format, text, want)
		}
		var sc struct{ Result json.RawMessage }
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &sc)
		structured = append(structured, string(sc.Result))
	}
	for _, s := range structured[1:] {
		if s != structured[0] {
			t.Errorf("structuredContent differs between formats: %s vs %s", s, structured[0])
		}
	}
}
