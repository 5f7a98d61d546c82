package meta

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/search"
	"github.com/codecall-go/codecall/toolerr"
)

// heldIndex starts an index whose build waits for release (or its
// context), so the test knows it is in flight.
func heldIndex(t *testing.T) (ix *search.AsyncIndex, release func()) {
	t.Helper()
	gate := make(chan struct{})
	tools := []*catalog.Tool{{Name: "crm.create_invoice", AppID: "crm", Description: "Create an invoice.", Source: catalog.SourceUpstream, Enabled: true}}
	ix = search.Start(context.Background(), tools, search.WithBuildFunc(
		func(ctx context.Context, tools []*catalog.Tool, opts ...search.Option) (*search.Index, error) {
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return search.New(tools, opts...)
		}))
	t.Cleanup(func() { _ = ix.Close() })
	return ix, func() { close(gate) }
}

func TestAwaitIndexRunsOutOfTime(t *testing.T) {
	ix, _ := heldIndex(t)
	st := &State{Index: ix}
	var notes []string
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := st.awaitIndex(ctx, func(m string) { notes = append(notes, m) })
	te := toolerr.As(err)
	if te == nil || te.Code != toolerr.Timeout || !te.Retryable {
		t.Fatalf("err = %#v, want a retryable TIMEOUT", err)
	}
	for _, want := range []string{"search index for 1 tools is still being built", "started", "retry in a few seconds"} {
		if !strings.Contains(te.Message, want) {
			t.Errorf("message %q lacks %q", te.Message, want)
		}
	}
	if len(notes) == 0 || !strings.Contains(notes[0], "waiting for the search index of 1 tools") {
		t.Errorf("progress = %q, want a note on the index at once", notes)
	}
}

func TestAwaitIndexCancelled(t *testing.T) {
	ix, _ := heldIndex(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := (&State{Index: ix}).awaitIndex(ctx, nil)
	if te := toolerr.As(err); te == nil || te.Code != toolerr.Cancelled {
		t.Fatalf("err = %v, want CANCELLED", err)
	}
}

func TestAwaitIndexWaitsForTheBuild(t *testing.T) {
	ix, release := heldIndex(t)
	done := make(chan error, 1)
	go func() { done <- (&State{Index: ix}).awaitIndex(context.Background(), nil) }()
	select {
	case err := <-done:
		t.Fatalf("awaitIndex returned %v while the build was held", err)
	default:
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if res, err := ix.Search(context.Background(), search.Query{Text: "invoice"}); err != nil || len(res.Hits) != 1 {
		t.Errorf("search after the wait = %+v, %v", res, err)
	}
	// An index that answers costs nothing.
	if err := (&State{Index: ix}).awaitIndex(context.Background(), func(string) { t.Error("progress for a ready index") }); err != nil {
		t.Error(err)
	}
}
