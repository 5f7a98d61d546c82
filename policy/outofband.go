package policy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// OutOfBand is the asker of last resort: when the client cannot show an
// approval prompt, the call waits, at most approval.timeout, for an
// operator to approve or deny it from outside the MCP session (the
// console of codecall serve, or codecall approvals against it).
//
// By default the waiting calls live in this process's memory: they are
// lost when the process ends (the calls themselves end with it), and an
// answer must reach the process the call waits in. WithSharedQueue keeps
// them in a store every replica shares instead (see OutOfBandStore): any
// replica lists every replica's waiting calls and answers any of them,
// the first answer wins, and the replica the call waits in picks the
// answer up by polling the store. Pending and Answer are the whole surface
// operators reach, so the gate and the console do not know which is used.
//
// An OutOfBand is safe for concurrent use; one serves a server for its
// whole life, across config reloads.
type OutOfBand struct {
	approvals *Approvals
	now       func() time.Time
	max       int
	onChange  func()
	shared    OutOfBandStore // nil: the queue is this process's
	poll      time.Duration
	downGrace time.Duration
	lease     time.Duration

	mu      sync.Mutex
	pending map[string]*oobWait // the calls waiting in this process
}

// oobWait is one call waiting for an operator in this process.
type oobWait struct {
	info PendingApproval
	// reply carries the answer of an in-process queue; with a shared
	// queue it only wakes the waiter to read the store at once (an answer
	// given through this process). Buffered: Answer never blocks.
	reply chan Answer
}

// PendingApproval is a call waiting for an operator, as the console and the
// CLI show it. It holds no raw arguments: Prompt is the text a client
// would show, with secrets redacted. A shared queue stores it as it is.
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

