package middleware_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/state"
	"github.com/codecall-go/codecall/state/statetest"
)

// operator answers the first call that waits out of band, after delay,
// as an operator in the console would; answer "" never answers.
func operator(t *testing.T, oob *policy.OutOfBand, answer string, delay time.Duration) {
	t.Helper()
	if answer == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	go func() {
		defer cancel()
		for ctx.Err() == nil {
			if p, _ := oob.Pending(ctx); len(p) > 0 {
				time.Sleep(delay)
				if err := oob.Answer(ctx, p[0].ID, answer == "approve", policy.ChannelConsole, "alice"); err != nil {
					t.Errorf("answer: %v", err)
				}
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
}

// lockedBuffer is an audit sink tests read while calls write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) events(kind string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == kind {
			out = append(out, m)
		}
	}
	return out
}

// TestOutOfBandApproval: a client that cannot show prompts, on every path
// and in both protocol eras, waits for an operator's answer; approve runs
// the call, deny ends it APPROVAL_DENIED, silence APPROVAL_EXPIRED, and
// the audit log says who answered through which channel.
func TestOutOfBandApproval(t *testing.T) {
	tests := []struct {
		answer       string
		wantCode     string
		wantRuns     int64
		wantApproval string
		wantChannel  string
		wantBy       string
	}{
		{"approve", "", 1, "approved", "console", "alice"},
		{"deny", "APPROVAL_DENIED", 0, "denied", "console", "alice"},
		{"", "APPROVAL_EXPIRED", 0, "expired", "out_of_band", ""},
	}
	for _, modern := range []bool{false, true} {
		for _, via := range paths {
			for _, tt := range tests {
				name := tt.answer
				if name == "" {
					name = "nobody"
				}
				t.Run(fmt.Sprintf("modern=%v/%s/%s", modern, via, name), func(t *testing.T) {
					t.Parallel()
					var audit lockedBuffer
					s := newApprovalShopWith(t, func(c *presets.Config) { c.Approval.Timeout = 2 * time.Second },
						middleware.WithOutOfBandApprovals(), middleware.WithAuditSink(slog.NewJSONHandler(&audit, nil)))
					c := mcptest.Connect(t, s.srv, era(modern)) // no elicitation capability
					operator(t, s.cc.OutOfBand(), tt.answer, 0)
					if got := mcptest.CallVia(t, c, via, "shop.delete_order", map[string]any{"id": "o1"}); got != tt.wantCode {
						t.Fatalf("code %q, want %q", got, tt.wantCode)
					}
					if got := s.count("shop.delete_order"); got != tt.wantRuns {
						t.Errorf("handler ran %d times, want %d", got, tt.wantRuns)
					}
					if p, _ := s.cc.OutOfBand().Pending(context.Background()); len(p) != 0 {
						t.Errorf("still pending after the call ended: %+v", p)
					}
					ev := audit.events("approval")
					if len(ev) != 1 {
						t.Fatalf("%d approval events, want 1", len(ev))
					}
					if ev[0]["approval"] != tt.wantApproval || ev[0]["approvalChannel"] != tt.wantChannel || (tt.wantBy != "" && ev[0]["approver"] != tt.wantBy) {
						t.Errorf("approval event %v, want approval=%s channel=%s approver=%s", ev[0], tt.wantApproval, tt.wantChannel, tt.wantBy)
					}
				})
			}
		}
	}
}

// TestOutOfBandPausesThePlanClock: a plan whose call waits for an operator
// longer than vm.timeout still finishes, because its clock is stopped
// while it waits (planAsker), as for every other asker.
func TestOutOfBandPausesThePlanClock(t *testing.T) {
	s := newApprovalShopWith(t, func(c *presets.Config) {
		c.Approval.Timeout = 10 * time.Second
		c.VM.Timeout = 400 * time.Millisecond
	}, middleware.WithOutOfBandApprovals())
	c := mcptest.Connect(t, s.srv, mcptest.Legacy())
	operator(t, s.cc.OutOfBand(), "approve", 1200*time.Millisecond)
	if got := mcptest.CallVia(t, c, "execute", "shop.delete_order", map[string]any{"id": "o1"}); got != "" {
		t.Fatalf("plan ended with %q; its clock ran while it waited for the operator", got)
	}
	if got := s.count("shop.delete_order"); got != 1 {
		t.Errorf("handler ran %d times, want 1", got)
	}
}

