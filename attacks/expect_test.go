package attacks

import (
	"encoding/json"
	"testing"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/vm"
)

// The outcomes most cases expect, named by the wall that must stop them.
var (
	// Static refusals by the validator, before anything runs.
	bannedMember     = want{status: vm.StatusIllegalAccess, kind: string(ast.KindBannedMember)}
	bannedIdentifier = want{status: vm.StatusIllegalAccess, kind: string(ast.KindBannedIdentifier)}
	loopRefused      = want{status: vm.StatusIllegalAccess, kind: string(ast.KindLoop)}
	regexRefused     = want{status: vm.StatusIllegalAccess, kind: string(ast.KindRegex)}
	unicodeRefused   = want{status: vm.StatusIllegalAccess, kind: string(ast.KindUnicode)}
	tooDeep          = want{status: vm.StatusIllegalAccess, kind: string(ast.KindTooDeep)}
	importRefused    = want{status: vm.StatusIllegalAccess, kind: string(ast.KindImport)}
	withRefused      = want{status: vm.StatusIllegalAccess, kind: string(ast.KindWith)}
	bigintRefused    = want{status: vm.StatusIllegalAccess, kind: string(ast.KindBigInt)}

	// Run-time refusals by the hardened runtime, for what only it can see.
	codeGeneration = want{status: vm.StatusIllegalAccess, kind: vm.KindCodeGeneration}
	regexAtRunTime = want{status: vm.StatusIllegalAccess, kind: vm.KindRegex}

	// Limits.
	timedOut      = want{status: vm.StatusTimeout}
	stackExceeded = want{status: vm.StatusLimitExceeded, limit: vm.LimitStack}
	memoryLimit   = want{status: vm.StatusLimitExceeded, limit: vm.LimitMemory}
	regexTimeout  = want{status: vm.StatusLimitExceeded, limit: vm.LimitRegexTime}
	toolCallCap   = want{status: vm.StatusLimitExceeded, limit: vm.LimitToolCalls}

	// Script errors.
	typeError  = want{status: vm.StatusRuntimeError, name: "TypeError"}
	rangeError = want{status: vm.StatusRuntimeError, name: "RangeError"}
	refError   = want{status: vm.StatusRuntimeError, name: "ReferenceError"}
	syntaxErr  = want{status: vm.StatusSyntaxError}
)

// ok expects status ok with the given result JSON ("" leaves it unchecked).
func ok(result string) want { return want{status: vm.StatusOK, result: result} }

// toolErr expects an uncaught callTool failure with the given code.
func toolErr(tool, code string) want {
	return want{status: vm.StatusToolError, tool: tool, code: code}
}

// pwn is the payload handed to every code-from-string route: if it ever
// runs, the marker appears in the response.
const pwn = `"return 'PW'+'NED'"`

// toolSaw checks that the test tools received exactly these arguments, in
// order, during the case (each compared by JSON value).
func toolSaw(inputs ...string) func(t *testing.T, h *host, r *response) {
	return func(t *testing.T, h *host, r *response) {
		t.Helper()
		got := h.inputs()
		// The harness's warm-up plan calls no tool, so every input is the
		// case's own.
		if len(got) != len(inputs) {
			t.Errorf("the tools received %d calls %v, want %d %v", len(got), got, len(inputs), inputs)
			return
		}
		for i := range inputs {
			checkJSON(t, "tool input", json.RawMessage(got[i]), inputs[i])
		}
	}
}

// countRan checks how many times test.count ran.
func countRan(n int64) func(t *testing.T, h *host, r *response) {
	return func(t *testing.T, h *host, r *response) {
		t.Helper()
		if got := h.countCalls.Load(); got != n {
			t.Errorf("test.count ran %d times, want %d", got, n)
		}
	}
}

// all runs several checks.
func all(checks ...func(t *testing.T, h *host, r *response)) func(t *testing.T, h *host, r *response) {
	return func(t *testing.T, h *host, r *response) {
		t.Helper()
		for _, c := range checks {
			c(t, h, r)
		}
	}
}
