package middleware

import (
	"context"
	"fmt"
	"time"

	"github.com/codecall-go/codecall/meta"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/sandbox"
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
	// Confinement is what the workers apply to themselves, when plans run
	// in them.
	Confinement *sandbox.Confinement `json:"confinement,omitempty"`
	// Pool are the worker pool's counters, when plans run in workers.
	Pool *sandbox.Stats `json:"pool,omitempty"`
}

// poolKey is what a worker pool is built from: a change means a new pool.
type poolKey struct {
	sandbox presets.SandboxConfig
	memory  int64
	timeout time.Duration
}

func keyOf(cfg *presets.Config) poolKey {
	return poolKey{sandbox: cfg.Sandbox, memory: cfg.VM.MemoryBytes, timeout: cfg.VM.Timeout}
}

// runnerLocked returns the runner the config asks for, starting or
// replacing the worker pool as needed. Where process isolation cannot be
// had, locked_down is an error and the other presets fall back to running
// in process, loudly. Callers hold c.mu.
func (c *CodeCall) runnerLocked(cfg *presets.Config) (meta.Runner, error) {
	if cfg.VM.Isolation != presets.IsolationProcess {
		c.retirePoolLocked()
		c.fallback = ""
		return nil, nil
	}
	key := keyOf(cfg)
	if c.pool != nil && c.poolKey == key {
		return c.pool, nil
	}
	opts := []sandbox.Option{
		sandbox.WithSize(cfg.Sandbox.PoolSize), sandbox.WithMaxWorkers(cfg.Sandbox.MaxWorkers),
		sandbox.WithQueueTimeout(cfg.Sandbox.QueueTimeout), sandbox.WithLimits(cfg.VM), sandbox.WithLogger(c.log),
	}
	if cfg.Sandbox.Command != "" {
		opts = append(opts, sandbox.WithCommand(cfg.Sandbox.Command))
	}
	opts = append(opts, c.opts.sandbox...) // the Go options win
	pool, err := sandbox.New(context.Background(), opts...)
	if err != nil {
		if cfg.Preset == presets.LockedDown {
			return nil, fmt.Errorf("codecall: the locked_down preset runs every plan in a sandboxed worker process, and this host "+
				"cannot start one: %w; fix the cause, or set vm.isolation: inprocess to accept in-process execution", err)
		}
		if c.pool != nil {
			// A pool with the old settings still works: keep it rather
			// than drop to in-process execution.
			c.log.Warn("codecall: new sandbox pool settings not applied; keeping the running pool", "error", err)
			return c.pool, nil
		}
		c.fallback = err.Error()
		c.log.Warn("codecall: WARNING: PLANS RUN IN THE SERVER'S OWN PROCESS. vm.isolation is process, but sandboxed "+
			"worker processes cannot be started here, so the "+string(cfg.Preset)+" preset falls back to in-process "+
			"execution, where goja is the only wall. Fix the cause to get process isolation, or set vm.isolation: "+
			"inprocess to accept this and silence the warning.", "error", err)
		return nil, nil
	}
	c.retirePoolLocked()
	c.pool, c.poolKey, c.fallback = pool, key, ""
	return pool, nil
}

// retirePoolLocked closes the current pool once its running plans end.
func (c *CodeCall) retirePoolLocked() {
	if c.pool == nil {
		return
	}
	old := c.pool
	c.pool = nil
	addCounters(&c.poolBase, old.Stats())
	c.poolWG.Add(1)
	go func() {
		defer c.poolWG.Done()
		_ = old.Close()
	}()
}

// Isolation reports where plans run now, and why.
func (c *CodeCall) Isolation() Isolation {
	c.mu.Lock()
	defer c.mu.Unlock()
	iso := Isolation{Requested: c.cfg.VM.Isolation, Effective: presets.IsolationInProcess, Fallback: c.fallback}
	if c.pool != nil && c.cfg.VM.Isolation == presets.IsolationProcess {
		conf := c.pool.Confinement()
		st := c.pool.Stats()
		iso.Effective, iso.Confinement, iso.Pool = presets.IsolationProcess, &conf, &st
	}
	return iso
}
