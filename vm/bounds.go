package vm

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/codecall-go/codecall/presets"
)

// Bounds are what Run promises about one run under a preset's limits: the
// most it asks of its Host, and the largest Result it returns. Run keeps
// them by construction; a host that cannot see inside the run checks
// them instead (package sandbox, whose runtime lives in another process
// that may not be the runtime at all), so that a runtime breaking them is
// found out and is never served past them.
type Bounds struct {
	// ToolCalls caps the CallTool and Discover requests of a run,
	// together (maxToolCalls: searchTools and describeTools count).
	ToolCalls int
	// Concurrency caps the CallTool and Discover requests in flight at
	// once (maxConcurrency, at least 1).
	Concurrency int
	// HostMessages caps the Log and Notify calls of a run, together.
	HostMessages int
	// MessageBytes caps the bytes of every Log (level, message, data) and
	// Notify (event, payload) of a run, together: they are charged to the
	// log budget.
	MessageBytes int64
	// NameBytes caps a tool name, an event name or a getTool name; each
	// is also non-empty and valid UTF-8.
	NameBytes int
	// DiscoverArgsBytes caps the JSON args of one Discover request: the
	// plan's arguments are capped, then re-encoded by encoding/json, which
	// may escape a byte into six (<, >, &), inside an object of their own.
	DiscoverArgsBytes int
	// ResultBytes caps Result.Result (maxResultBytes).
	ResultBytes int64
	// LogBytes caps Result.Logs as Run charges them (maxLogBytes).
	LogBytes int64
}

// Fixed bounds on the parts of a Result no preset sizes. Run's own output
// stays well inside them.
const (
	// maxErrorInfoBytes caps the text fields of a Result's error together.
	maxErrorInfoBytes = 64 << 10
	// maxWarningBytes caps one warning's message.
	maxWarningBytes = 16 << 10
	// fixedWarnings is how many warnings Run may give besides the ones it
	// gives per tool call (unhandled_tool_error, late_tool_error).
	fixedWarnings = 8
	// truncatedMarkerBytes is room for the {truncated, preview, bytes}
	// marker with an empty preview, which a tiny result budget may exceed.
	truncatedMarkerBytes = 128
)

// BoundsFor returns the bounds of a run under l, with the same fallbacks
// for zero limits as Run.
func BoundsFor(l presets.Limits) Bounds {
	c := capsFor(l)
	return Bounds{
		ToolCalls:         max(l.MaxToolCalls, 0),
		Concurrency:       c.concurrency,
		HostMessages:      maxHostMessages,
		MessageBytes:      c.logBytes,
		NameBytes:         maxNameBytes,
		DiscoverArgsBytes: 6*maxDiscoverArgsBytes + 1024,
		ResultBytes:       c.resultBytes,
		LogBytes:          c.logBytes,
	}
}

// IsLogLevel reports whether level is an MCP logging level, the levels
// mcpLog accepts and Host.Log receives.
func IsLogLevel(level string) bool { return mcpLevels[level] }

// consoleLevels are the levels of console methods, as captured logs name
// them.
var consoleLevels = map[string]bool{"log": true, "info": true, "warn": true, "error": true, "debug": true}

// CheckName reports whether name is a name Run would pass to its host: a
// tool, event or getTool name.
func (b Bounds) CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("an empty name")
	case len(name) > b.NameBytes:
		return fmt.Errorf("a name of %d bytes, over %d", len(name), b.NameBytes)
	case !utf8.ValidString(name):
		return errors.New("a name that is not valid UTF-8")
	}
	return nil
}

// knownStatuses, knownLimits and knownWarnings are what a Result may name.
var (
	knownStatuses = map[Status]bool{StatusOK: true, StatusSyntaxError: true, StatusIllegalAccess: true,
		StatusRuntimeError: true, StatusToolError: true, StatusTimeout: true, StatusLimitExceeded: true, StatusCancelled: true}
	knownLimits = map[string]bool{LimitToolCalls: true, LimitMemory: true, LimitStack: true, LimitRegexTime: true,
		LimitLogBytes: true, LimitResult: true, LimitTimers: true}
	knownWarnings = map[string]bool{WarningResultTruncated: true, WarningLogsTruncated: true, WarningMessagesDropped: true,
		WarningContextDropped: true, WarningUnhandledToolError: true, WarningLateToolError: true, WarningNoResult: true}
)

