package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// approver approves every call it is asked about.
type approver struct{}

func (approver) Elicit(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept,
		Content: map[string]any{"decision": "approve"}}}, nil
}

// TestPerToolTimeouts calls the fixture's slow tool (it waits 30 s, or
// until cancelled, and then writes a marker) through CodeCall on every
// path: a direct call, codecall.invoke, and a plan in each isolation
// mode. Each call ends with a TIMEOUT error that names the tool, the
// effective timeout and where it is set, and the upstream sees the
// cancellation. The operator's tools: entry replaces the upstream's
// timeout whether shorter or longer.
func TestPerToolTimeouts(t *testing.T) {
	type setup struct {
		name     string
		upstream time.Duration // the upstream's timeout; 0: the default
		tool     time.Duration // tools."fx.slow".timeout; 0: none
		want     string        // the timeout and where it is set, as the error says it
	}
	setups := []setup{
		{"tools entry shorter than the upstream's", 0, 400 * time.Millisecond, `within 400ms, its timeout (set by tools."fx.slow".timeout in the config)`},
		{"tools entry longer than the upstream's", 100 * time.Millisecond, 600 * time.Millisecond, `within 600ms, its timeout (set by tools."fx.slow".timeout in the config)`},
		{"the upstream's own", 400 * time.Millisecond, 0, `within 400ms, its timeout (set by the timeout of upstream "fx")`},
	}
	paths := []struct {
		name string
		iso  presets.Isolation
		run  func(t *testing.T, s *session, marker string) string
	}{
		{"direct", presets.IsolationInProcess, func(t *testing.T, s *session, marker string) string {
			res := call(t, s, "fx.slow", map[string]any{"marker": marker})
			if !res.IsError {
				t.Errorf("a call past its timeout is not an error: %s", text(res))
			}
			return text(res)
		}},
		{"invoke", presets.IsolationInProcess, func(t *testing.T, s *session, marker string) string {
			return text(call(t, s, "codecall.invoke", map[string]any{"tool": "fx.slow", "input": map[string]any{"marker": marker}}))
		}},
		{"plan in process", presets.IsolationInProcess, func(t *testing.T, s *session, marker string) string {
			return text(call(t, s, "codecall.execute", map[string]any{"script": fmt.Sprintf(
				`try { await callTool("fx.slow", {marker: %q}); return "finished" } catch (e) { return e.code + " " + e.message }`, marker)}))
		}},
		{"plan in a worker", presets.IsolationProcess, func(t *testing.T, s *session, marker string) string {
			return text(call(t, s, "codecall.execute", map[string]any{"script": fmt.Sprintf(
				`try { await callTool("fx.slow", {marker: %q}); return "finished" } catch (e) { return e.code + " " + e.message }`, marker)}))
		}},
	}
	for _, su := range setups {
		t.Run(su.name, func(t *testing.T) {
			for _, p := range paths {
				t.Run(p.name, func(t *testing.T) {
					dir := t.TempDir()
					fx := fixture(t, "ok", nil)
					fx.Paths = append(fx.Paths, dir)
					fx.Timeout = su.upstream
					g, _ := newGateway(t, map[string]presets.Upstream{"fx": fx})
					if err := g.Start(context.Background()); err != nil {
						t.Fatal(err)
					}
					cfg := presets.Default()
					cfg.Preset = presets.Balanced
					cfg.VM, _ = presets.LimitsFor(presets.Balanced)
					cfg.VM.Isolation = p.iso
					cfg.VM.Timeout = 10 * time.Second
					cfg.DirectCalls.Enabled = true
					over := presets.ToolOverride{VisibleInListTools: catalog.Bool(true), Timeout: su.tool}
					cfg.Tools = map[string]presets.ToolOverride{"fx.slow": over}
					cc, err := middleware.Wrap(g.Server(), middleware.WithConfig(cfg), middleware.WithoutReload(),
						middleware.WithLogger(slog.New(slog.DiscardHandler)))
					if err != nil {
						if strings.Contains(err.Error(), "cannot start one") {
							t.Skipf("worker processes are not available here: %v", err)
						}
						t.Fatal(err)
					}
					defer cc.Close()
					if got := cc.Isolation().Effective; got != p.iso {
						t.Skipf("isolation %s requested, %s in effect (%s)", p.iso, got, cc.Isolation().Fallback)
					}
					// fx.slow declares no hints, so the default policy asks a
					// person, who approves: the time taken to answer does not
					// count against the timeout.
					s := &session{}
					s.Client = mcptest.Connect(t, g.Server(), mcptest.Stdio(), mcptest.WithElicitation(approver{}))
					marker := filepath.Join(dir, strings.ReplaceAll(p.name, " ", "-"))
					start := time.Now()
					got := p.run(t, s, marker)
					took := time.Since(start)
					got = strings.ReplaceAll(got, `\"`, `"`) // JSON answers escape the quotes
					for _, want := range []string{"TIMEOUT", `tool "fx.slow" did not finish`, su.want} {
						if !strings.Contains(got, want) {
							t.Errorf("the answer does not say %q:\n%s", want, got)
						}
					}
					if took > 8*time.Second {
						t.Errorf("the call took %v", took)
					}
					eventually(t, "the upstream to see the cancellation", func() bool {
						b, err := os.ReadFile(marker)
						return err == nil && string(b) == "cancelled"
					})
				})
			}
		})
	}
}
