package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// CodeCall in front of two upstreams: tools/list shows only the meta-tools,
// search filters by app, and one plan joins results from both.
func TestCodeCallInFrontOfUpstreams(t *testing.T) {
	g, _ := newGateway(t, map[string]presets.Upstream{"left": fixture(t, "ok", nil), "right": fixture(t, "ok", nil)})
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	cc, err := middleware.Wrap(g.Server())
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	s := connect(t, g.Server())
	list, err := s.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if !strings.HasPrefix(tool.Name, "codecall.") {
			t.Errorf("tools/list shows %q in codecall_only mode", tool.Name)
		}
	}
	res := call(t, s, "codecall.search", map[string]any{"query": "add two numbers", "filter": map[string]any{"appIds": []string{"right"}}})
	var found struct {
		Tools []struct{ Name, AppID, Source string }
	}
	if err := json.Unmarshal([]byte(text(res)), &found); err != nil {
		t.Fatal(err)
	}
	if len(found.Tools) == 0 || found.Tools[0].Name != "right.add" || found.Tools[0].Source != "upstream" {
		t.Errorf("search = %+v, want right.add from source upstream first", found.Tools)
	}
	for _, tool := range found.Tools {
		if tool.AppID != "right" {
			t.Errorf("appIds filter let %s through", tool.Name)
		}
	}
	res = call(t, s, "codecall.execute", map[string]any{"script": `
		const [a, b] = await Promise.all([
			callTool("left.add", {a: 1, b: 2}),
			callTool("right.echo", {text: "joined"}),
		]);
		const failed = await callTool("right.fail", {}, {throwOnError: false});
		return {sum: a.sum, text: b, failed: failed.error.message};`})
	var out struct {
		Status string
		Result struct {
			Sum    float64
			Text   string
			Failed string
		}
	}
	if err := json.Unmarshal([]byte(text(res)), &out); err != nil {
		t.Fatal(err)
	}
	if out.Status != "ok" || out.Result.Sum != 3 || out.Result.Text != "joined" || out.Result.Failed != "boom from upstream" {
		t.Errorf("execute = %s", text(res))
	}
}
