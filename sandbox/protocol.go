package sandbox

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
	"github.com/codecall-go/codecall/vm"
)

// The bridge between the server and a worker is a stream of frames, each a
// 4-byte big-endian length followed by one JSON message. Only plain values
// cross: strings, numbers, JSON documents. Both sides refuse a frame over
// the limit before reading it, so neither can make the other allocate
// without bound.

// Frame limits. Tool results and inputs travel in frames, so the limit is
// well above any result the runtime accepts; it exists to bound memory, not
// to shape results.
const (
	maxFrameToWorker   = 64 << 20
	maxFrameFromWorker = 64 << 20
)

// Message types.
const (
	msgReady    = "ready"    // worker → server: sandboxed, waiting for its run
	msgRun      = "run"      // server → worker: the one run of this worker
	msgCall     = "call"     // worker → server: callTool
	msgGet      = "get"      // worker → server: getTool
	msgDiscover = "discover" // worker → server: searchTools or describeTools (Name is the operation)
	msgCancel   = "cancel"   // worker → server: a callTool's context ended
	msgLog      = "log"      // worker → server: mcpLog
	msgNotify   = "notify"   // worker → server: mcpNotify
	msgReply    = "reply"    // server → worker: the answer to call or get
	msgResult   = "result"   // worker → server: the run's result; the worker exits after it
	msgSuspend  = "suspend"  // server → worker: a call waits for a person; stop the plan's clock
	msgResume   = "resume"   // server → worker: the person answered; restart the plan's clock
	msgStop     = "stop"     // server → worker: the request ended (Code: why); stop the plan and send the result so far
)

// message is every frame's body; which fields are set depends on T.
type message struct {
	T  string `json:"t"`
	ID uint64 `json:"id,omitempty"`

	// run
	Run *runRequest `json:"run,omitempty"`

	// call, get, discover, log, notify
	Name string `json:"name,omitempty"` // tool name, discovery operation, log level or event name
	// Index is a call's or discovery's index in a run under vm.Replay
	// (vm.CallIndex); the server's journal checks it.
	Index   *int            `json:"index,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"`
	Message string          `json:"message,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`

	// reply (to call, get and discover)
	Value  json.RawMessage `json:"value,omitempty"`
	OK     bool            `json:"ok,omitempty"`
	Code   string          `json:"code,omitempty"`
	Error  string          `json:"error,omitempty"`
	Reason string          `json:"reason,omitempty"` // a policy's reason for a denial
	Hint   string          `json:"hint,omitempty"`   // what to do next
	Retry  bool            `json:"retry,omitempty"`  // the call may succeed if made again
	// Mismatch locates a validation failure (toolerr.Error.Mismatch).
	Mismatch *toolerr.Mismatch `json:"mismatch,omitempty"`

	// result
	Result *vm.Result `json:"result,omitempty"`

	// ready
	Confinement *Confinement `json:"confinement,omitempty"`
}

// runRequest is what a worker needs to run one plan. The worker validates
// Script against Rules again: it trusts nothing it did not check itself.
type runRequest struct {
	Script  string          `json:"script"`
	Rules   ast.Rules       `json:"rules"`
	Options runOptions      `json:"options"`
	Context json.RawMessage `json:"context,omitempty"`
}

// runOptions are vm.Options without the context, which travels apart.
type runOptions struct {
	RunID  string         `json:"runId"`
	Limits presets.Limits `json:"limits"`
	// CodeMode makes the run a Code Mode run (vm.Options.CodeMode).
	CodeMode *vm.CodeMode `json:"codeMode,omitempty"`
	// Replay makes the run repeatable (vm.Options.Replay).
	Replay *vm.Replay `json:"replay,omitempty"`
}

// writeFrame writes one message as a frame. JSON documents (results, tool
// values, log data) cross byte for byte: no HTML escaping, which would
// grow a document the runtime measured against its budget up to sixfold,
// and the server checks those budgets on what it receives.
func writeFrame(w io.Writer, m *message) error {
	var buf bytes.Buffer
	buf.Write([]byte{0, 0, 0, 0})
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return fmt.Errorf("sandbox: encoding a %s message: %w", m.T, err)
	}
	b := buf.Bytes()
	b = b[:len(b)-1] // Encode's newline
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("sandbox: writing a %s message: %w", m.T, err)
	}
	return nil
}

// errFrameTooLarge is returned for a frame over the reader's limit.
type errFrameTooLarge struct{ size, limit int }

func (e errFrameTooLarge) Error() string {
	return fmt.Sprintf("sandbox: a frame of %d bytes is over the limit of %d", e.size, e.limit)
}

// readFrame reads one frame of at most limit bytes.
func readFrame(r io.Reader, limit int) (*message, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(hdr[:]))
	if n > limit {
		return nil, errFrameTooLarge{n, limit}
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("sandbox: truncated frame: %w", err)
	}
	m := new(message)
	if err := json.Unmarshal(buf, m); err != nil {
		return nil, fmt.Errorf("sandbox: malformed frame: %w", err)
	}
	return m, nil
}
