package middleware_test

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
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
	for name, min := range map[string]float64{
		"codecall.sandbox.runs": 1, "codecall.sandbox.spawns": 1, "codecall.sandbox.spawn.duration": 1e-9,
		"codecall.sandbox.workers.live": 1,
	} {
		if got[name] < min {
			t.Errorf("%s = %v, want at least %v (all: %v)", name, got[name], min, got)
		}
	}
	for _, name := range []string{"codecall.sandbox.workers.warm", "codecall.sandbox.workers.running", "codecall.sandbox.queue.waiting",
		"codecall.sandbox.queue.sessions", "codecall.sandbox.queue.longest", "codecall.sandbox.queue.wait", "codecall.sandbox.queue.timeouts"} {
		if _, ok := got[name]; !ok {
			t.Errorf("metric %s not reported (all: %v)", name, got)
		}
	}
}
