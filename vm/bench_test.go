package vm

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/codecall-go/codecall/presets"
)

// noopHost answers every call at once.
type noopHost struct{}

func (noopHost) CallTool(context.Context, string, map[string]any) (json.RawMessage, error) {
	return json.RawMessage(`{"ok":true}`), nil
}
func (noopHost) GetTool(string) (json.RawMessage, bool) { return nil, false }
func (noopHost) Discover(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage("[]"), nil
}
func (noopHost) Log(context.Context, string, string, json.RawMessage) {}
func (noopHost) Notify(context.Context, string, json.RawMessage)      {}

// benchRun runs script with a runtime built in the run (fresh) and with
// one built ahead by Runtimes (prepared). The prepared case waits, with
// the timer stopped, until a runtime is ready, so it measures what a
// request pays when the server had a moment between requests, whatever
// else loads the machine.
func benchRun(b *testing.B, script string) {
	plan := compile(b, script)
	for _, prepared := range []bool{false, true} {
		name := "fresh"
		if prepared {
			name = "prepared"
		}
		b.Run(name, func(b *testing.B) {
			opts := Options{RunID: "bench", Limits: limits(b, presets.Secure), Context: json.RawMessage(`{"user":"ada"}`)}
			if prepared {
				opts.Runtimes = NewRuntimes(0)
				defer opts.Runtimes.Close()
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if prepared {
					b.StopTimer()
					opts.Runtimes.waitReady(b)
					b.StartTimer()
				}
				if res := Run(context.Background(), plan, noopHost{}, opts); res.Status != StatusOK {
					b.Fatal(describe(res))
				}
			}
		})
	}
}

// BenchmarkRunTrivial is a whole run of `return 1`: runtime, hardening,
// bridge, watchdog, export.
func BenchmarkRunTrivial(b *testing.B) { benchRun(b, `return 1`) }

func BenchmarkRunTenSequentialCalls(b *testing.B) {
	benchRun(b, `const out = []; for (let i = 0; i < 10; i++) out.push(await callTool('t', {i})); return out.length`)
}

func BenchmarkRunTenParallelCalls(b *testing.B) {
	benchRun(b, `const r = await Promise.all(Array.from({length: 10}, (_, i) => callTool('t', {i}))); return r.length`)
}

// BenchmarkNewRuntime is runtime creation and hardening alone.
func BenchmarkNewRuntime(b *testing.B) {
	opts := Options{Limits: limits(b, presets.Secure), Context: json.RawMessage(`{"user":"ada"}`)}
	b.ReportAllocs()
	for b.Loop() {
		r := newRun(context.Background(), nil, noopHost{}, opts)
		r.setup()
		r.cancel()
	}
}
