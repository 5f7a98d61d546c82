package meta

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/toolerr"
	"github.com/codecall-go/codecall/vm"
)

// savedPlanVersion is the layout of a savedPlan; a server refuses other
// layouts with a clear error rather than misreading them. Version 2 added
// Surface, Language, Limits, Diagnostics and Started; a version 1 plan is
// a codecall.execute JavaScript plan without them, and is still read.
const savedPlanVersion = 2

// Surfaces a saved plan came in through (savedPlan.Surface).
const (
	surfaceExecute  = ""         // codecall.execute
	surfaceCodeMode = "codemode" // codemode.run
)

// savedPlan is a paused plan as a Durable keeps it: what it takes to run
// it again and reach the call it paused at.
type savedPlan struct {
	Version int    `json:"v"`
	RunID   string `json:"runId"`
	// Surface is the tool the plan was sent to (surfaceExecute or
	// surfaceCodeMode), and Language its language for codecall.execute
	// ("" for JavaScript and TypeScript, LanguagePython).
	Surface  string `json:"surface,omitempty"`
	Language string `json:"language,omitempty"`
	// Limits are a codemode.run request's own limits, applied again
	// under the server's when the plan resumes; Diagnostics are what its
	// first run reported before running (clamped limits, capabilities),
	// repeated in the answer of the run that ends it.
	Limits       map[string]any `json:"limits,omitempty"`
	Diagnostics  []Diagnostic   `json:"diagnostics,omitempty"`
	Session      string         `json:"session,omitempty"`
	Script       string         `json:"script"`
	ScriptSHA    string         `json:"scriptSha256"`
	AllowedTools []string       `json:"allowedTools,omitempty"`
	Context      map[string]any `json:"context,omitempty"`
	Format       string         `json:"format,omitempty"`
	Replay       vm.Replay      `json:"replay"`
	// Started is when the first run started (Unix milliseconds); the
	// run's duration counts from it.
	StartedMs int64 `json:"startedMs"`
	// CatalogVersion is the first run's snapshot version on its replica.
	// CatalogDigest and ConfigDigest say what the first run saw, the same
	// on every replica: a resumed run reports a difference in its
	// warnings (WarningReplayChanged).
	CatalogVersion uint64 `json:"catalogVersion"`
	CatalogDigest  string `json:"catalogDigest,omitempty"`
	ConfigDigest   string `json:"configDigest,omitempty"`
	// Journal holds every call the plan completed, in call order.
	Journal []journalEntry `json:"journal"`
	// Decisions are the answers given to the plan's prompts, by call
	// index; an answer is final.
	Decisions map[int]decision `json:"decisions,omitempty"`
	// Started holds the calls a resumed run began and had not completed
	// when it was last saved: a replica that stopped in the middle of
	// one leaves it here, and since nobody knows whether it took effect,
	// the next run ends at it instead of making it again.
	Started map[int]callRef `json:"started,omitempty"`
	// Pending is the call whose prompt the client was shown.
	Pending *callRef `json:"pending,omitempty"`
	// Pause counts the plan's pauses; the requestState names one.
	Pause int `json:"pause"`
	// ExpiresMs is when the pending prompt expires (Unix milliseconds).
	ExpiresMs int64         `json:"expiresMs"`
	Approval  ApprovalState `json:"approval,omitempty"`

	// holder is the lease the replica running the plan holds, when it
	// resumed it, and leaseUntil when it may stop trusting it without
	// asking the store; not saved.
	holder     string
	leaseUntil time.Time
}

// callRef names one call of a run: where it is, what it called, and the
// digest of its input.
type callRef struct {
	Index int    `json:"i"`
	Tool  string `json:"tool"`
	Input string `json:"in"`
}

// decision is the answer to the prompt of one call.
type decision struct {
	callRef
	Outcome policy.ApprovalOutcome `json:"outcome"`
}

