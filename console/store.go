package console

import (
	"context"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"
)

// Event is one audit event as the console keeps it: the fields of the
// audit log's line (see package policy/audit), already redacted and
// clipped by the audit logger. It holds digests and sizes, never
// arguments, results or scripts.
type Event struct {
	Time            time.Time `json:"time"`
	Type            string    `json:"event"`
	RunID           string    `json:"runId,omitempty"`
	ParentRunID     string    `json:"parentRunId,omitempty"`
	CallIndex       int       `json:"callIndex,omitempty"`
	SessionID       string    `json:"sessionId,omitempty"`
	Tool            string    `json:"tool,omitempty"`
	AppID           string    `json:"appId,omitempty"`
	Via             string    `json:"via,omitempty"`
	ScriptSHA256    string    `json:"scriptSha256,omitempty"`
	ArgsSHA256      string    `json:"argsSha256,omitempty"`
	ArgsBytes       int       `json:"argsBytes,omitempty"`
	Decision        string    `json:"decision,omitempty"`
	Reason          string    `json:"reason,omitempty"`
	Approval        string    `json:"approval,omitempty"`
	ApprovalChannel string    `json:"approvalChannel,omitempty"`
	Approver        string    `json:"approver,omitempty"`
	Status          string    `json:"status,omitempty"`
	DurationMs      float64   `json:"durationMs,omitempty"`
	ResultSHA256    string    `json:"resultSha256,omitempty"`
	ResultBytes     int       `json:"resultBytes,omitempty"`
	ErrorCode       string    `json:"errorCode,omitempty"`
	Error           string    `json:"error,omitempty"`
}

// Run is one run as the console shows it: a plan (codecall.execute or
// codemode.run) with its calls, or a single invoke or direct call.
type Run struct {
	ID           string
	SessionID    string
	Via          string
	ScriptSHA256 string
	Start        time.Time
	// End is zero while the run is in progress.
	End        time.Time
	Status     string
	DurationMs float64
	ErrorCode  string
	Error      string
	// Calls are the run's tool calls by call index (one, index 0, for an
	// invoke or a direct call).
	Calls []*Call
	// Events are the run's audit events, oldest first, at most
	// maxRunEvents (the oldest beyond it are dropped, counted in Dropped).
	Events  []Event
	Dropped int
}

// Call is one tool call of a run.
type Call struct {
	Index    int
	Tool     string
	AppID    string
	Via      string
	Decision string
	Reason   string
	// Approval, ApprovalChannel and Approver say how an approval went.
	Approval        string
	ApprovalChannel string
	Approver        string
	// Start is when the call reached the gate; End is zero while it runs.
	Start      time.Time
	End        time.Time
	DurationMs float64
	Status     string
	ErrorCode  string
	Error      string
}

// State names where a call stands: running, waiting (for approval), or
// its end status.
func (c *Call) State() string {
	switch {
	case !c.End.IsZero():
		if c.Status == "" {
			return "ok"
		}
		return c.Status
	case c.Decision == "approval" && c.Approval == "":
		return "waiting"
	}
	return "running"
}

// InProgress reports whether the run has not ended yet.
func (r Run) InProgress() bool { return r.End.IsZero() }

// maxRunEvents bounds the events one run keeps, so that a plan making
// thousands of calls cannot take the whole store.
const maxRunEvents = 2000

// maxRunCalls bounds the calls one run keeps in its timeline.
const maxRunCalls = 1000

// Default sizes of a Store.
const (
	DefaultMaxRuns   = 200
	DefaultMaxEvents = 10000
)

// Store keeps the recent runs and audit events in memory, bounded: at most
// maxRuns runs (the oldest run first out) and maxEvents events for the
// audit search. It is a slog.Handler, so it plugs in as an audit sink
// (middleware.WithAuditSink) and sees exactly the records the audit log
// writes. Safe for concurrent use.
type Store struct {
	maxRuns, maxEvents int
	now                func() time.Time

	mu      sync.Mutex
	runs    map[string]*Run
	order   []string // run ids, oldest first
	events  []Event  // ring of the last maxEvents events
	next    int      // where the ring writes next, once full
	version uint64
	wake    chan struct{} // closed and replaced on every change
}

// StoreOption configures a Store.
type StoreOption func(*Store)

// WithMaxRuns bounds the runs kept (default DefaultMaxRuns).
func WithMaxRuns(n int) StoreOption { return func(s *Store) { s.maxRuns = n } }

