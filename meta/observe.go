package meta

import (
	"context"
	"log/slog"

	"github.com/codecall-go/codecall/policy"
)

func (st *State) logger() *slog.Logger {
	if st.Logger != nil {
		return st.Logger
	}
	return slog.Default()
}

// observeDecision logs a policy decision that denied or failed.
func (st *State) observeDecision(ctx context.Context, call policy.Call, out *policy.Outcome, err error) {
	if out == nil {
		return // refused by the access rules before any policy ran
	}
	if out.EvalErr != nil {
		st.logger().Warn("codecall: policy failed; the call is denied", "tool", call.Tool, "via", call.Via, "policy", out.Policy, "error", out.EvalErr)
	} else if err != nil {
		st.logger().Info("codecall: policy denied a call", "tool", call.Tool, "via", call.Via, "policy", out.Policy, "reason", out.Decision.Reason)
	}
}

// observeApproval logs how an approval ended.
func (st *State) observeApproval(ctx context.Context, call policy.Call, out *policy.Outcome, outcome policy.ApprovalOutcome) {
	st.logger().Info("codecall: approval", "tool", call.Tool, "via", call.Via, "outcome", outcome.Audited(), "forSession", outcome.ForSession())
}
