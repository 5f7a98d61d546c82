package meta

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/policy/audit"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
	"github.com/codecall-go/codecall/vm"
)

// ExecuteInput is codecall.execute's input.
type ExecuteInput struct {
	Script       string         `json:"script"`
	AllowedTools []string       `json:"allowedTools,omitempty"`
	Context      map[string]any `json:"context,omitempty"`
}

// IllegalOutput is the result of a plan refused before it ran: every
// violation is listed, the first one is the error.
type IllegalOutput struct {
	Status     vm.Status       `json:"status"`
	Error      vm.ErrorInfo    `json:"error"`
	Violations []ast.Violation `json:"violations,omitempty"`
	ToolTrace  []vm.TraceEntry `json:"toolTrace"`
	Metrics    vm.Metrics      `json:"metrics"`
	RunID      string          `json:"runId"`
}

const maxAllowedTools = 256

func (h *handlers) execute(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	start := time.Now()
	var in ExecuteInput
	if field, msg, ok := decodeArgs(req.Params.Arguments, &in, "script, allowedTools, context"); !ok {
		return invalid(field, msg), nil
	}
	if strings.TrimSpace(in.Script) == "" {
		return invalid("script", "script must be the body of an async function, e.g. \"const r = await callTool('crm.find_contacts', {query: 'ada'}); return r;\""), nil
	}
	if len(in.AllowedTools) > maxAllowedTools {
		return invalid("allowedTools", fmt.Sprintf("allowedTools lists %d entries; at most %d are allowed", len(in.AllowedTools), maxAllowedTools)), nil
	}
	allowed, err := presets.CompileGlobs(in.AllowedTools)
	if err != nil {
		return invalid("allowedTools", "allowedTools"+err.Error()), nil
	}
	st, release := h.env.Acquire(ctx)
	defer release()
	scriptSHA := sha256Hex(in.Script)
	if state := req.Params.RequestState; state != "" {
		return h.resume(ctx, st, req, state, scriptSHA), nil
	}
	limits := st.Config.VM
	runID := newRunID()
	ctx, span := st.tracer().Start(ctx, "codecall.execute", trace.WithAttributes(
		attribute.String("codecall.run_id", runID), attribute.String("codecall.preset", string(st.Config.Preset)),
		attribute.Int("codecall.script_bytes", len(in.Script))))
	defer span.End()

	session := SessionID(ctx)
	st.Audit.Log(ctx, audit.Event{Type: audit.ExecuteStart, RunID: runID, SessionID: session, Via: string(policy.ViaExecute), ScriptSHA256: scriptSHA})
	refuse := func(status vm.Status, info vm.ErrorInfo, violations []ast.Violation) *mcp.CallToolResult {
		st.Audit.Log(ctx, audit.Event{Type: audit.ExecuteEnd, RunID: runID, SessionID: session, Via: string(policy.ViaExecute),
			ScriptSHA256: scriptSHA, Status: string(status), Duration: time.Since(start), ErrorCode: info.Kind, Error: info.Message})
		return result(IllegalOutput{Status: status, Error: info, Violations: violations, ToolTrace: []vm.TraceEntry{},
			Metrics: vm.Metrics{DurationMs: ms(time.Since(start))}, RunID: runID}, true)
	}
	runner := st.Runner
	if runner == nil {
		// The composition root refuses to start locked_down without worker
		// processes; this keeps the promise should a state ever lack one.
		if limits.Isolation == presets.IsolationProcess && st.Config.Preset == presets.LockedDown {
			return refuse(vm.StatusIllegalAccess, vm.ErrorInfo{Kind: vm.KindIsolation, Message: "the locked_down preset runs plans only in " +
				"sandboxed worker processes, and this server has none; set vm.isolation to \"inprocess\" to accept in-process execution"}, nil), nil
		}
		runner = InProcess{}
	}
	rules := ast.RulesFor(limits)
	rules.Preset = st.Config.Preset
	checked, err := ast.Validate(in.Script, rules)
	var syn *ast.SyntaxError
	var ill *ast.IllegalError
	switch {
	case errors.As(err, &syn):
		loc := vm.Location(syn.Location)
		return refuse(vm.StatusSyntaxError, vm.ErrorInfo{Message: syn.Message, Location: &loc}, nil), nil
	case errors.As(err, &ill) && len(ill.Violations) > 0:
		first := ill.Violations[0]
		loc := vm.Location(first.Location)
		return refuse(vm.StatusIllegalAccess, vm.ErrorInfo{Kind: string(first.Kind), Message: first.Message, Location: &loc}, ill.Violations), nil
	case err != nil:
		return refuse(vm.StatusIllegalAccess, vm.ErrorInfo{Kind: "validation", Message: err.Error()}, nil), nil
	}
	planContext := json.RawMessage("{}")
	if in.Context != nil {
		b, err := json.Marshal(in.Context)
		if err != nil {
			return invalid("context", "context cannot be encoded as JSON: "+err.Error()), nil
		}
		planContext = b
	}
	// The plan runs on its own goroutine, detached from this request: a
	// 2026-07-28 client answers an approval prompt with a new request, and
	// the plan must outlive this one to hear it. await ties the run to
	// whichever request is waiting for it.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	pr := &pausedRun{session: session, scriptSHA: scriptSHA, cancel: cancel, runID: runID, start: start,
		done: make(chan *vm.Result, 1), asks: make(chan *approvalAsk), secrets: &runSecrets{r: st.Redactor}}
	host := &planHost{env: h.env, st: st, names: NamesFor(st.Config), allowed: allowed, reqCtx: ctx, runID: runID,
		progress: progressToken(req), session: pr.session, scriptSHA: scriptSHA, planContext: in.Context, secrets: pr.secrets}
	if server.IsModernRequest(ctx) {
		host.pause = pr.pause
	}
	go func() {
		defer cancel()
		pr.done <- runner.Run(runCtx, in.Script, checked, rules, host, vm.Options{RunID: runID, Limits: limits, Context: planContext})
	}()
	res, status := h.await(ctx, st, pr)
	span.SetAttributes(attribute.String("codecall.status", string(status)))
	return res, nil
}

