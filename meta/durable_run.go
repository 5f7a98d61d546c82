package meta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/ast/tsstrip"
	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/render"
	"github.com/codecall-go/codecall/state"
	"github.com/codecall-go/codecall/vm"
)

// newSavedPlan is a durable codecall.execute plan before its first run.
func newSavedPlan(st *State, in ExecuteInput, lang string, format render.Format, runID, session, scriptSHA string, start time.Time) *savedPlan {
	p := &savedPlan{RunID: runID, Session: session, Script: in.Script, ScriptSHA: scriptSHA,
		AllowedTools: in.AllowedTools, Context: in.Context, Format: string(format),
		Replay: vm.Replay{Seed: vm.SeedFrom(runID), EpochMs: start.UnixMilli()}, StartedMs: start.UnixMilli(),
		CatalogVersion: st.Catalog.Version(), Decisions: map[int]decision{}}
	if lang == LanguagePython {
		p.Language = LanguagePython
	}
	return p
}

// newCodeModePlan is a durable codemode.run script before its first run.
func newCodeModePlan(st *State, in CodeModeInput, diags []Diagnostic, runID, session, scriptSHA string, start time.Time) *savedPlan {
	return &savedPlan{RunID: runID, Session: session, Script: in.Code, ScriptSHA: scriptSHA, Surface: surfaceCodeMode,
		Limits: in.Limits, Diagnostics: diags, Format: string(render.JSON),
		Replay: vm.Replay{Seed: vm.SeedFrom(runID), EpochMs: start.UnixMilli()}, StartedMs: start.UnixMilli(),
		CatalogVersion: st.Catalog.Version(), Decisions: map[int]decision{}}
}

// planLaunch runs a validated plan in a sandbox with host and opts.
type planLaunch func(ctx context.Context, host *planHost, opts vm.Options) *vm.Result

// relaunch prepares a saved plan to run again under the server's current
// configuration: validated again, linked again for Code Mode, under the
// limits that apply now. info says why it cannot run.
func relaunch(st *State, p *savedPlan) (planLaunch, presets.Limits, *vm.ErrorInfo) {
	limits := st.Config.VM
	if p.Surface == surfaceCodeMode {
		limits, _ = applyLimits(limits, p.Limits)
	}
	if p.Language == LanguagePython {
		if !st.PythonEnabled() {
			_, why := st.checkLanguage(LanguagePython)
			return nil, limits, &vm.ErrorInfo{Kind: "language", Message: "the paused plan is a Python plan, and this server cannot run one now: " + why}
		}
		if info := checkPythonSize(p.Script, limits); info != nil {
			return nil, limits, info
		}
		return func(ctx context.Context, host *planHost, opts vm.Options) *vm.Result {
			return st.Python.RunPython(ctx, p.Script, host, opts)
		}, limits, nil
	}
	runner, noRunner := st.runnerFor(limits)
	if noRunner != nil {
		return nil, limits, noRunner
	}
	rules := ast.RulesFor(limits)
	rules.Preset = st.Config.Preset
	notValid := func(err error) *vm.ErrorInfo {
		return &vm.ErrorInfo{Kind: "validation", Message: "the paused plan no longer passes validation under the server's current configuration, so it cannot be resumed: " + err.Error()}
	}
	if p.Surface == surfaceCodeMode {
		mods := st.CodeMode
		if mods == nil {
			return nil, limits, &vm.ErrorInfo{Kind: "validation", Message: "the paused script was sent to codemode.run, and this server no longer offers the Code Mode surface"}
		}
		linker := &moduleLinker{mods: mods}
		checked, err := ast.ValidateModule(p.Script, rules, linker)
		if err != nil {
			return nil, limits, notValid(err)
		}
		return codeModeLaunch(runner, checked, rules, mods.link(linker.imports)), limits, nil
	}
	checked, err := tsstrip.Validate(p.Script, rules)
	if err != nil {
		return nil, limits, notValid(err)
	}
	return func(ctx context.Context, host *planHost, opts vm.Options) *vm.Result {
		return runner.Run(ctx, checked.Source(), checked, checked.SourceRules(rules), host, opts)
	}, limits, nil
}

// codeModeLaunch runs a linked Code Mode script.
func codeModeLaunch(runner Runner, checked *ast.Checked, rules ast.Rules, cm *vm.CodeMode) planLaunch {
	return func(ctx context.Context, host *planHost, opts vm.Options) *vm.Result {
		opts.CodeMode = cm
		return runner.Run(ctx, checked.Source(), checked, checked.SourceRules(rules), host, opts)
	}
}

