package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// upstreamPackages are the npm reference servers the gateway is tested
// against, pinned in client/package.json; the value is each one's entry
// script inside node_modules.
var upstreamPackages = map[string]string{
	"everything": "@modelcontextprotocol/server-everything/dist/index.js",
	"filesystem": "@modelcontextprotocol/server-filesystem/dist/index.js",
	"memory":     "@modelcontextprotocol/server-memory/dist/index.js",
}

// TestGatewayEndToEnd runs `codecall serve --upstreams` in front of three
// servers from the npm registry and drives it with the TypeScript SDK
// client (client/gateway.mjs) over stdio and streamable HTTP.
func TestGatewayEndToEnd(t *testing.T) {
	s := prepare(t)
	script := s.copyScript(t, "gateway.mjs")
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), subtestTimeout)
			defer cancel()
			// A broken entry must be reported and the others served.
			serversFile, files := s.npmUpstreams(t, map[string]any{"broken": map[string]any{"command": filepath.Join(t.TempDir(), "no-such-server")}})
			serve := []string{"serve", "--upstreams", serversFile}
			if transport == "stdio" {
				s.runScript(ctx, t, transport, append([]string{script, "--dir", files, "stdio", s.bin}, serve...)...)
			} else {
				srv := s.startHTTPWith(ctx, t, serve)
				s.runScript(ctx, t, transport, script, "--dir", files, "http", "http://"+srv.addr+"/mcp")
				srv.stop(t)
				if log := srv.out.text(); !strings.Contains(log, "upstream=broken") || !strings.Contains(log, "no-such-server") {
					t.Errorf("the server log does not report the broken entry with its reason:\n%s", log)
				}
			}
			// The plan really wrote through the filesystem server.
			got, err := os.ReadFile(filepath.Join(files, "codecall-note.txt"))
			if err != nil || string(got) != "written through the gateway" {
				t.Errorf("the file written by the plan: %q, %v", got, err)
			}
		})
	}
}

// npmUpstreams writes an mcpServers file for the three npm servers, with
// the filesystem server confined to a new directory (returned, symlinks
// resolved) and the memory server's store in the test's temp dir;
// extra entries are added as they are.
func (s *setup) npmUpstreams(t *testing.T, extra map[string]any) (serversFile, files string) {
	t.Helper()
	for id, entry := range upstreamPackages {
		if _, err := os.Stat(filepath.Join(s.nodeDir, "node_modules", filepath.FromSlash(entry))); err != nil {
			t.Fatalf("upstream %s is not installed in %s: %v", id, s.nodeDir, err)
		}
	}
	dir := t.TempDir()
	files = filepath.Join(dir, "files")
	if err := os.Mkdir(files, 0o755); err != nil {
		t.Fatal(err)
	}
	// The filesystem server resolves symlinks; so must the plan.
	files, _ = filepath.EvalSymlinks(files)
	servers := map[string]any{}
	for id, entry := range upstreamPackages {
		args := []string{filepath.Join(s.nodeDir, "node_modules", filepath.FromSlash(entry))}
		// Each runs under sandbox: default, seeing its node_modules
		// read-only and the one directory it writes.
		modules := filepath.Join(s.nodeDir, "node_modules") + ":ro"
		u := map[string]any{"command": s.node, "args": args, "paths": []string{modules}}
		switch id {
		case "filesystem":
			u["args"] = append(args, files)
			u["paths"] = []string{modules, files}
		case "memory":
			u["env"] = map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}
			u["paths"] = []string{modules, dir}
		}
		servers[id] = u
	}
	for id, u := range extra {
		servers[id] = u
	}
	b, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	serversFile = filepath.Join(dir, "servers.json")
	if err := os.WriteFile(serversFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return serversFile, files
}

// TestGatewayProgressEndToEnd: the everything server's progress
// notifications for a call reach the TypeScript SDK client through the
// gateway, under the client's own progress token.
func TestGatewayProgressEndToEnd(t *testing.T) {
	s := prepare(t)
	script := s.copyScript(t, "gateway.mjs")
	ctx, cancel := context.WithTimeout(context.Background(), subtestTimeout)
	defer cancel()
	dir := t.TempDir()
	servers := filepath.Join(dir, "servers.json")
	entry := filepath.Join(s.nodeDir, "node_modules", filepath.FromSlash(upstreamPackages["everything"]))
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"everything": map[string]any{"command": s.node, "args": []string{entry},
		"paths": []string{filepath.Join(s.nodeDir, "node_modules") + ":ro"}}}})
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "codecall.yaml")
	for name, data := range map[string][]byte{
		servers: b,
		config:  []byte("tools:\n  everything.trigger-long-running-operation: {visibleInListTools: true}\n"),
	} {
		if err := os.WriteFile(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The summary's transport field names the check, not the transport.
	s.runScript(ctx, t, "progress", script, "--progress", "stdio", s.bin, "serve", "--upstreams", servers, "--config", config)
}

// copyScript copies another client script next to node_modules, named by
// its content like the main client, and returns its file name.
func (s *setup) copyScript(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("client", name))
	if err != nil {
		t.Fatal(err)
	}
	for id, entry := range upstreamPackages {
		if _, err := os.Stat(filepath.Join(s.nodeDir, "node_modules", filepath.FromSlash(entry))); err != nil {
			t.Fatalf("upstream %s is not installed in %s: %v", id, s.nodeDir, err)
		}
	}
	script := "client-" + shortHash(src, 12) + ".mjs"
	if err := writeFileAtomic(filepath.Join(s.nodeDir, script), src); err != nil {
		t.Fatalf("copy %s: %v", name, err)
	}
	return script
}
