package search

import (
	"context"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/internal/editdist"
)

// FuzzQuery feeds arbitrary text to the query parser, the expander and the
// whole search: none may panic, and results must stay well-formed.
func FuzzQuery(f *testing.F) {
	tools := []*catalog.Tool{
		{Name: "github.create_issue", AppID: "github", Description: "Open a new issue.", Tags: []string{"issues"},
			InputSchema: []byte(`{"type":"object","properties":{"title":{"type":"string","description":"Title"}}}`)},
		{Name: "linear.createIssue", AppID: "linear", Description: "Create an issue in Linear."},
		{Name: "slack.post_message", AppID: "slack", Description: "Post a message to a channel.", Source: catalog.SourceUpstream},
		{Name: "fs.read_file", AppID: "fs", Description: "Read a file from disk.", InputSchema: []byte(`not json`)},
	}
	ix, err := New(tools)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = ix.Close() })
	for _, s := range []string{
		"", " ", "create an issue", "github.create_issue", "pull request who am i on call",
		"don't send", "'quoted' \"text\" `code`", "./path/to/file.txt", "createIssueNow", "HTTPServer_v2",
		"sned emial", "\xff\xfe", "é ñ 漢字", strings.Repeat("issue ", 300), "not", "“curly”",
		"a_b-c.d:e/f", "__--..", "iPhone eBay", "0 1.5 2,000",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cs := ix.lexicon.parse(text)
		if len(cs) > maxConcepts {
			t.Fatalf("%d concepts", len(cs))
		}
		for _, c := range cs {
			for _, v := range c.variants {
				for _, term := range v.terms {
					if term == "" {
						t.Fatalf("empty term in %+v", c)
					}
				}
			}
		}
		_ = expandCompounds(text, splitIdent, true)
		_ = dropValues(stripQuoted(text))
		if utf8.ValidString(text) && editdist.Distance(text, text, 2) != 0 {
			t.Fatalf("editdist.Distance(%q, itself) != 0", text)
		}
		for _, q := range []Query{
			{Text: text},
			{Text: text, TopK: -1, AppIDs: []string{text, "github"}},
			{Text: text, Tags: []string{text}, Sources: []catalog.Source{catalog.Source(text)}},
		} {
			res, err := ix.Search(context.Background(), q)
			if err != nil {
				t.Fatalf("Search(%q): %v", text, err)
			}
			for _, h := range res.Hits {
				if h.Tool == nil || math.IsNaN(h.Score) || h.Score < 0 || h.Score > 1 {
					t.Fatalf("bad hit %+v for %q", h, text)
				}
			}
			if len(res.Hits) > DefaultTopK {
				t.Fatalf("%d hits", len(res.Hits))
			}
		}
	})
}
