package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// TestBothHostsAgree runs one table of plans against the two vm.Host
// implementations, the in-process plan host and the worker bridge of
// process isolation, and requires the same answers from both: codes,
// messages, reasons, hints, getTool's view, and the tool trace.
func TestBothHostsAgree(t *testing.T) {
	const catchAll = `catch (e) { return {name: e.name, code: e.code, toolName: e.toolName, message: e.message,
		reason: e.reason === undefined ? null : e.reason, hint: e.hint === undefined ? null : e.hint, retryable: e.retryable === true}; }`
	cases := []struct {
		name, script string
		allowed      []string
		wantCode     string // the code the plan sees, "" for a call that ran
	}{
		{"ok", `return await callTool('data.structured', {id: 'a'});`, nil, ""},
		{"unknown tool", `try { return await callTool('data.nope', {}); } ` + catchAll, nil, "NOT_FOUND"},
		{"disabled tool", `try { return await callTool('data.hidden', {}); } ` + catchAll, nil, "NOT_FOUND"},
		{"meta-tool", `try { return await callTool('codecall.search', {query: 'x'}); } ` + catchAll, nil, "SELF_REFERENCE"},
		{"outside allowedTools", `try { return await callTool('data.fail', {}); } ` + catchAll, []string{"data.structured"}, "ACCESS_DENIED"},
		{"invalid input", `try { return await callTool('data.structured', {id: 7}); } ` + catchAll, nil, "VALIDATION"},
		{"tool fails", `try { return await callTool('data.fail', {}); } ` + catchAll, nil, "EXECUTION"},
		{"nobody to approve", `try { return await callTool('data.write', {}); } ` + catchAll, nil, "APPROVAL_REQUIRED"},
		{"no throw", `return await callTool('data.structured', {}, {throwOnError: false});`, nil, "VALIDATION"},
		{"getTool", `return [getTool('data.structured') !== null, getTool('data.fail') === null, getTool('codecall.search') === null,
			getTool('data.hidden') === null, getTool('data.structured').requiresApproval === undefined];`, []string{"data.structured"}, ""},
		{"searchTools", `const hits = await searchTools('data', {topK: 20}); return hits.map(h => h.name).sort();`, nil, ""},
		{"searchTools within allowedTools", `return (await searchTools('data')).map(h => h.name);`, []string{"data.structured"}, ""},
		{"searchTools bad topK", `try { return await searchTools('data', {topK: 0}); } ` + catchAll, nil, "VALIDATION"},
		{"describeTools", `const d = await describeTools(['data.structured', 'data.hidden', 'codecall.search', 'data.fail']);
			return {tools: d.tools.map(t => [t.name, typeof t.typescript, typeof t.inputSchema]), notFound: d.notFound};`, []string{"data.*"}, ""},
		{"parallel calls", `return (await Promise.all([callTool('data.structured', {id: 'a'}), callTool('data.fail', {}, {throwOnError: false}),
			callTool('data.json_text', {}), callTool('data.nope', {}, {throwOnError: false})])).length;`, nil, ""},
		{"find, read, call", `const [hit] = await searchTools('structured', {topK: 1});
			const {tools: [def]} = await describeTools([hit.name]);
			return {hit: hit.name, required: def.inputSchema.required ?? [], out: await callTool(def.name, {id: 'x'})};`, nil, ""},
	}
	answers := map[presets.Isolation][]string{}
	for _, iso := range []presets.Isolation{presets.IsolationInProcess, presets.IsolationProcess} {
		srv := planServer(t, nil)
		srv.AddTool(mcp.NewTool("data.write", hints(false)...), echoHandler)
		cfg := presets.Default()
		cfg.VM.Isolation = iso
		cc, err := middleware.Wrap(srv, middleware.WithConfig(cfg), middleware.WithoutReload())
		if err != nil {
			t.Fatal(err)
		}
		if iso == presets.IsolationProcess && cc.Isolation().Effective != presets.IsolationProcess {
			cc.Close()
			t.Skipf("worker processes cannot start here (%s); only the in-process host was checked", cc.Isolation().Fallback)
		}
		c := mcptest.Connect(t, srv)
		for _, tc := range cases {
			args := map[string]any{"script": tc.script}
			if tc.allowed != nil {
				args["allowedTools"] = tc.allowed
			}
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = "codecall.execute", args
			res, err := c.CallTool(context.Background(), req)
			if err != nil {
				t.Fatalf("%s/%s: %v", iso, tc.name, err)
			}
			var out struct {
				Status    string          `json:"status"`
				Result    json.RawMessage `json:"result"`
				ToolTrace []struct {
					ToolName, AppID, Error string
					OK                     bool
				} `json:"toolTrace"`
				Metrics struct{ ToolCalls int } `json:"metrics"`
			}
			text := mcp.GetTextFromContent(res.Content[0])
			if err := json.Unmarshal([]byte(text), &out); err != nil || out.Status != "ok" {
				t.Fatalf("%s/%s: the plan did not end ok: %s", iso, tc.name, text)
			}
			var seen struct {
				Code  string
				Error struct{ Code string }
			}
			_ = json.Unmarshal(out.Result, &seen)
			if got := seen.Code + seen.Error.Code; got != tc.wantCode {
				t.Errorf("%s/%s: code %q, want %q (%s)", iso, tc.name, got, tc.wantCode, out.Result)
			}
			// The trace too: in a worker it is the server's record of the
			// calls it served, in the order the plan made them.
			answers[iso] = append(answers[iso], fmt.Sprintf("%s: %s trace %+v, %d tool calls", tc.name, out.Result, out.ToolTrace, out.Metrics.ToolCalls))
		}
		cc.Close()
	}
	in, proc := answers[presets.IsolationInProcess], answers[presets.IsolationProcess]
	for i := range in {
		if in[i] != proc[i] {
			t.Errorf("the hosts disagree:\n in process: %s\n in a worker: %s", in[i], proc[i])
		}
	}
	if t.Failed() {
		t.Logf("in-process answers:\n%v", in)
	}
}