// runDurable runs a durable plan, first or again: until it ends, or until
// a call needs an answer, when the plan is saved and the client is handed
// the prompt. launch and limits are the first run's, validated by the
// caller; a nil launch prepares the saved plan again (a resumed plan,
// under the current config).
func (h *handlers) runDurable(ctx context.Context, st *State, req mcp.CallToolRequest, p *savedPlan, launch planLaunch, limits presets.Limits) (*mcp.CallToolResult, vm.Status) {
	pr := &pausedRun{session: p.Session, scriptSHA: p.ScriptSHA, runID: p.RunID, start: time.UnixMilli(p.StartedMs),
		done: make(chan *vm.Result, 1), secrets: &runSecrets{r: st.Redactor}, approval: &runApproval{}, format: render.Format(p.Format)}
	if p.Surface == surfaceCodeMode {
		diags := p.Diagnostics
		pr.finish = func(ctx context.Context, st *State, pr *pausedRun, res *vm.Result) *mcp.CallToolResult {
			return finishCodeMode(ctx, st, pr, res, diags)
		}
	}
	pr.approval.raise(p.Approval)
	end := func(info vm.ErrorInfo) (*mcp.CallToolResult, vm.Status) {
		// A resumed plan that cannot run again ends here, for good.
		if p.Pause > 0 {
			_ = st.Durable.forget(ctx, p)
		}
		res := &vm.Result{Status: vm.StatusRuntimeError, Error: &info, RunID: p.RunID, ToolTrace: []vm.TraceEntry{}}
		return pr.finisher(h)(ctx, st, pr, res), res.Status
	}
	if launch == nil {
		var info *vm.ErrorInfo
		if launch, limits, info = relaunch(st, p); info != nil {
			return end(*info)
		}
	}
	allowed, err := presets.CompileGlobs(p.AllowedTools)
	if err != nil {
		return end(vm.ErrorInfo{Kind: "validation", Message: "allowedTools" + err.Error()})
	}
	planContext := json.RawMessage("{}")
	if p.Context != nil {
		b, err := json.Marshal(p.Context)
		if err != nil {
			return end(vm.ErrorInfo{Kind: "validation", Message: "context cannot be encoded as JSON: " + err.Error()})
		}
		planContext = b
	}

	j := newRunJournal(ctx, p)
	j.learn = func(tool string, raw json.RawMessage) {
		var schema json.RawMessage
		if t, ok := st.Catalog.Lookup(tool); ok {
			schema = t.OutputSchema
		}
		pr.secrets.learn(raw, schema)
	}
	if p.Pause > 0 {
		// A resumed run writes its journal ahead: a replica that stops
		// while it runs loses none of the calls it made, and leaves the
		// call it was making marked as started.
		var mu sync.Mutex
		j.persist = func(ctx context.Context, j *runJournal) error {
			mu.Lock()
			defer mu.Unlock()
			p.Journal, p.Started = j.entries(), j.inFlight()
			return st.Durable.save(context.WithoutCancel(ctx), p)
		}
	}
	host := &planHost{env: h.env, st: st, allowed: allowed, reqCtx: ctx, runID: p.RunID,
		session: p.Session, scriptSHA: p.ScriptSHA, planContext: p.Context, secrets: pr.secrets,
		approval: pr.approval, journal: j}
	if p.Surface == surfaceCodeMode {
		host.codeMode = st.CodeMode
	}
	host.asker = planAsker{next: st.withOutOfBand(durableAsker{j: j}), secrets: pr.secrets}
	host.notifyCalls, host.progress = listeners(ctx, progressToken(req))

	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	pr.cancel = cancel
	replay := p.Replay
	go func() {
		defer cancel()
		pr.done <- launch(runCtx, host, vm.Options{RunID: p.RunID, Limits: limits, Context: planContext, Session: p.Session, Replay: &replay})
	}()
	var res *vm.Result
	select {
	case res = <-pr.done:
	case <-j.stopped:
		cancel()
		res = <-pr.done
	case <-ctx.Done():
		// The client went away: what the run completed is in the saved
		// journal (a resumed run), so the same answer can be sent again.
		cancel()
		res = <-pr.done
		return pr.finisher(h)(ctx, st, pr, res), res.Status
	}
	st.Durable.counters.replayed.Add(int64(j.replayed))
	if j.paused() {
		return h.pauseDurable(ctx, st, p, pr, j, res)
	}
	if res.Error != nil && res.Error.Kind == vm.KindReplayDiverged {
		st.Durable.counters.divergences.Add(1)
	}
	if p.Pause > 0 {
		// Only a plan that paused was ever saved.
		if err := st.Durable.forget(ctx, p); err != nil {
			st.logger().Warn("codecall: a finished plan could not be removed from the state store; it expires on its own",
				"runId", p.RunID, "error", err)
		}
	}
	if j.replayed > 0 {
		res.Warnings = append(res.Warnings, vm.Warning{Type: WarningReplayed,
			Message: fmt.Sprintf("the plan was resumed after an approval: it ran again from its start, and %d calls were answered from its journal without being made again", j.replayed)})
	}
	if w := st.Durable.drift.changedWarning(st, p); w != nil && p.Pause > 0 {
		res.Warnings = append(res.Warnings, *w)
	}
	return pr.finisher(h)(ctx, st, pr, res), res.Status
}

// WarningReplayed is the warning of a resumed run's result: which calls
// were answered from the journal.
const WarningReplayed = "replayed"

