package benchmarks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/codecall-go/codecall/examples/demo"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/staticcatalog"
)

// corpusDir is ../shared/corpus from the repository root, or
// CODECALLTEST_CORPUS_DIR.
func corpusDir() string {
	if d := os.Getenv("CODECALLTEST_CORPUS_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "corpus")
}

func corpusServer(tb testing.TB) *server.MCPServer {
	tb.Helper()
	tools, err := staticcatalog.Load(filepath.Join(corpusDir(), "tools.json"))
	if os.IsNotExist(unwrapPathError(err)) {
		tb.Skipf("corpus not found at %s (set CODECALLTEST_CORPUS_DIR): skipping the corpus figures", corpusDir())
	}
	if err != nil {
		tb.Fatal(err)
	}
	return staticcatalog.NewServer("corpus", "1", tools)
}

func unwrapPathError(err error) error {
	for e := err; e != nil; {
		if pe, ok := e.(*os.PathError); ok {
			return pe
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		e = u.Unwrap()
	}
	return err
}

var encodings = sync.OnceValues(func() (map[string]*tiktoken.Tiktoken, error) {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	out := map[string]*tiktoken.Tiktoken{}
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		enc, err := tiktoken.GetEncoding(name)
		if err != nil {
			return nil, err
		}
		out[name] = enc
	}
	return out, nil
})

type listSize struct {
	tools, bytes, o200k, cl100k int
}

// measureList lists tools through a real in-process MCP client and counts
// the JSON result the client's model would see.
func measureList(tb testing.TB, srv *server.MCPServer) listSize {
	tb.Helper()
	ctx := context.Background()
	c := mcptest.Connect(tb, srv, mcptest.Modern())
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		tb.Fatal(err)
	}
	b, err := json.Marshal(res.Tools)
	if err != nil {
		tb.Fatal(err)
	}
	encs, err := encodings()
	if err != nil {
		tb.Fatal(err)
	}
	return listSize{
		tools: len(res.Tools), bytes: len(b),
		o200k:  len(encs["o200k_base"].Encode(string(b), nil, nil)),
		cl100k: len(encs["cl100k_base"].Encode(string(b), nil, nil)),
	}
}

func compareList(t *testing.T, name string, newServer func(testing.TB) *server.MCPServer) {
	plain := measureList(t, newServer(t))
	srv := newServer(t)
	cc, err := middleware.Wrap(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	wrapped := measureList(t, srv)
	t.Logf("%s: every tool listed: %d tools, %d bytes, %d o200k tokens, %d cl100k tokens",
		name, plain.tools, plain.bytes, plain.o200k, plain.cl100k)
	t.Logf("%s: codecall_only:      %d tools, %d bytes, %d o200k tokens, %d cl100k tokens (%.1f%% fewer o200k tokens)",
		name, wrapped.tools, wrapped.bytes, wrapped.o200k, wrapped.cl100k, 100*(1-float64(wrapped.o200k)/float64(plain.o200k)))
	if wrapped.o200k >= 2000 || wrapped.cl100k >= 2000 {
		t.Errorf("codecall_only tools/list is %d o200k / %d cl100k tokens; the target is under 2,000", wrapped.o200k, wrapped.cl100k)
	}
	if wrapped.o200k >= plain.o200k {
		t.Errorf("codecall_only tools/list (%d tokens) is not smaller than listing every tool (%d)", wrapped.o200k, plain.o200k)
	}
}

// TestListSize reports tools/list size with and without CodeCall and holds
// the codecall_only list under DESIGN.md's 2,000-token target.
func TestListSize(t *testing.T) {
	t.Run("demo", func(t *testing.T) {
		compareList(t, "demo", func(testing.TB) *server.MCPServer { return demo.New() })
	})
	t.Run("corpus", func(t *testing.T) {
		skipTokenCountsUnderRace(t)
		compareList(t, "corpus (918 tools)", corpusServer)
	})
}

func BenchmarkListTools(b *testing.B) {
	for _, tc := range []struct {
		name string
		srv  func(testing.TB) *server.MCPServer
	}{{"demo", func(testing.TB) *server.MCPServer { return demo.New() }}, {"corpus", corpusServer}} {
		b.Run(tc.name, func(b *testing.B) {
			srv := tc.srv(b)
			cc, err := middleware.Wrap(srv)
			if err != nil {
				b.Fatal(err)
			}
			defer cc.Close()
			size := measureList(b, srv)
			c := mcptest.Connect(b, srv, mcptest.Modern())
			b.ResetTimer()
			for b.Loop() {
				if _, err := c.ListTools(context.Background(), mcp.ListToolsRequest{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(size.o200k), "o200k-tokens")
			b.ReportMetric(float64(size.bytes), "list-bytes")
		})
	}
}
