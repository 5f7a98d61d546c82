package meta

import (
	"context"
	"log/slog"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/policy/audit"
	"github.com/codecall-go/codecall/toolerr"
)

// Instrumentation is the OpenTelemetry instrumentation scope of CodeCall's
// spans.
const Instrumentation = "github.com/codecall-go/codecall"

func (st *State) logger() *slog.Logger {
	if st.Logger != nil {
		return st.Logger
	}
	return slog.Default()
}

func (st *State) tracer() trace.Tracer {
	if st.Tracer != nil {
		return st.Tracer
	}
	return noop.NewTracerProvider().Tracer(Instrumentation)
}

// observe opens the observation of one call before the gate's first check,
// so refusals are audited, traced and logged like any other outcome. It
// starts the call's span; the returned Observer ends it. Audit, span and
// log are separate observers behind one fan-out. runID names the run in
// the audit log when the call is not a plan's (a plan's call carries its
// run); "" gives a new one.
func (st *State) observe(ctx context.Context, call policy.Call, runID string) (context.Context, policy.Observer) {
	attrs := make([]attribute.KeyValue, 2, 4)
	attrs[0], attrs[1] = attribute.String("codecall.tool", call.Tool), attribute.String("codecall.via", string(call.Via))
	if call.Run != nil {
		attrs = append(attrs, attribute.String("codecall.run_id", call.Run.ID), attribute.Int("codecall.call_index", call.Run.CallIndex))
	}
	ctx, span := st.tracer().Start(ctx, "codecall.tool_call", trace.WithAttributes(attrs...), trace.WithSpanKind(trace.SpanKindInternal))
	// Every call of a plan opens one: the observers and their fan-out
	// share one allocation.
	o := &callObservers{span: spanObserver{span}, log: logObserver{st.logger(), call}}
	obs := append(fanOut(o.fan[:0]), &o.span, &o.log)
	if st.Audit.Enabled() {
		obs = append(obs, newAuditObserver(st, call, runID))
	}
	return ctx, obs
}

// callObservers hold the observers of one call that observe always, and
// room for the fan-out over them and the audit observer.
type callObservers struct {
	span spanObserver
	log  logObserver
	fan  [3]policy.Observer
}

// fanOut hands every event to each observer in turn.
type fanOut []policy.Observer

func (f fanOut) Decided(ctx context.Context, out *policy.Outcome, err error) {
	for _, o := range f {
		o.Decided(ctx, out, err)
	}
}

func (f fanOut) Approved(ctx context.Context, answer policy.Answer, err error) {
	for _, o := range f {
		o.Approved(ctx, answer, err)
	}
}

func (f fanOut) Ended(ctx context.Context, res *mcp.CallToolResult, err error) {
	for _, o := range f {
		o.Ended(ctx, res, err)
	}
}

// decisionOf names the gate's verdict as the audit log and spans do.
func decisionOf(out *policy.Outcome, err error) string {
	switch {
	case err != nil:
		return "deny"
	case out.NeedsApproval():
		return "approval"
	}
	return "allow"
}

// auditObserver writes a call's policy.decision, approval and tool.call
// (or invoke) events. It is left out when no audit sink is configured, so
// digests and run ids are computed only when someone keeps them.
type auditObserver struct {
	log   *audit.Logger
	via   policy.Via
	start time.Time
	base  audit.Event // the fields every event of this call shares
}

func newAuditObserver(st *State, call policy.Call, runID string) *auditObserver {
	o := &auditObserver{log: st.Audit, via: call.Via, start: time.Now()}
	o.base = audit.Event{SessionID: call.SessionID, Tool: call.Tool, Via: string(call.Via)}
	o.base.ArgsSHA256, o.base.ArgsBytes = audit.Digest(call.Args)
	if call.Run != nil {
		o.base.RunID, o.base.ParentRunID, o.base.CallIndex = call.Run.ID, call.Run.ID, call.Run.Index()
	} else {
		// A direct call or an invoke is a run of its own.
		o.base.RunID = runID
		if runID == "" {
			o.base.RunID = newRunID()
		}
	}
	if t, ok := st.Catalog.Lookup(call.Tool); ok {
		o.base.AppID = t.AppID
	}
	return o
}

func (o *auditObserver) event(typ audit.Type) audit.Event {
	e := o.base
	e.Type = typ
	return e
}

