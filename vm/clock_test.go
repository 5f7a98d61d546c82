package vm

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
)

// TestSuspendClock checks that time a host spends with the clock
// suspended (waiting for a person) does not count against the timeout,
// and that time outside the suspension still does.
func TestSuspendClock(t *testing.T) {
	tests := []struct {
		name    string
		suspend bool
		want    Status
	}{
		{"suspended wait passes", true, StatusOK},
		{"unsuspended wait times out", false, StatusTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &mcptest.Host{Call: func(ctx context.Context, name string, _ map[string]any) (json.RawMessage, error) {
				if tt.suspend {
					defer SuspendClock(ctx)()
				}
				select {
				case <-time.After(300 * time.Millisecond):
					return json.RawMessage(`"approved"`), nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}}
			res := runScript(t, h, `return await callTool('ask', {})`, shortTimeout(100*time.Millisecond))
			if res.Status != tt.want {
				t.Fatalf("status %s, want %s: %s", res.Status, tt.want, describe(res))
			}
		})
	}
	// A plan that keeps running after the suspension still meets its limit.
	h := &mcptest.Host{Call: func(ctx context.Context, _ string, _ map[string]any) (json.RawMessage, error) {
		resume := SuspendClock(ctx)
		time.Sleep(150 * time.Millisecond)
		resume()
		resume() // idempotent
		return json.RawMessage(`1`), nil
	}}
	res := runScript(t, h, `await callTool('ask', {}); while (true) {}`, shortTimeout(100*time.Millisecond))
	if res.Status != StatusTimeout {
		t.Fatalf("busy plan after resume: %s", describe(res))
	}
	if SuspendClock(context.Background()) == nil {
		t.Fatal("SuspendClock outside a run must return a usable no-op")
	}
}
