package middleware_test

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

func TestCodeModeSmoke(t *testing.T) {
	for _, iso := range []presets.Isolation{presets.IsolationInProcess, presets.IsolationProcess} {
		srv := planServer(t, nil)
		cfg := presets.Default()
		cfg.VM.Isolation = iso
		cfg.Surfaces = []presets.Surface{presets.SurfaceCodeMode}
		cc, err := middleware.Wrap(srv, middleware.WithConfig(cfg), middleware.WithoutReload())
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		c := mcptest.Connect(t, srv)
		lst, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range lst.Tools {
			t.Logf("%s: %d bytes of description", tl.Name, len(tl.Description))
		}
		for _, code := range []string{
			`import * as data from "@codemode/servers/data";
import { ToolCallError } from "@codemode/errors";
import { listServers, searchTools } from "@codemode/discovery";
const [a, b] = await Promise.all([data.structured({id: "x"}), data.plain_text()]);
let caught;
try { await data.fail(); } catch (e) { caught = [e instanceof ToolCallError, e.code, e.message, e.hint]; }
console.log("hello", {a});
globalThis.__codemode_result__ = {a, b, caught, servers: await listServers(), hits: (await searchTools("structured", {detail: "name"})).results};`,
			`import x from "./x"; globalThis.__codemode_result__ = 1;`,
			`const x = ;`,
			`return 5;`,
			`import * as data from "@codemode/servers/data"; await data.structured({id: 5});`,
		} {
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = "codemode.run", map[string]any{"code": code}
			res, err := c.CallTool(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: isError=%v %s", iso, res.IsError, res.Content[0].(mcp.TextContent).Text)
		}
	}
}
