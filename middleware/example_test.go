package middleware_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/state"
)

// ExampleWrap wraps an ordinary mcp-go server in one line; tools/list then
// shows the meta-tools, and codecall.search finds the server's tools.
func ExampleWrap() {
	srv := server.NewMCPServer("shop", "1.0.0", server.WithToolCapabilities(true))
	noop := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("done"), nil
	}
	srv.AddTool(mcp.NewTool("billing.refund_payment", mcp.WithDescription("Refund a payment to the customer's card.")), noop)
	srv.AddTool(mcp.NewTool("crm.find_contacts", mcp.WithDescription("Find contacts by name or email.")), noop)

	cc, err := middleware.Wrap(srv)
	if err != nil {
		log.Fatal(err)
	}
	defer cc.Close()

	// Any MCP client sees the same; here, mcp-go's in-process client.
	ctx := context.Background()
	c, _ := client.NewInProcessClient(srv)
	defer c.Close()
	_ = c.Start(ctx)
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		log.Fatal(err)
	}
	list, _ := c.ListTools(ctx, mcp.ListToolsRequest{})
	for _, t := range list.Tools {
		fmt.Println("listed:", t.Name)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "codecall.search"
	req.Params.Arguments = map[string]any{"query": "give a customer their money back", "topK": 1}
	res, _ := c.CallTool(ctx, req)
	fmt.Println("found:", res.StructuredContent.(map[string]any)["tools"].([]any)[0].(map[string]any)["name"])
	// Output:
	// listed: codecall.describe
	// listed: codecall.execute
	// listed: codecall.search
	// found: billing.refund_payment
}

// ExampleWithStateStore keeps plans paused for approval in a state store
// that every replica shares (here Redis), sealed with a key every replica
// reads from the environment. It needs a Redis server, so it has no
// output to check.
func ExampleWithStateStore() {
	ctx := context.Background()
	store, err := state.Open(ctx, state.Spec{Store: "redis", URL: "redis://127.0.0.1:6379/0"})
	if err != nil {
		log.Fatal(err) // the server does not answer, or the URL is wrong
	}
	defer store.Close()
	key, err := state.KeyFromEnv("STATE_KEY") // 32 bytes, base64: openssl rand -base64 32
	if err != nil {
		log.Fatal(err)
	}
	srv := server.NewMCPServer("shop", "1.0.0", server.WithToolCapabilities(true))
	cc, err := middleware.Wrap(srv, middleware.WithStateStore(store, key))
	if err != nil {
		log.Fatal(err)
	}
	defer cc.Close()
}