// WithMaxEvents bounds the events kept for the audit search (default
// DefaultMaxEvents).
func WithMaxEvents(n int) StoreOption { return func(s *Store) { s.maxEvents = n } }

// NewStore returns an empty store.
func NewStore(opts ...StoreOption) *Store {
	s := &Store{runs: map[string]*Run{}, now: time.Now, wake: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	if s.maxRuns < 1 {
		s.maxRuns = DefaultMaxRuns
	}
	if s.maxEvents < 1 {
		s.maxEvents = DefaultMaxEvents
	}
	return s
}

// Enabled implements slog.Handler: audit records are never filtered.
func (s *Store) Enabled(context.Context, slog.Level) bool { return true }

// WithAttrs implements slog.Handler; the audit logger adds none.
func (s *Store) WithAttrs([]slog.Attr) slog.Handler { return s }

// WithGroup implements slog.Handler; the audit logger uses none.
func (s *Store) WithGroup(string) slog.Handler { return s }

// Handle implements slog.Handler: it reads one audit record and files it.
func (s *Store) Handle(_ context.Context, r slog.Record) error {
	e := Event{Time: r.Time, Type: r.Message}
	r.Attrs(func(a slog.Attr) bool {
		v := a.Value.Resolve()
		switch a.Key {
		case "runId":
			e.RunID = v.String()
		case "parentRunId":
			e.ParentRunID = v.String()
		case "callIndex":
			e.CallIndex = int(v.Int64())
		case "sessionId":
			e.SessionID = v.String()
		case "tool":
			e.Tool = v.String()
		case "appId":
			e.AppID = v.String()
		case "via":
			e.Via = v.String()
		case "scriptSha256":
			e.ScriptSHA256 = v.String()
		case "argsSha256":
			e.ArgsSHA256 = v.String()
		case "argsBytes":
			e.ArgsBytes = int(v.Int64())
		case "decision":
			e.Decision = v.String()
		case "reason":
			e.Reason = v.String()
		case "approval":
			e.Approval = v.String()
		case "approvalChannel":
			e.ApprovalChannel = v.String()
		case "approver":
			e.Approver = v.String()
		case "status":
			e.Status = v.String()
		case "durationMs":
			e.DurationMs = v.Float64()
		case "resultSha256":
			e.ResultSHA256 = v.String()
		case "resultBytes":
			e.ResultBytes = int(v.Int64())
		case "errorCode":
			e.ErrorCode = v.String()
		case "error":
			e.Error = v.String()
		}
		return true
	})
	s.Add(e)
	return nil
}

// Add files one event: in the audit ring and in its run.
func (s *Store) Add(e Event) {
	if e.Time.IsZero() {
		e.Time = s.now()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.events) < s.maxEvents {
		s.events = append(s.events, e)
	} else {
		s.events[s.next] = e
		s.next = (s.next + 1) % s.maxEvents
	}
	if e.RunID != "" {
		s.file(e)
	}
	s.changedLocked()
}

// file updates the run e belongs to. Called with mu held.
func (s *Store) file(e Event) {
	r, ok := s.runs[e.RunID]
	if !ok {
		if len(s.order) >= s.maxRuns {
			delete(s.runs, s.order[0])
			s.order = s.order[1:]
		}
		r = &Run{ID: e.RunID, Start: e.Time, Via: e.Via}
		s.runs[e.RunID] = r
		s.order = append(s.order, e.RunID)
	}
	if len(r.Events) >= maxRunEvents {
		r.Events = r.Events[1:]
		r.Dropped++
	}
	r.Events = append(r.Events, e)
	if r.SessionID == "" {
		r.SessionID = e.SessionID
	}
	if r.ScriptSHA256 == "" {
		r.ScriptSHA256 = e.ScriptSHA256
	}
	switch e.Type {
	case "execute.start":
		r.Start, r.Via = e.Time, e.Via
		return
	case "execute.end":
		r.End, r.Status, r.DurationMs, r.ErrorCode, r.Error = e.Time, e.Status, e.DurationMs, e.ErrorCode, e.Error
		if d := time.Duration(e.DurationMs * float64(time.Millisecond)); d > 0 {
			r.Start = e.Time.Add(-d)
		}
		return
	}
	c := r.call(e)
	if c == nil {
		return
	}
	switch e.Type {
	case "policy.decision":
		c.Decision, c.Reason = e.Decision, e.Reason
		if c.Decision == "deny" && c.ErrorCode == "" {
			c.ErrorCode = e.ErrorCode
		}
	case "approval":
		c.Approval, c.ApprovalChannel, c.Approver = e.Approval, e.ApprovalChannel, e.Approver
	case "tool.call", "invoke":
		c.End, c.DurationMs, c.Status, c.ErrorCode, c.Error = e.Time, e.DurationMs, e.Status, e.ErrorCode, e.Error
		if d := time.Duration(e.DurationMs * float64(time.Millisecond)); d > 0 {
			c.Start = e.Time.Add(-d)
		}
		if e.ParentRunID == "" {
			// A direct call or an invoke is a run of its own, which ends
			// with its call.
			r.End, r.Status, r.DurationMs, r.ErrorCode, r.Error = c.End, c.Status, c.DurationMs, c.ErrorCode, c.Error
			if c.Start.Before(r.Start) {
				r.Start = c.Start
			}
		}
	}
}

// call returns the call of r that e is about, created on first sight.
func (r *Run) call(e Event) *Call {
	for _, c := range r.Calls {
		if c.Index == e.CallIndex {
			if e.Tool != "" && c.Tool == "" {
				c.Tool = e.Tool
			}
			if e.AppID != "" && c.AppID == "" {
				c.AppID = e.AppID
			}
			return c
		}
	}
	if len(r.Calls) >= maxRunCalls {
		return nil
	}
	c := &Call{Index: e.CallIndex, Tool: e.Tool, AppID: e.AppID, Via: e.Via, Start: e.Time}
	r.Calls = append(r.Calls, c)
	sort.Slice(r.Calls, func(i, j int) bool { return r.Calls[i].Index < r.Calls[j].Index })
	if r.Via == "" {
		r.Via = e.Via
	}
	return c
}

// Touch marks the store changed without an event (an approval started or
// ended waiting), so that live pages refresh.
func (s *Store) Touch() {
	s.mu.Lock()
	s.changedLocked()
	s.mu.Unlock()
}

func (s *Store) changedLocked() {
	s.version++
	close(s.wake)
	s.wake = make(chan struct{})
}

// Version is a number that grows whenever the store changes; Wait blocks
// until it passes a given value.
func (s *Store) Version() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// Wait returns the version once it is above since, or when ctx ends.
func (s *Store) Wait(ctx context.Context, since uint64) uint64 {
	for {
		s.mu.Lock()
		v, wake := s.version, s.wake
		s.mu.Unlock()
		if v > since {
			return v
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return v
		}
	}
}

// Runs returns copies of the runs kept, newest first.
func (s *Store) Runs() []Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Run, 0, len(s.order))
	for i := len(s.order) - 1; i >= 0; i-- {
		out = append(out, s.runs[s.order[i]].copy())
	}
	return out
}