// pauseDurable saves a run that stopped for an answer and hands the
// client the prompt. A store that cannot save it fails closed: the call
// is not made, and the run ends with APPROVAL_REQUIRED.
func (h *handlers) pauseDurable(ctx context.Context, st *State, p *savedPlan, pr *pausedRun, j *runJournal, res *vm.Result) (*mcp.CallToolResult, vm.Status) {
	ref, req := j.firstAsk()
	p.Journal, p.Started = j.entries(), nil
	if p.Pause == 0 {
		p.CatalogDigest, p.ConfigDigest = st.Durable.drift.digests(st)
	}
	p.Pending = &ref
	p.Pause++
	p.ExpiresMs = st.Durable.now().Add(st.Approvals.Timeout()).UnixMilli()
	pr.approval.mu.Lock()
	p.Approval = pr.approval.state
	pr.approval.mu.Unlock()
	err := st.Durable.markPaused(ctx, p)
	if err == nil {
		err = st.Durable.save(ctx, p)
	}
	if err != nil {
		st.logger().Error("codecall: a plan that needs approval could not be saved; the call was not made", "runId", p.RunID, "error", err)
		res.Status = vm.StatusToolError
		res.Result = nil
		res.Error = &vm.ErrorInfo{Code: "APPROVAL_REQUIRED", ToolName: ref.Tool, Message: fmt.Sprintf(
			"%s needs a person's approval, and the server could not save the paused plan in its state store; the call was not made. Try again later", ref.Tool)}
		return pr.finisher(h)(ctx, st, pr, res), res.Status
	}
	st.Durable.counters.pauses.Add(1)
	return policy.InputRequired(st.Durable.token(p.RunID, p.Pause), st.Approvals.Prompt(req)), statusInputRequired
}

// resumeDurable delivers a 2026-07-28 client's answer to a saved plan and
// runs the plan again. One request at a time resumes a plan (a lease in
// the store); the answer is saved before the plan runs, and is final.
func (h *handlers) resumeDurable(ctx context.Context, st *State, req mcp.CallToolRequest, token, scriptSHA string,
	invalid func(field, msg string) *mcp.CallToolResult) *mcp.CallToolResult {
	d := st.Durable
	runID, pause, ok := d.parseToken(token)
	if !ok {
		return invalid("requestState", "this requestState was not issued by this server (or the state key changed since); run the plan again without requestState")
	}
	storeDown := func(err error) *mcp.CallToolResult {
		st.logger().Error("codecall: the state store failed while resuming a plan", "runId", runID, "error", err)
		return invalid("requestState", "the server's state store cannot be reached, so the answer was not recorded and nothing ran; send the same request again later")
	}
	holder := newRunID()
	leaseUntil, err := d.acquire(ctx, runID, holder)
	if err != nil {
		if errors.Is(err, state.ErrExists) {
			return invalid("requestState", fmt.Sprintf("this plan is being resumed by another request; wait for its answer (a server that stopped while resuming it releases it within %v)", d.lease))
		}
		return storeDown(err)
	}
	released := false // forget releases the lease of a plan that ended
	defer func() {
		if !released {
			d.release(ctx, runID, holder)
		}
	}()
	p, err := d.load(ctx, runID)
	switch {
	case errors.Is(err, state.ErrNotFound):
		return invalid("requestState", "no plan is waiting for this answer: the approval expired or was already answered; run the plan again without requestState")
	case err != nil:
		return storeDown(err)
	case p.Session != SessionID(ctx) || p.ScriptSHA != scriptSHA:
		return invalid("requestState", "this answer belongs to another session or another script; resend the same script with the requestState you were given")
	case p.Pause != pause || p.Pending == nil:
		return invalid("requestState", "this prompt was already answered; answer the plan's latest prompt, whose requestState is another")
	}
	if _, answered := p.Decisions[p.Pending.Index]; !answered {
		outcome := policy.ApprovalExpired
		if d.now().UnixMilli() <= p.ExpiresMs {
			outcome = policy.ApprovalDenied
			areq := policy.ApprovalRequest{Tool: &catalog.Tool{Name: p.Pending.Tool}, SessionID: p.Session}
			if answer := server.ElicitationResponse(req.Params.InputResponses, policy.ApprovalInputKey); answer != nil {
				outcome = st.Approvals.Interpret(answer, areq)
			}
		}
		if p.Decisions == nil {
			p.Decisions = map[int]decision{}
		}
		p.Decisions[p.Pending.Index] = decision{callRef: *p.Pending, Outcome: outcome}
		if err := d.save(ctx, p); err != nil {
			return storeDown(err)
		}
	}
	// From here every save checks the lease first (the answer's, just
	// above, follows its taking).
	p.holder, p.leaseUntil = holder, leaseUntil
	d.counters.resumes.Add(1)
	res, _ := h.runDurable(ctx, st, req, p, nil, presets.Limits{})
	released = p.holder == ""
	return res
}
