package gateway_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"

	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/gateway"
	"github.com/codecall-go/codecall/middleware"
)

// Put CodeCall in front of the servers of a client configuration file.
func Example() {
	servers, err := gateway.ParseServers([]byte(`{"mcpServers": {
		"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory@2026.8.31"]},
		"remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"}}
	}}`))
	if err != nil {
		log.Fatal(err)
	}
	gw, err := gateway.New(servers, gateway.WithLazyStart(true))
	if err != nil {
		log.Fatal(err)
	}
	defer gw.Close()
	// Eager gateways connect here; a lazy one on the first client request.
	if err := gw.Start(context.Background()); err != nil {
		log.Print(err) // broken upstreams are retried; the others are served
	}
	cc, err := middleware.Wrap(gw.Server())
	if err != nil {
		log.Fatal(err)
	}
	defer cc.Close()
	for _, st := range gw.Status() {
		fmt.Println(st.ID, st.Transport, st.State)
	}
	_ = server.NewStreamableHTTPServer(gw.Server()) // or server.ServeStdio(gw.Server())
	// Output:
	// memory stdio idle
	// remote http idle
}

// Parse a client configuration file; an unknown key is an error naming it.
func ExampleParseServers() {
	servers, err := gateway.ParseServers([]byte(`{"mcpServers": {"fs": {"command": "npx", "timeout": "30s", "disabled": false}}}`))
	fmt.Println(servers["fs"].Command, servers["fs"].Timeout, servers["fs"].IsEnabled(), err)
	_, err = gateway.ParseServers([]byte(`{"mcpServers": {"fs": {"comand": "npx"}}}`))
	fmt.Println(err != nil)
	// Output:
	// npx 30s true <nil>
	// true
}

// Say which upstream a start waits for, and how each start ended: npx may
// spend a minute downloading a server.
func ExampleWithProgress() {
	servers, err := gateway.ParseServers([]byte(`{"mcpServers": {"broken": {"command": "/nonexistent/mcp-server"}}}`))
	if err != nil {
		log.Fatal(err)
	}
	gw, err := gateway.New(servers, gateway.WithLogger(slog.New(slog.DiscardHandler)), gateway.WithProgress(func(e gateway.StartEvent) {
		switch {
		case !e.Done:
			fmt.Printf("starting %s (%s)\n", e.Upstream, e.Transport)
		case e.Err != nil:
			fmt.Printf("%s failed\n", e.Upstream)
		default:
			fmt.Printf("%s started in %d ms with %d tools\n", e.Upstream, e.Elapsed.Milliseconds(), e.Tools)
		}
	}))
	if err != nil {
		log.Fatal(err)
	}
	defer gw.Close()
	_ = gw.Start(context.Background()) // the error lists the upstreams that failed
	// Output:
	// starting broken (stdio)
	// broken failed
}
