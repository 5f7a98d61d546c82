package main

import (
	"fmt"
	"log/slog"

	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/examples/demo"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/staticcatalog"
)

// source says which tools to serve.
type source struct {
	configFile  string
	catalogFile string
}

// build creates the server for a source and wraps it in CodeCall.
func (s source) build(logger *slog.Logger, watch bool) (*server.MCPServer, *middleware.CodeCall, error) {
	var srv *server.MCPServer
	if s.catalogFile != "" {
		tools, err := staticcatalog.Load(s.catalogFile)
		if err != nil {
			return nil, nil, err
		}
		srv = staticcatalog.NewServer("codecall-catalog", version, tools)
	} else {
		srv = demo.New()
	}
	opts := []middleware.Option{middleware.WithLogger(logger)}
	if s.configFile != "" {
		opts = append(opts, middleware.WithConfigFile(s.configFile))
		if !watch {
			opts = append(opts, middleware.WithoutReload())
		}
	}
	cc, err := middleware.Wrap(srv, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("%w", err)
	}
	return srv, cc, nil
}
