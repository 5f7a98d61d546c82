package middleware_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// doorPolicy denies one tool and asks about another; everything else runs.
const doorPolicy = `default decision := {"allow": true, "requireApproval": false, "reason": "open"}

decision := {"allow": false, "requireApproval": false, "reason": "banned in this test"} if input.tool.name == "door.banned"

decision := {"allow": true, "requireApproval": true, "reason": "writes need a person"} if input.tool.name == "door.write"
`

// TestEveryCallIsObservedOnce checks the gate's one door from the audit
// log: every call, by every path, whatever refuses it, writes exactly one
// policy.decision and one tool.call (invoke for codecall.invoke) with the
// code the caller saw, and at most one approval event.
func TestEveryCallIsObservedOnce(t *testing.T) {
	dir := t.TempDir()
	mcptest.WritePolicy(t, dir, "policy.rego", regoHeader+doorPolicy)
	srv := server.NewMCPServer("door", "1", server.WithToolCapabilities(true), server.WithElicitation())
	ok := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(`{"ok":true}`), nil
	}
	visible := map[string]any{"codecall": map[string]any{"visibleInListTools": true}}
	for _, name := range []string{"door.read", "door.banned", "door.write", "door.denied_write", "door.fails"} {
		tool := mcp.NewTool(name, mcp.WithString("id", mcp.Required()))
		tool.Meta = mcp.NewMetaFromMap(visible)
		h := ok
		if name == "door.fails" {
			h = func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultError("the tool broke"), nil
			}
		}
		srv.AddTool(tool, h)
	}
	var auditLog mcptest.Buffer
	cfg := presets.Default()
	cfg.DirectCalls.Enabled = true
	cfg.Policy.Paths = []string{dir}
	cc, err := middleware.Wrap(srv, middleware.WithConfig(cfg), middleware.WithoutReload(),
		middleware.WithAuditHandler(slog.NewJSONHandler(&auditLog, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	// The person approves door.write and declines everything else.
	e := &elicitor{answer: "approve"}
	withPerson := mcptest.Connect(t, srv, mcptest.WithElicitation(e))
	nobody := mcptest.Connect(t, srv)

	good := map[string]any{"id": "1"}
	type tc struct {
		name, via, tool string
		args            map[string]any
		client          string // "person" or "nobody"
		allowedTools    []string
		code            string // "" when the call ran
		decision        string
		approval        string // "" when nobody was asked
	}
	var cases []tc
	for _, via := range []string{"direct", "invoke", "execute"} {
		cases = append(cases,
			tc{name: "runs", via: via, tool: "door.read", args: good, decision: "allow"},
			tc{name: "invalid input", via: via, tool: "door.read", args: map[string]any{"id": 7}, code: "VALIDATION", decision: "deny"},
			tc{name: "missing input", via: via, tool: "door.write", args: map[string]any{}, code: "VALIDATION", decision: "deny"},
			tc{name: "policy denies", via: via, tool: "door.banned", args: good, code: "ACCESS_DENIED", decision: "deny"},
			tc{name: "approved", via: via, tool: "door.write", args: good, client: "person", decision: "approval", approval: "approved"},
			tc{name: "nobody to ask", via: via, tool: "door.write", args: good, client: "nobody", code: "APPROVAL_REQUIRED", decision: "approval", approval: "unavailable"},
			tc{name: "tool fails", via: via, tool: "door.fails", args: good, code: "EXECUTION", decision: "allow"},
		)
		if via != "direct" {
			// A direct call of a tool tools/list does not show is refused by
			// mcp-go's own filter before any middleware runs.
			cases = append(cases,
				tc{name: "unknown tool", via: via, tool: "door.nope", args: good, code: "NOT_FOUND", decision: "deny"},
				tc{name: "meta-tool", via: via, tool: "codecall.search", args: map[string]any{"query": "x"}, code: "SELF_REFERENCE", decision: "deny"},
			)
		}
	}
	cases = append(cases, tc{name: "outside allowedTools", via: "execute", tool: "door.read", args: good,
		allowedTools: []string{"door.write"}, code: "ACCESS_DENIED", decision: "deny"})

	for _, c := range cases {
		t.Run(c.via+"/"+c.name, func(t *testing.T) {
			cl := withPerson
			if c.client == "nobody" {
				cl = nobody
			}
			before := len(auditLines(t, &auditLog))
			code := callDoor(t, cl, c.via, c.tool, c.args, c.allowedTools)
			if c.via == "direct" && c.name == "tool fails" {
				// A direct call returns the tool's own result untouched.
				code = strings.TrimPrefix(code, "tool-error:")
				if code != "the tool broke" {
					t.Fatalf("direct call result = %q", code)
				}
				code = "EXECUTION"
			}
			if code != c.code {
				t.Fatalf("code = %q, want %q", code, c.code)
			}
			var got []string
			for _, ev := range auditLines(t, &auditLog)[before:] {
				if ev["tool"] != c.tool {
					continue
				}
				s := fmt.Sprint(ev["msg"])
				switch ev["msg"] {
				case "policy.decision":
					s += "=" + fmt.Sprint(ev["decision"])
				case "approval":
					s += "=" + fmt.Sprint(ev["approval"])
				case "tool.call", "invoke":
					if ec, ok := ev["errorCode"]; ok {
						s += "=" + fmt.Sprint(ec)
					}
				}
				got = append(got, s)
			}
			want := []string{"policy.decision=" + c.decision}
			if c.approval != "" {
				want = append(want, "approval="+c.approval)
			}
			end := "tool.call"
			if c.via == "invoke" {
				end = "invoke"
			}
			if c.code != "" && !(c.via == "direct" && c.name == "tool fails") {
				end += "=" + c.code
			}
			want = append(want, end)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("audit events for %s:\n got %v\nwant %v", c.tool, got, want)
			}
		})
	}
}

// callDoor is mcptest.CallVia with allowedTools for plans; a direct call
// whose result is an error without CodeCall's code answers
// "tool-error:<text>".
func callDoor(t *testing.T, c *client.Client, via, tool string, args map[string]any, allowed []string) string {
	t.Helper()
	if via != "execute" || allowed == nil {
		if via == "direct" {
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = tool, args
			res, err := c.CallTool(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError {
				return ""
			}
			if code := mcptest.DirectCode(res); code != "" {
				return code
			}
			return "tool-error:" + mcp.GetTextFromContent(res.Content[0])
		}
		return mcptest.CallVia(t, c, via, tool, args)
	}
	in, _ := json.Marshal(args)
	req := mcp.CallToolRequest{}
	req.Params.Name = "codecall.execute"
	req.Params.Arguments = map[string]any{"allowedTools": allowed, "script": fmt.Sprintf("return await callTool(%q, %s);", tool, in)}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal([]byte(mcp.GetTextFromContent(res.Content[0])), &body)
	return body.Error.Code
}

func auditLines(t *testing.T, b *mcptest.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line is not JSON: %s", sc.Text())
		}
		out = append(out, ev)
	}
	return out
}
