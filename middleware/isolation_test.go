package middleware_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/sandbox"
)

// noWorkers makes worker processes impossible, as on a host that refuses
// namespaces: the worker command does not exist.
var noWorkers = middleware.WithSandboxOptions(sandbox.WithCommand("/nonexistent/codecall-worker"))

func presetConfig(name presets.Name) presets.Config {
	cfg := presets.Default()
	cfg.Preset = name
	cfg.VM, _ = presets.LimitsFor(name)
	return cfg
}

// syncBuffer is a log sink safe for the pool's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLockedDownRefusesToStartWithoutWorkers(t *testing.T) {
	srv := planServer(t, nil)
	_, err := middleware.Wrap(srv, middleware.WithConfig(presetConfig(presets.LockedDown)), noWorkers)
	if err == nil {
		t.Fatal("Wrap started locked_down without worker processes")
	}
	for _, want := range []string{"locked_down", "sandboxed worker process", "vm.isolation: inprocess"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestSecureFallsBackLoudly(t *testing.T) {
	srv := planServer(t, nil)
	var logs syncBuffer
	cc := wrap(t, srv, middleware.WithConfig(presetConfig(presets.Secure)), noWorkers,
		middleware.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "PLANS RUN IN THE SERVER'S OWN PROCESS") {
		t.Errorf("no loud warning at start-up; logs:\n%s", logs.String())
	}
	iso := cc.Isolation()
	if iso.Requested != presets.IsolationProcess || iso.Effective != presets.IsolationInProcess || iso.Fallback == "" {
		t.Errorf("Isolation() = %+v, want requested process, effective inprocess, with the reason", iso)
	}
	s := connect(t, srv)
	out, isErr := s.execute(map[string]any{"script": `return 1+1`})
	if isErr || out["status"] != "ok" {
		t.Errorf("the fallback must still run plans: %v", out)
	}
}

func TestInProcessNeedsNoWorkers(t *testing.T) {
	srv := planServer(t, nil)
	cfg := presetConfig(presets.LockedDown)
	cfg.VM.Isolation = presets.IsolationInProcess
	cc := wrap(t, srv, middleware.WithConfig(cfg), noWorkers)
	if iso := cc.Isolation(); iso.Effective != presets.IsolationInProcess || iso.Fallback != "" {
		t.Errorf("Isolation() = %+v", iso)
	}
}

// wrapIsolated wraps srv under a preset with process isolation, skipping
// where this host cannot start workers.
func wrapIsolated(t *testing.T, name presets.Name, mut func(*presets.Config)) *middleware.CodeCall {
	t.Helper()
	cfg := presetConfig(name)
	if mut != nil {
		mut(&cfg)
	}
	srv := planServer(t, nil)
	cc, err := middleware.Wrap(srv, middleware.WithConfig(cfg), middleware.WithLogger(slog.New(slog.NewTextHandler(discard{}, nil))))
	if err != nil {
		if strings.Contains(err.Error(), "cannot start one") {
			t.Skipf("worker processes are not available here: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
