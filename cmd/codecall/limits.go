package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// Request-size limits of the served transports (transport.maxRequestBytes).
// mcp-go reads a stdio message with bufio.Reader.ReadString and an HTTP body
// with io.ReadAll, so either holds a request of any size whole; the limits
// sit in front of them.

// codeInvalidRequest is JSON-RPC's "Invalid Request": the message was not
// read, so there is no id to answer with.
const codeInvalidRequest = -32600

// tooLargeMessage is the text of both refusals; it names the limit and the
// key that sets it.
func tooLargeMessage(what string, limit int64) string {
	return fmt.Sprintf("request too large: %s is longer than %d bytes, the limit set by transport.maxRequestBytes; it was not read", what, limit)
}

// tooLargeResponse is a JSON-RPC error response, one line, for a request
// that was refused unread: its id is null, since it was never read.
func tooLargeResponse(what string, limit int64) []byte {
	type data struct {
		MaxRequestBytes int64 `json:"maxRequestBytes"`
	}
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    data   `json:"data"`
	}
	b, _ := json.Marshal(struct {
		JSONRPC string   `json:"jsonrpc"`
		ID      any      `json:"id"`
		Error   rpcError `json:"error"`
	}{"2.0", nil, rpcError{codeInvalidRequest, tooLargeMessage(what, limit), data{limit}}})
	return append(b, '\n')
}

// lineLimiter stands between stdin and mcp-go's stdio server. It hands on
// complete lines of at most max bytes (the newline aside), and a last
// line without a newline at end of input. A longer line is dropped as it
// arrives, never held whole: tooLong is called once for it, and reading
// goes on with the next line. Read is called from one goroutine at a time
// (mcp-go's reader); tooLong runs on it.
type lineLimiter struct {
	src     *bufio.Reader
	max     int
	tooLong func()

	line     []byte // the current line, while it is within max
	out      []byte // a complete line not yet handed on
	skipping bool   // inside a line that was too long, until its newline
	err      error  // the source's error, returned once out is empty
}

// lineChunk is how much of a line the limiter reads at once.
const lineChunk = 64 << 10

func newLineLimiter(src io.Reader, max int64, tooLong func()) *lineLimiter {
	return &lineLimiter{src: bufio.NewReaderSize(src, lineChunk), max: int(max), tooLong: tooLong}
}

func (l *lineLimiter) Read(p []byte) (int, error) {
	for len(l.out) == 0 {
		if l.err != nil {
			return 0, l.err
		}
		l.fill()
	}
	n := copy(p, l.out)
	l.out = l.out[n:]
	return n, nil
}

// fill reads one chunk: up to a newline, or as much as the buffer holds.
// It is called only when out is empty, so line may reuse out's memory.
func (l *lineLimiter) fill() {
	chunk, err := l.src.ReadSlice('\n')
	complete := len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
	switch {
	case l.skipping:
		l.skipping = !complete
	case len(l.line)+len(chunk)-boolInt(complete) > l.max:
		l.line = l.line[:0]
		l.skipping = !complete
		l.tooLong()
	default:
		l.line = append(l.line, chunk...)
		if complete {
			l.out, l.line = l.line, l.line[:0]
		}
	}
	switch {
	case err == nil, errors.Is(err, bufio.ErrBufferFull):
	default:
		if len(l.line) > 0 {
			l.out, l.line = l.line, nil
		}
		l.err = err
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// lockedWriter makes each Write whole with respect to the others. mcp-go
// writes every message with one Write under its own lock; the limiter's
// refusals come from another goroutine and take this lock too, so lines
// never interleave on stdout.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// limitBody refuses a request body longer than max with 413 and a JSON-RPC
// error naming the limit. It reads at most max+1 bytes of a body: one whose
// Content-Length is too large is refused unread, and a chunked one is cut
// off there (net/http then closes the connection rather than drain it).
// A body within the limit is handed on in memory.
func limitBody(next http.Handler, max int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			refuseBody(w, max)
			return
		}
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		body := http.MaxBytesReader(w, r.Body, max)
		var buf bytes.Buffer
		if r.ContentLength > 0 {
			buf.Grow(int(r.ContentLength))
		}
		if _, err := buf.ReadFrom(body); err != nil {
			if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) {
				refuseBody(w, max)
				return
			}
			http.Error(w, "codecall: reading the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(&buf)
		r.ContentLength = int64(buf.Len())
		next.ServeHTTP(w, r)
	})
}

func refuseBody(w http.ResponseWriter, max int64) {
	body := tooLargeResponse("the request body", max)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	_, _ = w.Write(body)
}