// CheckResult reports whether res is a Result Run could have returned
// under these bounds: a known status, a result and an error where the
// status has them, a result within ResultBytes, logs within LogBytes and
// at known levels, known warnings of bounded size and number, and a tool
// trace no longer than ToolCalls. It says nothing of whether the result is
// true, only whether it is within what a run can produce.
func (b Bounds) CheckResult(res *Result) error {
	if !knownStatuses[res.Status] {
		return fmt.Errorf("an unknown status %q", clipName(string(res.Status)))
	}
	if res.Status == StatusOK {
		if len(res.Result) == 0 || res.Error != nil {
			return errors.New("status ok without a result, or with an error")
		}
		if int64(len(res.Result)) > max(b.ResultBytes, truncatedMarkerBytes) {
			return fmt.Errorf("a result of %d bytes, over maxResultBytes (%d)", len(res.Result), b.ResultBytes)
		}
	} else if len(res.Result) != 0 {
		return fmt.Errorf("status %s with a result", res.Status)
	}
	if e := res.Error; e != nil {
		if e.Limit != "" && !knownLimits[e.Limit] {
			return fmt.Errorf("an unknown limit %q", clipName(e.Limit))
		}
		n := len(e.Source) + len(e.Message) + len(e.Name) + len(e.Kind) + len(e.ToolName) + len(e.ToolInput) +
			len(e.Code) + len(e.Reason) + len(e.Hint) + len(e.Details) + len(e.Limit)
		if n > maxErrorInfoBytes {
			return fmt.Errorf("an error of %d bytes, over %d", n, maxErrorInfoBytes)
		}
	}
	if err := b.checkLogs(res.Logs); err != nil {
		return err
	}
	if len(res.Warnings) > 2*b.ToolCalls+fixedWarnings {
		return fmt.Errorf("%d warnings", len(res.Warnings))
	}
	for _, w := range res.Warnings {
		if !knownWarnings[w.Type] {
			return fmt.Errorf("an unknown warning type %q", clipName(w.Type))
		}
		if len(w.Message) > maxWarningBytes {
			return fmt.Errorf("a warning of %d bytes, over %d", len(w.Message), maxWarningBytes)
		}
	}
	if len(res.ToolTrace) > b.ToolCalls || res.Metrics.ToolCalls > b.ToolCalls || res.Metrics.ToolCalls < 0 {
		return fmt.Errorf("%d tool calls traced (%d counted), over maxToolCalls (%d)", len(res.ToolTrace), res.Metrics.ToolCalls, b.ToolCalls)
	}
	for _, t := range res.ToolTrace {
		if err := b.CheckName(t.ToolName); err != nil {
			return fmt.Errorf("a traced tool call with %w", err)
		}
		if len(t.Error) > b.NameBytes || len(t.AppID) > b.NameBytes {
			return errors.New("a traced tool call with an oversized error code or app")
		}
	}
	return nil
}

// checkLogs charges the logs as Run does (every entry costs its framing
// and level too) and checks their levels. The entry that closes a full log
// is not charged.
func (b Bounds) checkLogs(logs []LogEntry) error {
	if n := len(logs); n > 0 {
		last := logs[n-1]
		if last.Level == "warn" && strings.HasPrefix(last.Message, "logs truncated after ") && len(last.Message) < 128 {
			logs = logs[:n-1]
		}
	}
	var used int64
	for _, l := range logs {
		if !consoleLevels[l.Level] && !mcpLevels[l.Level] {
			return fmt.Errorf("a log entry at an unknown level %q", clipName(l.Level))
		}
		used += int64(len(l.Message)) + entryOverhead + int64(len(l.Level))
		if used > b.LogBytes {
			return fmt.Errorf("logs over maxLogBytes (%d)", b.LogBytes)
		}
	}
	return nil
}

// clipName cuts a name from an untrusted source for an error message.
func clipName(s string) string { return clip(strings.ToValidUTF8(s, "?"), 64) }
