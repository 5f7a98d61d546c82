package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/state"
)

// stateCheckTimeout bounds how long check and serve wait for the store.
const stateCheckTimeout = 5 * time.Second

// openState opens the store state names and reads its journal key. The
// memory store needs no key (its entries die with the process), so it
// gets none here and the server draws one at random.
func openState(ctx context.Context, cfg presets.StateConfig) (state.Store, []byte, error) {
	var key []byte
	if cfg.KeyEnv != "" {
		k, err := state.KeyFromEnv(cfg.KeyEnv)
		if err != nil {
			return nil, nil, err
		}
		key = k
	}
	ctx, cancel := context.WithTimeout(ctx, stateCheckTimeout)
	defer cancel()
	s, err := state.Open(ctx, state.Spec{Store: cfg.Store, Path: cfg.Path, URL: cfg.URL})
	if err != nil {
		return nil, nil, err
	}
	return s, key, nil
}

// stateWhere names the store for people: the file's path, the server's
// address (never the URL, which may hold a password).
func stateWhere(cfg presets.StateConfig) string {
	switch cfg.Store {
	case presets.StateFile:
		return "file " + cfg.Path
	case presets.StateRedis:
		if u, err := url.Parse(cfg.URL); err == nil && u.Host != "" {
			return "redis at " + u.Host
		}
		return "redis"
	}
	return "memory (this process only: a restart forgets paused plans and session trust; replicas need sticky sessions)"
}

// stateLine says whether the store of cfg can be used: connected (and the
// key read) and how long one round trip took. A file store held by a
// running server is reported as such, not as broken.
func stateLine(cfg presets.StateConfig) (string, bool) {
	s, _, err := openState(context.Background(), cfg)
	if errors.Is(err, state.ErrLocked) {
		return fmt.Sprintf("%s: in use (another process, a running server most likely, holds its lock; not opened)", stateWhere(cfg)), true
	}
	if err != nil {
		return fmt.Sprintf("%s: UNAVAILABLE: %v", stateWhere(cfg), err), false
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), stateCheckTimeout)
	defer cancel()
	start := time.Now()
	if err := s.Ping(ctx); err != nil {
		return fmt.Sprintf("%s: UNAVAILABLE: %v", stateWhere(cfg), err), false
	}
	rtt := time.Since(start)
	if !cfg.Durable() {
		return stateWhere(cfg), true
	}
	return fmt.Sprintf("%s: ok (round trip %s; journals encrypted with the key in %s)", stateWhere(cfg), rtt.Round(10*time.Microsecond), cfg.KeyEnv), true
}
