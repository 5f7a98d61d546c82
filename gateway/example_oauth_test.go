package gateway_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/codecall-go/codecall/gateway"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/tokenstore"
)

// Log the gateway in to a remote server that needs OAuth, once, then serve
// it with the stored token (refreshed as it expires).
func ExampleLogin() {
	docs := presets.Upstream{URL: "https://docs.example.com/mcp", OAuth: &presets.UpstreamOAuth{Scopes: []string{"docs.read"}}}
	dir, err := tokenstore.DefaultDir()
	if err != nil {
		log.Fatal(err)
	}
	store := tokenstore.NewDir(dir)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rec, err := gateway.Login(ctx, "docs", docs, store, gateway.WithAuthorizationURL(func(url string) {
		fmt.Println("Open in a browser:", url)
	}))
	if err != nil {
		log.Fatal(err) // says what to change: a client to register, a port, a scope
	}
	fmt.Println("logged in; refresh token:", rec.Token.RefreshToken != "")

	gw, err := gateway.New(map[string]presets.Upstream{"docs": docs}, gateway.WithTokenStore(store))
	if err != nil {
		log.Fatal(err)
	}
	defer gw.Close()
}
