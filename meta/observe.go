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

// callObserver follows one tool call through the gate and the server: its
// span, its log lines and its audit events.
type callObserver struct {
	st    *State
	call  policy.Call
	span  trace.Span
	start time.Time
	base  audit.Event // the fields every event of this call shares
}

// observeCall starts observing a call; end must be called.
func (st *State) observeCall(ctx context.Context, call policy.Call) (context.Context, *callObserver) {
	attrs := []attribute.KeyValue{
		attribute.String("codecall.tool", call.Tool),
		attribute.String("codecall.via", string(call.Via)),
	}
	if call.Run != nil {
		attrs = append(attrs, attribute.String("codecall.run_id", call.Run.ID), attribute.Int("codecall.call_index", call.Run.CallIndex))
	}
	ctx, span := st.tracer().Start(ctx, "codecall.tool_call", trace.WithAttributes(attrs...), trace.WithSpanKind(trace.SpanKindInternal))
	o := &callObserver{st: st, call: call, span: span, start: time.Now()}
	o.base = audit.Event{SessionID: call.SessionID, Tool: call.Tool, Via: string(call.Via)}
	if st.Audit.Enabled() {
		o.base.ArgsSHA256, o.base.ArgsBytes = audit.Digest(call.Args)
	}
	if call.Run != nil {
		o.base.RunID, o.base.ParentRunID, o.base.CallIndex = call.Run.ID, call.Run.ID, call.Run.Index()
	} else {
		o.base.RunID = newRunID() // a direct call or an invoke is a run of its own
	}
	if t, ok := st.Catalog.Lookup(call.Tool); ok {
		o.base.AppID = t.AppID
	}
	return ctx, o
}

func (o *callObserver) event(typ audit.Type) audit.Event {
	e := o.base
	e.Type = typ
	return e
}

// decided records the gate's verdict.
func (o *callObserver) decided(ctx context.Context, out *policy.Outcome, err error) {
	decision := "allow"
	switch {
	case err != nil:
		decision = "deny"
	case out.NeedsApproval():
		decision = "approval"
	}
	o.span.SetAttributes(attribute.String("codecall.policy.decision", decision))
	e := o.event(audit.PolicyDecision)
	e.Decision = audit.Decision(decision)
	if pe, ok := asPolicyError(err); ok {
		e.ErrorCode, e.Reason = string(pe.Code), pe.Message
	}
	if out != nil && out.Decision.Reason != "" {
		e.Reason = out.Decision.Reason
	}
	o.st.Audit.Log(ctx, e)
	if out == nil {
		return // refused by the access rules before any policy ran
	}
	o.span.SetAttributes(attribute.String("codecall.policy", out.Policy))
	if out.EvalErr != nil {
		o.st.logger().Warn("codecall: policy failed; the call is denied", "tool", o.call.Tool, "via", o.call.Via, "policy", out.Policy, "error", out.EvalErr)
	} else if err != nil {
		o.st.logger().Info("codecall: policy denied a call", "tool", o.call.Tool, "via", o.call.Via, "policy", out.Policy, "reason", out.Decision.Reason)
	}
}

// approved records how an approval ended.
func (o *callObserver) approved(ctx context.Context, outcome policy.ApprovalOutcome) {
	o.span.SetAttributes(attribute.String("codecall.approval", outcome.Audited()))
	e := o.event(audit.Approval)
	e.Approval = audit.Outcome(outcome.Audited())
	if outcome.ForSession() {
		e.Reason = "approved for the rest of the session"
	}
	o.st.Audit.Log(ctx, e)
	o.st.logger().Info("codecall: approval", "tool", o.call.Tool, "via", o.call.Via, "outcome", outcome.Audited(), "forSession", outcome.ForSession())
}

// end records how the call ended: res is the tool's result, err a failure
// to run it or a refusal.
func (o *callObserver) end(ctx context.Context, res *mcp.CallToolResult, err error) {
	defer o.span.End()
	typ := audit.ToolCall
	if o.call.Via == policy.ViaInvoke {
		typ = audit.Invoke
	}
	e := o.event(typ)
	e.Duration = time.Since(o.start)
	e.Status = "ok"
	switch pe, isPolicy := asPolicyError(err); {
	case isPolicy:
		o.span.SetAttributes(attribute.String("codecall.error_code", string(pe.Code)))
		o.span.SetStatus(codes.Error, string(pe.Code))
		e.Status, e.ErrorCode, e.Error = "error", string(pe.Code), pe.Message
	case err != nil:
		o.span.SetStatus(codes.Error, "tool error")
		e.Status, e.ErrorCode, e.Error = "error", string(toolerr.Execution), err.Error()
	case res != nil && res.ResultType == mcp.ResultTypeInputRequired:
		e.Status = "input_required"
	case res != nil && res.IsError:
		o.span.SetStatus(codes.Error, "tool error")
		e.Status = "error"
	}
	if res != nil && o.st.Audit.Enabled() {
		e.ResultSHA256, e.ResultBytes = audit.Digest(res)
	}
	o.st.Audit.Log(ctx, e)
}
