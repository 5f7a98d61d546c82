package policy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// OutOfBand is the asker of last resort: when the client cannot show an
// approval prompt, the call waits, at most approval.timeout, for an
// operator to approve or deny it from outside the MCP session (the
// console of codecall serve, or codecall approvals against it).
//
// The waiting calls live in this process's memory: they are lost when the
// process ends (the calls themselves end with it), and an answer must
// reach the process the call waits in. Pending and Answer are the whole
// surface operators reach, so a durable store can take the map's place
// behind the same methods without touching the gate or the console.
//
// An OutOfBand is safe for concurrent use; one serves a server for its
// whole life, across config reloads.
type OutOfBand struct {
	approvals *Approvals
	now       func() time.Time
	max       int
	onChange  func()

	mu      sync.Mutex
	pending map[string]*oobWait
}

// oobWait is one call waiting for an operator.
type oobWait struct {
	info  PendingApproval
	reply chan Answer // buffered: Answer never blocks
}

// PendingApproval is a call waiting for an operator, as the console and the
// CLI show it. It holds no raw arguments: Prompt is the text a client
// would show, with secrets redacted.
type PendingApproval struct {
	// ID names the request in Answer; it is random and used once.
	ID string `json:"id"`
	// Tool and AppID are the tool called and its app.
	Tool  string `json:"tool"`
	AppID string `json:"appId,omitempty"`
	// Via is the path of the call: direct, invoke or execute.
	Via Via `json:"via"`
	// SessionID is the MCP session the call came in on.
	SessionID string `json:"sessionId,omitempty"`
	// RunID and CallIndex place a plan's call in its run; empty otherwise.
	RunID     string `json:"runId,omitempty"`
	CallIndex int    `json:"callIndex,omitempty"`
	// Reason is the policy's reason for asking.
	Reason string `json:"reason,omitempty"`
	// Prompt is the approval prompt: the tool, what it does, its side
	// effects, the reason and the arguments with secrets redacted.
	Prompt string `json:"prompt"`
	// Since and Expires bound the wait.
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
}

// DefaultMaxPendingApprovals bounds the calls waiting for an operator at
// once (WithMaxPending); a call beyond it is refused, not queued.
const DefaultMaxPendingApprovals = 1000

// OutOfBandOption configures an OutOfBand.
type OutOfBandOption func(*OutOfBand)

// WithMaxPending bounds the calls waiting at once; n < 1 means the default.
func WithMaxPending(n int) OutOfBandOption { return func(o *OutOfBand) { o.max = n } }

// WithOnChange calls f (from the goroutine that made the change, without
// any lock held) whenever a call starts or stops waiting, so that a
// console can refresh.
func WithOnChange(f func()) OutOfBandOption { return func(o *OutOfBand) { o.onChange = f } }

// NewOutOfBand returns an out-of-band asker that takes the timeout and the
// prompt's redaction from a.
func NewOutOfBand(a *Approvals, opts ...OutOfBandOption) *OutOfBand {
	o := &OutOfBand{approvals: a, now: time.Now, pending: map[string]*oobWait{}}
	for _, opt := range opts {
		opt(o)
	}
	if o.max < 1 {
		o.max = DefaultMaxPendingApprovals
	}
	return o
}

// ErrNoPendingApproval is Answer's error for an id no call waits under:
// it never existed, was answered already, or expired.
var ErrNoPendingApproval = errors.New("no call waits for approval under this id: it was answered already, expired, or never existed")

// Ask implements Asker: the call waits until an operator answers, the
// approval timeout passes (ApprovalExpired), or ctx ends.
func (o *OutOfBand) Ask(ctx context.Context, req ApprovalRequest) (Answer, *mcp.CallToolResult, error) {
	timeout := o.approvals.Timeout()
	now := o.now()
	w := &oobWait{reply: make(chan Answer, 1), info: PendingApproval{
		ID: newApprovalID(), Tool: req.Tool.Name, AppID: req.Tool.AppID, Via: req.Via, SessionID: req.SessionID,
		Reason: req.Reason, Prompt: o.approvals.Prompt(req).Message, Since: now, Expires: now.Add(timeout),
	}}
	if req.Run != nil {
		w.info.RunID, w.info.CallIndex = req.Run.ID, req.Run.CallIndex
	}
	o.mu.Lock()
	if len(o.pending) >= o.max {
		o.mu.Unlock()
		return Answer{Outcome: ApprovalFailed, Channel: ChannelOutOfBand}, nil,
			fmt.Errorf("%d calls already wait for an operator's approval; this one is refused", o.max)
	}
	o.pending[w.info.ID] = w
	o.mu.Unlock()
	o.changed()
	defer func() {
		o.mu.Lock()
		delete(o.pending, w.info.ID)
		o.mu.Unlock()
		o.changed()
	}()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case a := <-w.reply:
		return a, nil, nil
	case <-timer.C:
		// An answer given at the last moment wins over the timer.
		select {
		case a := <-w.reply:
			return a, nil, nil
		default:
		}
		return Answer{Outcome: ApprovalExpired, Channel: ChannelOutOfBand}, nil, nil
	case <-ctx.Done():
		return Answer{Outcome: ApprovalFailed, Channel: ChannelOutOfBand}, nil,
			fmt.Errorf("the call ended while it waited for an operator's approval: %w", ctx.Err())
	}
}

// Answer approves or denies the call waiting under id, on behalf of by
// (the operator's name, recorded in the audit log) through ch (console or
// cli). It returns ErrNoPendingApproval when no call waits under id.
func (o *OutOfBand) Answer(id string, approve bool, ch Channel, by string) error {
	if ch != ChannelConsole && ch != ChannelCLI {
		return fmt.Errorf("an out-of-band answer comes through %q or %q, not %q", ChannelConsole, ChannelCLI, ch)
	}
	o.mu.Lock()
	w, ok := o.pending[id]
	if ok {
		// Removed at once, so a second answer to the same id fails
		// rather than racing the first.
		delete(o.pending, id)
	}
	o.mu.Unlock()
	if !ok {
		return ErrNoPendingApproval
	}
	outcome := ApprovalDenied
	if approve {
		outcome = ApprovalApproved
	}
	w.reply <- Answer{Outcome: outcome, Channel: ch, By: by}
	o.changed()
	return nil
}

// Pending lists the calls waiting for an operator, oldest first.
func (o *OutOfBand) Pending() []PendingApproval {
	o.mu.Lock()
	out := make([]PendingApproval, 0, len(o.pending))
	for _, w := range o.pending {
		out = append(out, w.info)
	}
	o.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Since.Equal(out[j].Since) {
			return out[i].Since.Before(out[j].Since)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

func (o *OutOfBand) changed() {
	if o.onChange != nil {
		o.onChange()
	}
}

func newApprovalID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "ap-" + hex.EncodeToString(b[:])
}

// Fallback returns an asker that asks first and, when first finds no
// client able to show a prompt (ApprovalNoClient), asks then instead:
// the way out-of-band approval joins every path without a copy of the
// flow. A nil then gives first itself.
func Fallback(first, then Asker) Asker {
	if then == nil {
		return first
	}
	return fallbackAsker{first: first, then: then}
}

type fallbackAsker struct{ first, then Asker }

func (f fallbackAsker) Ask(ctx context.Context, req ApprovalRequest) (Answer, *mcp.CallToolResult, error) {
	a, prompt, err := f.first.Ask(ctx, req)
	if prompt != nil || a.Outcome != ApprovalNoClient {
		return a, prompt, err
	}
	return f.then.Ask(ctx, req)
}
