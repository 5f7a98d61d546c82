package middleware_test

import (
	"log/slog"
	"testing"

	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// TestExecuteTypeScript runs TypeScript plans through codecall.execute, in
// the server's process and in sandbox worker processes (which are sent the
// JavaScript the types were stripped to): results, and every location, in
// the script as the client sent it.
func TestExecuteTypeScript(t *testing.T) {
	for _, isolation := range []presets.Isolation{presets.IsolationInProcess, presets.IsolationProcess} {
		t.Run(string(isolation), func(t *testing.T) {
			srv := planServer(t, nil)
			cfg := presetConfig(presets.Secure)
			cfg.VM.Isolation = isolation
			cc, err := middleware.Wrap(srv, middleware.WithConfig(cfg), middleware.WithLogger(slog.New(slog.NewTextHandler(discard{}, nil))))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cc.Close() })
			if iso := cc.Isolation(); iso.Effective != isolation {
				t.Skipf("worker processes are not available here: %s", iso.Fallback)
			}
			s := connect(t, srv)
			tests := []struct {
				name, script, status string
				result               any
				line, column         float64
			}{
				{"ok", "interface Out { id: string; kind: string }\n" +
					"enum Mode { Fast = 'fast' }\n" +
					"const a = await callTool(\"data.structured\", {id: \"x\"}) as Out;\n" +
					"return `${a.id}:${a.kind}:${Mode.Fast}` satisfies string;", "ok", "x:structured:fast", 0, 0},
				{"runtime error on line 5", "type N = number;\n" +
					"enum E { A, B }\n" +
					"const xs: N[] = [E.A, E.B];\n" +
					"if (xs.length > 1) {\n" +
					"  throw new Error('line five');\n" +
					"}", "runtime_error", nil, 5, 9},
				{"syntax error on line 3", "const a: number = 1;\ninterface I { x: string }\nconst b = a +;\n", "syntax_error", nil, 3, 14},
				{"violation on line 4", "enum E { A }\nconst x: number = E.A;\nif (x) { const y = 1; }\nreturn eval('1');", "illegal_access", nil, 4, 8},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					out, isErr := s.execute(map[string]any{"script": tt.script})
					if out["status"] != tt.status || isErr != (tt.status != "ok") {
						t.Fatalf("status %v, want %s: %v", out["status"], tt.status, out)
					}
					if tt.status == "ok" {
						if out["result"] != tt.result {
							t.Errorf("result %v, want %v", out["result"], tt.result)
						}
						return
					}
					loc, _ := out["error"].(map[string]any)["location"].(map[string]any)
					if loc["line"] != tt.line || loc["column"] != tt.column {
						t.Errorf("location %v, want %v:%v: %v", loc, tt.line, tt.column, out["error"])
					}
				})
			}
		})
	}
}
