package policy_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/policy"
)

func oobRequest() policy.ApprovalRequest {
	return policy.ApprovalRequest{Tool: &catalog.Tool{Name: "shop.delete", AppID: "shop"}, Args: map[string]any{"id": "1"},
		Via: policy.ViaExecute, SessionID: "s1", Reason: "deletes", Run: &policy.RunInfo{ID: "r1", CallIndex: 3}}
}

// waitPending returns the first waiting call's id.
func waitPending(t *testing.T, o *policy.OutOfBand) policy.PendingApproval {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if p := o.Pending(); len(p) > 0 {
			return p[0]
		}
	}
	t.Fatal("nothing waits")
	return policy.PendingApproval{}
}

func TestOutOfBand(t *testing.T) {
	tests := []struct {
		name    string
		answer  func(o *policy.OutOfBand, id string) error
		timeout time.Duration
		want    policy.Answer
	}{
		{"approve", func(o *policy.OutOfBand, id string) error { return o.Answer(id, true, policy.ChannelCLI, "ann") }, time.Minute,
			policy.Answer{Outcome: policy.ApprovalApproved, Channel: policy.ChannelCLI, By: "ann"}},
		{"deny", func(o *policy.OutOfBand, id string) error { return o.Answer(id, false, policy.ChannelConsole, "ben") }, time.Minute,
			policy.Answer{Outcome: policy.ApprovalDenied, Channel: policy.ChannelConsole, By: "ben"}},
		{"expire", nil, 50 * time.Millisecond, policy.Answer{Outcome: policy.ApprovalExpired, Channel: policy.ChannelOutOfBand}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var changes atomic.Int64
			o := policy.NewOutOfBand(policy.NewApprovals(tt.timeout, false), policy.WithOnChange(func() { changes.Add(1) }))
			got := make(chan policy.Answer, 1)
			go func() {
				a, prompt, _ := o.Ask(context.Background(), oobRequest())
				if prompt != nil {
					t.Error("an out-of-band ask returned a prompt")
				}
				got <- a
			}()
			if tt.answer != nil {
				p := waitPending(t, o)
				if p.Tool != "shop.delete" || p.RunID != "r1" || p.CallIndex != 3 || p.Reason != "deletes" {
					t.Errorf("pending %+v", p)
				}
				if err := tt.answer(o, p.ID); err != nil {
					t.Fatal(err)
				}
				if err := o.Answer(p.ID, true, policy.ChannelCLI, "x"); !errors.Is(err, policy.ErrNoPendingApproval) {
					t.Errorf("a second answer: %v, want ErrNoPendingApproval", err)
				}
			}
			if a := <-got; a != tt.want {
				t.Fatalf("answer %+v, want %+v", a, tt.want)
			}
			if len(o.Pending()) != 0 || changes.Load() == 0 {
				t.Errorf("after the end: %d pending, %d change notices", len(o.Pending()), changes.Load())
			}
		})
	}
}

func TestOutOfBandRefusals(t *testing.T) {
	o := policy.NewOutOfBand(policy.NewApprovals(time.Minute, false), policy.WithMaxPending(1))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan policy.Answer, 1)
	go func() { a, _, _ := o.Ask(ctx, oobRequest()); done <- a }()
	p := waitPending(t, o)
	if err := o.Answer(p.ID, true, policy.ChannelElicitation, "x"); err == nil {
		t.Error("an out-of-band answer through the elicitation channel was accepted")
	}
	if a, _, err := o.Ask(context.Background(), oobRequest()); a.Outcome != policy.ApprovalFailed || err == nil {
		t.Errorf("a call beyond WithMaxPending: %+v, %v; want failed with a reason", a, err)
	}
	cancel()
	if a := <-done; a.Outcome != policy.ApprovalFailed {
		t.Errorf("a cancelled call: %+v, want failed", a)
	}
}

type fixedAsker policy.Answer

func (f fixedAsker) Ask(context.Context, policy.ApprovalRequest) (policy.Answer, *mcp.CallToolResult, error) {
	return policy.Answer(f), nil, nil
}

func TestFallback(t *testing.T) {
	then := fixedAsker{Outcome: policy.ApprovalApproved, Channel: policy.ChannelConsole}
	for _, tt := range []struct {
		first policy.ApprovalOutcome
		want  policy.ApprovalOutcome
	}{
		{policy.ApprovalNoClient, policy.ApprovalApproved},
		{policy.ApprovalDenied, policy.ApprovalDenied},
		{policy.ApprovalExpired, policy.ApprovalExpired},
	} {
		a, _, _ := policy.Fallback(fixedAsker{Outcome: tt.first}, then).Ask(context.Background(), oobRequest())
		if a.Outcome != tt.want {
			t.Errorf("first %s: %s, want %s", tt.first, a.Outcome, tt.want)
		}
	}
	if f := policy.Fallback(then, nil); f != policy.Asker(then) {
		t.Error("Fallback with no second asker is not the first")
	}
}

// An operator answers a call that waits out of band.
func ExampleOutOfBand() {
	oob := policy.NewOutOfBand(policy.NewApprovals(time.Minute, false))
	go func() {
		for len(oob.Pending()) == 0 {
			time.Sleep(time.Millisecond)
		}
		p := oob.Pending()[0]
		_ = oob.Answer(p.ID, true, policy.ChannelConsole, "alice")
	}()
	answer, _, _ := oob.Ask(context.Background(), policy.ApprovalRequest{Tool: &catalog.Tool{Name: "billing.refund"}, Via: policy.ViaInvoke})
	fmt.Println(answer.Outcome, answer.Channel, answer.By)
	// Output: approved console alice
}
