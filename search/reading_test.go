package search_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/search"
)

// TestQueryReadingForms checks how a request's words become concepts:
// phrases met in inflected forms, phrases that lose a stop word, values
// that leave their kind behind, names a request gives, and words the
// stemmer would conflate.
func TestQueryReadingForms(t *testing.T) {
	tools := []*catalog.Tool{
		{Name: "maps.geocode", AppID: "maps", Description: "Convert an address into coordinates."},
		{Name: "browser.mouse_wheel", AppID: "browser", Description: "Move the mouse wheel."},
		{Name: "github.list_gists", AppID: "github", Description: "List gists of a user."},
		{Name: "github.create_repository", AppID: "github", Description: "Create a repository."},
		{Name: "ai.agents_manage", AppID: "ai", Description: "Manage agents."},
		{Name: "mail.send", AppID: "mail", Description: "Send an email."},
	}
	ix, err := search.New(tools)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	tests := []struct {
		name, query string
		has, hasNot []string // substrings of the parsed concepts (search.Explain)
	}{
		{name: "inflected phrase", query: "who is keeping an eye on it", has: []string{`"keeping an eye on"`, "[monitor]", "[watch]"}, hasNot: []string{`"eye"`}},
		{name: "phrase that lost a stop word", query: "scroll down a bit", has: []string{`"scroll down"`, "[wheel]"}},
		{name: "one content word: as written", query: "gists of user octocat", has: []string{`"gists"`}, hasNot: []string{`"gists of"`, "summar"}},
		{name: "short words joined by a slash", query: "the lat/long of the tower", has: []string{`"lat long"`, "[geocod]"}},
		{name: "branch names stay values", query: "merge feature/login", hasNot: []string{"feature", "login"}},
		{name: "coordinates", query: "what is at 48.8584, 2.2945", has: []string{`"coordinates"`}},
		{name: "AS number", query: "who are the peers of AS13335", has: []string{`"asn"`}},
		{name: "emoji shortcode", query: "put :tada: on that message", has: []string{`"emoji"`}, hasNot: []string{"tada"}},
		{name: "a given name", query: "create a repository called infra-notes", has: []string{`"repository"`}, hasNot: []string{"call", "infra", "note"}},
		{name: "naming word before an article", query: "who called the API", has: []string{`"called"`}},
		{name: "phrasal verb around its object", query: "hand the ticket over to Priya", has: []string{`"hand over"`, "[assign]"}, hasNot: []string{`"hand"`}},
		{name: "phrasal verb with back", query: "wake the paused project back up", has: []string{`"wake up"`, "[resum]"}, hasNot: []string{"backup"}},
		{name: "particle of the nearer verb", query: "log in and look the user up", has: []string{`"look up"`}},
		{name: "issue key", query: "who is watching SUP-20", has: []string{`"issue"`}, hasNot: []string{"[sup]"}},
		{name: "not an issue key", query: "hash it with SHA-256", hasNot: []string{`"issue"`}},
		{name: "stem guard", query: "email my manager", has: []string{"[manager]*"}, hasNot: []string{"[manag]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := search.Explain(ix, tt.query)
			for _, s := range tt.has {
				if !strings.Contains(got, s) {
					t.Errorf("%q reads as\n%s\nwithout %s", tt.query, got, s)
				}
			}
			for _, s := range tt.hasNot {
				if strings.Contains(got, s) {
					t.Errorf("%q reads as\n%s\nwith %s", tt.query, got, s)
				}
			}
		})
	}

	// The phrase that lost a stop word finds its tool; before, it read as
	// nothing and the search found nothing.
	res := mustSearch(t, ix, search.Query{Text: "scroll down a bit"})
	if len(res.Hits) == 0 || res.Hits[0].Tool.Name != "browser.mouse_wheel" {
		t.Errorf("scroll down a bit: want browser.mouse_wheel first, got %v", names(res))
	}
	res = mustSearch(t, ix, search.Query{Text: "email the report to my manager"})
	if got := names(res); len(got) == 0 || got[0] != "mail.send" || slices.Contains(got, "ai.agents_manage") {
		t.Errorf("email the report to my manager: want mail.send first and not ai.agents_manage (manager is not manage), got %v", got)
	}
}

// TestSameNameTwins checks that a tool shares the match of the tool of
// another app with the same name, and that a request naming an app still
// prefers that app.
func TestSameNameTwins(t *testing.T) {
	tools := []*catalog.Tool{
		{Name: "github.create_pull_request", AppID: "github", Title: "Open new pull request", Description: "Create a new pull request in a GitHub repository."},
		{Name: "github.create_pull_request_review", AppID: "github", Description: "Create a review on a pull request."},
		{Name: "github.get_pull_request", AppID: "github", Description: "Get a pull request."},
		{Name: "legacy.create_pull_request", AppID: "legacy", Description: "Create a new pull request in a GitHub repository"},
	}
	ix, err := search.New(tools)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	res := mustSearch(t, ix, search.Query{Text: "open a pull request", Explain: true})
	got := names(res)
	if len(got) < 2 || got[0] != "github.create_pull_request" || got[1] != "legacy.create_pull_request" {
		t.Fatalf("want both create_pull_request first, got %v", got)
	}
	if e := res.Hits[1].Explain; e.SameNameAs != "github.create_pull_request" || !strings.Contains(e.String(), "as github.create_pull_request") {
		t.Errorf("twin's explanation %q does not name its twin", e)
	}
	if r := res.Hits[1].Score / res.Hits[0].Score; r < 0.979 || r > 0.981 {
		t.Errorf("twin scores %.3f of the best, want 0.98", r)
	}
	res = mustSearch(t, ix, search.Query{Text: "open a pull request on legacy"})
	if got := names(res); got[0] != "legacy.create_pull_request" {
		t.Errorf("a request naming the app: want legacy.create_pull_request first, got %v", got)
	}
}
