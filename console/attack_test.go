package console_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/console"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
)

// TestPlanCannotInjectIntoTheConsole: a plan names a hostile tool and a
// tool's own metadata carries markup; through the real audit path, the
// console shows both as text.
func TestPlanCannotInjectIntoTheConsole(t *testing.T) {
	srv := server.NewMCPServer("shop", "1.0.0", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("shop.note", mcp.WithDescription("Adds a note "+hostile), mcp.WithTitleAnnotation(hostile),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithString("text")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(hostile), nil
		})
	st := console.NewStore()
	cc, err := middleware.Wrap(srv, middleware.WithAuditSink(st), middleware.WithoutReload())
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := mcptest.Connect(t, srv)
	req := mcp.CallToolRequest{}
	req.Params.Name = "codecall.execute"
	req.Params.Arguments = map[string]any{"script": `await callTool("shop.note", {text: "` + strings.ReplaceAll(hostile, `"`, `\"`) + `"});
try { await callTool("<img src=x onerror=alert(3)>", {}); } catch (e) { console.log(e.message); }
throw new Error("<script>alert(4)</script>");`}
	if _, err := c.CallTool(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	h, err := console.New(st, token)
	if err != nil {
		t.Fatal(err)
	}
	runs := st.Runs()
	if len(runs) != 1 || len(runs[0].Calls) != 2 {
		t.Fatalf("runs %+v, want one run of two calls", runs)
	}
	for _, path := range []string{"/console/", "/console/runs/" + runs[0].ID, "/console/audit"} {
		_, body := do(t, h, get(path, "Authorization", "Bearer "+token), "")
		for _, bad := range []string{"<script>alert", "<img src=x"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s: %q reached the page unescaped", path, bad)
			}
		}
		if path != "/console/" && !strings.Contains(body, "&lt;img src=x onerror=alert(3)&gt;") {
			t.Errorf("%s: the hostile tool name is not shown as text", path)
		}
	}
	_ = http.MethodGet
}