// OutOfBandStore is what a shared out-of-band queue needs of a store that
// every replica reaches: byte values under string keys, each with a time
// to live, and a listing by key prefix. middleware adapts a state.Store to
// it (WithStateStore). Methods may be called from any goroutine; an error
// means the store could not be used, and the queue fails closed on it.
type OutOfBandStore interface {
	// Add files value under key for ttl unless a live entry is there
	// (added is false then, and nothing changes). Of concurrent Adds of
	// one key, one at most adds.
	Add(ctx context.Context, key string, value []byte, ttl time.Duration) (added bool, err error)
	// Put sets value under key for ttl, replacing any entry.
	Put(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// Get returns the live value under key; found is false when there is
	// none.
	Get(ctx context.Context, key string) (value []byte, found bool, err error)
	// Delete removes the entry under key; removing nothing is no error.
	Delete(ctx context.Context, key string) error
	// List returns up to limit live values whose keys start with prefix.
	List(ctx context.Context, prefix string, limit int) ([][]byte, error)
}

// Keys of a shared queue: a waiting call's PendingApproval, and the one
// answer it gets (an operator's, or the waiter's own when it gives up).
const (
	oobWaitPrefix   = "oob/wait/"
	oobAnswerPrefix = "oob/answer/"
)

// DefaultMaxPendingApprovals bounds the calls waiting for an operator at
// once in one process (WithMaxPending); a call beyond it is refused, not
// queued. It also bounds what Pending lists from a shared queue.
const DefaultMaxPendingApprovals = 1000

// DefaultOutOfBandPoll is how often a call waiting in a shared queue reads
// the store for its answer: one Get per interval, two round trips a
// second per waiting call (plus one Put every 5 s to renew its lease),
// and an operator's answer given through another replica reaches the call
// within this interval.
const DefaultOutOfBandPoll = 500 * time.Millisecond

// oobStoreTimeout bounds one round trip to a shared queue's store.
const oobStoreTimeout = 2 * time.Second

// defaultOOBDownGrace is how long a waiting call keeps reading a store
// that fails before it ends, not approved: long enough for a blip, short
// enough that an operator does not answer a call that cannot hear.
const defaultOOBDownGrace = 5 * time.Second

// defaultOOBLease is how long a waiting call's entry lives in a shared
// queue unless its replica renews it (every third of it): a replica that
// dies leaves the list within this time rather than at the call's
// deadline, so an operator is not offered a call nobody waits on.
const defaultOOBLease = 15 * time.Second

// oobAnswerGrace is how long an answer outlives the wait it answers, so
// that a late second answer still finds the slot taken.
const oobAnswerGrace = time.Minute

// OutOfBandOption configures an OutOfBand.
type OutOfBandOption func(*OutOfBand)

// WithMaxPending bounds the calls waiting at once; n < 1 means the default.
func WithMaxPending(n int) OutOfBandOption { return func(o *OutOfBand) { o.max = n } }

// WithOnChange calls f (from the goroutine that made the change, without
// any lock held) whenever a call starts or stops waiting, so that a
// console can refresh. With a shared queue it sees this process's changes
// only; Watch reports the other replicas'.
func WithOnChange(f func()) OutOfBandOption { return func(o *OutOfBand) { o.onChange = f } }

// WithSharedQueue keeps the waiting calls in s, shared by every replica
// given the same store, instead of this process's memory. nil keeps the
// in-process queue.
func WithSharedQueue(s OutOfBandStore) OutOfBandOption {
	return func(o *OutOfBand) { o.shared = s }
}

// WithPollInterval sets how often a call waiting in a shared queue reads
// the store for its answer (default DefaultOutOfBandPoll); d <= 0 means
// the default.
func WithPollInterval(d time.Duration) OutOfBandOption { return func(o *OutOfBand) { o.poll = d } }

// NewOutOfBand returns an out-of-band asker that takes the timeout and the
// prompt's redaction from a.
func NewOutOfBand(a *Approvals, opts ...OutOfBandOption) *OutOfBand {
	o := &OutOfBand{approvals: a, now: time.Now, pending: map[string]*oobWait{}, downGrace: defaultOOBDownGrace, lease: defaultOOBLease}
	for _, opt := range opts {
		opt(o)
	}
	if o.max < 1 {
		o.max = DefaultMaxPendingApprovals
	}
	if o.poll <= 0 {
		o.poll = DefaultOutOfBandPoll
	}
	return o
}

// Shared reports whether the waiting calls are kept in a shared store.
func (o *OutOfBand) Shared() bool { return o.shared != nil }

// ErrNoPendingApproval is Answer's error for an id no call waits under:
// it never existed, was answered already, or expired.
var ErrNoPendingApproval = errors.New("no call waits for approval under this id: it was answered already, expired, or never existed")

// ErrQueueUnavailable is the error of Pending, Answer and a waiting call
// when a shared queue's store cannot be used: nothing is approved then.
var ErrQueueUnavailable = errors.New("the state store that holds the out-of-band approval queue cannot be reached")

// Ask implements Asker: the call waits until an operator answers, the
// approval timeout passes (ApprovalExpired), or ctx ends. With a shared
// queue, a store that cannot be reached ends the call ApprovalFailed: it
// is never approved without an operator's answer read from the store.
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
		return failed(fmt.Errorf("%d calls already wait for an operator's approval in this process; this one is refused", o.max))
	}
	o.pending[w.info.ID] = w
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		delete(o.pending, w.info.ID)
		o.mu.Unlock()
		o.changed()
	}()
	if o.shared != nil {
		return o.waitShared(ctx, w, timeout)
	}
	o.changed()

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
		return failed(fmt.Errorf("the call ended while it waited for an operator's approval: %w", ctx.Err()))
	}
}

func failed(err error) (Answer, *mcp.CallToolResult, error) {
	return Answer{Outcome: ApprovalFailed, Channel: ChannelOutOfBand}, nil, err
}

// storedAnswer is an answer as a shared queue keeps it.
type storedAnswer struct {
	Outcome ApprovalOutcome `json:"outcome"`
	Channel Channel         `json:"channel"`
	By      string          `json:"by,omitempty"`
}

