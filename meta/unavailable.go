package meta

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// DownSet names the servers down now, sorted and joined: it changes when a
// server goes down or comes back, and only then (not when a retry is
// rescheduled), so a caller can announce a change of the meta-tools'
// descriptions (WithUnavailable) once per change of the set. "" when none
// is down or the servers cannot say.
func DownSet(st *State) string {
	return strings.Join(slices.Sorted(maps.Keys(st.unavailable())), ",")
}

// WithUnavailable returns t, one of the meta-tools as tools/list shows it,
// with the servers down now named at the end of its description when t is
// codecall.execute or codemode.run: which, since when, why, and when each
// is retried. Times are absolute, so the text does not change with every
// listing, only when a server goes down or comes back or its retry is
// rescheduled; with none down t is returned as it is, so the description
// clients cache stays the same.
func WithUnavailable(st *State, t mcp.Tool) mcp.Tool {
	n := NamesFor(st.Config)
	if t.Name != n.Execute && t.Name != n.Run {
		return t
	}
	down := st.unavailable()
	if len(down) == 0 {
		return t
	}
	var b strings.Builder
	b.WriteString(t.Description)
	b.WriteString("\nDown now (their tools answer UNAVAILABLE until they are back; plan around them):")
	for _, id := range slices.Sorted(maps.Keys(down)) {
		s := down[id]
		fmt.Fprintf(&b, "\n- upstream %q (appId %s), down since %s: %s", s.ID, s.ID, s.Since.UTC().Format(time.RFC3339), s.Reason)
		if !s.RetryAt.IsZero() {
			fmt.Fprintf(&b, "; next retry at %s", s.RetryAt.UTC().Format(time.RFC3339))
		}
	}
	t.Description = b.String()
	return t
}
