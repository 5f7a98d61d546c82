package audit

import (
	"context"
	"io"
	"testing"
	"time"
)

// BenchmarkLog is the cost of one tool.call event written as a JSON line
// (to io.Discard, so the figure is the Logger's own work).
func BenchmarkLog(b *testing.B) {
	l := NewWriter(io.Discard)
	sha, n := Digest(map[string]any{"customerId": "cus_8812", "amount": 1299.5})
	e := Event{Type: ToolCall, RunID: "r-7f3a", CallIndex: 3, SessionID: "s-19", Tool: "billing.refund", AppID: "billing",
		Via: "execute", ArgsSHA256: sha, ArgsBytes: n, Status: "ok", Duration: 1500 * time.Microsecond, ResultSHA256: sha, ResultBytes: n}
	b.ReportAllocs()
	for b.Loop() {
		l.Log(context.Background(), e)
	}
}

// BenchmarkLogParallel writes from every core at once, as concurrent plans
// do.
func BenchmarkLogParallel(b *testing.B) {
	l := NewWriter(io.Discard)
	e := Event{Type: PolicyDecision, RunID: "r", Tool: "billing.refund", Decision: DecisionAllow, Reason: "allowed by app allowlist"}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Log(context.Background(), e)
		}
	})
}

// BenchmarkDigestArgs is the cost of digesting typical arguments.
func BenchmarkDigestArgs(b *testing.B) {
	args := map[string]any{"customerId": "cus_8812", "amount": 1299.5, "currency": "EUR", "description": "Refund for order 4411",
		"metadata": map[string]any{"orderId": "ord_4411", "channel": "web"}}
	b.ReportAllocs()
	for b.Loop() {
		Digest(args)
	}
}