// waitShared files the call in the shared queue and reads the store for
// its answer every poll interval (at once when this process was given
// it). The call's entry lives for a lease its replica renews, never past
// the deadline. At the deadline, or when ctx ends, the waiter files an
// answer of its own (expired, failed) under the same once-only key, so
// that an operator's answer that comes later is refused, never lost in
// silence, and one given just before is still honoured.
func (o *OutOfBand) waitShared(ctx context.Context, w *oobWait, timeout time.Duration) (Answer, *mcp.CallToolResult, error) {
	id := w.info.ID
	info, err := json.Marshal(w.info)
	if err != nil {
		return failed(fmt.Errorf("the approval request cannot be encoded: %w", err))
	}
	end := time.Now().Add(timeout)
	added, err := o.storeAdd(ctx, oobWaitPrefix+id, info, min(timeout, o.lease))
	switch {
	case err != nil:
		return failed(fmt.Errorf("%w, so the call cannot wait for an operator and is not approved: %w", ErrQueueUnavailable, err))
	case !added:
		return failed(fmt.Errorf("approval id %s is already in use in the out-of-band queue; the call is not approved", id))
	}
	o.changed()
	// The call's entry goes when it stops waiting, however it ends; an
	// answer entry stays until its TTL, to refuse a late second answer.
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), oobStoreTimeout)
		defer cancel()
		_ = o.shared.Delete(dctx, oobWaitPrefix+id)
	}()

	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(o.poll)
	defer tick.Stop()
	var downSince time.Time
	renewed := time.Now()
	for {
		select {
		case <-w.reply:
		case <-tick.C:
		case <-deadline.C:
			return o.giveUp(ctx, id, storedAnswer{Outcome: ApprovalExpired, Channel: ChannelOutOfBand}, nil)
		case <-ctx.Done():
			return o.giveUp(ctx, id, storedAnswer{Outcome: ApprovalFailed, Channel: ChannelOutOfBand},
				fmt.Errorf("the call ended while it waited for an operator's approval: %w", ctx.Err()))
		}
		a, found, err := o.readAnswer(ctx, id)
		switch {
		case err != nil && downSince.IsZero():
			downSince = time.Now()
			fallthrough
		case err != nil:
			if time.Since(downSince) >= o.downGrace {
				// Filed as the call's answer if the store is back, so
				// that no operator's answer is taken for it afterwards.
				return o.giveUp(ctx, id, storedAnswer{Outcome: ApprovalFailed, Channel: ChannelOutOfBand},
					fmt.Errorf("%w for %v while the call waited, so it is not approved: %w",
						ErrQueueUnavailable, time.Since(downSince).Round(time.Millisecond), err))
			}
		case found:
			return a, nil, nil
		default:
			downSince = time.Time{}
			if left := time.Until(end); time.Since(renewed) >= o.lease/3 && left > 0 {
				// An answer filed since the Get above is read at the next
				// tick; the entry renewed meanwhile only lists the call a
				// moment longer, and a second answer still finds the
				// answer key taken.
				if err := o.storePut(ctx, oobWaitPrefix+id, info, min(left, o.lease)); err == nil {
					renewed = time.Now()
				}
			}
		}
	}
}

func (o *OutOfBand) storePut(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, oobStoreTimeout)
	defer cancel()
	return o.shared.Put(ctx, key, value, ttl)
}

// giveUp ends a shared wait with mine (expired or failed), filing it as
// the call's answer so that a later operator's answer is refused. When an
// operator's answer was filed first, an expired wait takes it (an answer
// given at the last moment wins over the timer); a call that ended
// (cause) fails whatever the answer.
func (o *OutOfBand) giveUp(ctx context.Context, id string, mine storedAnswer, cause error) (Answer, *mcp.CallToolResult, error) {
	ctx = context.WithoutCancel(ctx)
	b, _ := json.Marshal(mine)
	added, err := o.storeAdd(ctx, oobAnswerPrefix+id, b, oobAnswerGrace)
	if err == nil && !added && cause == nil {
		if a, found, err := o.readAnswer(ctx, id); err == nil && found {
			return a, nil, nil
		}
	}
	// Not approved: no answer came, the store failed, or the call ended.
	return Answer{Outcome: mine.Outcome, Channel: mine.Channel}, nil, cause
}

// readAnswer reads the answer filed for id. It stays in the store until
// its TTL: the key taken is what refuses a second answer.
func (o *OutOfBand) readAnswer(ctx context.Context, id string) (Answer, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, oobStoreTimeout)
	defer cancel()
	b, found, err := o.shared.Get(ctx, oobAnswerPrefix+id)
	if err != nil || !found {
		return Answer{}, false, err
	}
	var sa storedAnswer
	if err := json.Unmarshal(b, &sa); err != nil {
		return Answer{}, false, fmt.Errorf("the answer filed for %s is not an answer: %w", id, err)
	}
	switch sa.Outcome {
	case ApprovalApproved, ApprovalDenied:
		if sa.Channel != ChannelConsole && sa.Channel != ChannelCLI {
			return Answer{}, false, fmt.Errorf("the answer filed for %s came through %q, not an operator's channel", id, sa.Channel)
		}
	case ApprovalExpired, ApprovalFailed:
	default:
		return Answer{}, false, fmt.Errorf("the answer filed for %s has outcome %q", id, sa.Outcome)
	}
	return Answer{Outcome: sa.Outcome, Channel: sa.Channel, By: sa.By}, true, nil
}

func (o *OutOfBand) storeAdd(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, oobStoreTimeout)
	defer cancel()
	return o.shared.Add(ctx, key, value, ttl)
}

