package demo_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/examples/demo"
)

// ExampleNew builds the demo server and talks to it in process. A real
// deployment serves the same server over a transport instead:
//
//	srv := demo.New()
//	if err := server.ServeStdio(srv); err != nil { log.Fatal(err) }
//
// or over streamable HTTP with server.NewStreamableHTTPServer(srv).Start(":8080").
func ExampleNew() {
	// A fixed clock makes the seed data, and so this example's output,
	// the same on every run.
	srv := demo.New(demo.WithClock(func() time.Time {
		return time.Date(2026, time.March, 10, 12, 0, 0, 0, time.UTC)
	}))

	ctx := context.Background()
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		log.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "example", Version: "1.0.0"}
	info, err := c.Initialize(ctx, init)
	if err != nil {
		log.Fatal(err)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.ServerInfo.Name, "has", len(tools.Tools), "tools")

	req := mcp.CallToolRequest{}
	req.Params.Name = "billing.get_balance"
	req.Params.Arguments = map[string]any{"customer_id": "con_001"}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	balance := res.StructuredContent.(map[string]any)
	fmt.Printf("%s paid $%.2f\n", balance["customer_name"], balance["net_paid_cents"].(float64)/100)

	req.Params.Arguments = map[string]any{"customer_id": "con_999"}
	res, err = c.CallTool(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.IsError, res.Content[0].(mcp.TextContent).Text)

	// Output:
	// codecall-demo has 39 tools
	// Ava Anderson paid $4246.00
	// true customer "con_999" not found; use crm.find_contacts to look up valid ids
}
