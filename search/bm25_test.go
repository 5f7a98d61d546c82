package search

import (
	"math"
	"testing"

	"github.com/codecall-go/codecall/catalog"
)

// TestBM25F checks the properties the ranking relies on: a term weighs more
// in a heavier field, repeating a term saturates instead of adding up, a
// longer description dilutes a term, and related words are not looked for
// in parameter fields.
func TestBM25F(t *testing.T) {
	tools := []*catalog.Tool{
		{Name: "a.send_message", AppID: "a", Description: "Send a message to a channel."},
		{Name: "a.list_channels", AppID: "a", Description: "List channels in the workspace."},
		{Name: "a.read_file", AppID: "a", Description: "Read a file; a channel channel channel channel channel channel channel channel."},
		{Name: "a.archive", AppID: "a", Description: "Archive something in a channel, with a long description that goes on and on about many other things besides."},
		{Name: "a.post", AppID: "a", Description: "Post.", InputSchema: []byte(`{"type":"object","properties":{"channel":{"type":"string"}}}`)},
	}
	ix, err := New(tools)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	id, ok := ix.terms["channel"]
	if !ok {
		t.Fatal("term channel not indexed")
	}
	w := map[string]posting{}
	for _, p := range ix.postings[id] {
		w[tools[p.doc].Name] = p
	}
	if len(w) != 5 {
		t.Fatalf("channel is in %d tools, want 5", len(w))
	}
	if !(w["a.list_channels"].full > w["a.send_message"].full) {
		t.Errorf("a name match (%v) should outweigh a description match (%v)", w["a.list_channels"].full, w["a.send_message"].full)
	}
	if r := w["a.read_file"].full / w["a.send_message"].full; r <= 1 || r >= bm25K1+1 {
		t.Errorf("eight mentions weigh %.2f× one, want between 1 and %.1f (saturation)", r, bm25K1+1)
	}
	if !(w["a.archive"].full < w["a.send_message"].full) {
		t.Errorf("a long description (%v) should dilute the term against a short one (%v)", w["a.archive"].full, w["a.send_message"].full)
	}
	if p := w["a.post"]; p.full == 0 || p.narrow != 0 {
		t.Errorf("a parameter name counts in full (%v) but not for related words (%v)", p.full, p.narrow)
	}
	for _, l := range ix.postings {
		for i := 1; i < len(l); i++ {
			if l[i-1].doc >= l[i].doc {
				t.Fatal("postings not in document order")
			}
		}
	}
	if got := saturate(0); got != 0 {
		t.Errorf("saturate(0) = %v", got)
	}
	if got := saturate(1e9); math.Abs(got-(bm25K1+1)) > 1e-6 {
		t.Errorf("saturate(∞) = %v, want %v", got, bm25K1+1)
	}
}
