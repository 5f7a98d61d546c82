package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/presets"
)

// httpUpstream is an in-process MCP server with an echo tool that also
// reports the Authorization header it was sent, and a slow tool.
func httpUpstream() *server.MCPServer {
	srv := server.NewMCPServer("remote", "1.0.0", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo the text."), mcp.WithString("text", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})
	srv.AddTool(mcp.NewTool("sleep", mcp.WithDescription("Sleep for a second.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(5 * time.Second):
				return mcp.NewToolResultText("slept"), nil
			}
		})
	return srv
}

// authCheck refuses requests without the expected bearer token, and every
// request while down is set, and counts the ones it let through.
func authCheck(want string, next http.Handler, seen *atomic.Int64, down *atomic.Bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down for maintenance", http.StatusBadGateway)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+want {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		seen.Add(1)
		next.ServeHTTP(w, r)
	})
}

func TestHTTPAndSSEUpstreams(t *testing.T) {
	const token = "tok-123456"
	var seen atomic.Int64
	var down atomic.Bool
	// Cleanups run last in, first out: the gateway (registered later) lets
	// go of its streams before the servers close.
	streamable := httptest.NewServer(authCheck(token, server.NewStreamableHTTPServer(httpUpstream()), &seen, &down))
	t.Cleanup(streamable.Close)
	sseSrv := httptest.NewServer(server.NewSSEServer(httpUpstream()))
	t.Cleanup(sseSrv.Close)

	lookup := func(k string) (string, bool) {
		if k == "CODECALLTEST_REMOTE_TOKEN" {
			return token, true
		}
		return "", false
	}
	headers := map[string]string{"Authorization": "Bearer ${CODECALLTEST_REMOTE_TOKEN}"}
	g, logs := newGateway(t, map[string]presets.Upstream{
		"remote": {URL: streamable.URL + "/mcp", Headers: headers, Timeout: 300 * time.Millisecond},
		"events": {Type: presets.UpstreamSSE, URL: sseSrv.URL + "/sse"},
	}, WithLookupEnv(lookup), WithBackoff(time.Hour, time.Hour))
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := connect(t, g.Server())
	if res := call(t, s, "remote.echo", map[string]any{"text": "over http"}); text(res) != "over http" {
		t.Errorf("remote.echo = %+v", res)
	}
	if seen.Load() == 0 {
		t.Error("the resolved Authorization header never reached the upstream")
	}
	if res := call(t, s, "events.echo", map[string]any{"text": "over sse"}); text(res) != "over sse" {
		t.Errorf("events.echo = %+v", res)
	}
	// The upstream's timeout caps the call.
	start := time.Now()
	res := call(t, s, "remote.sleep", nil)
	if !res.IsError || !strings.HasPrefix(text(res), "TIMEOUT:") || time.Since(start) > 3*time.Second {
		t.Errorf("remote.sleep = %+v after %v, want TIMEOUT after about 300ms", res, time.Since(start))
	}
	if strings.Contains(logs.String(), token) {
		t.Errorf("the token leaks into the log:\n%s", logs)
	}

	// A remote server that goes away makes its tools UNAVAILABLE, and the
	// other upstream keeps working.
	down.Store(true)
	res = call(t, s, "remote.echo", map[string]any{"text": "gone"})
	if !res.IsError || !strings.HasPrefix(text(res), UnavailablePrefix) {
		t.Errorf("call to a stopped HTTP upstream = %+v, want UNAVAILABLE", res)
	}
	if res := call(t, s, "events.echo", map[string]any{"text": "still"}); text(res) != "still" {
		t.Errorf("events.echo after the other upstream died = %+v", res)
	}
}

