package middleware_test

import (
	"testing"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
)

// TestWorkerReuseThroughExecute runs plans in worker processes from two
// real MCP sessions: a's second plan runs in the worker a's first plan
// ran in and finds nothing the first left in its runtime; b's plan never
// gets a's worker, and finds nothing either.
func TestWorkerReuseThroughExecute(t *testing.T) {
	srv := planServer(t, nil)
	cc := wrapInWorkers(t, srv, presetConfig(presets.Secure))
	a, b := mcptest.Connect(t, srv), mcptest.Connect(t, srv)
	const pollute = `
		const done = [];
		const change = (name, f) => { try { f(); done.push(name); } catch (e) {} };
		change('array', () => { Object.getPrototypeOf([]).seen = 'a'; });
		change('object', () => { Object.getPrototypeOf({}).seen = 'a'; });
		change('math', () => { Math.max = () => 'a'; });
		return done;`
	const look = `return [[].seen, ({}).seen, Math.max(1, 2)];`
	first := executeVia(t, a, pollute)
	if first["status"] != "ok" {
		t.Fatalf("a's first plan: %v", first)
	}
	if done, _ := first["result"].([]any); len(done) == 0 {
		t.Fatalf("a's first plan changed nothing: the test would prove nothing (%v)", first)
	}
	before := cc.Isolation().Pool.Reused
	for _, c := range []struct {
		who    string
		out    map[string]any
		reused int64
	}{{"a", executeVia(t, a, look), 1}, {"b", executeVia(t, b, look), 0}} {
		if c.out["status"] != "ok" {
			t.Fatalf("%s's plan: %v", c.who, c.out)
		}
		if got, _ := c.out["result"].([]any); len(got) != 3 || got[0] != nil || got[1] != nil || got[2] != float64(2) {
			t.Errorf("%s's plan saw %v, want [null null 2]", c.who, c.out["result"])
		}
		if got := cc.Isolation().Pool.Reused - before; got != c.reused {
			t.Errorf("after %s's plan, %d runs reused a worker, want %d", c.who, got, c.reused)
		}
		before += c.reused
	}
}
