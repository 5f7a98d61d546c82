package middleware_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/middleware"
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
