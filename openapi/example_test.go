package openapi_test

import (
	"context"
	"fmt"
	"log"

	"github.com/codecall-go/codecall/openapi"
)

// An OpenAPI document becomes one tool per operation; the app's Server
// offers them to an MCP client (package gateway does this for an upstream
// of type openapi).
func ExampleNew() {
	doc, err := openapi.Load(context.Background(), "../examples/openapi/bookshop.yaml")
	if err != nil {
		log.Fatal(err)
	}
	app, err := openapi.New(doc, openapi.WithApp("shop"), openapi.WithSelect(func(op openapi.OperationRef) bool {
		return op.Method == "GET"
	}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(app.BaseURL())
	for _, op := range app.Operations() {
		fmt.Printf("%s: %s %s (read-only %v)\n", op.Name, op.Method, op.Path, *op.Tool.Annotations.ReadOnlyHint)
	}
	// Output:
	// http://127.0.0.1:4010
	// get_admin_stats: GET /admin/stats (read-only true)
	// listBooks: GET /books (read-only true)
	// getBook: GET /books/{bookId} (read-only true)
	// getCategory: GET /categories/{categoryId} (read-only true)
	// getOrder: GET /orders/{orderId} (read-only true)
}
