package vm

import (
	"bytes"
	"strings"
)

// goja words a few of its TypeErrors with the Go value they concern
// ("Could not convert &{Object 0xc000… map[…]} (*goja.baseObject) to
// primitive"), and a plan can read such a message, log it or return it.
// What a client receives must never hold Go values, so every text a Result
// carries is scrubbed of them: each Go pointer dump becomes "[object]".

// goDumpMarker starts a Go pointer-to-struct dump.
const goDumpMarker = "&{"

// scrubGoValues replaces every Go value dump in s, and the Go type that may
// follow it in parentheses, by "[object]". A dump ends at its matching
// closing brace, or at a double quote or the end of s, so that a dump
// inside a JSON string never takes the rest of the document with it.
func scrubGoValues(s string) string {
	if !strings.Contains(s, goDumpMarker) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, goDumpMarker)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString("[object]")
		s = s[i+len(goDumpMarker):]
		depth := 1
		j := 0
		for ; j < len(s) && depth > 0; j++ {
			switch s[j] {
			case '{':
				depth++
			case '}':
				depth--
			case '"':
				depth = -1
			}
		}
		if depth < 0 {
			j-- // keep the quote
		}
		s = s[j:]
		// The value's Go type, as in " (*goja.baseObject)".
		if k := strings.IndexByte(s, ')'); strings.HasPrefix(s, " (*") && k > 3 && !strings.ContainsAny(s[3:k], "\" ") {
			s = s[k+1:]
		}
	}
}

// scrubResult removes Go value dumps from everything r tells a client.
func scrubResult(r *Result) {
	if bytes.Contains(r.Result, []byte(goDumpMarker)) {
		r.Result = []byte(scrubGoValues(string(r.Result)))
	}
	for i := range r.Logs {
		r.Logs[i].Message = scrubGoValues(r.Logs[i].Message)
	}
	for i := range r.Warnings {
		r.Warnings[i].Message = scrubGoValues(r.Warnings[i].Message)
	}
	if e := r.Error; e != nil {
		e.Message, e.Reason = scrubGoValues(e.Message), scrubGoValues(e.Reason)
	}
}