// Run returns a copy of the run with this id.
func (s *Store) Run(id string) (Run, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok {
		return Run{}, false
	}
	return r.copy(), true
}

func (r *Run) copy() Run {
	c := *r
	c.Calls = make([]*Call, len(r.Calls))
	for i, call := range r.Calls {
		cc := *call
		c.Calls[i] = &cc
	}
	c.Events = append([]Event(nil), r.Events...)
	return c
}

// Query selects audit events; empty fields match everything.
type Query struct {
	// Run matches the event's run or parent run.
	Run string
	// Session matches the MCP session id exactly.
	Session string
	// Tool matches tool names containing it, ignoring case.
	Tool string
	// Decision matches the decision (allow, deny, approval) exactly.
	Decision string
	// Limit caps the events returned (newest first); 0 means 500.
	Limit int
}

// Search returns the events q selects, newest first.
func (s *Store) Search(q Query) []Event {
	limit := q.Limit
	if limit <= 0 {
		limit = 500
	}
	tool := strings.ToLower(q.Tool)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.events)
	var out []Event
	for i := 0; i < n && len(out) < limit; i++ {
		// Newest first: backwards from the ring's write position (0 until
		// the ring is full, so this is n-1-i then).
		e := s.events[((s.next-1-i)%n+n)%n]
		switch {
		case q.Run != "" && e.RunID != q.Run && e.ParentRunID != q.Run,
			q.Session != "" && e.SessionID != q.Session,
			tool != "" && !strings.Contains(strings.ToLower(e.Tool), tool),
			q.Decision != "" && e.Decision != q.Decision:
			continue
		}
		out = append(out, e)
	}
	return out
}
