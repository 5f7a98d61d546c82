// Command quickstart is the smallest CodeCall server: an ordinary mcp-go
// server with two tools, wrapped in one line and served over stdio.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/middleware"
)

func main() {
	srv := server.NewMCPServer("quickstart", "1.0.0", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("text.upper",
		mcp.WithDescription("Convert text to upper case."),
		mcp.WithString("text", mcp.Required(), mcp.Description("Text to convert")),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false),
	), upper)
	srv.AddTool(mcp.NewTool("text.count_words",
		mcp.WithDescription("Count the words in a text."),
		mcp.WithString("text", mcp.Required(), mcp.Description("Text to count")),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false),
	), countWords)

	// The one line: tools/list now shows codecall.search and codecall.describe.
	cc, err := middleware.Wrap(srv)
	if err != nil {
		log.Fatal(err)
	}
	defer cc.Close()

	if err := server.ServeStdio(srv); err != nil {
		log.Fatal(err)
	}
}

func upper(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	text, err := req.RequireString("text")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText(strings.ToUpper(text)), nil
}

func countWords(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	text, err := req.RequireString("text")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText(fmt.Sprint(len(strings.Fields(text)))), nil
}
