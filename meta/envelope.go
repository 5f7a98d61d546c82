package meta

import (
	"context"
	"sync"

	"github.com/codecall-go/codecall/policy"
)

// ApprovalState sums up, in a run's result, whether its calls needed a
// person's approval and how that went.
type ApprovalState string

// The approval states, most telling first: a run reports the first that
// applies to any of its calls.
const (
	ApprovalStateDenied      ApprovalState = "DENIED"       // a person declined a call, or nobody could be asked
	ApprovalStateExpired     ApprovalState = "EXPIRED"      // a prompt was not answered in time
	ApprovalStatePending     ApprovalState = "PENDING"      // the run ended while a call waited for an answer
	ApprovalStateApproved    ApprovalState = "APPROVED"     // every call that needed approval got it
	ApprovalStateNotRequired ApprovalState = "NOT_REQUIRED" // no call needed approval
)

var approvalRank = map[ApprovalState]int{
	ApprovalStateNotRequired: 0, ApprovalStateApproved: 1, ApprovalStatePending: 2, ApprovalStateExpired: 3, ApprovalStateDenied: 4,
}

// runApproval is a run's approval state as its calls report to the gate's
// observer.
type runApproval struct {
	mu      sync.Mutex
	state   ApprovalState
	waiting int
}

func (a *runApproval) raise(s ApprovalState) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if approvalRank[s] > approvalRank[a.state] {
		a.state = s
	}
}

// State is the run's approval state when it ends.
func (a *runApproval) State() ApprovalState {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.waiting > 0 && approvalRank[a.state] < approvalRank[ApprovalStatePending] {
		return ApprovalStatePending
	}
	if a.state == "" {
		return ApprovalStateNotRequired
	}
	return a.state
}

// approvalTracker is a call's observer, as the gate sees it, that also
// tells the run how the call's approval went.
type approvalTracker struct {
	policy.Observer
	run *runApproval
}

func (t *approvalTracker) Decided(ctx context.Context, out *policy.Outcome, err error) {
	if err == nil && out != nil && out.NeedsApproval() {
		t.run.mu.Lock()
		t.run.waiting++
		t.run.mu.Unlock()
	}
	t.Observer.Decided(ctx, out, err)
}

func (t *approvalTracker) Approved(ctx context.Context, answer policy.Answer, err error) {
	outcome := answer.Outcome
	t.run.mu.Lock()
	t.run.waiting--
	t.run.mu.Unlock()
	switch outcome {
	case policy.ApprovalApproved, policy.ApprovalTrusted:
		t.run.raise(ApprovalStateApproved)
	case policy.ApprovalExpired:
		t.run.raise(ApprovalStateExpired)
	default:
		if outcome.ForSession() {
			t.run.raise(ApprovalStateApproved)
		} else {
			t.run.raise(ApprovalStateDenied)
		}
	}
	t.Observer.Approved(ctx, answer, err)
}
