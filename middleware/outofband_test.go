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
			if p := oob.Pending(); len(p) > 0 {
				time.Sleep(delay)
				if err := oob.Answer(p[0].ID, answer == "approve", policy.ChannelConsole, "alice"); err != nil {
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
					if p := s.cc.OutOfBand().Pending(); len(p) != 0 {
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
