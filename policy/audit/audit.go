// Package audit writes CodeCall's audit log: one JSON line per event
// (execute.start, execute.end, tool.call, policy.decision, approval,
// invoke), with digests and sizes in place of arguments, results and
// scripts, and free text passed through the redactor.
//
// A Logger writes to a file or standard error (Open, from the audit.path
// configuration key), to any io.Writer (NewWriter), or to any slog.Handler
// (New). It is safe for concurrent use; each event is written by a single
// call to the handler, so lines never interleave. Writing never fails the
// caller: a failed write is counted (Dropped) and reported through the
// diagnostics logger once, until a write succeeds again.
package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/codecall-go/codecall/policy/redact"
	"github.com/codecall-go/codecall/presets"
)

// Length limits on the strings of one line, so that a hostile reason or
// tool name cannot bloat the log.
const (
	maxTextBytes = 1024 // reason, error
	maxNameBytes = 256  // tool, appId, ids
	maxWordBytes = 64   // via, status, codes
)

// Logger writes audit events. A nil *Logger, and one from Open with an
// empty path, discards every event.
type Logger struct {
	h        slog.Handler
	also     []slog.Handler // WithAlso's handlers, joined to h by New
	closer   io.Closer      // the file Open created, or nil
	redactor *redact.Redactor
	diag     *slog.Logger
	now      func() time.Time

	mu     sync.RWMutex // Close waits for writes in progress
	closed bool

	failing atomic.Bool
	dropped atomic.Uint64
}

// Option tunes a Logger.
type Option func(*Logger)

// WithRedactor sets the redactor whose value patterns clean Reason, Error,
// Tool and AppID (default redact.Default()).
func WithRedactor(r *redact.Redactor) Option {
	return func(l *Logger) {
		if r != nil {
			l.redactor = r
		}
	}
}

// WithDiagnostics sets the logger that hears about sink failures (default
// slog.Default()).
func WithDiagnostics(d *slog.Logger) Option {
	return func(l *Logger) {
		if d != nil {
			l.diag = d
		}
	}
}

// WithAlso hands every event to h as well, after the Logger's own sink
// (or as its only sink when there is none, e.g. Open with an empty path):
// the same redacted record, so an in-memory view such as the console of
// codecall serve sees exactly what the audit log holds. A failure of h
// counts as a dropped event like a failure of the main sink.
func WithAlso(h slog.Handler) Option {
	return func(l *Logger) {
		if h != nil {
			l.also = append(l.also, h)
		}
	}
}

// withClock sets the time source of events without a Time (for tests).
func withClock(now func() time.Time) Option { return func(l *Logger) { l.now = now } }

// New returns a Logger that hands every event to h as one slog.Record at
// level Info, whatever level h is enabled for (audit events are not
// optional): the message is the event type and the fields are attributes
// named as in the JSON lines (runId, tool, durationMs, ...). A nil h gives
// a Logger that discards every event.
func New(h slog.Handler, opts ...Option) *Logger {
	l := &Logger{h: h, redactor: redact.Default(), diag: slog.Default(), now: time.Now}
	for _, o := range opts {
		o(l)
	}
	if len(l.also) > 0 {
		hs := l.also
		if l.h != nil {
			hs = append([]slog.Handler{l.h}, hs...)
		}
		l.h = teeHandler(hs)
	}
	return l
}

// teeHandler hands a record to every handler in turn; the first error is
// returned after all have been tried, so one failing sink does not starve
// the others.
type teeHandler []slog.Handler

func (t teeHandler) Enabled(context.Context, slog.Level) bool { return true }

func (t teeHandler) Handle(ctx context.Context, r slog.Record) error {
	var first error
	for _, h := range t {
		if err := handleOne(ctx, h, r.Clone()); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// handleOne calls one handler of a tee, turning its panic into an error
// so that the handlers after it still see the record.
func handleOne(ctx context.Context, h slog.Handler, r slog.Record) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("audit handler panicked: %v", p)
		}
	}()
	return h.Handle(ctx, r)
}

func (t teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make(teeHandler, len(t))
	for i, h := range t {
		out[i] = h.WithAttrs(as)
	}
	return out
}

func (t teeHandler) WithGroup(name string) slog.Handler {
	out := make(teeHandler, len(t))
	for i, h := range t {
		out[i] = h.WithGroup(name)
	}
	return out
}

// NewWriter returns a Logger that writes JSON lines to w:
//
//	{"time":"2026-11-21T18:32:59.123Z","event":"tool.call","runId":"r1",...}
//
// Each line is written by one w.Write call, under a lock.
func NewWriter(w io.Writer, opts ...Option) *Logger {
	return New(lineHandler(w), opts...)
}

// lineHandler is slog's JSON handler with the audit line's shape: no level,
// and the message under "event".
func lineHandler(w io.Writer) slog.Handler {
	return slog.NewJSONHandler(w, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) > 0 {
				return a
			}
			switch a.Key {
			case slog.LevelKey:
				return slog.Attr{}
			case slog.MessageKey:
				a.Key = "event"
			case slog.TimeKey:
				a.Value = slog.TimeValue(a.Value.Time().UTC())
			}
			return a
		},
	})
}

