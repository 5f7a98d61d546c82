package middleware_test

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/state"
)

// TestSandboxMetrics checks the worker pool's OpenTelemetry metrics after
// a plan ran in a worker.
func TestSandboxMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	s := newApprovalShopWith(t, func(cfg *presets.Config) { cfg.VM.Isolation = presets.IsolationProcess },
		middleware.WithMeterProvider(mp))
	if iso := s.cc.Isolation(); iso.Effective != presets.IsolationProcess {
		t.Skipf("plans run in process here: %s", iso.Fallback)
	}
	c := mcptest.Connect(t, s.srv)
	if code := mcptest.CallVia(t, c, "execute", "shop.list_orders", nil); code != "" {
		t.Fatalf("plan failed: %s", code)
	}
	got := collectMetrics(t, reader)
	for name, min := range map[string]float64{
		"codecall.sandbox.runs": 1, "codecall.sandbox.spawns": 1, "codecall.sandbox.spawn.duration": 1e-9,
		"codecall.sandbox.workers.live": 1,
	} {
		if got[name] < min {
			t.Errorf("%s = %v, want at least %v (all: %v)", name, got[name], min, got)
		}
	}
	for _, name := range []string{"codecall.sandbox.workers.warm", "codecall.sandbox.workers.running", "codecall.sandbox.queue.waiting",
		"codecall.sandbox.queue.sessions", "codecall.sandbox.queue.longest", "codecall.sandbox.queue.wait", "codecall.sandbox.queue.timeouts",
		"codecall.sandbox.workers.parked", "codecall.sandbox.runs.reused"} {
		if _, ok := got[name]; !ok {
			t.Errorf("metric %s not reported (all: %v)", name, got)
		}
	}
}

// collectMetrics reads every metric of reader, the data points of each
// summed.
func collectMetrics(t *testing.T, reader *sdkmetric.ManualReader) map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					got[m.Name] += float64(p.Value)
				}
			case metricdata.Sum[float64]:
				for _, p := range d.DataPoints {
					got[m.Name] += p.Value
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					got[m.Name] += float64(p.Value)
				}
			}
		}
	}
	return got
}

// TestDurableMetrics checks the state store's metrics after a plan paused
// on one replica and was resumed on another.
func TestDurableMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	store := state.NewMemory()
	script := `await callTool('shop.list_orders', {}); await callTool('shop.delete_order', {id: 'o1'}); return 1`
	a := newApprovalShopWith(t, func(cfg *presets.Config) { cfg.VM.Isolation = presets.IsolationInProcess },
		middleware.WithStateStore(store, testStateKey), middleware.WithMeterProvider(mp))
	b := newApprovalShopWith(t, func(cfg *presets.Config) { cfg.VM.Isolation = presets.IsolationInProcess },
		middleware.WithStateStore(store, testStateKey), middleware.WithMeterProvider(mp))
	// A plan that needs no approval never reaches the store.
	if res := rawModernCall(t, a, "codecall.execute", map[string]any{"script": "return (await callTool('shop.list_orders', {})).ok"}, "", ""); res.IsError {
		t.Fatalf("plain plan: %+v", res)
	}
	if ops := collectMetrics(t, reader)["codecall.state.ops"]; ops != 0 {
		t.Fatalf("a plan without approval made %v round trips to the store", ops)
	}
	first := rawModernCall(t, a, "codecall.execute", map[string]any{"script": script}, "", "")
	if res := rawModernCall(t, b, "codecall.execute", map[string]any{"script": script}, mustPause(t, first), "approve"); res.IsError {
		t.Fatalf("resume: %+v", res)
	}
	got := collectMetrics(t, reader)
	for name, want := range map[string]float64{
		"codecall.durable.pauses": 1, "codecall.durable.resumes": 1, "codecall.durable.replayed_calls": 1,
		// pause: the sweep's record and the plan; resume: lease, load,
		// answer; the write-ahead before and after the call (the lease
		// is checked locally while it surely runs); at the end the
		// deletes of the plan, its record and the lease.
		"codecall.state.ops":           10,
		"codecall.durable.divergences": 0, "codecall.state.errors": 0,
	} {
		if v, ok := got[name]; !ok || v != want {
			t.Errorf("%s = %v (reported %v), want %v", name, v, ok, want)
		}
	}
	if got["codecall.state.duration"] <= 0 {
		t.Errorf("store round trips took %vs", got["codecall.state.duration"])
	}
}

// TestOutOfBandQueueMetrics checks that the shared out-of-band queue's
// round trips count in the state store's metrics like the journal's.
func TestOutOfBandQueueMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	s := newApprovalShopWith(t, func(cfg *presets.Config) { cfg.VM.Isolation = presets.IsolationInProcess },
		middleware.WithStateStore(state.NewMemory(), testStateKey), middleware.WithOutOfBandApprovals(),
		middleware.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	before := collectMetrics(t, reader)["codecall.state.ops"]
	if _, err := s.cc.OutOfBand().Pending(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := collectMetrics(t, reader)["codecall.state.ops"]; got != before+1 {
		t.Errorf("listing the shared queue: codecall.state.ops went from %v to %v, want one round trip more", before, got)
	}
}