// await waits for the run's end, or for a call that needs a 2026-07-28
// client's approval, which it turns into an input request.
func (h *handlers) await(ctx context.Context, st *State, pr *pausedRun) (*mcp.CallToolResult, vm.Status) {
	select {
	case res := <-pr.done:
		return h.finish(ctx, st, pr, res), res.Status
	case ask := <-pr.asks:
		token, prompt := st.Approvals.Begin(ask.req)
		pr.current = ask
		pr.expires = time.Now().Add(st.Approvals.Timeout() + st.Config.VM.Timeout)
		if !st.Paused.put(token, pr) {
			ask.reply <- policy.ApprovalNoClient
			return h.await(ctx, st, pr)
		}
		return policy.InputRequired(token, prompt), statusInputRequired
	case <-ctx.Done():
		pr.cancel()
		res := <-pr.done
		return h.finish(ctx, st, pr, res), res.Status
	}
}

// finish audits the end of a run and renders its result, with secrets
// redacted from everything the client will read: the result, the logs and
// the error (a tool's input echoed in a tool_error among them).
func (h *handlers) finish(ctx context.Context, st *State, pr *pausedRun, res *vm.Result) *mcp.CallToolResult {
	e := audit.Event{Type: audit.ExecuteEnd, RunID: pr.runID, SessionID: pr.session, Via: string(policy.ViaExecute),
		ScriptSHA256: pr.scriptSHA, Status: string(res.Status), Duration: time.Since(pr.start)}
	if res.Error != nil {
		e.ErrorCode, e.Error = res.Error.Code, res.Error.Message
		if e.ErrorCode == "" {
			e.ErrorCode = res.Error.Limit
		}
	}
	if len(res.Result) > 0 {
		e.ResultSHA256, e.ResultBytes = audit.DigestBytes(res.Result)
	}
	st.Audit.Log(ctx, e)
	for i := range res.ToolTrace {
		if t, ok := st.Catalog.Lookup(res.ToolTrace[i].ToolName); ok {
			res.ToolTrace[i].AppID = t.AppID
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return result(res, true)
	}
	b = pr.secrets.scrubJSON(st.Redactor.JSON(b, nil))
	out := mcp.NewToolResultStructured(json.RawMessage(b), string(b))
	out.IsError = res.Status != vm.StatusOK
	return out
}

// statusInputRequired marks, in spans, an execute request answered with an
// approval prompt.
const statusInputRequired vm.Status = "input_required"

// resume delivers a 2026-07-28 client's answer to the plan paused under
// state and waits for what the plan does next.
func (h *handlers) resume(ctx context.Context, st *State, req mcp.CallToolRequest, state, scriptSHA string) *mcp.CallToolResult {
	pr := st.Paused.take(state)
	switch {
	case pr == nil:
		return invalid("requestState", "no plan is waiting for this answer: the approval expired or was already answered; run the plan again without requestState")
	case pr.session != SessionID(ctx) || pr.scriptSHA != scriptSHA:
		// Not the client, or not the plan, the prompt was for: the plan
		// keeps waiting for the right answer.
		st.Paused.put(state, pr)
		return invalid("requestState", "this answer belongs to another session or another script; resend the same script with the requestState you were given")
	}
	outcome, answered := st.Approvals.Resume(state, req.Params.InputResponses, pr.current.req)
	if !answered {
		outcome = policy.ApprovalDenied
	}
	pr.current.reply <- outcome
	res, _ := h.await(ctx, st, pr)
	return res
}

// pause is a planHost's way to ask a 2026-07-28 client: it hands the ask
// to the waiting execute request and blocks until the answer, at most the
// approval timeout.
func (pr *pausedRun) pause(ctx context.Context, req policy.ApprovalRequest, timeout time.Duration) policy.ApprovalOutcome {
	ask := &approvalAsk{req: req, reply: make(chan policy.ApprovalOutcome, 1)}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case pr.asks <- ask:
	case <-timer.C:
		return policy.ApprovalExpired
	case <-ctx.Done():
		return policy.ApprovalDenied
	}
	select {
	case o := <-ask.reply:
		return o
	case <-timer.C:
		return policy.ApprovalExpired
	case <-ctx.Done():
		return policy.ApprovalDenied
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func newRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func progressToken(req mcp.CallToolRequest) mcp.ProgressToken {
	if req.Params.Meta != nil {
		return req.Params.Meta.ProgressToken
	}
	return nil
}

// planHost is what a running plan reaches of CodeCall: every tool call goes
// through the same gate as any other path, then through the server's whole
// pipeline as an internal call.
type planHost struct {
	env      Env
	st       *State
	names    Names
	allowed  presets.Globs
	reqCtx   context.Context
	runID    string
	progress mcp.ProgressToken
	events   atomic.Int64

	session     string
	scriptSHA   string
	planContext map[string]any
	calls       atomic.Int64
	secrets     *runSecrets
	// pause asks a 2026-07-28 client through the waiting execute request;
	// nil for older clients, which are asked with an elicitation.
	pause func(ctx context.Context, req policy.ApprovalRequest, timeout time.Duration) policy.ApprovalOutcome
}

func (p *planHost) authorize(ctx context.Context, name string) (*toolerr.Error, bool) {
	if p.names.Has(name) {
		return &toolerr.Error{Code: toolerr.SelfReference, Tool: name,
			Message: "a plan cannot call a CodeCall meta-tool; call the tools themselves"}, false
	}
	if _, err := p.st.Gate.Authorize(ctx, p.st.Catalog, policy.Request{Tool: name, Via: policy.ViaExecute}); err != nil {
		var pe *toolerr.Error
		if errors.As(err, &pe) {
			return pe, false
		}
		return &toolerr.Error{Code: toolerr.AccessDenied, Tool: name, Message: err.Error()}, false
	}
	if len(p.allowed) > 0 && !p.allowed.Match(name) {
		return &toolerr.Error{Code: toolerr.AccessDenied, Tool: name,
			Message: fmt.Sprintf("tool %q is not in this run's allowedTools", name)}, false
	}
	return nil, true
}

// CallTool implements vm.Host.
func (p *planHost) CallTool(ctx context.Context, name string, input map[string]any) (json.RawMessage, error) {
	if pe, ok := p.authorize(ctx, name); !ok {
		return nil, pe
	}
	call := policy.Call{Tool: name, Via: policy.ViaExecute, Args: input, SessionID: p.session, Context: p.planContext,
		Run: &policy.RunInfo{ID: p.runID, ScriptSHA256: p.scriptSHA, CallIndex: int(p.calls.Add(1))}}
	ctx, obs := p.st.observeCall(ctx, call)
	res, err := p.admitAndCall(ctx, obs, call)
	obs.end(ctx, res, err)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		rerr := ResultError(name, res)
		if rerr.Code == toolerr.Validation {
			if t, ok := p.st.Catalog.Lookup(name); ok {
				if why := explainValidation(t.InputSchema, input); why != "" {
					rerr.Message = "input does not match the tool's input schema: " + why
				}
			}
		}
		return nil, rerr
	}
	raw, err := Unwrap(res)
	if err != nil {
		return nil, &toolerr.Error{Code: toolerr.Execution, Tool: name, Message: err.Error()}
	}
	if t, ok := p.st.Catalog.Lookup(name); ok {
		p.secrets.learn(raw, t.OutputSchema)
	}
	return raw, nil
}

// admitAndCall runs a plan's call through the gate (access, policy,
// approval) and the server's pipeline.
func (p *planHost) admitAndCall(ctx context.Context, obs *callObserver, call policy.Call) (*mcp.CallToolResult, error) {
	out, err := p.st.Gate.Decide(ctx, p.st.Catalog, call)
	obs.decided(ctx, out, err)
	if err != nil {
		return nil, err
	}
	if out.NeedsApproval() {
		if perr := p.approve(ctx, obs, call, out); perr != nil {
			return nil, perr
		}
	}
	p.toolEvent(ctx, call.Tool, "started")
	res, err := p.env.Call(ctx, p.st, call.Tool, call.Args, policy.ViaExecute)
	switch {
	case err != nil || res.IsError:
		p.toolEvent(ctx, call.Tool, "failed")
	default:
		p.toolEvent(ctx, call.Tool, "finished")
	}
	return res, err
}

// approve asks a person to approve a plan's call. The run's clock stops
// while the person decides.
func (p *planHost) approve(ctx context.Context, obs *callObserver, call policy.Call, out *policy.Outcome) *toolerr.Error {
	ap := p.st.Approvals
	if ap.Trusted(call.SessionID, out.Tool.Name) {
		obs.approved(ctx, policy.ApprovalTrusted)
		return nil
	}
	// The prompt must not show what the plan got from its tools as
	// secrets, whatever key the plan put them under.
	areq := policy.ApprovalRequest{Tool: out.Tool, Args: p.secrets.scrubValue(call.Args), Via: call.Via, SessionID: call.SessionID, Reason: out.Decision.Reason}
	resume := vm.SuspendClock(ctx)
	defer resume()
	var outcome policy.ApprovalOutcome
	switch {
	case p.pause != nil && !policy.CanElicit(p.reqCtx):
		outcome = policy.ApprovalNoClient
	case p.pause != nil:
		outcome = p.pause(ctx, areq, ap.Timeout())
	default:
		var err error
		outcome, err = ap.Ask(p.reqCtx, server.ServerFromContext(p.reqCtx), areq)
		if err != nil {
			p.st.logger().Warn("codecall: approval prompt failed", "tool", call.Tool, "error", err)
		}
	}
	obs.approved(ctx, outcome)
	return policy.ApprovalError(call.Tool, outcome, ap.Timeout())
}

// Unwrap applies DESIGN.md's rules to a tool result: structuredContent when
// present; otherwise a single text block, JSON-parsed when it is JSON, else
// the string; otherwise the whole result.
func Unwrap(res *mcp.CallToolResult) (json.RawMessage, error) {
	if len(res.RawStructuredContent) > 0 {
		return res.RawStructuredContent, nil
	}
	if res.StructuredContent != nil {
		return json.Marshal(res.StructuredContent)
	}
	if len(res.Content) == 1 {
		if tc, ok := mcp.AsTextContent(res.Content[0]); ok {
			if t := strings.TrimSpace(tc.Text); json.Valid([]byte(t)) && t != "" {
				return json.RawMessage(t), nil
			}
			return json.Marshal(tc.Text)
		}
	}
	return json.Marshal(res)
}

// GetTool implements vm.Host.
func (p *planHost) GetTool(name string) (json.RawMessage, bool) {
	if _, ok := p.authorize(p.reqCtx, name); !ok {
		return nil, false
	}
	t, ok := p.st.Catalog.Lookup(name)
	if !ok {
		return nil, false
	}
	d := describeTool(t)
	b, err := json.Marshal(struct {
		Name         string          `json:"name"`
		Title        string          `json:"title,omitempty"`
		Description  string          `json:"description"`
		AppID        string          `json:"appId"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
		Annotations  any             `json:"annotations,omitempty"`
	}{d.Name, d.Title, d.Description, d.AppID, d.InputSchema, d.OutputSchema, d.Annotations})
	return b, err == nil
}

// Log implements vm.Host: mcpLog becomes an MCP logging message.
func (p *planHost) Log(ctx context.Context, level, message string, data json.RawMessage) {
	srv := server.ServerFromContext(p.reqCtx)
	if srv == nil {
		return
	}
	payload := map[string]any{"message": message, "runId": p.runID}
	if len(data) > 0 {
		payload["data"] = data
	}
	_ = srv.SendLogMessageToClient(p.reqCtx, mcp.NewLoggingMessageNotification(mcp.LoggingLevel(level), "codecall.plan", payload))
}

// Notify implements vm.Host: mcpNotify becomes a notifications/codecall/event
// notification for the request's client.
func (p *planHost) Notify(ctx context.Context, event string, payload json.RawMessage) {
	srv := server.ServerFromContext(p.reqCtx)
	if srv == nil {
		return
	}
	_ = srv.SendNotificationToClient(p.reqCtx, "notifications/codecall/event",
		map[string]any{"event": event, "payload": payload, "runId": p.runID})
}

// toolEvent tells the client a plan's tool call started or ended: a
// progress notification when the execute request carried a progress token,
// else a debug logging message.
func (p *planHost) toolEvent(ctx context.Context, tool, what string) {
	srv := server.ServerFromContext(p.reqCtx)
	if srv == nil {
		return
	}
	n := p.events.Add(1)
	msg := fmt.Sprintf("callTool %s %s", tool, what)
	if p.progress != nil {
		_ = srv.SendNotificationToClient(p.reqCtx, string(mcp.MethodNotificationProgress),
			map[string]any{"progressToken": p.progress, "progress": n, "message": msg})
		return
	}
	_ = srv.SendLogMessageToClient(p.reqCtx, mcp.NewLoggingMessageNotification(mcp.LoggingLevelDebug, "codecall.plan",
		map[string]any{"message": msg, "runId": p.runID, "tool": tool, "event": what}))
}
