package meta

import (
	"context"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

// Runner runs a validated plan: in the server's process (InProcess), or in
// a sandboxed worker process (package sandbox), which validates script
// against rules again before it runs it. host answers the plan's calls in
// either case, so every tool call goes through the same gate. opts.Session
// names the MCP session the run is for; a runner with scarce capacity
// shares it among sessions by it, and a run it refuses under load ends
// limit_exceeded, with a retryable error.
//
// script is checked.Source() and rules checked.SourceRules of the rules the
// plan was validated under: for a TypeScript plan, the JavaScript its types
// were stripped to, which is all a worker is sent. Locations in the result
// are in the script as the client sent it, as checked reports them:
// InProcess runs checked itself; a runner that validates script again
// maps what it finds with checked.ScriptLocation.
type Runner interface {
	Run(ctx context.Context, script string, checked *ast.Checked, rules ast.Rules, host vm.Host, opts vm.Options) *vm.Result
}

// InProcess runs plans in the server's own process with vm.Run, and has a
// run that grew the heap a lot return the freed memory to the operating
// system (vm.Options.ReturnMemory). It has no queue and no
// per-session limits: a run never waits for another to end, so no
// session's runs can delay another's start; the sessions' runs share the
// CPU as goroutines do, each within its own timeout and budgets.
//
// With Runtimes set, runs take runtimes hardened ahead of them (see
// vm.Runtimes); the zero InProcess builds each in its run.
type InProcess struct {
	Runtimes *vm.Runtimes
}

// Run implements Runner.
func (p InProcess) Run(ctx context.Context, script string, checked *ast.Checked, rules ast.Rules, host vm.Host, opts vm.Options) *vm.Result {
	opts.ReturnMemory = true
	opts.Runtimes = p.Runtimes
	return vm.Run(ctx, checked, host, opts)
}

// runnerFor returns what runs a plan or script under limits: the state's
// runner, or the runtime in this process when it has none. A locked_down
// server without worker processes gets the refusal instead, the same on
// every surface and on resume. The composition root refuses to start
// locked_down without workers; this keeps the promise should a state ever
// lack one.
func (st *State) runnerFor(limits presets.Limits) (Runner, *vm.ErrorInfo) {
	switch {
	case st.Runner != nil:
		return st.Runner, nil
	case limits.Isolation == presets.IsolationProcess && st.Config.Preset == presets.LockedDown:
		return nil, &vm.ErrorInfo{Kind: vm.KindIsolation,
			Message: "the locked_down preset runs plans and scripts only in sandboxed worker processes, and this server has none",
			Hint:    `ask the operator to make worker processes available, or to set vm.isolation to "inprocess" to accept in-process execution`}
	}
	return InProcess{}, nil
}
