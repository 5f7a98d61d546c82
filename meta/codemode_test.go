package meta

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/codemode"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

func TestApplyLimits(t *testing.T) {
	base, _ := presets.LimitsFor(presets.Secure)
	cases := []struct {
		name  string
		req   map[string]any
		check func(l presets.Limits) bool
		codes []string
	}{
		{"lower every key", map[string]any{"timeoutMs": 1000.0, "maxMemoryBytes": 1e6, "maxLogBytes": 100.0, "maxToolCalls": 2.0},
			func(l presets.Limits) bool {
				return l.Timeout == time.Second && l.MemoryBytes == 1e6 && l.MaxLogBytes == 100 && l.MaxToolCalls == 2
			}, nil},
		{"higher is clamped", map[string]any{"maxToolCalls": 1e9}, func(l presets.Limits) bool { return l.MaxToolCalls == base.MaxToolCalls },
			[]string{DiagLimitClamped}},
		{"malformed is ignored", map[string]any{"timeoutMs": "fast", "maxLogBytes": -1.0, "maxToolCalls": 1.5},
			func(l presets.Limits) bool { return reflect.DeepEqual(l, base) }, []string{DiagLimitIgnored, DiagLimitIgnored, DiagLimitIgnored}},
		{"unknown keys are silent", map[string]any{"cpuShares": 3.0, "timeout": "1s"}, func(l presets.Limits) bool { return reflect.DeepEqual(l, base) }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, diags := applyLimits(base, tc.req)
			if !tc.check(l) {
				t.Errorf("limits %+v", l)
			}
			var codes []string
			for _, d := range diags {
				codes = append(codes, d.Code)
				if d.Hint == "" || !strings.HasPrefix(d.Path, "/limits/") {
					t.Errorf("diagnostic without hint or path: %+v", d)
				}
			}
			if strings.Join(codes, ",") != strings.Join(tc.codes, ",") {
				t.Errorf("codes %v, want %v", codes, tc.codes)
			}
		})
	}
}

func TestLocalName(t *testing.T) {
	cases := []struct{ app, name, want string }{
		{"shop", "shop.get_order", "get_order"},
		{"shop", "shop:get_order", "get_order"},
		{"shop", "shop_get_order", "get_order"},
		{"shop", "shopping.list", "shopping.list"},
		{"shop", "get_order", "get_order"},
		{"shop", "shop.", "shop."},
	}
	for _, tc := range cases {
		if got := localName(tc.app, tc.name); got != tc.want {
			t.Errorf("localName(%q, %q) = %q, want %q", tc.app, tc.name, got, tc.want)
		}
	}
}

func TestUnwrapCodeMode(t *testing.T) {
	img := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent("aGk=", "image/png")}}
	cases := []struct {
		name string
		res  *mcp.CallToolResult
		want string
	}{
		{"structured wins over content", mcp.NewToolResultStructured(map[string]any{"a": 1}, "text"), `{"a":1}`},
		{"single text is a string, even when it is JSON", mcp.NewToolResultText(`{"a":1}`), `"{\"a\":1}"`},
		{"image is the whole result", img, `{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"}]}`},
		{"two blocks are the whole result", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("a"), mcp.NewTextContent("b")}},
			`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := UnwrapCodeMode(tc.res)
			if err != nil || string(got) != tc.want {
				t.Errorf("UnwrapCodeMode = %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestValidationDiagnostics(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		status vm.Status
		code   string
		class  string
	}{
		{"unknown server", &codemode.LinkError{Code: DiagImportFailure, Message: "cannot find module", Hint: "h", Specifier: "@codemode/servers/x", Line: 1, Column: 2},
			vm.StatusIllegalAccess, DiagImportFailure, "ServerNotFoundError"},
		{"relative specifier", &codemode.LinkError{Code: DiagImportFailure, Message: "cannot find module", Hint: "h", Specifier: "./x", Line: 1, Column: 2},
			vm.StatusIllegalAccess, DiagImportFailure, ""},
		{"syntax", &ast.SyntaxError{Message: "Unexpected token", Location: ast.Location{Line: 2, Column: 3}}, vm.StatusSyntaxError, DiagSyntaxError, ""},
		{"illegal", &ast.IllegalError{Violations: []ast.Violation{{Kind: ast.KindBannedIdentifier, Message: `"eval" is not allowed (line 1, column 1); plans cannot create code`,
			Location: ast.Location{Line: 1, Column: 1}}}}, vm.StatusIllegalAccess, DiagIllegalAccess, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, diags := validationDiagnostics(tc.err, &Modules{byPath: map[string]*ServerModule{}})
			if status != tc.status || len(diags) == 0 || diags[0].Code != tc.code || diags[0].ErrorClass != tc.class || diags[0].Hint == "" || diags[0].Path == "" {
				b, _ := json.Marshal(diags)
				t.Errorf("status %s, diagnostics %s", status, b)
			}
		})
	}
}