func (o *auditObserver) Decided(ctx context.Context, out *policy.Outcome, err error) {
	e := o.event(audit.PolicyDecision)
	e.Decision = audit.Decision(decisionOf(out, err))
	if te := toolerr.As(err); te != nil {
		e.ErrorCode, e.Reason = string(te.Code), te.Message
	}
	if out != nil && out.Decision.Reason != "" {
		e.Reason = out.Decision.Reason
	}
	o.log.Log(ctx, e)
}

func (o *auditObserver) Approved(ctx context.Context, answer policy.Answer, _ error) {
	e := o.event(audit.Approval)
	e.Approval = audit.Outcome(answer.Outcome.Audited())
	e.ApprovalChannel, e.Approver = string(answer.Channel), answer.By
	if answer.Outcome.ForSession() {
		e.Reason = "approved for the rest of the session"
	}
	o.log.Log(ctx, e)
}

func (o *auditObserver) Ended(ctx context.Context, res *mcp.CallToolResult, err error) {
	typ := audit.ToolCall
	if o.via == policy.ViaInvoke {
		typ = audit.Invoke
	}
	e := o.event(typ)
	e.Duration = time.Since(o.start)
	e.Status = "ok"
	switch te := toolerr.As(err); {
	case te != nil:
		e.Status, e.ErrorCode, e.Error = "error", string(te.Code), te.Message
	case err != nil:
		e.Status, e.ErrorCode, e.Error = "error", string(toolerr.Execution), err.Error()
	case res != nil && res.ResultType == mcp.ResultTypeInputRequired:
		e.Status = "input_required"
	case res != nil && res.IsError:
		e.Status = "error"
	}
	if res != nil {
		e.ResultSHA256, e.ResultBytes = audit.Digest(res)
	}
	o.log.Log(ctx, e)
}

// spanObserver records a call on its span and ends the span.
type spanObserver struct{ span trace.Span }

func (o spanObserver) Decided(_ context.Context, out *policy.Outcome, err error) {
	if !o.span.IsRecording() {
		return // no tracing: spare the attributes, which a span that records nothing drops
	}
	o.span.SetAttributes(attribute.String("codecall.policy.decision", decisionOf(out, err)))
	if out != nil {
		o.span.SetAttributes(attribute.String("codecall.policy", out.Policy))
	}
}

func (o spanObserver) Approved(_ context.Context, answer policy.Answer, _ error) {
	if !o.span.IsRecording() {
		return
	}
	o.span.SetAttributes(attribute.String("codecall.approval", answer.Outcome.Audited()))
	if answer.Channel != "" {
		o.span.SetAttributes(attribute.String("codecall.approval.channel", string(answer.Channel)))
	}
}

func (o spanObserver) Ended(_ context.Context, res *mcp.CallToolResult, err error) {
	defer o.span.End()
	switch te := toolerr.As(err); {
	case te != nil:
		o.span.SetAttributes(attribute.String("codecall.error_code", string(te.Code)))
		o.span.SetStatus(codes.Error, string(te.Code))
	case err != nil, res != nil && res.IsError:
		o.span.SetStatus(codes.Error, "tool error")
	}
}

// logObserver logs what an operator should hear of: policy denials and
// failures, and approvals.
type logObserver struct {
	log  *slog.Logger
	call policy.Call
}

func (o logObserver) Decided(_ context.Context, out *policy.Outcome, err error) {
	switch {
	case out == nil:
		// Refused before any policy ran: the audit log has it.
	case out.EvalErr != nil:
		o.log.Warn("codecall: policy failed; the call is denied", "tool", o.call.Tool, "via", o.call.Via, "policy", out.Policy, "error", out.EvalErr)
	case err != nil:
		o.log.Info("codecall: policy denied a call", "tool", o.call.Tool, "via", o.call.Via, "policy", out.Policy, "reason", out.Decision.Reason)
	}
}

func (o logObserver) Approved(_ context.Context, answer policy.Answer, err error) {
	if err != nil {
		o.log.Warn("codecall: approval prompt failed", "tool", o.call.Tool, "error", err)
	}
	o.log.Info("codecall: approval", "tool", o.call.Tool, "via", o.call.Via, "outcome", answer.Outcome.Audited(),
		"forSession", answer.Outcome.ForSession(), "channel", string(answer.Channel), "by", answer.By)
}

func (logObserver) Ended(context.Context, *mcp.CallToolResult, error) {}
