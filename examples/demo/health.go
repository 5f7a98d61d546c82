package demo

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
)

// health is the one tool without an app prefix. Its metadata asks CodeCall to
// keep it in tools/list next to the meta-tools, so a client can check the
// server without going through search.

type healthView struct {
	Status    string         `json:"status" enum:"healthStatuses" jsonschema:"ok when the server answers"`
	Server    string         `json:"server" jsonschema:"Server name"`
	Version   string         `json:"version" jsonschema:"Server version"`
	Tools     int            `json:"tools" jsonschema:"Number of tools registered on the server, CodeCall's own included"`
	DemoTools int            `json:"demo_tools" jsonschema:"Number of demo tools"`
	Time      string         `json:"time" jsonschema:"The server's clock (RFC 3339)"`
	Records   map[string]int `json:"records" jsonschema:"Number of records per collection in the store"`
}

func (s *store) healthTools() []server.ServerTool {
	tool := newTool("health", "Health check",
		"Report whether the demo server is up, how many tools it has and how many records its store holds.",
		readOnly, withOutput[healthView]())
	tool = catalog.SetMeta(tool, catalog.Meta{VisibleInListTools: catalog.Bool(true)})
	return []server.ServerTool{{Tool: tool, Handler: s.health}}
}

func (s *store) health(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := healthView{
		Status: "ok", Server: Name, Version: Version, Tools: s.toolCount, DemoTools: s.toolCount, Time: stamp(s.now()),
		Records: map[string]int{
			"users": len(s.users), "contacts": len(s.contacts), "products": len(s.products),
			"invoices": len(s.invoices), "payments": len(s.payments), "refunds": len(s.refunds),
			"tickets": len(s.tickets), "events": len(s.events), "messages": len(s.messages),
		},
	}
	// The server handling the call knows every tool, including ones added
	// next to the demo's and CodeCall's meta-tools.
	if srv := server.ServerFromContext(ctx); srv != nil {
		out.Tools = len(srv.ListTools())
	}
	return structured(out), nil
}
