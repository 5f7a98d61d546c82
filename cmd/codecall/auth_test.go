package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/internal/oauthtest"
	"github.com/codecall-go/codecall/tokenstore"
)

// oauthServersJSON is an upstreams file with the protected MCP server of
// w as upstream "docs".
func oauthServersJSON(t *testing.T, w *oauthtest.World) string {
	t.Helper()
	u := w.Upstream()
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"docs": map[string]any{"url": u.URL, "oauth": u.OAuth}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// codecall auth login runs the flow (the browser's part driven by the
// test from the URL it prints) and stores a 0600 token file; auth status
// shows it without the token; serve calls the upstream with it, with the
// token kept out of the answer, the log and the audit trail; a revoked
// refresh token gives UNAUTHENTICATED naming the login command; auth
// logout deletes the file.
func TestAuthLoginServeLogout(t *testing.T) {
	w := oauthtest.New(t, zitadelProvider, false)
	t.Setenv(oauthtest.SecretEnv, oauthtest.ClientSecret)
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	servers := filepath.Join(dir, "servers.json")
	if err := os.WriteFile(servers, []byte(oauthServersJSON(t, w)), 0o600); err != nil {
		t.Fatal(err)
	}
	auditLog := filepath.Join(dir, "audit.jsonl")
	config := filepath.Join(dir, "codecall.yaml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf("audit: {path: %q}\nupstreams: {tokenDir: %q}\ntools:\n  \"*\": {visibleInListTools: true}\n", auditLog, tokens)), 0o600); err != nil {
		t.Fatal(err)
	}

	// Before the login, status says what to run.
	code, out, errOut := runCLI(t, "auth", "status", "--upstreams", servers, "--token-dir", tokens)
	if code != 0 || !strings.Contains(out, "not-logged-in") || !strings.Contains(out, "codecall auth login docs") {
		t.Fatalf("status before login: exit %d\n%s%s", code, out, errOut)
	}

	code, out, _ = runCLI(t, "check", "--config", config, "--upstreams", servers)
	if code != 0 || !strings.Contains(out, "ok with 1 warning") || !strings.Contains(out, "docs: OAuth, not logged in; serve would report it unauthenticated until you run: codecall auth login docs") {
		t.Errorf("check before login: exit %d\n%s", code, out)
	}

	outR, outW := io.Pipe()
	var errb mcptest.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"auth", "login", "--upstreams", servers, "--token-dir", tokens, "--no-browser", "--timeout", "30s", "docs"},
			strings.NewReader(""), outW, &errb)
		outW.Close()
	}()
	var printed strings.Builder
	browsed := make(chan error, 1)
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		line := sc.Text()
		printed.WriteString(line + "\n")
		if u, ok := strings.CutPrefix(line, "  http"); ok {
			go func() { browsed <- oauthtest.Browse("http" + u) }()
		}
	}
	if code := <-done; code != 0 {
		t.Fatalf("auth login exited %d:\n%s%s", code, printed.String(), errb.String())
	}
	select {
	case err := <-browsed:
		if err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("auth login printed no URL:\n%s", printed.String())
	}
	if !strings.Contains(printed.String(), "logged in to docs; token stored in "+filepath.Join(tokens, "docs.json")+" (mode 0600)") {
		t.Errorf("auth login output:\n%s", printed.String())
	}
	st, err := os.Stat(filepath.Join(tokens, "docs.json"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", err, st)
	}

	code, out, errOut = runCLI(t, "auth", "status", "--json", "--upstreams", servers, "--token-dir", tokens)
	var line authLine
	if code != 0 || json.Unmarshal([]byte(out), &line) != nil || line.Upstream != "docs" || line.State != "logged-in" || !line.OAuth {
		t.Fatalf("status after login: exit %d %s%s", code, out, errOut)
	}
	status := out
	code, out, _ = runCLI(t, "check", "--config", config, "--upstreams", servers)
	if code != 0 || !strings.Contains(out, "docs: OAuth, logged in (token file "+filepath.Join(tokens, "docs.json")+")") {
		t.Errorf("check after login: exit %d\n%s", code, out)
	}
	status += out

	// serve, with the token, over stdio.
	inR, inW := io.Pipe()
	var sout, serr mcptest.Buffer
	served := make(chan int, 1)
	go func() {
		served <- run(context.Background(), []string{"serve", "--upstreams", servers, "--config", config, "--token-dir", tokens}, inR, &sout, &serr)
	}()
	send := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	answer := func(id int) string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			for _, l := range strings.Split(sout.String(), "\n") {
				if strings.Contains(l, fmt.Sprintf(`"id":%d,`, id)) {
					return l
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no answer %d; stdout:\n%s\nstderr:\n%s", id, sout.String(), serr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"docs.whoami","arguments":{}}}`)
	if a := answer(2); !strings.Contains(a, "you are "+oauthtest.User+", token [redacted]") {
		t.Fatalf("docs.whoami: %s", a)
	}
	rec, err := tokenstore.NewDir(tokens).Load(context.Background(), "docs")
	if err != nil {
		t.Fatal(err)
	}
	w.Revoke(t, rec.Token.RefreshToken, "refresh_token")
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"docs.whoami","arguments":{}}}`)
	if a := answer(3); !strings.Contains(a, `UNAUTHENTICATED: upstream \"docs\" refused whoami`) || !strings.Contains(a, "codecall auth login docs") || strings.Contains(a, "&{") {
		t.Errorf("after the refresh token was revoked: %s", a)
	}
	inW.Close()
	if code := <-served; code != 0 {
		t.Fatalf("serve exited %d: %s", code, serr.String())
	}
	audit, err := os.ReadFile(auditLog)
	if err != nil || !strings.Contains(string(audit), "docs.whoami") {
		t.Fatalf("audit log: %v\n%s", err, audit)
	}
	everything := printed.String() + errb.String() + status + sout.String() + serr.String() + string(audit)
	for _, secret := range w.Secrets() {
		if strings.Contains(everything, secret) {
			t.Errorf("secret %.6s... appears in the output, the log or the audit trail", secret)
		}
	}

	code, out, _ = runCLI(t, "auth", "logout", "--upstreams", servers, "--token-dir", tokens, "docs")
	if _, err := os.Stat(filepath.Join(tokens, "docs.json")); code != 0 || !os.IsNotExist(err) || !strings.Contains(out, "deleted the token of docs") {
		t.Errorf("logout: exit %d, %s, file: %v", code, out, err)
	}
}

