package meta

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/presets"
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
	limits := st.Config.VM
	runID := newRunID()

	refuse := func(status vm.Status, info vm.ErrorInfo, violations []ast.Violation) *mcp.CallToolResult {
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
	host := &planHost{env: h.env, st: st, names: NamesFor(st.Config), allowed: allowed, reqCtx: ctx, runID: runID,
		progress: progressToken(req)}
	res := runner.Run(ctx, in.Script, checked, rules, host, vm.Options{RunID: runID, Limits: limits, Context: planContext})
	return result(res, res.Status != vm.StatusOK), nil
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
}

func (p *planHost) authorize(ctx context.Context, name string) (*policy.Error, bool) {
	if p.names.Has(name) {
		return &policy.Error{Code: policy.CodeSelfReference, Tool: name,
			Message: "a plan cannot call a CodeCall meta-tool; call the tools themselves"}, false
	}
	if _, err := p.st.Gate.Authorize(ctx, p.st.Catalog, policy.Request{Tool: name, Via: policy.ViaExecute}); err != nil {
		var pe *policy.Error
		if errors.As(err, &pe) {
			return pe, false
		}
		return &policy.Error{Code: policy.CodeAccessDenied, Tool: name, Message: err.Error()}, false
	}
	if len(p.allowed) > 0 && !p.allowed.Match(name) {
		return &policy.Error{Code: policy.CodeAccessDenied, Tool: name,
			Message: fmt.Sprintf("tool %q is not in this run's allowedTools", name)}, false
	}
	return nil, true
}

// CallTool implements vm.Host.
func (p *planHost) CallTool(ctx context.Context, name string, input map[string]any) (json.RawMessage, error) {
	if pe, ok := p.authorize(ctx, name); !ok {
		return nil, pe
	}
	p.toolEvent(ctx, name, "started")
	res, err := p.env.Call(ctx, p.st, name, input, policy.ViaExecute)
	if err != nil {
		p.toolEvent(ctx, name, "failed")
		return nil, err
	}
	if res.IsError {
		p.toolEvent(ctx, name, "failed")
		rerr := ResultError(name, res)
		if rerr.Code == policy.CodeValidation {
			if t, ok := p.st.Catalog.Lookup(name); ok {
				if why := explainValidation(t.InputSchema, input); why != "" {
					rerr.Message = "input does not match the tool's input schema: " + why
				}
			}
		}
		return nil, rerr
	}
	p.toolEvent(ctx, name, "finished")
	out, err := Unwrap(res)
	if err != nil {
		return nil, &policy.Error{Code: policy.CodeExecution, Tool: name, Message: err.Error()}
	}
	return out, nil
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