// Answer approves or denies the call waiting under id, on behalf of by
// (the operator's name, recorded in the audit log) through ch (console or
// cli). It returns ErrNoPendingApproval when no call waits under id, and
// with a shared queue an error wrapping ErrQueueUnavailable when the store
// cannot be used (the answer is then not recorded). Of two answers to one
// call, from any replicas, the first recorded wins and the other gets
// ErrNoPendingApproval.
func (o *OutOfBand) Answer(ctx context.Context, id string, approve bool, ch Channel, by string) error {
	if ch != ChannelConsole && ch != ChannelCLI {
		return fmt.Errorf("an out-of-band answer comes through %q or %q, not %q", ChannelConsole, ChannelCLI, ch)
	}
	outcome := ApprovalDenied
	if approve {
		outcome = ApprovalApproved
	}
	if o.shared != nil {
		return o.answerShared(ctx, id, storedAnswer{Outcome: outcome, Channel: ch, By: by})
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
	w.reply <- Answer{Outcome: outcome, Channel: ch, By: by}
	o.changed()
	return nil
}

// answerShared files the answer once: the waiting call must be listed,
// and its answer key free.
func (o *OutOfBand) answerShared(ctx context.Context, id string, a storedAnswer) error {
	if id == "" || len(id) > 64 {
		return ErrNoPendingApproval
	}
	ctx, cancel := context.WithTimeout(ctx, oobStoreTimeout)
	defer cancel()
	b, found, err := o.shared.Get(ctx, oobWaitPrefix+id)
	if err != nil {
		return fmt.Errorf("%w, so the answer is not recorded: %w", ErrQueueUnavailable, err)
	}
	if !found {
		return ErrNoPendingApproval
	}
	var p PendingApproval
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("the waiting call %s cannot be read from the out-of-band queue: %w", id, err)
	}
	value, _ := json.Marshal(a)
	ttl := max(time.Until(p.Expires), 0) + oobAnswerGrace
	added, err := o.shared.Add(ctx, oobAnswerPrefix+id, value, ttl)
	switch {
	case err != nil:
		return fmt.Errorf("%w, so the answer is not recorded: %w", ErrQueueUnavailable, err)
	case !added:
		return ErrNoPendingApproval
	}
	// Off the list at once; the waiting call removes it too, and its TTL
	// would.
	_ = o.shared.Delete(ctx, oobWaitPrefix+id)
	o.mu.Lock()
	w, ok := o.pending[id]
	o.mu.Unlock()
	if ok {
		select {
		case w.reply <- Answer{}: // read the store now
		default:
		}
	}
	o.changed()
	return nil
}

// Pending lists the calls waiting for an operator, oldest first: this
// process's, or with a shared queue every replica's (at most
// DefaultMaxPendingApprovals of them). With a shared queue, an error
// wrapping ErrQueueUnavailable says the store cannot be used.
func (o *OutOfBand) Pending(ctx context.Context) ([]PendingApproval, error) {
	var out []PendingApproval
	if o.shared != nil {
		ctx, cancel := context.WithTimeout(ctx, oobStoreTimeout)
		defer cancel()
		values, err := o.shared.List(ctx, oobWaitPrefix, DefaultMaxPendingApprovals)
		if err != nil {
			return nil, fmt.Errorf("%w, so the waiting calls cannot be listed: %w", ErrQueueUnavailable, err)
		}
		out = make([]PendingApproval, 0, len(values))
		for _, v := range values {
			var p PendingApproval
			// An entry this version cannot read is not listed: it cannot
			// be answered by this version either. Expiry is the store's
			// (the entry's TTL is the wait), not this replica's clock.
			if json.Unmarshal(v, &p) == nil && p.ID != "" {
				out = append(out, p)
			}
		}
	} else {
		o.mu.Lock()
		out = make([]PendingApproval, 0, len(o.pending))
		for _, w := range o.pending {
			out = append(out, w.info)
		}
		o.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Since.Equal(out[j].Since) {
			return out[i].Since.Before(out[j].Since)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Watch reports, through the WithOnChange function, the changes of a
// shared queue made by other replicas: every interval it lists the queue
// (one store listing) and calls the function when the waiting calls
// differ from the last listing. It returns when ctx ends, at once when
// the queue is not shared or no WithOnChange function is set.
func (o *OutOfBand) Watch(ctx context.Context, interval time.Duration) {
	if o.shared == nil || o.onChange == nil {
		return
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	last := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p, err := o.Pending(ctx)
		var b strings.Builder
		if err != nil {
			b.WriteString("error")
		}
		for _, x := range p {
			b.WriteString(x.ID)
			b.WriteByte(',')
		}
		if now := b.String(); now != last {
			last = now
			o.changed()
		}
	}
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
