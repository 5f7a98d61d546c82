package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoSDKGatewayEndToEnd drives codecall serve --upstreams in front of
// the three npm reference servers (everything, filesystem, memory) with the
// official Go SDK client on protocol revision 2026-07-28, over stdio and
// streamable HTTP: the same round trip as the TypeScript client's
// (client/gateway.mjs), from a second codebase.
func TestGoSDKGatewayEndToEnd(t *testing.T) {
	s := prepare(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			serversFile, files := s.npmUpstreams(t, nil)
			serve := []string{"serve", "--upstreams", serversFile}
			ctx, cancel := context.WithTimeout(context.Background(), subtestTimeout)
			defer cancel()
			wire := &wireLog{}
			var cs *mcp.ClientSession
			if transport == "stdio" {
				cs = connectStdio(ctx, t, s.bin, wire, false, serve...)
			} else {
				srv := startHTTPServer(ctx, t, s.bin, serve...)
				defer srv.stop(t)
				cs = connectHTTP(ctx, t, srv.addr, wire)
			}
			npmGatewayRoundTrip(ctx, t, cs, files)
			closeSession(t, cs)
			wire.check(t, false)
			if transport == "http" {
				wire.checkHeaders(t)
			}
			// The plan really wrote through the filesystem server.
			got, err := os.ReadFile(filepath.Join(files, "go-sdk-note.txt"))
			if err != nil || string(got) != "written by the Go SDK client's plan" {
				t.Errorf("the file written by the plan: %q, %v", got, err)
			}
		})
	}
}

func npmGatewayRoundTrip(ctx context.Context, t *testing.T, cs *mcp.ClientSession, files string) {
	t.Helper()
	expectGatewaySession(ctx, t, cs)

	// Search across the three apps, then within each.
	for _, c := range []struct{ query, want string }{
		{"write text to a file", "filesystem.write_file"},
		{"create entities in the knowledge graph", "memory.create_entities"},
		{"add two numbers and return the sum", "everything.get-sum"},
	} {
		var found searchResult
		callMeta(ctx, t, cs, "codecall.search", map[string]any{"query": c.query, "topK": 5}, &found)
		if rank := found.rank(c.want); rank < 0 || rank >= 3 {
			t.Errorf("search %q: %s at rank %d, want the top 3: %+v", c.query, c.want, rank, found.Tools)
		} else if app := found.Tools[rank].AppID; app != strings.SplitN(c.want, ".", 2)[0] {
			t.Errorf("search %q: %s has appId %q", c.query, c.want, app)
		}
	}
	for _, app := range []string{"filesystem", "memory", "everything"} {
		var found searchResult
		callMeta(ctx, t, cs, "codecall.search", map[string]any{
			"query": "read or list items", "filter": map[string]any{"appIds": []string{app}},
		}, &found)
		if len(found.Tools) == 0 {
			t.Errorf("search with appIds [%s] found nothing", app)
		}
		for _, hit := range found.Tools {
			if hit.AppID != app {
				t.Errorf("search with appIds [%s] returned %s of app %s", app, hit.Name, hit.AppID)
			}
		}
	}

	// One plan writes a file and stores an entity, then reads both back.
	const plan = `
const path = codecallContext.dir + "/go-sdk-note.txt";
await callTool("filesystem.write_file", {path, content: "written by the Go SDK client's plan"});
await callTool("memory.create_entities", {entities: [{name: "go-sdk-note", entityType: "file", observations: ["stored at " + path]}]});
const [file, graph] = await Promise.all([
  callTool("filesystem.read_text_file", {path}),
  callTool("memory.open_nodes", {names: ["go-sdk-note"]}),
]);
const text = typeof file === "string" ? file : file.content;
const entity = graph.entities[0];
return {text, entity: entity.name, sameFile: entity.observations[0].endsWith(path)};`
	var run planRun[struct {
		Text     string `json:"text"`
		Entity   string `json:"entity"`
		SameFile bool   `json:"sameFile"`
	}]
	callMeta(ctx, t, cs, "codecall.execute", map[string]any{"script": plan, "context": map[string]any{"dir": files}}, &run)
	if run.Status != "ok" {
		t.Fatalf("execute: status %q, error %s", run.Status, run.Error)
	}
	if r := run.Result; r.Text != "written by the Go SDK client's plan" || r.Entity != "go-sdk-note" || !r.SameFile {
		t.Errorf("execute: joined result %+v", r)
	}
	var traced []string
	for _, tr := range run.ToolTrace {
		if !tr.OK {
			t.Errorf("execute: %s failed", tr.ToolName)
		}
		traced = append(traced, tr.ToolName)
	}
	sort.Strings(traced)
	if want := []string{"filesystem.read_text_file", "filesystem.write_file", "memory.create_entities", "memory.open_nodes"}; !slices.Equal(traced, want) {
		t.Errorf("execute: toolTrace %v, want %v", traced, want)
	}

	// Bad input gets the upstream's own message as a tool_error.
	var bad struct {
		Status string `json:"status"`
		Error  struct {
			Source   string `json:"source"`
			ToolName string `json:"toolName"`
			Message  string `json:"message"`
		} `json:"error"`
	}
	callMetaResult(ctx, t, cs, "codecall.execute", map[string]any{
		"script": `return await callTool("everything.get-sum", {a: "not a number", b: 2});`,
	}, true, &bad)
	msg := strings.ToLower(bad.Error.Message)
	if bad.Status != "tool_error" || bad.Error.Source != "tool" || bad.Error.ToolName != "everything.get-sum" ||
		!strings.Contains(msg, "number") {
		t.Errorf("execute with bad input: %+v, want a tool_error with the upstream's message", bad)
	}
	t.Logf("plan result %+v; bad input -> %s", run.Result, bad.Error.Message)
}
