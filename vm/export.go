package vm

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// export serialises the plan's return value inside the runtime, before the
// watchdog stops: toJSON methods, getters and proxies of the plan's run
// under the deadline, and nothing of the plan's runs after it. The encoder
// checks the stop flag as it goes, so an export that outlives the deadline
// ends the run with timeout. A result over the result budget becomes a
// truncated preview, with a warning; its size is measured up to
// measureFactor times the budget, past which encoding stops and the size
// is reported as a lower bound.
func (r *run) export(v goja.Value) {
	if r.stopping.Load() {
		return
	}
	e := r.newEncoder(encodeOptions{what: "the result", strict: true, keep: r.caps.resultBytes, measure: measureFactor * r.caps.resultBytes})
	var defined bool
	if err := r.try(func() { defined = e.encode(v) }); err != nil {
		r.outcome = r.classifyError(err)
		return
	}
	if r.stopping.Load() {
		return
	}
	switch {
	case !defined:
		r.outcome = &outcome{status: StatusOK, result: json.RawMessage("null")}
		if (v == nil || goja.IsUndefined(v)) && r.cm == nil {
			r.warn(WarningNoResult, "the plan returned undefined, so the result is null: end the plan with return and the value you need, e.g. return {total, items}")
		}
	case e.stopped:
		r.outcome = &outcome{status: StatusOK, result: truncatedResult(e.buf, e.total, true, r.caps.resultBytes)}
		r.warn(WarningResultTruncated, fmt.Sprintf("the result is at least %d bytes of JSON, more than this preset's maxResultBytes (%d); it was replaced by {truncated, preview, bytes, atLeast}", e.total, r.caps.resultBytes))
	case e.truncated:
		r.outcome = &outcome{status: StatusOK, result: truncatedResult(e.buf, e.total, false, r.caps.resultBytes)}
		r.warn(WarningResultTruncated, fmt.Sprintf("the result is %d bytes of JSON, more than this preset's maxResultBytes (%d); it was replaced by {truncated, preview, bytes}", e.total, r.caps.resultBytes))
	default:
		r.outcome = &outcome{status: StatusOK, result: json.RawMessage(e.buf)}
	}
}

// measureFactor is how many times the result budget an over-budget result
// is measured before its encoding stops.
const measureFactor = 2

// truncatedResult is the marker that stands for a result over the budget:
// {"truncated": true, "preview": <the first bytes of its JSON>, "bytes":
// <its size>}, itself within the budget; "atLeast": true says that
// encoding stopped at bytes, a lower bound of its size.
func truncatedResult(prefix []byte, total int64, atLeast bool, budget int64) json.RawMessage {
	type marker struct {
		Truncated bool   `json:"truncated"`
		Preview   string `json:"preview"`
		Bytes     int64  `json:"bytes"`
		AtLeast   bool   `json:"atLeast,omitempty"`
	}
	n := int64(len(prefix))
	for {
		preview := truncateUTF8(string(prefix[:min(n, int64(len(prefix)))]), int(n))
		if !utf8.ValidString(preview) {
			preview = string([]rune(preview))
		}
		b, err := json.Marshal(marker{Truncated: true, Preview: preview, Bytes: total, AtLeast: atLeast})
		if err == nil && (int64(len(b)) <= budget || n == 0) {
			return b
		}
		n = n * 3 / 4
		if n < 16 {
			n = 0
		}
	}
}
