package vm

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// export serialises the plan's return value inside the runtime, before the
// watchdog stops: toJSON methods, getters and proxies of the plan's run
// under the deadline, and nothing of the plan's runs after it. A result
// over the result budget becomes a truncated preview, with a warning.
func (r *run) export(v goja.Value) {
	if r.stopping.Load() {
		return
	}
	e := r.newEncoder(encodeOptions{what: "the result", strict: true, keep: r.caps.resultBytes})
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
		if v == nil || goja.IsUndefined(v) {
			r.warn(WarningNoResult, "the plan returned undefined, so the result is null: end the plan with return and the value you need, e.g. return {total, items}")
		}
	case e.truncated:
		r.outcome = &outcome{status: StatusOK, result: truncatedResult(e.buf, e.total, r.caps.resultBytes)}
		r.warn(WarningResultTruncated, fmt.Sprintf("the result is %d bytes of JSON, more than this preset's maxResultBytes (%d); it was replaced by {truncated, preview, bytes}", e.total, r.caps.resultBytes))
	default:
		r.outcome = &outcome{status: StatusOK, result: json.RawMessage(e.buf)}
	}
}

// truncatedResult is the marker that stands for a result over the budget:
// {"truncated": true, "preview": <the first bytes of its JSON>, "bytes":
// <its size>}, itself within the budget.
func truncatedResult(prefix []byte, total, budget int64) json.RawMessage {
	type marker struct {
		Truncated bool   `json:"truncated"`
		Preview   string `json:"preview"`
		Bytes     int64  `json:"bytes"`
	}
	n := int64(len(prefix))
	for {
		preview := truncateUTF8(string(prefix[:min(n, int64(len(prefix)))]), int(n))
		if !utf8.ValidString(preview) {
			preview = string([]rune(preview))
		}
		b, err := json.Marshal(marker{Truncated: true, Preview: preview, Bytes: total})
		if err == nil && (int64(len(b)) <= budget || n == 0) {
			return b
		}
		n = n * 3 / 4
		if n < 16 {
			n = 0
		}
	}
}
