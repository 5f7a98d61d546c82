package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func TestDecideExposure(t *testing.T) {
	tests := []struct {
		addr, token string
		insecure    bool
		want        string // substring of String(), or of the error
		refused     bool
	}{
		{"127.0.0.1:8080", "", false, "loopback only, no bearer token", false},
		{"[::1]:8080", "", false, "loopback only", false},
		{"localhost:8080", "", false, "loopback only", false},
		{"127.0.0.1:8080", "t", false, "loopback only, bearer token required", false},
		{":8080", "t", false, "every network interface, bearer token required", false},
		{"192.0.2.7:8080", "t", false, "a network address (192.0.2.7), bearer token required", false},
		{":8080", "", true, "OPEN: reachable on every network interface with no authentication", false},
		{":8080", "", false, "--http :8080 listens on every network interface with no bearer token", true},
		{"0.0.0.0:8080", "", false, "bind a loopback address such as 127.0.0.1:8080", true},
		{"[::]:8080", "", false, "every network interface", true},
		{"gateway.example:8080", "", false, "a network address (gateway.example)", true},
		{"127.0.0.1:8080", "t", true, "both given", true},
		{"8080", "", false, "want host:port", true},
	}
	for _, tt := range tests {
		e, err := decideExposure(tt.addr, tt.token, tt.insecure)
		got := e.String()
		if err != nil {
			got = err.Error()
		}
		if (err != nil) != tt.refused || !strings.Contains(got, tt.want) {
			t.Errorf("decideExposure(%q, token %q, insecure %v) = %q, %v; want %q (refused %v)", tt.addr, tt.token, tt.insecure, e, err, tt.want, tt.refused)
		}
	}
	if _, err := decideExposure(":8080", "", false); !errors.Is(err, errOpenHTTP) {
		t.Errorf("the refusal of an open endpoint does not wrap errOpenHTTP: %v", err)
	}
}

func TestSameToken(t *testing.T) {
	for _, tt := range []struct {
		got, want string
		same      bool
	}{{"s3cret", "s3cret", true}, {"s3cre", "s3cret", false}, {"s3cret!", "s3cret", false}, {"", "s3cret", false}} {
		if sameToken(tt.got, tt.want) != tt.same {
			t.Errorf("sameToken(%q, %q) = %v", tt.got, tt.want, !tt.same)
		}
	}
}

// serve --http on an address other than loopback refuses to start without
// a token, and check says so.
func TestServeHTTPRefusesAnOpenEndpoint(t *testing.T) {
	for _, addr := range []string{":0", "0.0.0.0:0"} {
		code, _, errOut := runCLI(t, "serve", "--http", addr)
		if code != 1 || !strings.Contains(errOut, "no bearer token") || !strings.Contains(errOut, "--http-insecure-no-auth") || !strings.Contains(errOut, "--token-env") {
			t.Errorf("serve --http %s: code %d, %q; want a refusal saying how to proceed", addr, code, errOut)
		}
	}
	if code, _, errOut := runCLI(t, "serve", "--http-insecure-no-auth"); code != 1 || !strings.Contains(errOut, "--http only") {
		t.Errorf("--http-insecure-no-auth without --http: code %d, %q", code, errOut)
	}

	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--http", "0.0.0.0:8080"}, 1, "http 0.0.0.0:8080: REFUSED: serve would not start: open HTTP endpoint refused: --http 0.0.0.0:8080 listens on every network interface"},
		{[]string{"--http", "127.0.0.1:8080"}, 0, "http 127.0.0.1:8080: loopback only, no bearer token"},
		{[]string{"--http", ":8080", "--token", "t"}, 0, "http :8080: reachable on every network interface, bearer token required"},
		{[]string{"--http", ":8080", "--http-insecure-no-auth"}, 0, "http :8080: OPEN"},
	} {
		code, out, _ := runCLI(t, append([]string{"check"}, tt.args...)...)
		if code != tt.code || !strings.Contains(out, tt.want) {
			t.Errorf("check %v: code %d, %q; want %d and %q", tt.args, code, out, tt.code, tt.want)
		}
	}
}

// With a token on a network address, requests without it or with a wrong
// one get 401 with WWW-Authenticate: Bearer, and an MCP client with it
// is served.
func TestServeHTTPWithTokenOnANetworkAddress(t *testing.T) {
	addr := freeAddr(t, "0.0.0.0")
	_, port, _ := net.SplitHostPort(addr)
	local := "127.0.0.1:" + port
	t.Setenv("CODECALLTEST_HTTP_TOKEN", "s3cret-token")
	config := writeFile(t, "codecall.yaml", "preset: balanced\n")
	stderr := serveInBackground(t, "serve", "--http", addr, "--token-env", "CODECALLTEST_HTTP_TOKEN", "--config", config)
	waitHTTP(t, local, stderr)

	for _, auth := range []string{"", "Bearer wrong", "Bearer s3cret-token-but-longer", "Basic czNjcmV0LXRva2Vu"} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+local+"/mcp", strings.NewReader(initializeRequest))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("Authorization %q: status %d, WWW-Authenticate %q; want 401 and a Bearer challenge", auth, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	connect := func(token string) (*client.Client, error) {
		tr, err := transport.NewStreamableHTTP("http://"+local+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
		if err != nil {
			return nil, err
		}
		c := client.NewClient(tr)
		if err := c.Start(ctx); err != nil {
			return nil, err
		}
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
		init.Params.ClientInfo = mcp.Implementation{Name: "t", Version: "1"}
		if _, err := c.Initialize(ctx, init); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
	if c, err := connect("wrong"); err == nil {
		c.Close()
		t.Error("an MCP client with a wrong token was served")
	}
	c, err := connect("s3cret-token")
	if err != nil {
		t.Fatalf("an MCP client with the token: %v\n%s", err, stderr.String())
	}
	defer c.Close()
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil || len(list.Tools) == 0 {
		t.Fatalf("tools/list with the token: %v, %v", list, err)
	}
	if !strings.Contains(stderr.String(), "bearer token required") {
		t.Errorf("the start-up log does not say who can reach the endpoint:\n%s", stderr.String())
	}
}

// The opt-out serves without a token and says so loudly.
func TestServeHTTPInsecureOptOutWarns(t *testing.T) {
	addr := freeAddr(t, "0.0.0.0")
	_, port, _ := net.SplitHostPort(addr)
	config := writeFile(t, "codecall.yaml", "preset: balanced\n")
	stderr := serveInBackground(t, "serve", "--http", addr, "--http-insecure-no-auth", "--config", config)
	waitHTTP(t, "127.0.0.1:"+port, stderr) // the warning comes before the listener
	if log := stderr.String(); !strings.Contains(log, "level=WARN") || !strings.Contains(log, "SERVING WITHOUT AUTHENTICATION") || !strings.Contains(log, "exposure=\"OPEN:") {
		t.Errorf("no warning for an open endpoint:\n%s", log)
	}
}
