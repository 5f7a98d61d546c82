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

// InProcess runs plans in the server's own process with vm.Run.
type InProcess struct{}

// Run implements Runner.
func (InProcess) Run(ctx context.Context, script string, checked *ast.Checked, rules ast.Rules, host vm.Host, opts vm.Options) *vm.Result {
	return vm.Run(ctx, checked, host, opts)
}
