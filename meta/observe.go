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
	return ctx, &callObserver{st: st, call: call, span: span, start: time.Now()}
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
	o.st.logger().Info("codecall: approval", "tool", o.call.Tool, "via", o.call.Via, "outcome", outcome.Audited(), "forSession", outcome.ForSession())
}

// end records how the call ended: res is the tool's result, err a failure
// to run it or a refusal.
func (o *callObserver) end(ctx context.Context, res *mcp.CallToolResult, err error) {
	defer o.span.End()
	if pe, ok := asPolicyError(err); ok {
		o.span.SetAttributes(attribute.String("codecall.error_code", string(pe.Code)))
		o.span.SetStatus(codes.Error, string(pe.Code))
		return
	}
	if err != nil || (res != nil && res.IsError) {
		o.span.SetStatus(codes.Error, "tool error")
	}
}
