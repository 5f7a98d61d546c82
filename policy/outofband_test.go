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
	"github.com/codecall-go/codecall/state"
)

func oobRequest() policy.ApprovalRequest {
	return policy.ApprovalRequest{Tool: &catalog.Tool{Name: "shop.delete", AppID: "shop"}, Args: map[string]any{"id": "1"},
		Via: policy.ViaExecute, SessionID: "s1", Reason: "deletes", Run: &policy.RunInfo{ID: "r1", CallIndex: 3}}
}

// waitPending returns the first waiting call's id.
func waitPending(t *testing.T, o *policy.OutOfBand) policy.PendingApproval {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if p, err := o.Pending(context.Background()); err == nil && len(p) > 0 {
			return p[0]
		}
	}
	t.Fatal("nothing waits")
	return policy.PendingApproval{}
}

// queues are the two kinds of waiting list every OutOfBand test runs on:
// this process's, and a shared one on a memory store.
var queues = []struct {
	name string
	opts func() []policy.OutOfBandOption
}{
	{"in process", func() []policy.OutOfBandOption { return nil }},
	{"shared", func() []policy.OutOfBandOption {
		return []policy.OutOfBandOption{policy.WithSharedQueue(stateQueue{state.NewMemory()}), policy.WithPollInterval(10 * time.Millisecond)}
	}},
}

func TestOutOfBand(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		answer  func(o *policy.OutOfBand, id string) error
		timeout time.Duration
		want    policy.Answer
	}{
		{"approve", func(o *policy.OutOfBand, id string) error { return o.Answer(ctx, id, true, policy.ChannelCLI, "ann") }, time.Minute,
			policy.Answer{Outcome: policy.ApprovalApproved, Channel: policy.ChannelCLI, By: "ann"}},
		{"deny", func(o *policy.OutOfBand, id string) error {
			return o.Answer(ctx, id, false, policy.ChannelConsole, "ben")
		}, time.Minute,
			policy.Answer{Outcome: policy.ApprovalDenied, Channel: policy.ChannelConsole, By: "ben"}},
		{"expire", nil, 50 * time.Millisecond, policy.Answer{Outcome: policy.ApprovalExpired, Channel: policy.ChannelOutOfBand}},
	}
	for _, q := range queues {
		for _, tt := range tests {
			t.Run(q.name+"/"+tt.name, func(t *testing.T) {
				testOutOfBandCase(t, q.opts(), tt.timeout, tt.answer, tt.want)
			})
		}
	}
}

func testOutOfBandCase(t *testing.T, opts []policy.OutOfBandOption, timeout time.Duration, answer func(o *policy.OutOfBand, id string) error, want policy.Answer) {
	ctx := context.Background()
	var changes atomic.Int64
	o := policy.NewOutOfBand(policy.NewApprovals(timeout, false), append(opts, policy.WithOnChange(func() { changes.Add(1) }))...)
	got := make(chan policy.Answer, 1)
	go func() {
		a, prompt, _ := o.Ask(ctx, oobRequest())
		if prompt != nil {
			t.Error("an out-of-band ask returned a prompt")
		}
		got <- a
	}()
	if answer != nil {
		p := waitPending(t, o)
		if p.Tool != "shop.delete" || p.RunID != "r1" || p.CallIndex != 3 || p.Reason != "deletes" {
			t.Errorf("pending %+v", p)
		}
		if err := answer(o, p.ID); err != nil {
			t.Fatal(err)
		}
		if err := o.Answer(ctx, p.ID, true, policy.ChannelCLI, "x"); !errors.Is(err, policy.ErrNoPendingApproval) {
			t.Errorf("a second answer: %v, want ErrNoPendingApproval", err)
		}
	}
	if a := <-got; a != want {
		t.Fatalf("answer %+v, want %+v", a, want)
	}
	if p, err := o.Pending(ctx); len(p) != 0 || err != nil || changes.Load() == 0 {
		t.Errorf("after the end: %d pending (%v), %d change notices", len(p), err, changes.Load())
	}
}

func TestOutOfBandRefusals(t *testing.T) {
	for _, q := range queues {
		t.Run(q.name, func(t *testing.T) { testOutOfBandRefusals(t, q.opts()) })
	}
}

func testOutOfBandRefusals(t *testing.T, opts []policy.OutOfBandOption) {
	o := policy.NewOutOfBand(policy.NewApprovals(time.Minute, false), append(opts, policy.WithMaxPending(1))...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan policy.Answer, 1)
	go func() { a, _, _ := o.Ask(ctx, oobRequest()); done <- a }()
	p := waitPending(t, o)
	if err := o.Answer(context.Background(), p.ID, true, policy.ChannelElicitation, "x"); err == nil {
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
		ctx := context.Background()
		for {
			if p, _ := oob.Pending(ctx); len(p) > 0 {
				_ = oob.Answer(ctx, p[0].ID, true, policy.ChannelConsole, "alice")
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	answer, _, _ := oob.Ask(context.Background(), policy.ApprovalRequest{Tool: &catalog.Tool{Name: "billing.refund"}, Via: policy.ViaInvoke})
	fmt.Println(answer.Outcome, answer.Channel, answer.By)
	// Output: approved console alice
}
