package middleware

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/codecall-go/codecall/meta"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/sandbox"
	"github.com/codecall-go/codecall/vm"
)

// Isolation says where codecall.execute runs plans, as configured and as
// it is.
type Isolation struct {
	// Requested is the configuration's vm.isolation.
	Requested presets.Isolation `json:"requested"`
	// Effective is where plans run: process only when workers run them.
	Effective presets.Isolation `json:"effective"`
	// Fallback, when set, says why plans run in process although process
	// isolation was asked for.
	Fallback string `json:"fallback,omitempty"`
	// Confinement is what confines the workers, when plans run in them:
	// what they apply to themselves, and the cgroup each runs in.
	Confinement *sandbox.Confinement `json:"confinement,omitempty"`
	// Pool are the worker pool's counters, when plans run in workers.
	Pool *sandbox.Stats `json:"pool,omitempty"`
	// Python says whether Python plans run, when vm.languages lists
	// python.
	Python *PythonIsolation `json:"python,omitempty"`
}

// PythonIsolation says whether and where Python plans run.
type PythonIsolation struct {
	// Interpreter is the CPython the Python workers run, and Version its
	// version; empty when Python plans are off.
	Interpreter string `json:"interpreter,omitempty"`
	Version     string `json:"version,omitempty"`
	// Off says why Python plans are refused, when they are.
	Off string `json:"off,omitempty"`
	// Confinement and Pool are the Python workers' confinement and their
	// pool's counters.
	Confinement *sandbox.Confinement `json:"confinement,omitempty"`
	Pool        *sandbox.Stats       `json:"pool,omitempty"`
}

// poolKey is what a worker pool is built from: a change means a new pool.
type poolKey struct {
	sandbox presets.SandboxConfig
	memory  int64
	timeout time.Duration
}

// keyOf returns the key of the pool cfg asks for.
func keyOf(cfg *presets.Config) poolKey {
	return poolKey{sandbox: cfg.Sandbox, memory: cfg.VM.MemoryBytes, timeout: cfg.VM.Timeout}
}

// isolation owns the pool of sandboxed worker processes that runs plans
// when the config asks for process isolation, and the record of why plans
// run in process when it cannot be had. Rebuilds ask it for a runner;
// Isolation and the metrics read it. Its own lock keeps those reads from
// waiting on a catalog rebuild, except while a rebuild starts a pool.
type isolation struct {
	log  *slog.Logger
	opts []sandbox.Option // WithSandboxOptions, applied after the config's
	// inProcess runs plans in process, on runtimes hardened ahead of them.
	inProcess meta.InProcess

	mu        sync.Mutex // guards the fields below; held while a pool starts
	requested presets.Isolation
	pool      *sandbox.Pool
	key       poolKey
	fallback  string         // why plans run in process despite the config, or ""
	retired   sandbox.Stats  // counters of the pools a reload replaced
	closing   sync.WaitGroup // pools being closed

	pyPool *sandbox.Pool // runs Python plans (vm.languages lists python); nil: none
	pyKey  pythonKey
	pyOff  string // why Python plans cannot run, when they are listed
}

// newIsolation returns the owner of the worker pool, with no pool yet: the
// first rebuild asks for a runner and so starts one if the config wants it.
func newIsolation(log *slog.Logger, opts []sandbox.Option) *isolation {
	return &isolation{log: log, opts: opts, inProcess: meta.InProcess{Runtimes: vm.NewRuntimes(0)}}
}

