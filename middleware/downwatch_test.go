package middleware_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/meta"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// fakeHealth is a set of servers whose downs a test sets.
type fakeHealth struct {
	mu   sync.Mutex
	down []meta.UnavailableServer
}

func (f *fakeHealth) Ensure(context.Context, string) error { return nil }

func (f *fakeHealth) Unavailable() []meta.UnavailableServer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]meta.UnavailableServer(nil), f.down...)
}

func (f *fakeHealth) set(down ...meta.UnavailableServer) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

// TestDescriptionsNameServersDown checks codecall.execute's and
// codemode.run's descriptions through a real mcp-go client: unchanged
// while nothing is down; naming the server, since when, why and the next
// retry while it is; announced with tools/list_changed when the set of
// servers down changes, and not when only a retry is rescheduled.
func TestDescriptionsNameServersDown(t *testing.T) {
	srv := newShop(t)
	health := &fakeHealth{}
	wrap(t, srv, middleware.WithConfig(config(nil)), middleware.WithServers(health),
		middleware.WithSurfaces(presets.SurfaceCodeCall, presets.SurfaceCodeMode))
	s := connect(t, srv)
	descriptions := func() map[string]string {
		t.Helper()
		res, err := s.c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, tool := range res.Tools {
			if tool.Name == "codecall.execute" || tool.Name == "codemode.run" || tool.Name == "codecall.search" {
				out[tool.Name] = tool.Description
			}
		}
		if len(out) != 3 {
			t.Fatalf("tools/list lacks a meta-tool: %v", out)
		}
		return out
	}
	changed := func() int { return s.count(string(mcp.MethodNotificationToolsListChanged)) }

	before := descriptions()
	for name, d := range before {
		if strings.Contains(d, "Down now") {
			t.Errorf("%s names servers down while none is: %s", name, d)
		}
	}
	// A tick of the watcher with nothing down announces nothing.
	time.Sleep(1500 * time.Millisecond)
	if n := changed(); n != 0 {
		t.Errorf("%d tools/list_changed while nothing changed", n)
	}

	since := time.Date(2026, 11, 28, 17, 0, 0, 0, time.UTC)
	retry := since.Add(time.Minute)
	health.set(meta.UnavailableServer{ID: "github", Reason: "exit status 1: token expired", Since: since, RetryAt: retry})
	waitFor(t, func() bool { return changed() == 1 }, "tools/list_changed when github goes down")
	down := descriptions()
	for _, name := range []string{"codecall.execute", "codemode.run"} {
		for _, want := range []string{`upstream "github"`, "down since 2026-11-28T17:00:00Z", "token expired", "next retry at 2026-11-28T17:01:00Z", "UNAVAILABLE"} {
			if !strings.Contains(down[name], want) {
				t.Errorf("%s does not say %q: %s", name, want, down[name])
			}
		}
		if !strings.HasPrefix(down[name], before[name]) {
			t.Errorf("%s's own description changed, not only the note added", name)
		}
	}
	if down["codecall.search"] != before["codecall.search"] {
		t.Errorf("search's description changed: %s", down["codecall.search"])
	}

	// A rescheduled retry is not announced (the next listing shows it).
	health.set(meta.UnavailableServer{ID: "github", Reason: "exit status 1: token expired", Since: since, RetryAt: retry.Add(time.Minute)})
	time.Sleep(1500 * time.Millisecond)
	if n := changed(); n != 1 {
		t.Errorf("%d tools/list_changed after a rescheduled retry, want still 1", n)
	}

	health.set()
	waitFor(t, func() bool { return changed() == 2 }, "tools/list_changed when github is back")
	if after := descriptions(); after["codecall.execute"] != before["codecall.execute"] || after["codemode.run"] != before["codemode.run"] {
		t.Errorf("descriptions differ from before the outage:\n%v\n%v", before, after)
	}
}
