package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Type names what an event records.
type Type string

// The event types.
const (
	// ExecuteStart: a codecall.execute run passed validation and starts.
	ExecuteStart Type = "execute.start"
	// ExecuteEnd: a run ended, with its status and duration.
	ExecuteEnd Type = "execute.end"
	// ToolCall: a tool call ended, whichever path it took (a plan's
	// callTool, codecall.invoke, a client's direct tools/call).
	ToolCall Type = "tool.call"
	// PolicyDecision: the gate decided whether a call may proceed.
	PolicyDecision Type = "policy.decision"
	// Approval: a person answered (or did not answer) an approval request,
	// or a trust granted earlier applied.
	Approval Type = "approval"
	// Invoke: a codecall.invoke call ended.
	Invoke Type = "invoke"
	// UpstreamQuarantine: the gateway holds an upstream's tool back, its
	// definition changed since it was pinned (or it is new and new tools
	// are quarantined); Tool, AppID (the upstream) and Reason say which
	// and what to run.
	UpstreamQuarantine Type = "upstream.quarantine"
)

// Decision is the gate's verdict on a call.
type Decision string

// The decisions.
const (
	DecisionAllow    Decision = "allow"
	DecisionDeny     Decision = "deny"
	DecisionApproval Decision = "approval" // allowed once a person approves
)

// Outcome is how an approval request ended.
type Outcome string

// The approval outcomes.
const (
	OutcomeApproved Outcome = "approved" // a person approved this call
	OutcomeDenied   Outcome = "denied"   // a person refused it
	OutcomeExpired  Outcome = "expired"  // nobody answered in time
	OutcomeTrusted  Outcome = "trusted"  // an earlier "trust for this session" applied
)

// Event is one audit record. It never holds raw arguments, results or
// scripts: only their SHA-256 digests and sizes (see Digest and
// DigestBytes). Reason, Error, Tool and AppID may carry text chosen by a
// plan, a tool or a policy; the Logger passes them through the redactor's
// value patterns before writing them. Zero-valued fields are left out of
// the line, except where the field notes say otherwise.
type Event struct {
	// Type says what happened; required.
	Type Type
	// Time is when it happened; the zero time means "when Log is called".
	Time time.Time
	// RunID is shared by every event of one run: an execute run, or a
	// single invoke or direct call.
	RunID string
	// ParentRunID is the run a call was made from, on events about one
	// tool call of a plan.
	ParentRunID string
	// CallIndex is the position of a plan's tool call in its run, starting
	// at 1; 0 means the event is not about one call of a plan.
	CallIndex int
	// SessionID is the MCP session the request came in on.
	SessionID string
	// Tool is the tool's name as requested.
	Tool string
	// AppID is the tool's app.
	AppID string
	// Via is the path to the tool: execute, invoke or direct.
	Via string
	// ScriptSHA256 is the hex SHA-256 of a plan's source.
	ScriptSHA256 string
	// ArgsSHA256 and ArgsBytes describe a call's arguments (see Digest);
	// argsBytes is written whenever ArgsSHA256 is set.
	ArgsSHA256 string
	ArgsBytes  int
	// Decision is the gate's verdict, on policy.decision events.
	Decision Decision
	// Reason explains the decision or the approval outcome.
	Reason string
	// Approval is the outcome, on approval events.
	Approval Outcome
	// ApprovalChannel is how the person was asked, on approval events:
	// elicitation, prompt, console, cli, or out_of_band for an operator
	// request nobody answered; empty when nobody was asked.
	ApprovalChannel string
	// Approver names who answered, when the channel says (an operator's
	// name from the console or the CLI, as they gave it).
	Approver string
	// Status is how a run or call ended: an execute status (ok,
	// runtime_error, tool_error, ...) or ok / error for a call.
	Status string
	// Duration is how long the run or call took; written as durationMs
	// on execute.end, tool.call and invoke events even when zero.
	Duration time.Duration
	// ResultSHA256 and ResultBytes describe a result (see Digest);
	// resultBytes is written whenever ResultSHA256 is set.
	ResultSHA256 string
	ResultBytes  int
	// LogLines and LogBytes count the log lines a run wrote and their
	// bytes, on execute.end, including a run that was cancelled or timed
	// out: the lines themselves go to the client, never to the audit log,
	// which must not hold what a plan printed.
	LogLines int
	LogBytes int
	// ErrorCode is the error's code (ACCESS_DENIED, TIMEOUT, ...).
	ErrorCode string
	// Error is the error's message.
	Error string
}

// Digest returns the hex SHA-256 and the size in bytes of v's JSON
// encoding, for Event.ArgsSHA256/ArgsBytes and ResultSHA256/ResultBytes.
// Object keys are sorted (encoding/json sorts map keys) and HTML characters
// are not escaped; a json.RawMessage is re-encoded the same way, so the
// arguments {"b":1,"a":2} give the same digest as raw bytes or as a map. A
// value encoding/json cannot encode gives "" and 0.
func Digest(v any) (sha256hex string, size int) {
	if raw, ok := v.(json.RawMessage); ok {
		var d any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&d); err != nil {
			return DigestBytes(raw)
		}
		v = d
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", 0
	}
	return DigestBytes(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// DigestBytes returns the hex SHA-256 and the length of b as they are, for
// Event.ScriptSHA256 and for arguments or results already held as bytes
// that should not be re-encoded.
func DigestBytes(b []byte) (sha256hex string, size int) {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), len(b)
}