// runner returns the runner the config asks for, starting or replacing the
// worker pool as needed. Where process isolation cannot be had,
// locked_down is an error and the other presets fall back to running in
// process, loudly.
func (iso *isolation) runner(cfg *presets.Config) (meta.Runner, error) {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	iso.requested = cfg.VM.Isolation
	if cfg.VM.Isolation != presets.IsolationProcess {
		iso.retireLocked()
		iso.fallback = ""
		return iso.inProcess, nil
	}
	key := keyOf(cfg)
	if iso.pool != nil && iso.key == key {
		return iso.pool, nil
	}
	pool, err := sandbox.New(context.Background(), iso.poolOptions(cfg)...)
	if err != nil {
		if cfg.Preset == presets.LockedDown {
			return nil, fmt.Errorf("codecall: the locked_down preset runs every plan in a sandboxed worker process, and this host "+
				"cannot start one: %w; fix the cause, or set vm.isolation: inprocess to accept in-process execution", err)
		}
		if iso.pool != nil {
			// A pool with the old settings still works: keep it rather
			// than drop to in-process execution.
			iso.log.Warn("codecall: new sandbox pool settings not applied; keeping the running pool", "error", err)
			return iso.pool, nil
		}
		iso.fallback = err.Error()
		iso.log.Warn("codecall: WARNING: PLANS RUN IN THE SERVER'S OWN PROCESS. vm.isolation is process, but sandboxed "+
			"worker processes cannot be started here, so the "+string(cfg.Preset)+" preset falls back to in-process "+
			"execution, where goja is the only wall. Fix the cause to get process isolation, or set vm.isolation: "+
			"inprocess to accept this and silence the warning.", "error", err)
		return iso.inProcess, nil
	}
	iso.retireLocked()
	iso.pool, iso.key, iso.fallback = pool, key, ""
	return pool, nil
}

// poolOptions are the options of a worker pool for cfg.
func (iso *isolation) poolOptions(cfg *presets.Config) []sandbox.Option {
	opts := []sandbox.Option{
		sandbox.WithSize(cfg.Sandbox.PoolSize), sandbox.WithMaxWorkers(cfg.Sandbox.MaxWorkers),
		sandbox.WithQueueTimeout(cfg.Sandbox.QueueTimeout), sandbox.WithLimits(cfg.VM), sandbox.WithLogger(iso.log),
		sandbox.WithMaxRunningPerSession(cfg.Sandbox.MaxRunningPerSession), sandbox.WithMaxQueuedPerSession(cfg.Sandbox.MaxQueuedPerSession),
		sandbox.WithCgroup(sandbox.CgroupMode(cfg.Sandbox.Cgroup)),
		sandbox.WithReuse(cfg.Sandbox.ReuseRuns, cfg.Sandbox.ReuseIdle),
	}
	if cfg.Sandbox.Command != "" {
		opts = append(opts, sandbox.WithCommand(cfg.Sandbox.Command))
	}
	return append(opts, iso.opts...) // the Go options win
}

// retireLocked closes the current pool once its running plans end, and
// keeps its counters so the metrics stay monotonic across reloads.
func (iso *isolation) retireLocked() {
	if iso.pool == nil {
		return
	}
	old := iso.pool
	iso.pool = nil
	addCounters(&iso.retired, old.Stats())
	iso.closing.Add(1)
	go func() {
		defer iso.closing.Done()
		_ = old.Close()
	}()
}

// close retires the pool and waits until every pool it ever retired has
// closed, so no worker process outlives Close.
func (iso *isolation) close() {
	iso.mu.Lock()
	iso.retireLocked()
	iso.retirePythonLocked()
	iso.mu.Unlock()
	iso.closing.Wait()
	_ = iso.inProcess.Runtimes.Close()
}

// report says where plans run now, and why.
func (iso *isolation) report() Isolation {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	r := Isolation{Requested: iso.requested, Effective: presets.IsolationInProcess, Fallback: iso.fallback}
	if iso.pool != nil && iso.requested == presets.IsolationProcess {
		conf := iso.pool.Confinement()
		st := iso.pool.Stats()
		r.Effective, r.Confinement, r.Pool = presets.IsolationProcess, &conf, &st
	}
	switch {
	case iso.pyPool != nil:
		conf, st, py := iso.pyPool.Confinement(), iso.pyPool.Stats(), iso.pyPool.Python()
		r.Python = &PythonIsolation{Interpreter: py.Executable, Version: py.Version, Confinement: &conf, Pool: &st}
	case iso.pyOff != "":
		r.Python = &PythonIsolation{Off: iso.pyOff}
	}
	return r
}

// Isolation reports where plans run now, and why.
func (c *CodeCall) Isolation() Isolation {
	return c.iso.report()
}
