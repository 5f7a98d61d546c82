package middleware_test

import (
	"testing"
	"time"

	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

// TestDiscoveryShowsWhatACallInvolves reads, through a real mcp-go client,
// what search and describe say of each tool before any call: whether this
// session would be asked to approve it (the built-in policy's verdict), its
// timeout from the tools: entries (the most specific winning), that it
// does not stream, and its side-effect hints as declared (search: the
// effect they imply; describe: the four hints).
func TestDiscoveryShowsWhatACallInvolves(t *testing.T) {
	srv := newShop(t)
	wrap(t, srv, middleware.WithConfig(config(func(c *presets.Config) {
		c.Tools = map[string]presets.ToolOverride{"crm.*": {Timeout: 45 * time.Second}, "crm.delete_contact": {Timeout: 5 * time.Second}}
	})))
	s := connect(t, srv)
	type want struct {
		approval bool
		timeout  any // float64 from JSON, or nil when left out
		readOnly bool
	}
	wants := map[string]want{
		"crm.find_contacts":      {false, float64(45000), true},
		"crm.delete_contact":     {true, float64(5000), false},
		"billing.refund_payment": {true, nil, false},
		"billing.list_invoices":  {false, nil, true},
	}
	check := func(where string, tool map[string]any) {
		t.Helper()
		name, _ := tool["name"].(string)
		w, ok := wants[name]
		if !ok {
			return
		}
		if tool["requiresApproval"] != w.approval {
			t.Errorf("%s %s: requiresApproval %v, want %v", where, name, tool["requiresApproval"], w.approval)
		}
		if tool["defaultTimeoutMs"] != w.timeout {
			t.Errorf("%s %s: defaultTimeoutMs %v, want %v", where, name, tool["defaultTimeoutMs"], w.timeout)
		}
		if v, present := tool["allowsStreaming"]; !present || v != false {
			t.Errorf("%s %s: allowsStreaming %v (present %v), want false", where, name, v, present)
		}
		if where == "search" {
			effect := map[bool]string{true: "read-only", false: "destructive"}[w.readOnly]
			if tool["effect"] != effect || tool["hints"] != nil {
				t.Errorf("search %s: effect %v, hints %v; want effect %s and the hints left to describe", name, tool["effect"], tool["hints"], effect)
			}
			return
		}
		h, _ := tool["hints"].(map[string]any)
		if h == nil || h["readOnly"] != w.readOnly || h["openWorld"] != false || h["destructive"] != !w.readOnly || h["idempotent"] != w.readOnly {
			t.Errorf("%s %s: hints %v, want readOnly %v, destructive %v, idempotent %v, openWorld false", where, name, h, w.readOnly, !w.readOnly, w.readOnly)
		}
	}
	seen := 0
	for _, q := range []string{"contacts", "payment invoices"} {
		out, isErr, err := s.call("codecall.search", map[string]any{"query": q, "topK": 50})
		if err != nil || isErr {
			t.Fatalf("search: %v %v", err, out)
		}
		for _, h := range out["tools"].([]any) {
			check("search", h.(map[string]any))
			seen++
		}
	}
	if seen < len(wants) {
		t.Fatalf("search found %d tools, want at least %d", seen, len(wants))
	}
	out, isErr, err := s.call("codecall.describe", map[string]any{"tools": []string{"crm.find_contacts", "crm.delete_contact", "billing.refund_payment", "billing.list_invoices"}})
	if err != nil || isErr {
		t.Fatalf("describe: %v %v", err, out)
	}
	for _, d := range out["tools"].([]any) {
		check("describe", d.(map[string]any))
	}
}