// A client's cancellation reaches a tool running on an HTTP upstream.
func TestHTTPCancellationReachesUpstream(t *testing.T) {
	cancelled := make(chan struct{}, 1)
	up := server.NewMCPServer("remote", "1.0.0", server.WithToolCapabilities(true))
	up.AddTool(mcp.NewTool("wait", mcp.WithDescription("Wait until cancelled.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-ctx.Done():
				cancelled <- struct{}{}
				return nil, ctx.Err()
			case <-time.After(20 * time.Second):
				return mcp.NewToolResultText("finished"), nil
			}
		})
	hs := httptest.NewServer(server.NewStreamableHTTPServer(up))
	t.Cleanup(hs.Close)
	g, _ := newGateway(t, map[string]presets.Upstream{"remote": {URL: hs.URL + "/mcp"}})
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := connect(t, g.Server())
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = "remote.wait"
	if _, err := s.CallTool(ctx, req); err == nil {
		t.Fatal("the cancelled call returned no error")
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream tool never saw the cancellation")
	}
}

// legacyOnly answers server/discover with "method not found", so clients
// fall back to the initialize handshake of the 2025 revisions, as most
// servers in use today require; it reports notifications/cancelled.
func legacyOnly(next http.Handler, cancels chan<- string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     any    `json:"id"`
			Method string `json:"method"`
			Params struct {
				RequestID any `json:"requestId"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		switch msg.Method {
		case "server/discover":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID,
				"error": map[string]any{"code": mcp.METHOD_NOT_FOUND, "message": "Method not found"}})
			return
		case string(mcp.MethodNotificationCancelled):
			cancels <- fmt.Sprint(msg.Params.RequestID)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// On a legacy HTTP connection the gateway tells the upstream with
// notifications/cancelled, which mcp-go's client alone does not send there.
func TestLegacyHTTPCancellationSendsNotification(t *testing.T) {
	cancels := make(chan string, 4)
	up := server.NewMCPServer("legacy", "1.0.0", server.WithToolCapabilities(true))
	up.AddTool(mcp.NewTool("wait", mcp.WithDescription("Wait for 20 seconds.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(20 * time.Second):
				return mcp.NewToolResultText("finished"), nil
			}
		})
	hs := httptest.NewServer(legacyOnly(server.NewStreamableHTTPServer(up), cancels))
	t.Cleanup(hs.Close)
	g, _ := newGateway(t, map[string]presets.Upstream{"legacy": {URL: hs.URL + "/mcp"}})
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := connect(t, g.Server())
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = "legacy.wait"
	if _, err := s.CallTool(ctx, req); err == nil {
		t.Fatal("the cancelled call returned no error")
	}
	select {
	case id := <-cancels:
		if id == "" || id == "<nil>" {
			t.Errorf("notifications/cancelled without a requestId")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream never received notifications/cancelled")
	}
}

// TestUnauthenticatedCallIsMarked checks that a call an HTTP upstream
// refuses with 401 ends as an error result whose data says
// UNAUTHENTICATED, not retryable, and does not mark the upstream dead.
func TestUnauthenticatedCallIsMarked(t *testing.T) {
	var refuse atomic.Bool
	inner := server.NewStreamableHTTPServer(httpUpstream())
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() && r.Method == http.MethodPost {
			http.Error(w, "token expired", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(remote.Close)
	g, _ := newGateway(t, map[string]presets.Upstream{"remote": {URL: remote.URL + "/mcp", Timeout: 5 * time.Second}},
		WithBackoff(time.Hour, time.Hour))
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := connect(t, g.Server())
	if res := call(t, s, "remote.echo", map[string]any{"text": "hi"}); res.IsError {
		t.Fatalf("first call: %s", text(res))
	}
	refuse.Store(true)
	res := call(t, s, "remote.echo", map[string]any{"text": "hi"})
	if !res.IsError || !strings.HasPrefix(text(res), "UNAUTHENTICATED: ") {
		t.Fatalf("refused call: isError %v, %s", res.IsError, text(res))
	}
	data, _ := res.Meta.AdditionalFields["codecall/error"].(map[string]any)
	if data["code"] != "UNAUTHENTICATED" || data["retryable"] != false {
		t.Errorf("error data %v", data)
	}
	if st := g.Status()[0]; st.State != "ready" {
		t.Errorf("a refused call marked the upstream %s", st.State)
	}
}
