package middleware

import (
	"github.com/mark3labs/mcp-go/mcp"
)

// observer is an in-process session registered on the wrapped server so
// that CodeCall hears the tools/list_changed broadcast mcp-go sends after
// AddTool, SetTools and DeleteTools. mcp-go has no other hook for changes
// to its tool set.
type observer struct {
	id string
	ch chan mcp.JSONRPCNotification
}

func newObserver(id string) *observer {
	// Sized so that bursts of AddTool calls between two requests are not
	// dropped; drained by the first request after a change and by a
	// background ticker.
	return &observer{id: id, ch: make(chan mcp.JSONRPCNotification, 1024)}
}

func (o *observer) Initialize()                                         {}
func (o *observer) Initialized() bool                                   { return true }
func (o *observer) NotificationChannel() chan<- mcp.JSONRPCNotification { return o.ch }
func (o *observer) SessionID() string                                   { return o.id }

// pending reports whether a notification waits to be drained. It takes no
// lock, so the per-call path can tell cheaply that nothing changed.
func (o *observer) pending() bool { return len(o.ch) > 0 }

// drain reports whether any pending notification says the tool list changed.
// It never blocks.
func (o *observer) drain() (toolsChanged bool) {
	for {
		select {
		case n := <-o.ch:
			if n.Method == mcp.MethodNotificationToolsListChanged {
				toolsChanged = true
			}
		default:
			return toolsChanged
		}
	}
}
