package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/codecall-go/codecall/toolerr"
)

func frame(body string) []byte {
	b := make([]byte, 4+len(body))
	binary.BigEndian.PutUint32(b, uint32(len(body)))
	copy(b[4:], body)
	return b
}

func TestReadFrame(t *testing.T) {
	huge := make([]byte, 4)
	binary.BigEndian.PutUint32(huge, 1<<31)
	tests := []struct {
		name  string
		in    []byte
		limit int
		want  string // message type, or "" for an error
		err   func(error) bool
	}{
		{"ok", frame(`{"t":"ready"}`), 100, msgReady, nil},
		{"empty stream", nil, 100, "", func(err error) bool { return errors.Is(err, io.EOF) }},
		{"truncated header", []byte{0, 0}, 100, "", func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }},
		{"truncated body", frame(`{"t":"ready"}`)[:8], 100, "", func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }},
		{"over the limit", frame(`{"t":"ready"}`), 5, "", func(err error) bool { var e errFrameTooLarge; return errors.As(err, &e) }},
		{"length of 2 GiB refused before reading", huge, maxFrameFromWorker, "", func(err error) bool { var e errFrameTooLarge; return errors.As(err, &e) }},
		{"not JSON", frame(`{"t":`), 100, "", func(err error) bool { return err != nil && !errors.Is(err, io.EOF) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := readFrame(bytes.NewReader(tc.in), tc.limit)
			if tc.err != nil {
				if !tc.err(err) {
					t.Fatalf("error %v", err)
				}
				return
			}
			if err != nil || m.T != tc.want {
				t.Fatalf("got %+v, %v", m, err)
			}
		})
	}
}

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	in := &message{T: msgCall, ID: 7, Name: "a.b", Input: []byte(`{"x":[1,2]}`)}
	if err := writeFrame(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := readFrame(&buf, maxFrameToWorker)
	if err != nil || out.T != msgCall || out.ID != 7 || out.Name != "a.b" || string(out.Input) != `{"x":[1,2]}` {
		t.Fatalf("%+v %v", out, err)
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add(frame(`{"t":"result","result":{"status":"ok","result":1,"toolTrace":[],"metrics":{},"runId":"x"}}`))
	f.Add(frame(`{"t":"call","id":1,"name":"x","input":{}}`))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		for range 4 {
			if _, err := readFrame(r, 1<<16); err != nil {
				return
			}
		}
	})
}

// TestToolErrorsCrossWhole checks that a host error reaches the plan in
// the worker as it left the server: every field of a *toolerr.Error, the
// cancellation markers, and nothing of a plain Go error's text.
func TestToolErrorsCrossWhole(t *testing.T) {
	full := &toolerr.Error{Code: toolerr.AccessDenied, Tool: "crm.delete", Message: "policy denied crm.delete: no",
		Reason: "no deletes today", Hint: "ask an operator", Retryable: true}
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"tool error", full, full},
		{"wrapped tool error", fmt.Errorf("dispatch: %w", full), full},
		{"deadline", context.DeadlineExceeded, context.DeadlineExceeded},
		{"cancelled", context.Canceled, context.Canceled},
		{"go error", errors.New("open /etc/secret: permission denied"), errors.New("the tool call failed")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply := &message{T: msgReply, ID: 1}
			failReply(reply, tt.err)
			b, err := json.Marshal(reply)
			if err != nil {
				t.Fatal(err)
			}
			var got message
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			back := replyError("crm.delete", &got)
			if te := toolerr.As(tt.want); te != nil {
				if g := toolerr.As(back); g == nil || *g != *te {
					t.Fatalf("got %#v, want %#v", back, te)
				}
				return
			}
			if back.Error() != tt.want.Error() {
				t.Fatalf("got %q, want %q", back, tt.want)
			}
		})
	}
}