// journalEntry is one completed call: its result, or the error the plan
// saw. Op is set for a discovery (searchTools, describeTools).
type journalEntry struct {
	callRef
	Op     string          `json:"op,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *toolerr.Error  `json:"error,omitempty"`
}

// answer is what a replayed call returns.
func (e journalEntry) answer() (json.RawMessage, error) {
	if e.Error != nil {
		err := *e.Error
		return nil, &err
	}
	return e.Result, nil
}

// digestJSON is the digest a journal compares inputs by: encoding/json
// sorts map keys, so equal inputs have equal digests.
func digestJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "unencodable"
	}
	return digestBytes(b)
}

func digestBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// pausedPrompt is what a durableAsker hands the gate for a call that
// pauses: a result that is never shown (the run is ended and saved), so
// that the gate neither runs the call nor records an answer for it. The
// audit log records the call as input_required, like a direct call's
// prompt; the run that resumes it records how it ended.
var pausedPrompt = func() *mcp.CallToolResult {
	r := &mcp.CallToolResult{}
	r.ResultType = mcp.ResultTypeInputRequired
	return r
}()

// runJournal is one durable run's view of its journal: the calls of the
// earlier runs to answer from it, the answers to give, and the calls this
// run completes. Calls reach it from the run's call goroutines.
type runJournal struct {
	// From the saved plan, read-only during the run.
	past      map[int]journalEntry
	decisions map[int]decision
	pending   *callRef
	unsettled map[int]callRef // calls an earlier run began and never completed
	client    context.Context // the request whose client is asked

	// learn tells the run's secrets about a replayed result.
	learn func(tool string, raw json.RawMessage)
	// persist, when set, saves the journal after each completed call (a
	// resumed run writes ahead, so a replica that stops loses no call).
	persist func(ctx context.Context, j *runJournal) error

	mu       sync.Mutex
	seen     map[int]bool
	done     map[int]journalEntry // completed by this run, replayed ones included
	active   int                  // live calls running
	asks     map[int]policy.ApprovalRequest
	held     map[int]bool    // calls turned into asks
	refs     map[int]callRef // the live calls, as the journal names them
	sent     map[int]bool    // live calls handed to their tool
	pausing  bool
	stopped  chan struct{}
	stopOnce sync.Once
	replayed int
}

func newRunJournal(client context.Context, p *savedPlan) *runJournal {
	j := &runJournal{client: client, past: map[int]journalEntry{}, decisions: map[int]decision{},
		seen: map[int]bool{}, done: map[int]journalEntry{}, asks: map[int]policy.ApprovalRequest{},
		held: map[int]bool{}, refs: map[int]callRef{}, sent: map[int]bool{}, stopped: make(chan struct{})}
	if p != nil {
		j.unsettled = p.Started
		for _, e := range p.Journal {
			j.past[e.Index] = e
		}
		for i, d := range p.Decisions {
			j.decisions[i] = d
		}
		j.pending = p.Pending
	}
	return j
}

func diverged(name string, idx int, what string) error {
	return &toolerr.Error{Code: toolerr.ReplayDiverged, Tool: name, Message: fmt.Sprintf(
		"the resumed plan's call %d differs from its first run: %s. The run ends here and nothing is called twice; "+
			"run the plan again without requestState (a resumed plan is run again from its start and must reach the same calls)", idx+1, what)}
}

// call answers one call or discovery of the plan: from the journal when
// an earlier run completed it, else live, recording the outcome. A call
// made while the run pauses is held until the run ends.
func (j *runJournal) call(ctx context.Context, ref callRef, op string, live func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	idx, ok := vm.CallIndex(ctx)
	if !ok {
		return nil, &toolerr.Error{Code: toolerr.Execution, Tool: ref.Tool, Message: "the run has no call index; the call was not made"}
	}
	ref.Index = idx
	j.mu.Lock()
	if j.seen[idx] {
		j.mu.Unlock()
		return nil, &toolerr.Error{Code: toolerr.ReplayDiverged, Tool: ref.Tool, Message: fmt.Sprintf("call %d was made twice; the call was not made", idx+1)}
	}
	j.seen[idx] = true
	if e, ok := j.past[idx]; ok {
		if e.Tool != ref.Tool || e.Input != ref.Input || e.Op != op {
			j.mu.Unlock()
			return nil, diverged(ref.Tool, idx, fmt.Sprintf("it called %s with input %s, where the journal holds %s with input %s", ref.Tool, ref.Input, e.Tool, e.Input))
		}
		j.done[idx] = e
		j.replayed++
		j.mu.Unlock()
		if e.Error == nil && j.learn != nil && op == "" {
			j.learn(e.Tool, e.Result)
		}
		return e.answer()
	}
	if _, ok := j.unsettled[idx]; ok {
		j.mu.Unlock()
		return nil, &toolerr.Error{Code: toolerr.ReplayDiverged, Tool: ref.Tool, Message: fmt.Sprintf(
			"call %d (%s) was being made when the server resuming this plan stopped, and whether it took effect is unknown; "+
				"it is not made again, and the run ends here. Check what %s did, then run the plan again without requestState if it is still needed",
			idx+1, ref.Tool, ref.Tool)}
	}
	if d, ok := j.decisions[idx]; ok && (d.Tool != ref.Tool || d.Input != ref.Input) {
		j.mu.Unlock()
		return nil, diverged(ref.Tool, idx, fmt.Sprintf("it called %s with input %s, where the approval answered was for %s with input %s", ref.Tool, ref.Input, d.Tool, d.Input))
	}
	if j.pausing {
		// The run is pausing: this call waits for the run's end and is
		// made by the run that resumes it.
		j.mu.Unlock()
		<-ctx.Done()
		return nil, ctx.Err()
	}
	j.active++
	j.refs[idx] = ref
	j.mu.Unlock()

	raw, err := live(ctx)

	j.mu.Lock()
	if j.held[idx] {
		// The call paused for approval (durableAsker); it was never made.
		j.mu.Unlock()
		return nil, context.Canceled
	}
	j.active--
	e := journalEntry{callRef: ref, Op: op}
	switch te := toolerr.As(err); {
	case err == nil:
		e.Result = raw
	case ctx.Err() != nil:
		// Cut short by the run's end (its deadline, the client gone): not
		// a completed call, and not journaled, whatever error it ended with.
		j.stopIfIdle()
		j.mu.Unlock()
		return raw, err
	case te != nil:
		c := *te
		c.Mismatch = nil // the plan sees the same code and message
		e.Error = &c
	default:
		e.Error = &toolerr.Error{Code: toolerr.Execution, Tool: ref.Tool, Message: "the tool call failed"}
	}
	j.done[idx] = e
	j.stopIfIdle()
	persist := j.persist
	j.mu.Unlock()
	if persist != nil {
		if perr := persist(ctx, j); perr != nil {
			// The journal could not be saved: fail closed. The call was
			// made; the plan is told the state store failed.
			return nil, &toolerr.Error{Code: toolerr.Execution, Tool: ref.Tool,
				Message: "the call was made, but the server could not record it in its state store; the run stops so that no call is repeated"}
		}
	}
	if te := toolerr.As(err); te != nil && te.Mismatch != nil {
		return nil, err // with the mismatch the plan's error details use
	}
	if e.Error != nil {
		return e.answer()
	}
	return raw, nil
}

// dispatching records that a live call, admitted by the gate, is about
// to reach its tool. A resumed run saves that first: a replica that stops
// while the call runs leaves it marked as started, and the run that
// resumes next ends at it instead of making it a second time. A mark
// that cannot be saved stops the call before it is made.
func (j *runJournal) dispatching(ctx context.Context, tool string) error {
	idx, ok := vm.CallIndex(ctx)
	if !ok {
		return nil
	}
	j.mu.Lock()
	j.sent[idx] = true
	persist := j.persist
	j.mu.Unlock()
	if persist == nil {
		return nil
	}
	if err := persist(ctx, j); err != nil {
		return &toolerr.Error{Code: toolerr.Execution, Tool: tool,
			Message: "the server could not record the call in its state store before making it, so the call was not made; try again later"}
	}
	return nil
}

// inFlight are the live calls handed to their tool and not completed: the
// marks a saved journal keeps (see dispatching); nil when there are none.
func (j *runJournal) inFlight() map[int]callRef {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out map[int]callRef
	for i := range j.sent {
		if _, done := j.done[i]; done {
			continue
		}
		if out == nil {
			out = map[int]callRef{}
		}
		out[i] = j.refs[i]
	}
	return out
}

// ask registers a call that needs a person's answer: the run pauses once
// its live calls have ended.
func (j *runJournal) ask(idx int, req policy.ApprovalRequest) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.asks[idx] = req
	j.held[idx] = true
	j.active--
	j.pausing = true
	j.stopIfIdle()
}

// stopIfIdle signals the pause once no live call runs. j.mu held.
func (j *runJournal) stopIfIdle() {
	if j.pausing && j.active == 0 {
		j.stopOnce.Do(func() { close(j.stopped) })
	}
}

// paused reports whether the run paused for an answer.
func (j *runJournal) paused() bool {
	select {
	case <-j.stopped:
		return true
	default:
		return false
	}
}

// firstAsk is the call, of those waiting for an answer, the plan made
// first: the prompt the client is shown.
func (j *runJournal) firstAsk() (callRef, policy.ApprovalRequest) {
	j.mu.Lock()
	defer j.mu.Unlock()
	first := -1
	for i := range j.asks {
		if first < 0 || i < first {
			first = i
		}
	}
	return j.refs[first], j.asks[first]
}

// entries is the journal to save: every call completed so far, in order.
func (j *runJournal) entries() []journalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]journalEntry, 0, len(j.done)+len(j.past))
	for i, e := range j.past {
		if _, ok := j.done[i]; !ok {
			out = append(out, e) // not reached by this run: kept all the same
		}
	}
	for _, e := range j.done {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b journalEntry) int { return a.Index - b.Index })
	return out
}

// durableAsker asks for a plan's call under a Durable: the answer given to
// an earlier prompt for this call, or a pause of the whole run.
type durableAsker struct {
	j *runJournal
}

func (a durableAsker) Ask(ctx context.Context, req policy.ApprovalRequest) (policy.Answer, *mcp.CallToolResult, error) {
	idx, ok := vm.CallIndex(ctx)
	if !ok {
		return policy.Answer{Outcome: policy.ApprovalFailed}, nil, fmt.Errorf("a durable run's call without an index")
	}
	a.j.mu.Lock()
	d, answered := a.j.decisions[idx]
	a.j.mu.Unlock()
	if answered {
		return policy.ClientAnswer(d.Outcome, policy.ChannelPrompt), nil, nil
	}
	if !policy.CanElicit(a.j.client) {
		return policy.Answer{Outcome: policy.ApprovalNoClient}, nil, nil
	}
	a.j.ask(idx, req)
	<-ctx.Done() // the run ends, and is saved
	return policy.Answer{}, pausedPrompt, nil
}
