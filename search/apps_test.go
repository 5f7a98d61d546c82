package search

import (
	"maps"
	"slices"
	"testing"

	"github.com/codecall-go/codecall/catalog"
)

func TestNamedApps(t *testing.T) {
	tools := []*catalog.Tool{
		{Name: "github.create_issue", AppID: "github", Description: "Create an issue."},
		{Name: "github-legacy.create_issue", AppID: "github-legacy", Description: "Create a GitHub issue."},
		{Name: "gitlab.create_issue", AppID: "gitlab", Description: "Create an issue."},
		{Name: "azure-devops.create_work_item", AppID: "azure-devops", Description: "Create a work item."},
		{Name: "time.convert", AppID: "time", Description: "Convert a time between zones."},
	}
	// "time" is said by many tools of other apps: an ordinary word.
	for i := range 4 {
		tools = append(tools, &catalog.Tool{Name: "grafana.q" + string(rune('a'+i)), AppID: "grafana", Description: "Query over a time range."})
	}
	ix, err := New(tools)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"open an issue on GitHub", []string{"github"}},
		{"file a bug in GitLab's tracker", []string{"gitlab"}},
		{"a work item in Azure DevOps", []string{"azure-devops"}},
		{"a work item in azure-devops", []string{"azure-devops"}},
		{"move it from github-legacy to gitlab", []string{"github", "github-legacy", "gitlab"}},
		{"metrics over a time range", nil},
		{"create an issue", nil},
	}
	for _, tt := range tests {
		got := slices.Sorted(maps.Keys(ix.namedApps(tt.query)))
		if !slices.Equal(got, tt.want) {
			t.Errorf("namedApps(%q) = %v, want %v", tt.query, got, tt.want)
		}
	}
}
