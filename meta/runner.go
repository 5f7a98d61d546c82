package meta

import (
	"context"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/vm"
)

// Runner runs a validated plan: in the server's process (InProcess), or in
// a sandboxed worker process (package sandbox), which validates script
// against rules again before it runs it. host answers the plan's calls in
// either case, so every tool call goes through the same gate.
type Runner interface {
	Run(ctx context.Context, script string, checked *ast.Checked, rules ast.Rules, host vm.Host, opts vm.Options) *vm.Result
}

// InProcess runs plans in the server's own process with vm.Run, and has a
// run that grew the heap a lot return the freed memory to the operating
// system (vm.Options.ReturnMemory).
type InProcess struct{}

// Run implements Runner.
func (InProcess) Run(ctx context.Context, script string, checked *ast.Checked, rules ast.Rules, host vm.Host, opts vm.Options) *vm.Result {
	opts.ReturnMemory = true
	return vm.Run(ctx, checked, host, opts)
}
