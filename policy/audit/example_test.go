package audit_test

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/codecall-go/codecall/policy/audit"
)

func Example() {
	// In a server: l, err := audit.Open(cfg.Audit) from the configuration,
	// or audit.New(handler) to feed an existing slog pipeline.
	l := audit.NewWriter(os.Stdout)
	defer l.Close()

	args := map[string]any{"invoiceId": "inv_42", "apiKey": "sk_live_abc"}
	sha, n := audit.Digest(args) // the arguments themselves are never written
	l.Log(context.Background(), audit.Event{
		Type:       audit.PolicyDecision,
		Time:       time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC),
		RunID:      "run-7",
		CallIndex:  1,
		Tool:       "billing.refund",
		Via:        "execute",
		ArgsSHA256: sha,
		ArgsBytes:  n,
		Decision:   audit.DecisionDeny,
		Reason:     "refunds over 100 need approval; got password=hunter2",
	})
	// Output:
	// {"time":"2026-11-21T09:30:00Z","event":"policy.decision","runId":"run-7","callIndex":1,"tool":"billing.refund","via":"execute","argsSha256":"227439767478594fb526ef5db12b05f99f01b898bf58e775c1f91f11e9e44c57","argsBytes":45,"decision":"deny","reason":"refunds over 100 need approval; got password=[REDACTED]"}
}

func ExampleNew() {
	// Audit events through any slog.Handler: the message is the event type.
	h := slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // dropped only to keep the example's output stable
			}
			return a
		},
	})
	l := audit.New(h)
	l.Log(context.Background(), audit.Event{Type: audit.Approval, RunID: "run-7", Tool: "users.delete", Approval: audit.OutcomeDenied})
	// Output:
	// {"level":"INFO","msg":"approval","runId":"run-7","tool":"users.delete","approval":"denied"}
}
