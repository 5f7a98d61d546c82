package vm

import (
	"fmt"
	"time"
)

// logBook holds the run's captured logs within the log budget. Once the
// budget is spent it holds one final warning entry and takes nothing more.
type logBook struct {
	limit   int64
	used    int64
	full    bool
	entries []LogEntry
}

func (b *logBook) remaining() int64 {
	return max(b.limit-b.used, 0)
}

// charge counts n bytes against the budget without capturing anything and
// reports whether they fitted.
func (b *logBook) charge(n int64) bool {
	if b.full {
		return false
	}
	if n > b.remaining() {
		b.used = b.limit
		return false
	}
	b.used += n
	return true
}

// log captures one entry. An entry that does not fit is cut to the budget
// that is left, and the log is then closed with a warning entry (and a
// warning in the Result). It returns what was captured, and false when
// nothing was.
func (r *run) log(level, message string) (string, bool) {
	b := &r.logs
	if b.full {
		return "", false
	}
	// Every entry costs its JSON framing too, or a flood of empty lines
	// would fill the response while charging nothing.
	overhead := entryOverhead + int64(len(level))
	n := int64(len(message)) + overhead
	if n <= b.remaining() {
		b.used += n
		b.entries = append(b.entries, LogEntry{Level: level, Message: message, TimeMs: r.sinceStart()})
		return message, true
	}
	cut := ""
	if rest := b.remaining() - overhead; rest > 0 {
		cut = truncateUTF8(message, int(rest))
		b.entries = append(b.entries, LogEntry{Level: level, Message: cut, TimeMs: r.sinceStart()})
		b.used += int64(len(cut)) + overhead
	}
	r.logsFull()
	return cut, cut != ""
}

// sinceStart is the time since the run started, in whole milliseconds.
func (r *run) sinceStart() int64 { return time.Since(r.start).Milliseconds() }

// entryOverhead is the JSON framing of one log entry, level excluded.
const entryOverhead = int64(len(`{"level":"","message":"","timeMs":0000000},`))

// logsFull closes the log with its final warning entry.
func (r *run) logsFull() {
	b := &r.logs
	if b.full {
		return
	}
	b.full = true
	msg := fmt.Sprintf("logs truncated after %d bytes (the limit maxLogBytes is %d)", b.used, b.limit)
	b.entries = append(b.entries, LogEntry{Level: "warn", Message: msg, TimeMs: r.sinceStart()})
	r.warn(WarningLogsTruncated, msg)
}

// outbox delivers mcpLog and mcpNotify messages to the host in order, on a
// goroutine of its own, so that a slow client never blocks the plan. It is
// started on first use; the rate limit bounds what it can hold, so posting
// never blocks.
type outbox struct {
	ch   chan func()
	done chan struct{}
}

// post queues f for the outbox goroutine.
func (r *run) post(f func()) {
	if r.outbox == nil {
		o := &outbox{ch: make(chan func(), maxHostMessages), done: make(chan struct{})}
		r.outbox = o
		go func() {
			defer close(o.done)
			for f := range o.ch {
				r.deliver(f)
			}
		}()
	}
	r.outbox.ch <- f
}

// deliver calls f and turns a panic in the host into an internal error.
func (r *run) deliver(f func()) {
	defer func() {
		if x := recover(); x != nil {
			r.internalFailure()
		}
	}()
	f()
}

// close waits until every queued message has been delivered.
func (o *outbox) close() {
	close(o.ch)
	<-o.done
}

// internalFailure reports a failure of CodeCall's own code found on another
// goroutine: it stops the run or, when the run's outcome is already
// final, replaces it.
func (r *run) internalFailure() {
	r.mu.Lock()
	sealed := r.sealed
	r.mu.Unlock()
	if sealed {
		r.late.Store(internalError())
		return
	}
	// The run may have been sealed since; stop then ignores the reason.
	r.stop(internalOutcome())
	r.mu.Lock()
	lost := r.sealed && (r.reason == nil || r.reason.err == nil || r.reason.err.Name != "InternalError")
	r.mu.Unlock()
	if lost {
		r.late.Store(internalError())
	}
}
