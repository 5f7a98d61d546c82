package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// whoamiUpstream is an in-process MCP server, reached over streamable
// HTTP, whose read-only tool whoami answers with the upstream's name.
func whoamiUpstream(t *testing.T, name string) presets.Upstream {
	t.Helper()
	srv := server.NewMCPServer(name, "1.0.0", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("whoami", mcp.WithDescription("Name the upstream that answers."), mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"upstream": name}, name), nil
		})
	hs := httptest.NewServer(server.NewStreamableHTTPServer(srv))
	t.Cleanup(hs.Close)
	return presets.Upstream{URL: hs.URL + "/mcp"}
}

// Three upstream ids that normalise to the same module path: the id that
// is already the clean path keeps it, the others get "--2" and "--3" in
// order of id, the same on every start (the gateway's servers are a map),
// and each module's calls reach its own upstream.
func TestCodeModeModulePathsOfCollidingIDs(t *testing.T) {
	// "my-server" is clean; then sorted: "MY-SERVER" < "My_Server".
	ids := []string{"my-server", "My_Server", "MY-SERVER"}
	want := map[string]string{"my-server": "my-server", "my-server--2": "MY-SERVER", "my-server--3": "My_Server"}
	for round := 1; round <= 2; round++ {
		t.Run(fmt.Sprint("start-", round), func(t *testing.T) {
			servers := map[string]presets.Upstream{}
			for _, id := range ids {
				servers[id] = whoamiUpstream(t, id)
			}
			g, _ := newGateway(t, servers)
			if err := g.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			cfg := presets.Default()
			cfg.VM.Isolation = presets.IsolationInProcess
			cc, err := middleware.Wrap(g.Server(), middleware.WithConfig(cfg), middleware.WithSurfaces(presets.SurfaceCodeMode),
				middleware.WithServers(g), middleware.WithoutReload())
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			s := connect(t, g.Server())
			checkCollidingModules(t, s, want)
		})
	}
}

func checkCollidingModules(t *testing.T, s *session, want map[string]string) {
	t.Helper()
	ctx := context.Background()
	res := call(t, s, "codemode.run", map[string]any{
		"requestedCapabilities": []string{"my-server--2", "MY-SERVER"},
		"code": `import * as first from "@codemode/servers/my-server";
import * as second from "@codemode/servers/my-server--2";
import * as third from "@codemode/servers/my-server--3";
import { listServers } from "@codemode/discovery";
const [servers, ...calls] = await Promise.all([listServers(), first.whoami(), second.whoami(), third.whoami()]);
globalThis.__codemode_result__ = {
  servers: servers.map((s) => [s.serverId, s.serverName]),
  calls: calls.map((c) => c.upstream),
  meta: [first, second, third].map((m) => [m.__meta__.serverId, m.__meta__.serverName, m.__meta__.tools.map((t) => t.toolName + "=" + t.exportName)]),
};`})
	if res.IsError {
		t.Fatalf("codemode.run is isError: %s", text(res))
	}
	var out struct {
		Result struct {
			Servers [][2]string
			Calls   []string
			Meta    [][3]any
		}
		Diagnostics []struct{ Severity, Code, Message string }
		ToolTrace   []struct {
			ServerID string
			ToolName string
			OK       bool
		}
	}
	if err := json.Unmarshal([]byte(text(res)), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Diagnostics) > 0 {
		t.Errorf("diagnostics: %+v", out.Diagnostics)
	}
	paths := []string{"my-server", "my-server--2", "my-server--3"}
	var servers [][2]string
	for _, p := range paths {
		servers = append(servers, [2]string{p, want[p]})
	}
	if !reflect.DeepEqual(out.Result.Servers, servers) {
		t.Errorf("listServers = %v, want %v", out.Result.Servers, servers)
	}
	if wantCalls := []string{want[paths[0]], want[paths[1]], want[paths[2]]}; !reflect.DeepEqual(out.Result.Calls, wantCalls) {
		t.Errorf("whoami of my-server, my-server--2, my-server--3 answered by %v, want %v", out.Result.Calls, wantCalls)
	}
	for i, m := range out.Result.Meta {
		b, _ := json.Marshal(m)
		if wantMeta := fmt.Sprintf(`["%s","%s",["%s.whoami=whoami"]]`, paths[i], want[paths[i]], want[paths[i]]); string(b) != wantMeta {
			t.Errorf("__meta__ of %s = %s, want %s", paths[i], b, wantMeta)
		}
	}
	trace := map[string]string{}
	for _, c := range out.ToolTrace {
		if !c.OK {
			t.Errorf("trace: %+v failed", c)
		}
		trace[c.ServerID] = c.ToolName
	}
	for _, p := range paths {
		if trace[p] != want[p]+".whoami" {
			t.Errorf("toolTrace: server %s called %q, want %s.whoami (trace %+v)", p, trace[p], want[p], out.ToolTrace)
		}
	}

	// The declarations are per module path, and the prompt names them all.
	for _, p := range paths {
		rr, err := s.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "codemode://types/" + p + ".d.ts"}})
		if err != nil {
			t.Fatalf("read the declarations of %s: %v", p, err)
		}
		tc, ok := rr.Contents[0].(mcp.TextResourceContents)
		if !ok || !strings.Contains(tc.Text, `declare module "@codemode/servers/`+p+`"`) || !strings.Contains(tc.Text, want[p]+".whoami") {
			t.Errorf("codemode://types/%s.d.ts = %+v", p, rr.Contents)
		}
	}
	pr, err := s.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "codemode"}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := pr.Messages[0].Content.(mcp.TextContent); !ok || !strings.Contains(tc.Text, "my-server, my-server--2, my-server--3") {
		t.Errorf("the codemode prompt does not list the three module paths: %+v", pr.Messages)
	}
}
