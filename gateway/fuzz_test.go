package gateway

import (
	"strings"
	"testing"

	"github.com/codecall-go/codecall/presets"
)

// FuzzParseServers: any input gives servers or an error, never a panic,
// and accepted servers pass the same validation as the YAML config.
func FuzzParseServers(f *testing.F) {
	for _, seed := range []string{
		`{"mcpServers": {"a": {"command": "npx", "args": ["-y", "x"], "env": {"K": "${V}"}}}}`,
		`{"servers": {"b": {"url": "https://h/mcp", "headers": {"A": "Bearer ${T}"}, "timeout": "5s"}}}`,
		`{"mcpServers": {"c": {"type": "sse", "url": "http://h/sse", "disabled": true, "autoApprove": []}}}`,
		`{"mcpServers": {"d": {"command": "x", "timeout": 5}}}`,
		`{"mcpServers": {"": {}}}`, `{"mcpServers": null}`, `[]`, `{`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		servers, err := ParseServers([]byte(data))
		if err != nil {
			return
		}
		if verr := (presets.UpstreamsConfig{Servers: servers}).Validate(); verr != nil {
			t.Fatalf("ParseServers accepted servers that do not validate: %v\n%s", verr, data)
		}
	})
}

// FuzzPlaceholders: expansion never panics, and a value that passes
// CheckPlaceholders keeps no "${" once every variable resolves.
func FuzzPlaceholders(f *testing.F) {
	for _, seed := range []string{"Bearer ${TOKEN}", "${A}${B}", "${", "${}", "$${X}}", "plain", "${A-B}"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		out, _ := presets.ExpandPlaceholders(v, func(string) (string, bool) { return "x", true })
		if presets.CheckPlaceholders(v) == "" && strings.Contains(out, "${") {
			t.Fatalf("%q checked fine but expanded to %q", v, out)
		}
	})
}
