package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/codecall-go/codecall/console"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/presets"
)

// consoleFlags are serve's flags for the operator console; each overrides
// its console.* config key when given.
type consoleFlags struct {
	enabled     bool
	tokenEnv    string
	allowRemote bool
}

func (f *consoleFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.enabled, "console", false, "with --http, serve the operator console under /console and let operators answer approvals out of band (console.enabled)")
	fs.StringVar(&f.tokenEnv, "console-token-env", "", "environment `variable` holding the console's bearer token (console.tokenEnv)")
	fs.BoolVar(&f.allowRemote, "console-allow-remote", false, "serve the console to non-loopback clients too (console.allowRemote); put TLS in front")
}

// consoleSetup is the console of one serve: its store, which must be an
// audit sink of CodeCall from the start, and its settings.
type consoleSetup struct {
	cfg   presets.ConsoleConfig
	token string
	store *console.Store
}

// prepare applies the flags to the config's console section and returns
// the setup, or nil when the console is off. The console needs --http and
// a token of at least console.MinTokenBytes in the named variable.
func (f consoleFlags) prepare(cfg presets.ConsoleConfig, addr, path string) (*consoleSetup, error) {
	if f.enabled {
		cfg.Enabled = true
	}
	if f.tokenEnv != "" {
		cfg.TokenEnv = f.tokenEnv
	}
	if f.allowRemote {
		cfg.AllowRemote = true
	}
	if !cfg.Enabled {
		if f.tokenEnv != "" || f.allowRemote {
			return nil, errors.New("--console-token-env and --console-allow-remote need the console on (--console or console.enabled)")
		}
		return nil, nil
	}
	switch {
	case addr == "":
		return nil, errors.New("the console is served over HTTP: add --http ADDR (e.g. --http 127.0.0.1:8080), or turn console.enabled off")
	case path == console.Prefix || strings.HasPrefix(path, console.Prefix+"/"):
		return nil, fmt.Errorf("--path %s collides with the console, served under %s; choose another path", path, console.Prefix)
	case cfg.TokenEnv == "":
		return nil, errors.New("the console needs a token: name the environment variable holding it with --console-token-env NAME or console.tokenEnv (e.g. export CONSOLE_TOKEN=$(openssl rand -hex 32))")
	case strings.HasPrefix(cfg.TokenEnv, presets.EnvPrefix):
		return nil, fmt.Errorf("--console-token-env %s: variables starting with %s are configuration overrides; use another name, e.g. CONSOLE_TOKEN", cfg.TokenEnv, presets.EnvPrefix)
	}
	token := os.Getenv(cfg.TokenEnv)
	switch {
	case token == "":
		return nil, fmt.Errorf("the console's token variable %s is not set or empty; export %s=$(openssl rand -hex 32)", cfg.TokenEnv, cfg.TokenEnv)
	case len(token) < console.MinTokenBytes:
		return nil, fmt.Errorf("the console's token in %s is %d bytes long; use at least %d (openssl rand -hex 32)", cfg.TokenEnv, len(token), console.MinTokenBytes)
	}
	return &consoleSetup{cfg: cfg, token: token,
		store: console.NewStore(console.WithMaxRuns(cfg.MaxRuns), console.WithMaxEvents(cfg.MaxEvents))}, nil
}

// options are the middleware options the console needs: its store as an
// audit sink, and approval out of band, whose changes refresh the pages.
func (s *consoleSetup) options() []middleware.Option {
	return []middleware.Option{
		middleware.WithAuditSink(s.store),
		middleware.WithOutOfBandApprovals(policy.WithOnChange(s.store.Touch)),
	}
}

// consoleWatchEvery is how often a console whose approvals are shared
// through the state store lists them, to refresh its pages when a call
// starts or stops waiting on another replica: one store listing per
// interval per replica.
const consoleWatchEvery = 2 * time.Second

// mount serves the console on mux, answering the approvals of cc; the
// console's long polls end when srv shuts down. With a shared approval
// queue it watches the queue until ctx ends or srv shuts down.
func (s *consoleSetup) mount(ctx context.Context, mux *http.ServeMux, srv *http.Server, cc *middleware.CodeCall, logger *slog.Logger) error {
	opts := []console.Option{console.WithAllowRemote(s.cfg.AllowRemote), console.WithLogger(logger)}
	if oob := cc.OutOfBand(); oob != nil {
		opts = append(opts, console.WithApprovals(oob))
		if oob.Shared() {
			watchCtx, stop := context.WithCancel(ctx)
			srv.RegisterOnShutdown(stop)
			go oob.Watch(watchCtx, consoleWatchEvery)
			logger.Info("codecall: the console's approvals are shared through the state store: every replica lists and answers every replica's waiting calls")
		}
	}
	h, err := console.New(s.store, s.token, opts...)
	if err != nil {
		return err
	}
	mux.Handle(console.Prefix, h)
	mux.Handle(console.Prefix+"/", h)
	srv.RegisterOnShutdown(h.Close)
	return nil
}
