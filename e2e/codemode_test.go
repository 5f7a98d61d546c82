package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestCodeModeGatewayEndToEnd runs `codecall serve --upstreams --surface
// codemode` in front of the three npm reference servers and drives its
// Code Mode surface with the TypeScript SDK client (client/codemode.mjs)
// over stdio and streamable HTTP: codemode.run alone in tools/list, the
// prompt, the per-server declarations, and scripts that import two server
// modules, fail, and break.
func TestCodeModeGatewayEndToEnd(t *testing.T) {
	s := prepare(t)
	script := s.copyScript(t, "codemode.mjs")
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), subtestTimeout)
			defer cancel()
			serversFile, files := s.npmUpstreams(t, nil)
			serve := []string{"serve", "--upstreams", serversFile, "--surface", "codemode"}
			if transport == "stdio" {
				s.runScript(ctx, t, transport, append([]string{script, "--dir", files, "stdio", s.bin}, serve...)...)
			} else {
				srv := s.startHTTPWith(ctx, t, serve)
				s.runScript(ctx, t, transport, script, "--dir", files, "http", "http://"+srv.addr+"/mcp")
				srv.stop(t)
			}
			// The script really wrote through the filesystem server.
			got, err := os.ReadFile(filepath.Join(files, "codemode-note.txt"))
			if err != nil || string(got) != "written through codemode.run" {
				t.Errorf("the file written by the script: %q, %v", got, err)
			}
		})
	}
}
