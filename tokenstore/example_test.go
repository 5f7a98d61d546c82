package tokenstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/codecall-go/codecall/tokenstore"
)

// An upstream's view of the store is what mcp-go's OAuth handler reads
// its bearer token from and writes refreshed tokens to.
func ExampleForUpstream() {
	dir, _ := os.MkdirTemp("", "tokens")
	defer os.RemoveAll(dir)
	store := tokenstore.NewDir(filepath.Join(dir, "tokens"))
	docs := tokenstore.ForUpstream(store, "docs", "https://docs.example.com/mcp", nil)

	cfg := transport.OAuthConfig{TokenStore: docs, PKCEEnabled: true}
	_ = cfg // transport.NewStreamableHTTP(url, transport.WithHTTPOAuth(cfg))

	_ = docs.SaveToken(context.Background(), &transport.Token{AccessToken: "a", RefreshToken: "r", TokenType: "Bearer"})
	st, _ := os.Stat(store.File("docs"))
	fmt.Printf("%s %v\n", filepath.Base(store.File("docs")), st.Mode().Perm())
	// Output: docs.json -rw-------
}