// TestOutOfBandOptIn: without WithOutOfBandApprovals nothing waits.
func TestOutOfBandOptIn(t *testing.T) {
	s := newApprovalShop(t, nil)
	if s.cc.OutOfBand() != nil {
		t.Fatal("OutOfBand is set without WithOutOfBandApprovals")
	}
	c := mcptest.Connect(t, s.srv, mcptest.Legacy())
	start := time.Now()
	if got := mcptest.CallVia(t, c, "invoke", "shop.delete_order", map[string]any{"id": "o1"}); got != "APPROVAL_REQUIRED" {
		t.Fatalf("code %q, want APPROVAL_REQUIRED", got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the refusal took %v: something waited", d)
	}
}

// TestOutOfBandAcrossReplicas: with a state store, a call that waits for an
// operator on replica A is listed and approved through replica B (memory
// and redis stores); the entry in the store is sealed, so neither the
// prompt nor a forged answer passes through it in the clear.
func TestOutOfBandAcrossReplicas(t *testing.T) {
	stores := map[string]func(t *testing.T) state.Store{
		"memory": func(*testing.T) state.Store { return state.NewMemory() },
		"redis": func(t *testing.T) state.Store {
			s, err := state.OpenRedis(context.Background(), statetest.StartRedis(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			store := open(t)
			var audit lockedBuffer
			mk := func(opts ...middleware.Option) *approvalShop {
				return newApprovalShopWith(t, func(c *presets.Config) { c.Approval.Timeout = 20 * time.Second },
					append(opts, middleware.WithStateStore(store, testStateKey), middleware.WithOutOfBandApprovals(policy.WithPollInterval(20*time.Millisecond)))...)
			}
			a, b := mk(middleware.WithAuditSink(slog.NewJSONHandler(&audit, nil))), mk()
			if !a.cc.OutOfBand().Shared() || !b.cc.OutOfBand().Shared() {
				t.Fatal("with a state store the out-of-band queue is not shared")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			go func() {
				for ctx.Err() == nil {
					if p, _ := b.cc.OutOfBand().Pending(ctx); len(p) > 0 {
						raw, err := store.Scan(ctx, "oob/wait/", 10)
						if err != nil || len(raw) != 1 || bytes.Contains(raw[0].Value, []byte("shop.delete_order")) {
							t.Errorf("the waiting call in the store: %d entries (%v), or its prompt in the clear", len(raw), err)
						}
						if err := b.cc.OutOfBand().Answer(ctx, p[0].ID, true, policy.ChannelConsole, "alice"); err != nil {
							t.Errorf("answer through B: %v", err)
						}
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			}()
			c := mcptest.Connect(t, a.srv, mcptest.Legacy()) // no elicitation capability
			if got := mcptest.CallVia(t, c, "invoke", "shop.delete_order", map[string]any{"id": "o1"}); got != "" {
				t.Fatalf("the call on A ended %q; want it approved through B", got)
			}
			if a.count("shop.delete_order") != 1 || b.count("shop.delete_order") != 0 {
				t.Fatalf("calls: A %d, B %d; want 1 on A", a.count("shop.delete_order"), b.count("shop.delete_order"))
			}
			ev := audit.events("approval")
			if len(ev) != 1 || ev[0]["approval"] != "approved" || ev[0]["approvalChannel"] != "console" || ev[0]["approver"] != "alice" {
				t.Fatalf("A's approval events %v, want one approved by alice through the console", ev)
			}
		})
	}
}
