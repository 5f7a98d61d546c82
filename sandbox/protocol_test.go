package sandbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
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
