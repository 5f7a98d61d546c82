package middleware

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/presets"
)

// reloader owns what changes while the server runs without a rebuild of
// CodeCall: the policy in force (swapped in place in a holder every gate
// shares), the watcher of its files, and the watcher of the config file,
// whose new configs it hands to apply.
type reloader struct {
	policies    *policy.Policies // shared by every generation's gate
	log         *slog.Logger
	configFile  string
	watchConfig bool // watch configFile
	watchPolicy bool // watch the files of the policy in force
	// apply puts a new config in force (approvals, catalog); the policy
	// it names is already loaded.
	apply func(presets.Config) error

	// mu guards the fields below and is held through a whole reload, so
	// that close waits for one in progress and reloads never interleave.
	mu              sync.Mutex
	ctx             context.Context      // the watchers' context; nil until start
	policy          presets.PolicyConfig // paths and query of the policy in force
	stopPolicyWatch context.CancelFunc
	closed          bool
}

// newReloader loads the policy cfg names, so that Wrap fails on a policy
// that does not load. Nothing is watched until start.
func newReloader(cfg presets.Config, configFile string, watchConfig, watchPolicy bool, log *slog.Logger, apply func(presets.Config) error) (*reloader, error) {
	rl := &reloader{policies: policy.NewPolicies(nil), log: log, apply: apply,
		configFile: configFile, watchConfig: watchConfig, watchPolicy: watchPolicy}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if err := rl.loadPolicyLocked(context.Background(), cfg.Policy); err != nil {
		return nil, err
	}
	return rl, nil
}

// start watches the policy files and the config file, as the options
// asked, until ctx ends. initial is the config already in force, so the
// config watcher reloads only on a change.
func (rl *reloader) start(ctx context.Context, initial presets.Config) {
	rl.mu.Lock()
	rl.ctx = ctx
	rl.watchPolicyLocked()
	rl.mu.Unlock()
	if !rl.watchConfig {
		return
	}
	go func() {
		err := presets.Watch(ctx, rl.configFile, rl.applyConfig, rl.log, presets.WithInitial(initial))
		if err != nil && ctx.Err() == nil {
			rl.log.Warn("codecall: config reload is off", "file", rl.configFile, "error", err)
		}
	}()
}

// close stops the policy watcher and refuses later reloads; the config
// watcher ends with the context given to start.
func (rl *reloader) close() {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	rl.closed = true
	rl.stopPolicyWatchLocked()
}

// applyConfig puts a config read from the file in force. A config whose
// policy does not load is refused whole, so the config and the policy in
// force always belong together.
func (rl *reloader) applyConfig(cfg presets.Config) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.closed {
		return
	}
	if !samePolicy(cfg.Policy, rl.policy) {
		if err := rl.loadPolicyLocked(rl.ctx, cfg.Policy); err != nil {
			rl.log.Warn("codecall: reloaded config not applied: its policy does not load; the last good config and policy keep serving", "error", err)
			return
		}
	}
	rl.watchPolicyLocked()
	if err := rl.apply(cfg); err != nil {
		rl.log.Warn("codecall: reloaded config not applied", "error", err)
		return
	}
	rl.log.Info("codecall: config reloaded", "mode", cfg.Mode, "preset", cfg.Preset)
}

// loadPolicyLocked loads the Rego policy pc names and puts it in force;
// with no paths the built-in default policy applies.
func (rl *reloader) loadPolicyLocked(ctx context.Context, pc presets.PolicyConfig) error {
	var e *policy.Engine
	if len(pc.Paths) > 0 {
		var err error
		if e, err = policy.LoadEngine(ctx, pc.Paths, pc.Query); err != nil {
			return err
		}
		rl.log.Info("codecall: policy loaded", "files", len(e.Files()), "query", e.Query())
	}
	rl.policies.Swap(e)
	rl.policy = pc
	return nil
}

// watchPolicyLocked (re)starts the watcher of the policy files, when the
// policy in force names any, watching is on and start has run.
func (rl *reloader) watchPolicyLocked() {
	rl.stopPolicyWatchLocked()
	if len(rl.policy.Paths) == 0 || !rl.watchPolicy || rl.ctx == nil {
		return
	}
	ctx, cancel := context.WithCancel(rl.ctx)
	rl.stopPolicyWatch = cancel
	run, err := policy.WatchPolicies(ctx, rl.policy.Paths, rl.policy.Query, rl.policies, rl.log, nil)
	if err != nil {
		rl.log.Warn("codecall: policy reload is off", "error", err)
		cancel()
		return
	}
	go run()
}

// stopPolicyWatchLocked ends the policy watcher, if one runs, before a
// restart with other paths or on close.
func (rl *reloader) stopPolicyWatchLocked() {
	if rl.stopPolicyWatch != nil {
		rl.stopPolicyWatch()
		rl.stopPolicyWatch = nil
	}
}

// samePolicy reports whether two configs name the same policy, so a
// reload that leaves it alone does not recompile it.
func samePolicy(a, b presets.PolicyConfig) bool {
	return a.Query == b.Query && slices.Equal(a.Paths, b.Paths)
}
