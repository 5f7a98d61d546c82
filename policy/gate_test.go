package policy_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
)

func TestGateAuthorize(t *testing.T) {
	cfg := presets.Default()
	cfg.Exclude = []string{"crm.secret"}
	cfg.DirectCalls.Enabled = true
	cfg.DirectCalls.AllowedTools = []string{"crm.*"}
	tools := []mcp.Tool{
		mcp.NewTool("crm.find"),
		mcp.NewTool("crm.secret"),
		catalog.SetMeta(mcp.NewTool("crm.off"), catalog.Meta{EnabledInCodeCall: catalog.Bool(false)}),
		catalog.SetMeta(mcp.NewTool("health"), catalog.Meta{VisibleInListTools: catalog.Bool(true)}),
		mcp.NewTool("billing.charge"),
	}
	snap, _, err := catalog.Build(tools, catalog.Options{Config: cfg, DefaultAppID: "app"})
	if err != nil {
		t.Fatal(err)
	}
	gate, err := policy.NewGate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool string
		via  policy.Via
		want toolerr.Code // "" means allowed
	}{
		{"crm.find", policy.ViaSearch, ""},
		{"crm.find", policy.ViaDescribe, ""},
		{"crm.find", policy.ViaExecute, ""},
		{"crm.find", policy.ViaInvoke, ""},
		{"crm.find", policy.ViaDirect, toolerr.NotFound}, // hidden from tools/list
		{"health", policy.ViaDirect, ""},
		{"health", policy.ViaInvoke, toolerr.AccessDenied}, // not in allowedTools
		{"billing.charge", policy.ViaInvoke, toolerr.AccessDenied},
		{"billing.charge", policy.ViaExecute, ""},
		{"crm.secret", policy.ViaSearch, toolerr.NotFound},
		{"crm.secret", policy.ViaDescribe, toolerr.NotFound},
		{"crm.secret", policy.ViaExecute, toolerr.NotFound},
		{"crm.secret", policy.ViaInvoke, toolerr.NotFound},
		{"crm.secret", policy.ViaDirect, toolerr.NotFound},
		{"crm.off", policy.ViaExecute, toolerr.NotFound},
		{"crm.off", policy.ViaInvoke, toolerr.NotFound},
		// Names resolve byte for byte, as mcp-go's dispatch does.
		{"CRM.find", policy.ViaExecute, toolerr.NotFound},
		{"crm.find ", policy.ViaExecute, toolerr.NotFound},
		{" crm.find", policy.ViaExecute, toolerr.NotFound},
		{"crm.secret\x00", policy.ViaExecute, toolerr.NotFound},
		{"crm.Secret", policy.ViaExecute, toolerr.NotFound},
		{"crm.*", policy.ViaExecute, toolerr.NotFound},
		{"", policy.ViaExecute, toolerr.NotFound},
		{"crm.find", policy.Via("sideways"), toolerr.AccessDenied},
	}
	for _, tt := range tests {
		t.Run(string(tt.via)+"/"+tt.tool, func(t *testing.T) {
			got, err := gate.Authorize(context.Background(), snap, policy.Request{Tool: tt.tool, Via: tt.via})
			var pe *toolerr.Error
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want == "" && got.Name != tt.tool:
				t.Fatalf("got tool %q", got.Name)
			case tt.want != "" && !errors.As(err, &pe):
				t.Fatalf("err = %v, want a *toolerr.Error with code %s", err, tt.want)
			case tt.want != "" && pe.Code != tt.want:
				t.Fatalf("code = %s, want %s (%v)", pe.Code, tt.want, err)
			}
		})
	}
}

func TestGateFailsClosed(t *testing.T) {
	gate, err := policy.NewGate(presets.Default())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gate.Authorize(context.Background(), nil, policy.Request{Tool: "x", Via: policy.ViaExecute}); err == nil {
		t.Error("a nil snapshot must refuse")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	snap, _, _ := catalog.Build([]mcp.Tool{mcp.NewTool("x")}, catalog.Options{Config: presets.Default()})
	if _, err := gate.Authorize(ctx, snap, policy.Request{Tool: "x", Via: policy.ViaExecute}); err == nil {
		t.Error("a cancelled request must refuse")
	}
	cfg := presets.Default()
	cfg.DirectCalls.AllowedTools = []string{"[bad"}
	if _, err := policy.NewGate(cfg); err == nil {
		t.Error("a bad glob must be an error")
	}
}
