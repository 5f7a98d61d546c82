package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksOnlyWhatAPlanNeeds keeps the worker small: every plan starts a
// worker, so every package it links is initialised on every plan. The
// policy engine, the search index and the MCP library belong to the
// server, not to the worker; so does esbuild, which strips the types of
// TypeScript plans before a worker is sent their JavaScript.
func TestLinksOnlyWhatAPlanNeeds(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/codecall-go/codecall/policy",
		"github.com/codecall-go/codecall/meta",
		"github.com/open-policy-agent/",
		"github.com/blevesearch/",
		"github.com/mark3labs/mcp-go",
		"github.com/codecall-go/codecall/ast/tsstrip",
		"github.com/evanw/esbuild/",
		"github.com/codecall-go/codecall/codemode",
		"github.com/grafana/sobek",
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if strings.HasPrefix(pkg, f) {
				t.Errorf("the worker links %s", pkg)
			}
		}
	}
}
