package meta

import (
	"context"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/render"
	"github.com/codecall-go/codecall/vm"
)

// PausedRuns holds plans waiting for the answer to an approval prompt
// from a 2026-07-28 client, which answers by calling codecall.execute
// again with the prompt's requestState. The plan keeps running in this
// process, paused inside its callTool, so nothing it did before is done
// twice. One PausedRuns serves a server for its whole life.
type PausedRuns struct {
	mu   sync.Mutex
	runs map[string]*pausedRun
}

// maxPaused bounds the runs that may wait for an answer at once; a plan
// asking for approval beyond it is refused as if the client could not be
// asked.
const maxPaused = 1000

// NewPausedRuns returns an empty registry.
func NewPausedRuns() *PausedRuns { return &PausedRuns{runs: map[string]*pausedRun{}} }

// stopFor ends the run because ctx, the request awaiting it, ended: with
// ctx's cause when the run can carry one.
func (r *pausedRun) stopFor(ctx context.Context) {
	if r.stop != nil {
		r.stop(context.Cause(ctx))
		return
	}
	r.cancel()
}

// pausedRun is a plan running on its own goroutine, whose events an
// execute request awaits: its end, or a call that needs approval.
type pausedRun struct {
	runID     string
	start     time.Time
	session   string
	scriptSHA string
	cancel    func()
	// stop, when set, ends the run with a cause (the request's), so the
	// runtime tells a client's deadline (timeout) from a cancellation.
	stop     context.CancelCauseFunc
	done     chan *vm.Result   // buffered: the run's result
	asks     chan *approvalAsk // a callTool waiting for approval
	current  *approvalAsk      // the ask the client was shown
	expires  time.Time         // when an unanswered pause is dropped
	secrets  *runSecrets       // secrets the plan received from its tools
	approval *runApproval      // how the run's approvals went
	format   render.Format     // the text block's format, output.format
	// finish, when set, renders the run's end instead of
	// handlers.finish (codemode.run's answer).
	finish finishFunc
}

// finishFunc audits a run's end and renders its answer.
type finishFunc func(ctx context.Context, st *State, pr *pausedRun, res *vm.Result) *mcp.CallToolResult

// finisher returns how the run's end is rendered.
func (pr *pausedRun) finisher(h *handlers) finishFunc {
	if pr.finish != nil {
		return pr.finish
	}
	return h.finish
}

// approvalAsk is one callTool waiting for a person's answer.
type approvalAsk struct {
	req   policy.ApprovalRequest
	reply chan policy.ApprovalOutcome // buffered
}

// put files pr under token; false when the registry is full.
func (p *PausedRuns) put(token string, pr *pausedRun) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for k, r := range p.runs {
		if now.After(r.expires) {
			delete(p.runs, k)
			r.cancel()
		}
	}
	if len(p.runs) >= maxPaused {
		return false
	}
	p.runs[token] = pr
	return true
}

// take removes and returns the run filed under token.
func (p *PausedRuns) take(token string) *pausedRun {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.runs[token]
	delete(p.runs, token)
	return pr
}