// Open returns the Logger the audit configuration asks for: none for an
// empty path (Enabled reports false), standard error for "-", and
// otherwise the file at cfg.Path, appended to and created with mode 0600
// when missing. The file's directory must exist. Close closes the file.
func Open(cfg presets.AuditConfig, opts ...Option) (*Logger, error) {
	switch cfg.Path {
	case "":
		return New(nil, opts...), nil
	case "-":
		return NewWriter(os.Stderr, opts...), nil
	}
	f, err := os.OpenFile(cfg.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit.path: opening the audit log: %w", err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		if err == nil {
			err = errors.New("not a regular file")
		}
		return nil, fmt.Errorf("audit.path: %s: %w", cfg.Path, err)
	}
	l := NewWriter(f, opts...)
	l.closer = f
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		l.diag.Warn("audit: the audit log can be read or written by other users; restrict it with chmod 600",
			"path", cfg.Path, "mode", fi.Mode().Perm().String())
	}
	return l, nil
}

// Enabled reports whether events go anywhere.
func (l *Logger) Enabled() bool { return l != nil && l.h != nil }

// Dropped returns how many events could not be written.
func (l *Logger) Dropped() uint64 {
	if l == nil {
		return 0
	}
	return l.dropped.Load()
}

// Log writes one event. It never fails and never blocks on anything but the
// sink's own write; a write error is counted and reported through the
// diagnostics logger (once, until a write succeeds again). Events logged
// after Close are dropped.
func (l *Logger) Log(ctx context.Context, e Event) {
	if !l.Enabled() {
		return
	}
	if ctx == nil {
		ctx = context.Background()
	}
	rec := l.record(e)
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		l.dropped.Add(1)
		return
	}
	if err := l.handle(ctx, rec); err != nil {
		l.dropped.Add(1)
		if l.failing.CompareAndSwap(false, true) {
			l.diag.Error("audit: writing an audit event failed; events are dropped until a write succeeds",
				"event", string(e.Type), "err", err)
		}
		return
	}
	if l.failing.CompareAndSwap(true, false) {
		l.diag.Info("audit: writing audit events works again", "dropped", l.dropped.Load())
	}
}

// handle calls the sink, turning a panic in a caller-supplied handler into
// an error: auditing must not bring a call down.
func (l *Logger) handle(ctx context.Context, rec slog.Record) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("audit handler panicked: %v", p)
		}
	}()
	return l.h.Handle(ctx, rec)
}

// Close stops the Logger and closes the file Open created (not standard
// error, and not a writer or handler given to NewWriter or New). It waits
// for writes in progress; later events are dropped. Closing twice is
// harmless.
func (l *Logger) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.closer != nil {
		return l.closer.Close()
	}
	return nil
}

// record builds the slog record of e, fields in a fixed order.
func (l *Logger) record(e Event) slog.Record {
	t := e.Time
	if t.IsZero() {
		t = l.now()
	}
	rec := slog.NewRecord(t, slog.LevelInfo, clip(string(e.Type), maxWordBytes), 0)
	attrs := make([]slog.Attr, 0, 12)
	str := func(key, v string, limit int) {
		if v != "" {
			attrs = append(attrs, slog.String(key, clip(v, limit)))
		}
	}
	text := func(key, v string, limit int) {
		if v != "" {
			attrs = append(attrs, slog.String(key, clip(l.redactor.String(v), limit)))
		}
	}
	str("runId", e.RunID, maxNameBytes)
	str("parentRunId", e.ParentRunID, maxNameBytes)
	if e.CallIndex > 0 {
		attrs = append(attrs, slog.Int("callIndex", e.CallIndex))
	}
	str("sessionId", e.SessionID, maxNameBytes)
	text("tool", e.Tool, maxNameBytes)
	text("appId", e.AppID, maxNameBytes)
	str("via", e.Via, maxWordBytes)
	str("scriptSha256", e.ScriptSHA256, maxWordBytes)
	if e.ArgsSHA256 != "" {
		attrs = append(attrs, slog.String("argsSha256", clip(e.ArgsSHA256, maxWordBytes)), slog.Int("argsBytes", e.ArgsBytes))
	}
	str("decision", string(e.Decision), maxWordBytes)
	text("reason", e.Reason, maxTextBytes)
	str("approval", string(e.Approval), maxWordBytes)
	str("approvalChannel", e.ApprovalChannel, maxWordBytes)
	text("approver", e.Approver, maxNameBytes)
	str("status", e.Status, maxWordBytes)
	switch {
	case e.Duration != 0, e.Type == ExecuteEnd, e.Type == ToolCall, e.Type == Invoke:
		attrs = append(attrs, slog.Float64("durationMs", math.Round(float64(e.Duration)/1e3)/1e3))
	}
	if e.ResultSHA256 != "" {
		attrs = append(attrs, slog.String("resultSha256", clip(e.ResultSHA256, maxWordBytes)), slog.Int("resultBytes", e.ResultBytes))
	}
	if e.LogLines > 0 {
		attrs = append(attrs, slog.Int("logLines", e.LogLines), slog.Int("logBytes", e.LogBytes))
	}
	str("errorCode", e.ErrorCode, maxWordBytes)
	text("error", e.Error, maxTextBytes)
	rec.AddAttrs(attrs...)
	return rec
}

// clip shortens s to at most limit bytes on a rune boundary, marking the cut
// with "…", and replaces invalid UTF-8 so the line stays valid JSON text.
func clip(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= limit {
		return s
	}
	cut := limit - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
