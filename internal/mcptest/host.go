package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// HostCall is one call a Host received.
type HostCall struct {
	Name  string
	Input map[string]any
}

// Host is a fake of vm.Host, the host a plan calls tools through: it
// answers the plan's calls with Call and records what the plan sent it.
// The zero value echoes every call and knows no tool. Set the fields
// before a plan runs; the methods are safe for concurrent use.
type Host struct {
	// Call answers CallTool. When it is nil, a call is answered with
	// {"tool": name, "input": input}.
	Call func(ctx context.Context, name string, input map[string]any) (json.RawMessage, error)
	// Tools are GetTool's descriptions, by tool name.
	Tools map[string]string
	// Delay holds each call that long before Call answers it; a call
	// whose context ends first returns the context's error.
	Delay time.Duration
	// Discovery answers Discover (a plan's searchTools and
	// describeTools); when it is nil, a request is answered with
	// {"op": op, "args": args}.
	Discovery func(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error)
	// PanicOn names a tool whose CallTool and GetTool panic, as a broken
	// host would.
	PanicOn string

	mu    sync.Mutex
	calls []HostCall
	logs  []string
	notes []string

	inflight, peak, cancelled atomic.Int32
}

// CallTool records the call, waits Delay and answers with Call.
func (h *Host) CallTool(ctx context.Context, name string, input map[string]any) (json.RawMessage, error) {
	n := h.inflight.Add(1)
	defer h.inflight.Add(-1)
	for {
		p := h.peak.Load()
		if n <= p || h.peak.CompareAndSwap(p, n) {
			break
		}
	}
	h.mu.Lock()
	h.calls = append(h.calls, HostCall{Name: name, Input: input})
	h.mu.Unlock()
	if name == h.PanicOn && name != "" {
		panic("host exploded at /secret/path/host.go:42")
	}
	if h.Delay > 0 {
		select {
		case <-time.After(h.Delay):
		case <-ctx.Done():
			h.cancelled.Add(1)
			return nil, ctx.Err()
		}
	}
	if h.Call == nil {
		return json.Marshal(map[string]any{"tool": name, "input": input})
	}
	raw, err := h.Call(ctx, name, input)
	if ctx.Err() != nil {
		h.cancelled.Add(1)
	}
	return raw, err
}

// GetTool returns the tool's description from Tools.
func (h *Host) GetTool(name string) (json.RawMessage, bool) {
	if name == h.PanicOn && name != "" {
		panic("GetTool exploded")
	}
	d, ok := h.Tools[name]
	if !ok {
		return nil, false
	}
	return json.RawMessage(d), true
}

// Discover answers a plan's searchTools and describeTools with Discovery.
func (h *Host) Discover(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	if h.Discovery == nil {
		return json.Marshal(map[string]any{"op": op, "args": args})
	}
	return h.Discovery(ctx, op, args)
}

// Log records the line as "level|message|data".
func (h *Host) Log(_ context.Context, level, message string, data json.RawMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, fmt.Sprintf("%s|%s|%s", level, message, data))
}

// Notify records the notification as "event|payload".
func (h *Host) Notify(_ context.Context, event string, payload json.RawMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notes = append(h.notes, fmt.Sprintf("%s|%s", event, payload))
}

// Calls returns the calls received so far, in order.
func (h *Host) Calls() []HostCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.calls)
}

// Logs returns the lines logged so far, in order, as Log records them.
func (h *Host) Logs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.logs)
}

// Notes returns the notifications sent so far, in order, as Notify
// records them.
func (h *Host) Notes() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.notes)
}

// Peak returns the most calls that were in CallTool at once.
func (h *Host) Peak() int { return int(h.peak.Load()) }

// Cancelled returns how many calls returned with their context ended.
func (h *Host) Cancelled() int { return int(h.cancelled.Load()) }
