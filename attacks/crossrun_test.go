package attacks

import (
	"encoding/json"
	"testing"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
)

// crossRunPollution changes everything a plan can change in its runtime
// that a later plan would meet: the prototypes and built-ins, a timer due
// after the run, a promise that never settles, a call it never awaits. It
// returns the changes that took (the sandbox refuses some).
const crossRunPollution = `
const done = [];
const change = (name, f) => { try { f(); done.push(name); } catch (e) {} };
const P = Object.getPrototypeOf;
change('Array.prototype', () => { P([]).polluted = 1; P([]).map = () => 'hijacked'; });
change('Object.prototype getter', () => { Object.defineProperty(P({}), 'polluted', {get() { return 'getter'; }, configurable: true}); });
change('String.prototype', () => { P('').trim = () => 'hijacked'; });
change('Function.prototype', () => { P(() => 0).call = () => 'hijacked'; });
change('Error.prototype', () => { P(new Error('x')).toString = () => 'hijacked'; });
change('Symbol.iterator', () => { P([])[Symbol.iterator] = function* () { yield 'hijacked'; }; });
change('JSON', () => { JSON.parse = () => 'hijacked'; });
change('Math', () => { Math.random = () => 0.5; Math.max = () => 'hijacked'; });
change('Date', () => { Date.now = () => 0; });
change('timer', () => { setTimeout(() => { P({}).late = 1; }, 20); });
change('pending promise', () => { new Promise(() => {}); });
change('unawaited call', () => { callTool('test.sleep', {ms: 60000}); });
change('Promise.prototype', () => { P(Promise.resolve()).then = function () { return 'hijacked'; }; });
return done.length;`

// crossRunCheck is what a later plan of the same session sees.
const crossRunCheck = `
const plain = {};
return {
	arr: [1, 2].map(x => x * 2), polluted: [plain.polluted, [].polluted, plain.late],
	trim: ' x '.trim(), call: ((a) => a).call(null, 'ok'), then: await Promise.resolve('ok'),
	err: String(new Error('e')), iter: [...[1, 2]], json: JSON.parse('{"a":1}').a, max: Math.max(1, 2), now: Date.now() > 0,
};`

const crossRunWant = `{"arr":[2,4],"polluted":[null,null,null],"trim":"x","call":"ok","then":"ok","err":"Error: e","iter":[1,2],"json":1,"max":2,"now":true}`

// TestNothingCrossesRuns attacks the wall between two runs of one MCP
// session, in both isolation modes: in a worker process, the second run
// runs in the worker the first ran in (sandbox.reuseRuns), and must meet
// none of what the first left behind.
func TestNothingCrossesRuns(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			cfg := presets.Default()
			cfg.Preset = presets.Balanced
			cfg.VM, _ = presets.LimitsFor(presets.Balanced)
			cfg.VM.Isolation = mode
			cfg.VM.Timeout = defaultTimeout
			cfg.Sandbox.Command = workerCommand
			h := newHost(t, cfg)
			h.c = mcptest.Connect(t, h.srv) // the legacy protocol: a session
			first := h.execute(t, map[string]any{"script": crossRunPollution})
			if first.Status != "ok" {
				t.Fatalf("the polluting plan: %s", clip(first.raw))
			}
			var changed int
			if err := json.Unmarshal(first.Result, &changed); err != nil || changed < 10 {
				t.Fatalf("the polluting plan made %s changes; the test needs most of them to prove anything", first.Result)
			}
			var reusedBefore int64
			if p := h.cc.Isolation().Pool; p != nil {
				reusedBefore = p.Reused
			}
			second := h.execute(t, map[string]any{"script": crossRunCheck})
			if second.Status != "ok" || string(second.Result) != crossRunWant {
				t.Fatalf("the next plan saw %s (%s), want %s", second.Result, second.Status, crossRunWant)
			}
			if p := h.cc.Isolation().Pool; mode == presets.IsolationProcess && (p == nil || p.Reused != reusedBefore+1) {
				t.Errorf("the next plan did not run in the first plan's worker: %+v", p)
			}
		})
	}
}
