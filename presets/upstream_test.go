package presets

import (
	"strings"
	"testing"
)

func TestUpstreamsValidation(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // substrings of the error; none means valid
	}{
		{"stdio", "upstreams: {servers: {mem: {command: npx, args: [-y, x], env: {A: \"${B}\"}, timeout: 5s}}}", nil},
		{"http", "upstreams: {servers: {gh: {url: \"https://h/mcp\", headers: {Authorization: \"Bearer ${T}\"}}}}", nil},
		{"sse", "upstreams: {separator: \"__\", start: lazy, servers: {ev: {type: sse, url: \"http://h/sse\"}}}", nil},
		{"bad id", "upstreams: {servers: {\"a.b\": {command: x}}}", []string{`servers["a.b"]`, "server id"}},
		{"no command", "upstreams: {servers: {a: {args: [x]}}}", []string{`servers["a"].command`, "required"}},
		{"both", "upstreams: {servers: {a: {command: x, url: \"http://h/\"}}}", []string{"both command and url"}},
		{"bad url", "upstreams: {servers: {a: {url: \"ftp://h/\"}}}", []string{`servers["a"].url`}},
		{"bad type", "upstreams: {servers: {a: {type: grpc, url: \"http://h/\"}}}", []string{"unknown type"}},
		{"stdio keys on http", "upstreams: {servers: {a: {url: \"http://h/\", cwd: /tmp}}}", []string{"cwd", "only applies to stdio"}},
		{"bad placeholder", "upstreams: {servers: {a: {command: x, env: {A: \"${B\"}}}}", []string{`env["A"]`, "closing"}},
		{"bad env name", "upstreams: {servers: {a: {command: x, envAllowlist: [\"A B\"]}}}", []string{"envAllowlist[0]"}},
		{"bad glob", "upstreams: {servers: {a: {command: x, includeTools: [\"[\"]}}}", []string{"includeTools[0]"}},
		{"bad start", "upstreams: {start: sometimes}", []string{"upstreams.start", "eager, lazy"}},
		{"bad separator", "upstreams: {separator: \" \"}", []string{"upstreams.separator"}},
		{"unknown key", "upstreams: {servers: {a: {comand: x}}}", []string{"comand"}},
		{"openapi", "upstreams: {servers: {shop: {openapi: shop.yaml, baseUrl: \"https://api.example.com/v1\", auth: {bearer: \"${T}\", query: {key: \"${K}\"}}, headers: {X-Key: \"${K}\"}, operations: {createOrder: {requiresApproval: true, timeout: 5s}}, maxResponseBytes: 1MiB, allowPrivateNetwork: true}}}", nil},
		{"openapi with a command", "upstreams: {servers: {a: {openapi: x.yaml, command: x}}}", []string{`servers["a"].command`, "no command"}},
		{"openapi env", "upstreams: {servers: {a: {openapi: x.yaml, env: {A: b}}}}", []string{`servers["a"].env`, "OpenAPI app"}},
		{"openapi keys on http", "upstreams: {servers: {a: {url: \"http://h/\", baseUrl: \"http://h/\"}}}", []string{`servers["a"].baseUrl`, "only applies to OpenAPI apps"}},
		{"openapi bad query placeholder", "upstreams: {servers: {a: {openapi: x.yaml, auth: {query: {k: \"${K\"}}}}}", []string{`auth.query["k"]`}},
		{"openapi negative timeout", "upstreams: {servers: {a: {openapi: x.yaml, operations: {op: {timeout: -1s}}}}}", []string{`operations["op"].timeout`}},
		{"openapi bad size", "upstreams: {servers: {a: {openapi: x.yaml, maxResponseBytes: lots}}}", []string{"maxResponseBytes"}},
		{"openapi client credentials", "upstreams: {servers: {a: {openapi: x.yaml, auth: {clientCredentials: {tokenUrl: \"https://auth.example.com/oauth/token\", clientId: codecall, clientSecret: \"${SECRET}\", scopes: [books]}}}}}", nil},
		{"openapi client credentials incomplete", "upstreams: {servers: {a: {openapi: x.yaml, auth: {bearer: \"${T}\", clientCredentials: {tokenUrl: \"auth.example.com\"}}}}}", []string{"auth.clientCredentials", "either auth.bearer or", "tokenUrl", "clientId", "clientSecret", "${VAR}"}},
		{"openapi ftp", "upstreams: {servers: {a: {openapi: \"ftp://h/x.yaml\"}}}", []string{"http:// or https://"}},
		{"sandbox settings", "upstreams: {servers: {a: {command: x, sandbox: default, allowNetwork: true, paths: [/srv/data, \"~/.config/x:ro\"], maxMemory: 1GiB, maxProcesses: 64}}}", nil},
		{"sandbox none", "upstreams: {servers: {a: {command: x, sandbox: none}}}", nil},
		{"unknown sandbox", "upstreams: {servers: {a: {command: x, sandbox: strict}}}", []string{`servers["a"].sandbox`, `unknown sandbox "strict"`, "default", "none"}},
		{"relative path", "upstreams: {servers: {a: {command: x, paths: [data]}}}", []string{`servers["a"].paths[0]`, "absolute path", ":ro"}},
		{"root path", "upstreams: {servers: {a: {command: x, paths: [\"/:ro\"]}}}", []string{`servers["a"].paths[0]`, "other than /"}},
		{"settings with sandbox none", "upstreams: {servers: {a: {command: x, sandbox: none, allowNetwork: true}}}", []string{`servers["a"].allowNetwork`, "no effect with sandbox: none"}},
		{"sandbox on http", "upstreams: {servers: {a: {url: \"http://h/\", sandbox: none, paths: [/x]}}}", []string{`servers["a"].sandbox`, `servers["a"].paths`, "only applies to stdio"}},
		{"pinning settings", "upstreams: {pinDefinitions: false, newTools: quarantine, stateDir: /var/lib/codecall}", nil},
		{"unknown newTools", "upstreams: {newTools: ask}", []string{"upstreams.newTools", `unknown rule "ask"`, "accept", "quarantine"}},
		{"relative stateDir", "upstreams: {stateDir: state}", []string{"upstreams.stateDir", "absolute"}},
		{"negative caps", "upstreams: {servers: {a: {command: x, maxProcesses: -1}}}", []string{`servers["a"].maxProcesses`, "negative"}},
		{"oauth", "upstreams: {tokenDir: /var/lib/codecall/tokens, servers: {a: {url: \"https://h/mcp\", oauth: {clientId: codecall, clientSecretEnv: A_SECRET, scopes: [read, offline_access], redirectPort: 8765, authServerMetadataUrl: \"https://auth.h/.well-known/oauth-authorization-server\"}}}}", nil},
		{"oauth dynamic registration", "upstreams: {servers: {a: {url: \"https://h/mcp\", oauth: {scopes: [read]}}}}", nil},
		{"oauth on stdio", "upstreams: {servers: {a: {command: x, oauth: {clientId: c}}}}", []string{`servers["a"].oauth`, "only applies to HTTP and SSE"}},
		{"oauth bad values", "upstreams: {servers: {a: {url: \"https://h/mcp\", oauth: {clientSecretEnv: \"${S}\", scopes: [\"a b\"], redirectPort: 70000, authServerMetadataUrl: x}}}}", []string{"oauth.clientSecretEnv", "not an environment variable name", "oauth.scopes[0]", "oauth.redirectPort", "oauth.authServerMetadataUrl"}},
		{"oauth secret without client", "upstreams: {servers: {a: {url: \"https://h/mcp\", oauth: {clientSecretEnv: S}}}}", []string{"oauth.clientSecretEnv", "needs clientId"}},
		{"oauth and authorization header", "upstreams: {servers: {a: {url: \"https://h/mcp\", headers: {authorization: \"Bearer ${T}\"}, oauth: {}}}}", []string{`servers["a"].oauth`, "Authorization header"}},
		{"relative tokenDir", "upstreams: {tokenDir: tokens}", []string{"upstreams.tokenDir", "absolute"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), nil)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("valid config rejected: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("invalid config accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestExpandPlaceholders(t *testing.T) {
	env := map[string]string{"A": "1", "B": "two"}
	got, missing := ExpandPlaceholders("x${A}-${B}-${C}", func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if got != "x1-two-" || len(missing) != 1 || missing[0] != "C" {
		t.Errorf("got %q, missing %v", got, missing)
	}
}
