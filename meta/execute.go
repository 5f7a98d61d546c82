package meta

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/policy/audit"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/render"
	"github.com/codecall-go/codecall/toolerr"
	"github.com/codecall-go/codecall/vm"
)

// ExecuteInput is codecall.execute's input.
type ExecuteInput struct {
	Script string `json:"script"`
	// Language is javascript (the default; TypeScript is read as such),
	// typescript or python (where the server enables it).
	Language     string         `json:"language,omitempty"`
	AllowedTools []string       `json:"allowedTools,omitempty"`
	Context      map[string]any `json:"context,omitempty"`
	Output       *OutputOptions `json:"output,omitempty"`
}

// OutputOptions shape the answer's text block; structuredContent is the
// same whatever they say.
type OutputOptions struct {
	// Format is json (the default), compact or toon.
	Format string `json:"format,omitempty"`
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
	if field, msg, ok := executeArgs.decode(req.Params.Arguments, &in); !ok {
		return executeArgs.invalid(field, msg), nil
	}
	format := render.JSON
	if in.Output != nil {
		f, err := render.ParseFormat(in.Output.Format)
		if err != nil {
			return executeArgs.invalid("output.format", fmt.Sprintf("output.format must be json, compact or toon, not %q", in.Output.Format)), nil
		}
		format = f
	}
	if in.Language != "" && in.Language != LanguageJavaScript && in.Language != LanguageTypeScript && in.Language != LanguagePython {
		return executeArgs.invalid("language", fmt.Sprintf("language must be javascript, typescript or python, not %q", in.Language)), nil
	}
	if strings.TrimSpace(in.Script) == "" {
		if in.Language == LanguagePython {
			return executeArgs.invalid("script", "script must be Python module code, e.g. \"r = await call_tool('crm.find_contacts', {'query': 'ada'})\\nresult = r\""), nil
		}
		return executeArgs.invalid("script", "script must be the body of an async function, e.g. \"const r = await callTool('crm.find_contacts', {query: 'ada'}); return r;\""), nil
	}
	if len(in.AllowedTools) > maxAllowedTools {
		return executeArgs.invalid("allowedTools", fmt.Sprintf("allowedTools lists %d entries; at most %d are allowed", len(in.AllowedTools), maxAllowedTools)), nil
	}
	allowed, err := presets.CompileGlobs(in.AllowedTools)
	if err != nil {
		return executeArgs.invalid("allowedTools", "allowedTools"+err.Error()), nil
	}
	st, release := h.env.Acquire(ctx)
	defer release()
	scriptSHA := sha256Hex(in.Script)
	if state := req.Params.RequestState; state != "" {
		if st.Durable != nil && IsDurableState(state) {
			return h.resumeDurable(ctx, st, req, state, scriptSHA, executeArgs.invalid), nil
		}
		return h.resume(ctx, st, req, state, scriptSHA, executeArgs.invalid), nil
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
		return rendered(IllegalOutput{Status: status, Error: info, Violations: violations, ToolTrace: []vm.TraceEntry{},
			Metrics: vm.Metrics{DurationMs: ms(time.Since(start))}, RunID: runID}, true, format)
	}
	runner, noRunner := st.runnerFor(limits)
	if noRunner != nil {
		return refuse(vm.StatusIllegalAccess, *noRunner, nil), nil
	}
	lang, off := st.checkLanguage(in.Language)
	if off != "" {
		return refuse(vm.StatusIllegalAccess, vm.ErrorInfo{Kind: "language", Message: off}, nil), nil
	}
	var launch func(ctx context.Context, host *planHost, opts vm.Options) *vm.Result
	var checked *ast.Checked // a JavaScript plan's validation
	if lang == LanguagePython {
		if info := checkPythonSize(in.Script, limits); info != nil {
			return refuse(vm.StatusIllegalAccess, *info, nil), nil
		}
		launch = func(ctx context.Context, host *planHost, opts vm.Options) *vm.Result {
			return st.Python.RunPython(ctx, in.Script, host, opts)
		}
	} else {
		rules := ast.RulesFor(limits)
		rules.Preset = st.Config.Preset
		var err error
		checked, err = h.plans.validate(in.Script, scriptSHA, rules)
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
		// A TypeScript plan runs as the JavaScript its types were
		// stripped to; the runner reports locations in the script as sent.
		launch = func(ctx context.Context, host *planHost, opts vm.Options) *vm.Result {
			return runner.Run(ctx, checked.Source(), checked, checked.SourceRules(rules), host, opts)
		}
	}
	planContext := json.RawMessage("{}")
	if in.Context != nil {
		b, err := json.Marshal(in.Context)
		if err != nil {
			return executeArgs.invalid("context", "context cannot be encoded as JSON: "+err.Error()), nil
		}
		planContext = b
	}
	// A 2026-07-28 client's plan that pauses for an approval is saved and
	// replayed on the answer, on any replica (see Durable).
	if st.Durable != nil && server.IsModernRequest(ctx) {
		res, status := h.runDurable(ctx, st, req, newSavedPlan(st, in, lang, format, runID, session, scriptSHA, start), launch, limits)
		span.SetAttributes(attribute.String("codecall.status", string(status)))
		return res, nil
	}
	// The plan runs on its own goroutine, detached from this request: a
	// 2026-07-28 client answers an approval prompt with a new request, and
	// the plan must outlive this one to hear it. await ties the run to
	// whichever request is waiting for it.
	runCtx, stop := context.WithCancelCause(context.WithoutCancel(ctx))
	cancel := func() { stop(nil) }
	pr := &pausedRun{session: session, scriptSHA: scriptSHA, cancel: cancel, stop: stop, runID: runID, start: start,
		done: make(chan *vm.Result, 1), asks: make(chan *approvalAsk), secrets: &runSecrets{r: st.Redactor}, approval: &runApproval{}, format: format}
	host := &planHost{env: h.env, st: st, allowed: allowed, reqCtx: ctx, runID: runID,
		session: pr.session, scriptSHA: scriptSHA, planContext: in.Context, secrets: pr.secrets,
		approval: pr.approval}
	var asker policy.Asker = policy.ElicitAsker{Approvals: st.Approvals, Client: ctx}
	if server.IsModernRequest(ctx) {
		asker = pauseAsker{run: pr, client: ctx, approvals: st.Approvals}
	}
	host.asker = planAsker{next: st.withOutOfBand(asker), secrets: pr.secrets}
	host.notifyCalls, host.progress = listeners(ctx, progressToken(req))
	go func() {
		defer cancel()
		pr.done <- launch(runCtx, host, vm.Options{RunID: runID, Limits: limits, Context: planContext, Session: session})
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
		return pr.finisher(h)(ctx, st, pr, res), res.Status
	case ask := <-pr.asks:
		token, prompt, err := st.Approvals.Begin(ctx, ask.req)
		if err != nil {
			st.logger().Error("codecall: an approval prompt could not be issued; the call was not made", "runId", pr.runID, "error", err)
			ask.reply <- policy.ApprovalFailed
			return h.await(ctx, st, pr)
		}
		pr.current = ask
		pr.expires = time.Now().Add(st.Approvals.Timeout() + st.Config.VM.Timeout)
		if !st.Paused.put(token, pr) {
			ask.reply <- policy.ApprovalNoClient
			return h.await(ctx, st, pr)
		}
		return policy.InputRequired(token, prompt), statusInputRequired
	case <-ctx.Done():
		// The run ends with the request's own cause: cancelled, or a
		// timeout at the client's deadline.
		pr.stopFor(ctx)
		res := <-pr.done
		return pr.finisher(h)(ctx, st, pr, res), res.Status
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
	e.LogLines, e.LogBytes = logCounts(res.Logs)
	st.Audit.Log(ctx, e)
	for i := range res.ToolTrace {
		if t, ok := st.Catalog.Lookup(res.ToolTrace[i].ToolName); ok {
			res.ToolTrace[i].AppID = t.AppID
		}
	}
	env := ExecuteOutput{Result: res, InputDigest: "sha256:" + pr.scriptSHA, ApprovalState: pr.approval.State()}
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		env.TraceID = sc.TraceID().String()
	}
	if len(res.Result) > 0 {
		// The digest of the result as the client receives it, secrets
		// redacted, so a client can check what it stored.
		res.Result = pr.secrets.scrubJSON(st.Redactor.JSON(res.Result, nil))
		env.OutputDigest = "sha256:" + sha256Hex(string(res.Result))
	}
	b, err := json.Marshal(env)
	if err != nil {
		return result(env, true)
	}
	b = pr.secrets.scrubJSON(st.Redactor.JSON(b, nil))
	return renderedJSON(b, res.Status != vm.StatusOK, pr.format)
}

