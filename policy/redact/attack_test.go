package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestSecretsDoNotLeak plants one recognisable secret in many shapes a
// tool result or a plan's arguments can take, and checks that no redacted
// form contains it: Value, JSON, Text and ToolResult all see every case.
func TestSecretsDoNotLeak(t *testing.T) {
	const s = "hunter2-Sup3rS3cret"
	j := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	cases := map[string]string{
		"plain key":             `{"password":"` + s + `"}`,
		"key spellings":         `{"PASSWORD":"` + s + `","Pass_Word":"` + s + `","X-API-KEY":"` + s + `","clientSecret":"` + s + `","AUTHORIZATION":"` + s + `"}`,
		"numbered key":          `{"password2":"` + s + `","api_key_1":"` + s + `"}`,
		"format word key":       `{"SecretString":"` + s + `","token_value":"` + s + `","private_key_pem":"` + s + `"}`,
		"nested arrays":         `[[[{"a":[{"token":"` + s + `"}]}]]]`,
		"object under key":      `{"credentials":{"user":"u","value":"` + s + `"}}`,
		"array under key":       `{"secrets":["` + s + `"]}`,
		"JSON text":             j(map[string]any{"text": `{"password":"` + s + `"}`}),
		"JSON text, spaced":     j(map[string]any{"text": "\n  { \"password\" :\n \"" + s + "\" }\n"}),
		"JSON text in JSON":     j(map[string]any{"text": j(map[string]any{"inner": `{"apiKey":"` + s + `"}`})}),
		"assignment text":       `{"log":"connecting with password = ` + s + ` failed"}`,
		"query string":          `{"url":"https://api.example.com/x?api_key=` + s + `&q=1"}`,
		"url userinfo":          `{"dsn":"postgres://app:` + s + `@db:5432/shop"}`,
		"header text":           `{"raw":"Authorization: Bearer ` + s + `"}`,
		"escaped JSON text":     `{"raw":"{\\\"client_secret\\\":\\\"` + s + `\\\"}"}`,
		"list of tokens":        `{"tokens":[{"token":"` + s + `"}]}`,
		"single-quoted label":   `{"cfg":"{'password': '` + s + `'}"}`,
		"yaml-ish text":         `{"cfg":"db:\n  password: ` + s + `\n  host: x"}`,
		"cookie header":         `{"h":"Cookie: ` + s + `"}`,
		"set-cookie key":        `{"Set-Cookie":"sid=` + s + `"}`,
		"auth object":           `{"basic_auth":{"username":"u","password":"` + s + `"}}`,
		"key with spaces":       `{"Api Key":"` + s + `"}`,
		"deep but within limit": strings.Repeat(`{"a":`, 100) + `{"token":"` + s + `"}` + strings.Repeat(`}`, 100),
	}
	r := Default()
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			if !json.Valid([]byte(doc)) {
				t.Fatalf("bad test JSON: %s", doc)
			}
			outs := map[string]string{
				"JSON": string(r.JSON(json.RawMessage(doc), nil)),
				"Text": r.Text(doc, nil),
			}
			b, _ := encodeJSON(r.Value(decode(t, doc), nil))
			outs["Value"] = string(b)
			res := r.ToolResult(mcp.NewToolResultText(doc), nil)
			outs["ToolResult"] = res.Content[0].(mcp.TextContent).Text
			for how, out := range outs {
				if strings.Contains(out, s) || strings.Contains(out, "Sup3rS3cret") {
					t.Errorf("%s leaked the secret: %s", how, out)
				}
			}
		})
	}
}
