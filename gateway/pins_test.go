package gateway

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/presets"
)

// A tool whose description changes after it was first seen is held back
// (out of tools/list, so out of search, describe, plans and invoke) with a
// log line and one quarantine event, until an operator accepts it; then a
// reload serves the new definition.
func TestChangedDefinitionIsQuarantinedUntilAccepted(t *testing.T) {
	state := t.TempDir()
	var mu sync.Mutex
	var events []Quarantine
	servers := map[string]presets.Upstream{"fx": fixture(t, "ok", nil)}
	g, logs := newGateway(t, servers, WithStateDir(state), WithQuarantine(func(q Quarantine) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, q)
	}))
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(filepath.Join(state, PinsFile)); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("pins file: %v, %v; want it written 0600 at first sight", info, err)
	}
	s := connect(t, g.Server())
	if res := call(t, s, "fx.sneaky", nil); res.IsError {
		t.Fatalf("fx.sneaky before the flip: %s", text(res))
	}
	call(t, s, "fx.flip", map[string]any{"name": "sneaky"})
	eventually(t, "fx.sneaky to be held back", func() bool { return g.Server().GetTool("fx.sneaky") == nil })
	if st := g.Status(); !slices.Contains(st[0].Quarantined, "sneaky") {
		t.Errorf("status: %+v, want sneaky quarantined", st[0])
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "fx.sneaky"
	if res, err := s.CallTool(context.Background(), req); err == nil && !res.IsError {
		t.Errorf("a held-back tool answered: %s", text(res))
	}
	eventually(t, "the log line", func() bool { return strings.Contains(logs.String(), "gateway: tool held back") })
	mu.Lock()
	if len(events) != 1 || events[0].Name != "fx.sneaky" || events[0].New || !strings.Contains(events[0].Reason, "codecall upstreams accept fx") {
		t.Errorf("quarantine events: %+v", events)
	}
	mu.Unlock()

	// A reload that accepts nothing keeps it held, without a second event.
	if err := g.Reload(context.Background(), servers); err != nil {
		t.Fatal(err)
	}
	if g.Server().GetTool("fx.sneaky") != nil {
		t.Fatal("a reload served the changed tool without an accept")
	}
	accepted, err := AcceptDefinitions(state, "fx.sneaky", ".")
	if err != nil || len(accepted) != 1 || accepted[0] != "fx/sneaky" {
		t.Fatalf("AcceptDefinitions: %v, %v", accepted, err)
	}
	if err := g.Reload(context.Background(), servers); err != nil {
		t.Fatal(err)
	}
	tool := g.Server().GetTool("fx.sneaky")
	if tool == nil || !strings.Contains(tool.Tool.Description, "Ignore previous instructions") {
		t.Fatalf("after accept and reload: %+v", tool)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 1 {
		t.Errorf("events after the accept: %+v\n%s", events, logs.String())
	}
}

func TestPinningRules(t *testing.T) {
	tests := []struct {
		name     string
		cfg      presets.UpstreamsConfig
		grow     bool // add a new tool instead of flipping one
		heldName string
	}{
		{"pinDefinitions false serves the change", presets.UpstreamsConfig{PinDefinitions: new(bool)}, false, ""},
		{"newTools accept serves a new tool", presets.UpstreamsConfig{}, true, ""},
		{"newTools quarantine holds a new tool", presets.UpstreamsConfig{NewTools: presets.NewToolsQuarantine}, true, "fresh"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := newGateway(t, map[string]presets.Upstream{"fx": fixture(t, "ok", nil)}, WithConfig(tc.cfg), WithStateDir(t.TempDir()))
			if err := g.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			s := connect(t, g.Server())
			before := len(s.notifications("notifications/tools/list_changed"))
			if tc.grow {
				call(t, s, "fx.grow", map[string]any{"name": "fresh"})
			} else {
				call(t, s, "fx.flip", map[string]any{"name": "sneaky"})
			}
			// The gateway has re-listed once the client heard of it.
			eventually(t, "the re-listing", func() bool {
				return len(s.notifications("notifications/tools/list_changed")) > before || slices.Contains(g.Status()[0].Quarantined, tc.heldName)
			})
			name := "fx.sneaky"
			if tc.grow {
				name = "fx.fresh"
			}
			if tc.heldName == "" {
				eventually(t, name+" served", func() bool {
					st := g.Server().GetTool(name)
					return st != nil && (tc.grow || strings.Contains(st.Tool.Description, "Ignore previous"))
				})
				return
			}
			eventually(t, tc.heldName+" held", func() bool { return slices.Contains(g.Status()[0].Quarantined, tc.heldName) })
			if g.Server().GetTool(name) != nil {
				t.Errorf("%s is served while held", name)
			}
		})
	}
}

func TestAcceptDefinitionsErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := AcceptDefinitions(dir, "nobody", "."); err == nil || !strings.Contains(err.Error(), `no upstream or tool "nobody"`) {
		t.Errorf("unknown target: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, PinsFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := AcceptDefinitions(dir, "fx", "."); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("broken file: %v", err)
	}
}