// logCounts are the audit's figures of a run's logs: how many lines, how
// many bytes of message.
func logCounts(logs []vm.LogEntry) (lines, bytes int) {
	for _, l := range logs {
		bytes += len(l.Message)
	}
	return len(logs), bytes
}

// ExecuteOutput is codecall.execute's result: the run's outcome and the
// envelope that identifies it (digests of the script and of the result,
// the trace, and how approvals went).
type ExecuteOutput struct {
	*vm.Result
	// InputDigest is "sha256:" and the hex SHA-256 of the script.
	InputDigest string `json:"inputDigest"`
	// OutputDigest is "sha256:" and the hex SHA-256 of the result's JSON
	// as sent; empty when the run has no result.
	OutputDigest string `json:"outputDigest,omitempty"`
	// TraceID is the OpenTelemetry trace of the run, when tracing is on.
	TraceID string `json:"traceId,omitempty"`
	// ApprovalState says whether calls needed a person's approval and how
	// that went.
	ApprovalState ApprovalState `json:"approvalState"`
}

// statusInputRequired marks, in spans, an execute request answered with an
// approval prompt.
const statusInputRequired vm.Status = "input_required"

// resume delivers a 2026-07-28 client's answer to the plan paused under
// state and waits for what the plan does next.
func (h *handlers) resume(ctx context.Context, st *State, req mcp.CallToolRequest, state, scriptSHA string,
	invalid func(field, msg string) *mcp.CallToolResult) *mcp.CallToolResult {
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
	outcome, answered, err := st.Approvals.Resume(ctx, state, req.Params.InputResponses, pr.current.req)
	switch {
	case err != nil:
		st.logger().Error("codecall: an approval answer could not be read; the call was not made", "runId", pr.runID, "error", err)
	case !answered:
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
// through the gate's one door, then through the server's whole pipeline
// as an internal call.
type planHost struct {
	env      Env
	st       *State
	allowed  presets.Globs
	reqCtx   context.Context
	runID    string
	progress mcp.ProgressToken // the request's progress token, nil when nobody listens
	events   atomic.Int64
	// notifyCalls is true when the client takes tool_call notifications.
	notifyCalls bool

	session     string
	scriptSHA   string
	planContext map[string]any
	calls       atomic.Int64
	secrets     *runSecrets
	asker       policy.Asker
	approval    *runApproval
	// codeMode is set for a codemode.run script: results are unwrapped by
	// the Code Mode rules and discovery speaks the Code Mode operations.
	codeMode *Modules
	// journal, set for a durable run, answers the calls an earlier run
	// made and records the others (see Durable).
	journal *runJournal
}

// CallTool implements vm.Host.
func (p *planHost) CallTool(ctx context.Context, name string, input map[string]any) (json.RawMessage, error) {
	if p.journal != nil {
		return p.journal.call(ctx, callRef{Tool: name, Input: digestJSON(input)}, "",
			func(ctx context.Context) (json.RawMessage, error) { return p.callTool(ctx, name, input) })
	}
	return p.callTool(ctx, name, input)
}

// callTool makes one call of the plan through the gate.
func (p *planHost) callTool(ctx context.Context, name string, input map[string]any) (json.RawMessage, error) {
	call := policy.Call{Tool: name, Via: policy.ViaExecute, Args: input, SessionID: p.session, Context: p.planContext,
		Allowed: p.allowed, Run: &policy.RunInfo{ID: p.runID, ScriptSHA256: p.scriptSHA, CallIndex: int(p.calls.Add(1))}}
	ctx, obs := p.st.observe(ctx, call, "")
	ev := p.startEvent(call)
	var outputSchema json.RawMessage
	res, err := p.st.Gate.Admit(ctx, p.st.Catalog, call, p.asker, &approvalTracker{Observer: obs, run: p.approval}, func(ctx context.Context, call policy.Call, t *catalog.Tool) (*mcp.CallToolResult, error) {
		outputSchema = t.OutputSchema
		if p.journal != nil {
			if err := p.journal.dispatching(ctx, name); err != nil {
				return nil, err
			}
		}
		return dispatch(ctx, p.env, call)
	})
	p.endEvent(ev, err)
	if err != nil {
		if p.codeMode != nil {
			p.explainMismatch(name, err)
		}
		return nil, err
	}
	unwrap := Unwrap
	if p.codeMode != nil {
		unwrap = UnwrapCodeMode
	}
	raw, err := unwrap(res)
	if err != nil {
		return nil, &toolerr.Error{Code: toolerr.Execution, Tool: name, Message: err.Error()}
	}
	p.secrets.learn(raw, outputSchema)
	return raw, nil
}

// planAsker asks for a plan's call: the prompt must not show what the plan
// got from its tools as secrets, whatever key the plan put them under, and
// the run's clock stops while a person decides.
type planAsker struct {
	next    policy.Asker
	secrets *runSecrets
}

func (a planAsker) Ask(ctx context.Context, req policy.ApprovalRequest) (policy.Answer, *mcp.CallToolResult, error) {
	req.Args = a.secrets.scrubValue(req.Args)
	resume := vm.SuspendClock(ctx)
	defer resume()
	return a.next.Ask(ctx, req)
}

// pauseAsker asks a 2026-07-28 client for a plan's call: the plan pauses
// inside callTool, and the execute request waiting for it answers with
// the prompt; the client's next execute request carries the answer.
type pauseAsker struct {
	run       *pausedRun
	client    context.Context // the execute request, whose client is asked
	approvals *policy.Approvals
}

func (a pauseAsker) Ask(ctx context.Context, req policy.ApprovalRequest) (policy.Answer, *mcp.CallToolResult, error) {
	if !policy.CanElicit(a.client) {
		return policy.Answer{Outcome: policy.ApprovalNoClient}, nil, nil
	}
	return policy.ClientAnswer(a.run.pause(ctx, req, a.approvals.Timeout()), policy.ChannelPrompt), nil, nil
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

// GetTool implements vm.Host: the tool's definition as codecall.describe
// gives it, without the TypeScript declaration, for the tools the plan may
// call (the gate's access checks, allowedTools included).
func (p *planHost) GetTool(name string) (json.RawMessage, bool) {
	t, err := p.st.Gate.Access(p.reqCtx, p.st.Catalog, policy.Call{Tool: name, Via: policy.ViaExecute, Allowed: p.allowed})
	if err != nil {
		return nil, false
	}
	d := describeTool(t, DescribeJSON)
	b, err := json.Marshal(d)
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

// ToolCallNotification is the method of the notifications a plan's
// callTool sends the client, one when the call starts and one when it
// ends: {phase, runId, callId, toolName, input} and, at the end,
// {status, durationMs, error?}. The input is redacted as results are.
const ToolCallNotification = "notifications/codecall/tool_call"

// maxEventInput bounds the input a tool-call notification repeats.
const maxEventInput = 4 << 10

// callEvent is one call's notifications in the making.
type callEvent struct {
	fields map[string]any
	start  time.Time
}

// startEvent tells the client a plan's call starts: a
// notifications/codecall/tool_call, and a progress notification when the
// execute request carried a progress token.
func (p *planHost) startEvent(call policy.Call) *callEvent {
	if !p.notifyCalls && p.progress == nil {
		return nil // nobody to tell: spare the redaction of the input
	}
	ev := &callEvent{start: time.Now(), fields: map[string]any{
		"runId": p.runID, "callId": fmt.Sprintf("%s-%d", p.runID, call.Run.CallIndex), "toolName": call.Tool}}
	if b, err := json.Marshal(call.Args); err == nil && p.notifyCalls {
		if len(b) > maxEventInput {
			b = []byte(fmt.Sprintf(`{"truncated":true,"bytes":%d}`, len(b)))
		}
		var input any
		if json.Unmarshal(p.secrets.scrubJSON(p.st.Redactor.JSON(b, nil)), &input) == nil {
			ev.fields["input"] = input
		}
	}
	p.send(ev, "start")
	return ev
}

// endEvent tells the client how the call ended.
func (p *planHost) endEvent(ev *callEvent, err error) {
	if ev == nil {
		return
	}
	ev.fields["durationMs"] = time.Since(ev.start).Milliseconds()
	ev.fields["status"] = "ok"
	if err != nil {
		ev.fields["status"] = "error"
		code, msg := toolerr.Execution, "the tool call failed"
		if te := toolerr.As(err); te != nil {
			code, msg = te.Code, te.Message
		}
		ev.fields["error"] = map[string]any{"code": string(code), "message": p.st.Redactor.String(msg)}
	}
	p.send(ev, "end")
}

func (p *planHost) send(ev *callEvent, phase string) {
	srv := server.ServerFromContext(p.reqCtx)
	if p.notifyCalls {
		params := maps.Clone(ev.fields)
		params["phase"] = phase
		_ = srv.SendNotificationToClient(p.reqCtx, ToolCallNotification, params)
	}
	if p.progress != nil {
		msg := fmt.Sprintf("callTool %s %s", ev.fields["toolName"], phase)
		if s, ok := ev.fields["status"].(string); ok && phase == "end" {
			msg += " " + s
		}
		_ = srv.SendNotificationToClient(p.reqCtx, string(mcp.MethodNotificationProgress),
			map[string]any{"progressToken": p.progress, "progress": p.events.Add(1), "message": msg})
	}
}

// listeners says, once per run, which call notifications its request's
// client can take: none without a client session; progress only when the
// request carried a progress token; tool_call notifications except for a
// 2026-07-28 request over streamable HTTP, whose response mcp-go (v1.2.1)
// upgrades to a stream for the first notification and does not close after
// the result, stalling the client's transport and the server's shutdown.
func listeners(ctx context.Context, token mcp.ProgressToken) (notifyCalls bool, progress mcp.ProgressToken) {
	session := server.ClientSessionFromContext(ctx)
	if server.ServerFromContext(ctx) == nil || session == nil {
		return false, nil
	}
	_, streamable := session.(server.SessionWithStreamableHTTPConfig)
	return !streamable || !server.IsModernRequest(ctx), token
}