func TestAuthRefusals(t *testing.T) {
	servers := writeFile(t, "servers.json", `{"mcpServers": {"local": {"command": "true"}, "remote": {"url": "http://127.0.0.1:1/mcp"}}}`)
	tokens := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown upstream", []string{"login", "--upstreams", servers, "--token-dir", tokens, "nope"}, 1, `no upstream "nope" in ` + servers + `; the upstreams are: local, remote`},
		{"stdio upstream", []string{"login", "--upstreams", servers, "--token-dir", tokens, "local"}, 1, "OAuth login is for HTTP and SSE servers"},
		{"no upstream named", []string{"login", "--upstreams", servers}, 2, "Usage:"},
		{"unknown subcommand", []string{"refresh"}, 2, `unknown command "refresh"`},
		{"logout without a token", []string{"logout", "--upstreams", servers, "--token-dir", tokens, "remote"}, 0, "no token stored for remote"},
		{"unreachable server", []string{"login", "--upstreams", servers, "--token-dir", tokens, "--no-browser", "remote"}, 1, "cannot discover its authorization server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"auth"}, tt.args...)...)
			if code != tt.code || !strings.Contains(out+errOut, tt.want) {
				t.Errorf("exit %d, want %d; output lacks %q:\n%s%s", code, tt.code, tt.want, out, errOut)
			}
			if strings.Contains(out+errOut, "&{") {
				t.Errorf("Go value formatting in %s%s", out, errOut)
			}
		})
	}
}

// zitadelProvider is zitadel's example OpenID provider, knowing
// oauthtest's client and user.
func zitadelProvider(issuer, redirectURI string) (http.Handler, func(id, secret, redirectURI string)) {
	clients := map[string]*storage.Client{oauthtest.ClientID: storage.WebClient(oauthtest.ClientID, oauthtest.ClientSecret, redirectURI)}
	h := exampleop.SetupServer(issuer, storage.NewStorageWithClients(storage.NewUserStore(issuer), clients), slog.New(slog.DiscardHandler), false)
	return h, func(id, secret, redirectURI string) { clients[id] = storage.WebClient(id, secret, redirectURI) }
}
