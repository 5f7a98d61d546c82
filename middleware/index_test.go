package middleware_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/search"
)

// heldBuilds is a search.BuildFunc that holds each index build until the
// test lets it go, so the test knows a build is in flight without racing a
// timer. A held build ends early when its context does (CodeCall closed).
type heldBuilds struct {
	mu      sync.Mutex
	gates   []chan struct{}
	entered chan int // the number (from 1) of each build that started
}

func newHeldBuilds() *heldBuilds { return &heldBuilds{entered: make(chan int, 16)} }

func (h *heldBuilds) build(ctx context.Context, tools []*catalog.Tool, opts ...search.Option) (*search.Index, error) {
	h.mu.Lock()
	gate := make(chan struct{})
	h.gates = append(h.gates, gate)
	n := len(h.gates)
	h.mu.Unlock()
	h.entered <- n
	select {
	case <-gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return search.New(tools, opts...)
}

// release lets build n (from 1) go on.
func (h *heldBuilds) release(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.gates[n-1])
}

// awaitBuild waits for build n to start.
func (h *heldBuilds) awaitBuild(t *testing.T, n int) {
	t.Helper()
	select {
	case got := <-h.entered:
		if got != n {
			t.Fatalf("build %d started, want build %d", got, n)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("build %d never started", n)
	}
}

// TestLargeCatalogServesWhileIndexing: with a catalog above the
// background threshold, Wrap, initialize and tools/list do not wait for
// the search index; codecall.search waits for it (telling a client that
// asked for progress why), and after a tool change answers from the
// previous index until the new one is built.
func TestLargeCatalogServesWhileIndexing(t *testing.T) {
	srv := newShop(t)
	held := newHeldBuilds()
	wrapped := make(chan *middleware.CodeCall, 1)
	go func() {
		// Wrap runs in a goroutine only so that a regression fails below
		// with a message instead of hanging the test on the held build.
		cc, err := middleware.Wrap(srv, middleware.WithConfig(config(nil)), middleware.WithoutReload(),
			middleware.WithBackgroundIndexAbove(2), middleware.WithIndexBuild(held.build))
		if err != nil {
			t.Error(err)
		}
		wrapped <- cc
	}()
	held.awaitBuild(t, 1)
	var cc *middleware.CodeCall
	select {
	case cc = <-wrapped:
	case <-time.After(30 * time.Second):
		held.release(1)
		t.Fatal("Wrap waited for the search index of a catalog above the background threshold")
	}
	if cc == nil {
		t.FailNow()
	}
	t.Cleanup(func() { cc.Close() })

	// The first index build is still held: the handshake and the tool
	// list must not need it.
	s := connect(t, srv)
	if names := s.list(); !slices.Contains(names, "codecall.search") || !slices.Contains(names, "health") {
		t.Fatalf("tools/list while the index is built = %v", names)
	}

	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	searching := make(chan answer, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "codecall.search"
		req.Params.Arguments = map[string]any{"query": "refund a payment"}
		req.Params.Meta = &mcp.Meta{ProgressToken: "tok-index"}
		res, err := s.c.CallTool(context.Background(), req)
		searching <- answer{res, err}
	}()
	// The progress notification is the search saying it waits for the index.
	waitFor(t, func() bool { return s.count("notifications/progress") >= 1 }, "a progress notification from a search waiting for the index")
	note := s.notes.Of("notifications/progress")[0]
	if b, _ := json.Marshal(note.Params); !strings.Contains(string(b), "search index") || !strings.Contains(string(b), "tok-index") {
		t.Errorf("progress notification = %s, want the request's token and a word on the index", b)
	}
	select {
	case a := <-searching:
		t.Fatalf("codecall.search answered before the index was built: %v %v", a.res, a.err)
	default:
	}
	held.release(1)
	a := <-searching
	if a.err != nil || a.res.IsError {
		t.Fatalf("search after the build: %v %v", a.err, a.res)
	}
	if got := resultText(t, a.res); !strings.Contains(got, "billing.refund_payment") {
		t.Errorf("search after the build = %s, want billing.refund_payment", got)
	}

	// A tool change starts a second build; meanwhile the first index
	// answers, with a warning, without the new tool.
	srv.AddTool(mcp.NewTool("billing.create_invoice", mcp.WithDescription("Create an invoice for a customer.")), echoHandler)
	out, isErr, err := s.call("codecall.search", map[string]any{"query": "create an invoice"})
	if err != nil || isErr {
		t.Fatalf("search during the second build: %v %v", err, out)
	}
	held.awaitBuild(t, 2)
	if b, _ := json.Marshal(out); !strings.Contains(string(b), search.WarnIndexBuilding) || strings.Contains(string(b), "billing.create_invoice") {
		t.Errorf("search during the second build = %s, want the previous index's hits and a %s warning", b, search.WarnIndexBuilding)
	}
	held.release(2)
	waitFor(t, func() bool {
		return slices.Contains(s.searchNames("create an invoice", nil), "billing.create_invoice")
	}, "the second index to answer")
}

// resultText returns a tool result's text.
func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestSmallCatalogIndexesInLine: below the threshold the index is built
// before Wrap returns, so the first search never waits.
func TestSmallCatalogIndexesInLine(t *testing.T) {
	srv := newShop(t)
	held := newHeldBuilds()
	wrap(t, srv, middleware.WithConfig(config(nil)), middleware.WithoutReload(), middleware.WithIndexBuild(held.build))
	s := connect(t, srv)
	if names := s.searchNames("refund a payment", nil); !slices.Contains(names, "billing.refund_payment") {
		t.Errorf("search = %v", names)
	}
	select {
	case n := <-held.entered:
		t.Errorf("build %d went through the background path for a small catalog", n)
	default:
	}
}
