package middleware

import (
	"context"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/meta"
)

// watchDown announces tools/list_changed to every client when the set of
// servers that are down changes, checking every d until ctx ends:
// codecall.execute's and codemode.run's descriptions name the servers down
// (meta.WithUnavailable), and clients cache descriptions, so each change of
// the set is announced once. A server staying down, or its retry being
// rescheduled, is not announced; nothing is while none goes down.
func (c *CodeCall) watchDown(ctx context.Context, d time.Duration) {
	t := time.NewTicker(d)
	defer t.Stop()
	last := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			g := c.acquire()
			now := meta.DownSet(&g.state)
			g.release()
			if now != last {
				last = now
				c.srv.SendNotificationToAllClients(mcp.MethodNotificationToolsListChanged, nil)
			}
		}
	}
}
