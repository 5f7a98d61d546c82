package main

import (
	"go.opentelemetry.io/otel/trace"
	"sync/atomic"

	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/examples/demo"
	"github.com/codecall-go/codecall/gateway"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/sandbox"
	"github.com/codecall-go/codecall/staticcatalog"
	"github.com/codecall-go/codecall/tokenstore"
)

// source says which tools to serve.
type source struct {
	configFile    string
	catalogFile   string
	upstreamsFile string
	openapi       []string             // --openapi NAME=URL|FILE
	surfaces      []presets.Surface    // --surface; none: the config's
	tracer        trace.TracerProvider // nil: OpenTelemetry's global provider
	// progress hears every attempt to start an upstream; nil: nobody.
	progress func(gateway.StartEvent)
	// gatewayLog is the gateway's own logger; nil: the build's logger.
	gatewayLog *slog.Logger
	extra      []middleware.Option // more options for Wrap (serve's console)
	// tokenDir holds the OAuth tokens of remote upstreams (--token-dir);
	// "": upstreams.tokenDir, else the default.
	tokenDir string
}

// built is a served tool set wrapped in CodeCall.
type built struct {
	srv *server.MCPServer
	cc  *middleware.CodeCall
	gw  *gateway.Gateway // nil unless upstreams are configured
	// catalogReady is set once every upstream has been tried (at once
	// without upstreams): serve --http's readiness waits for it.
	catalogReady atomic.Bool
}

// Close stops CodeCall and then the upstreams.
func (b *built) Close() {
	_ = b.cc.Close()
	if b.gw != nil {
		_ = b.gw.Close()
	}
}

// loadConfig reads the config file with the CODECALL_ environment
// variables on top or, without a file, the defaults with the variables on
// top (middleware.Wrap makes the same choice): a variable applies whether
// or not a file is given, with the same errors.
func loadConfig(file string) (presets.Config, error) {
	if file != "" {
		return presets.Load(file)
	}
	return presets.Parse(nil, os.Environ())
}

// config returns the configuration of --config and the environment.
func (s source) config() (presets.Config, error) {
	cfg, err := loadConfig(s.configFile)
	if err != nil {
		return cfg, err
	}
	if len(s.surfaces) > 0 {
		cfg.Surfaces = s.surfaces
		if err := cfg.Validate(); err != nil {
			return cfg, fmt.Errorf("--surface: %w", err)
		}
	}
	return cfg, nil
}

// upstreams returns the upstream servers of --upstreams and the config's
// upstreams: section; ok is false when there are none. An upstream that
// would start this gateway again is an error (selfReference).
func (s source) upstreams() (cfg presets.UpstreamsConfig, servers map[string]presets.Upstream, ok bool, err error) {
	full, err := s.config()
	if err != nil {
		return full.Upstreams, nil, false, err
	}
	return s.upstreamsIn(full)
}

// upstreamsIn is upstreams for a configuration already read.
func (s source) upstreamsIn(full presets.Config) (cfg presets.UpstreamsConfig, servers map[string]presets.Upstream, ok bool, err error) {
	cfg = full.Upstreams
	baseDir := ""
	if s.configFile != "" {
		baseDir = filepath.Dir(s.configFile)
	}
	if s.upstreamsFile == "" && cfg.File == "" && len(cfg.Servers) == 0 && len(s.openapi) == 0 {
		return cfg, nil, false, nil
	}
	servers, err = gateway.ServersOf(cfg, baseDir)
	if err != nil {
		return cfg, nil, false, err
	}
	if s.upstreamsFile != "" {
		fromFlag, err := gateway.LoadServers(s.upstreamsFile)
		if err != nil {
			return cfg, nil, false, err
		}
		for id, u := range fromFlag {
			if _, dup := servers[id]; dup {
				return cfg, nil, false, fmt.Errorf("upstream %q is defined both in %s and in the config; keep one", id, s.upstreamsFile)
			}
			servers[id] = u
		}
	}
	for id, u := range openapiServers(s.openapi) {
		if _, dup := servers[id]; dup {
			return cfg, nil, false, fmt.Errorf("--openapi %s: upstream %q is already defined; pick another name", id, id)
		}
		servers[id] = u
	}
	if err := selfReference(servers, ownedBy(s.upstreamsFile, s.configFile, cfg)); err != nil {
		return cfg, nil, false, err
	}
	return cfg, servers, true, nil
}

// build creates the server for a source and wraps it in CodeCall. With
// upstreams it connects to them (in the background when serving, unless
// upstreams.start is lazy); broken upstreams are logged and retried, the
// others served.
func (s source) build(ctx context.Context, logger *slog.Logger, watch bool) (*built, error) {
	b := &built{}
	full, err := s.config()
	if err != nil {
		return nil, err
	}
	upCfg, servers, gatewayMode, err := s.upstreamsIn(full)
	switch {
	case err != nil:
		return nil, err
	case gatewayMode && s.catalogFile != "":
		return nil, errors.New("--catalog and upstreams cannot be served together; pick one")
	case gatewayMode:
		gwLog := logger
		if s.gatewayLog != nil {
			gwLog = s.gatewayLog
		}
		gwOpts := []gateway.Option{gateway.WithConfig(upCfg), gateway.WithLogger(gwLog), gateway.WithImplementation("codecall", version)}
		// Sandboxed upstreams get cgroups as plan workers do.
		gwOpts = append(gwOpts, gateway.WithCgroup(sandbox.CgroupMode(full.Sandbox.Cgroup)))
		if s.progress != nil {
			gwOpts = append(gwOpts, gateway.WithProgress(s.progress))
		}
		if s.tokenDir != "" {
			gwOpts = append(gwOpts, gateway.WithTokenStore(tokenstore.NewDir(s.tokenDir)))
		}
		if upCfg.Pinning() {
			dir, err := stateDirOf(upCfg)
			if err != nil {
				return nil, fmt.Errorf("pinned tool definitions (upstreams.pinDefinitions): %w", err)
			}
			gwOpts = append(gwOpts, gateway.WithStateDir(dir), gateway.WithQuarantine(auditQuarantine(func() *middleware.CodeCall { return b.cc })))
		}
		b.gw, err = gateway.New(servers, gwOpts...)
		if err != nil {
			return nil, err
		}
		b.srv = b.gw.Server()
	case s.catalogFile != "":
		tools, err := staticcatalog.Load(s.catalogFile)
		if err != nil {
			return nil, err
		}
		b.srv = staticcatalog.NewServer("codecall-catalog", version, tools)
	default:
		b.srv = demo.New()
	}
	opts := []middleware.Option{middleware.WithLogger(logger)}
	if len(s.surfaces) > 0 {
		opts = append(opts, middleware.WithSurfaces(s.surfaces...))
	}
	if b.gw != nil {
		opts = append(opts, middleware.WithServers(gatewayServers{b.gw}))
	}
	if s.tracer != nil {
		opts = append(opts, middleware.WithTracerProvider(s.tracer))
	}
	if s.configFile != "" {
		opts = append(opts, middleware.WithConfigFile(s.configFile))
		if !watch {
			opts = append(opts, middleware.WithoutReload())
		}
	}
	opts = append(opts, s.extra...)
	b.cc, err = middleware.Wrap(b.srv, opts...)
	if err != nil {
		if b.gw != nil {
			_ = b.gw.Close()
		}
		return nil, fmt.Errorf("%w", err)
	}
	if b.gw == nil {
		b.catalogReady.Store(true)
	}
	if b.gw != nil {
		start := func() {
			if err := b.gw.Start(ctx); err != nil {
				logger.Warn("codecall: some upstreams are unavailable and are retried in the background; the others are served", "error", err)
			}
			b.catalogReady.Store(true)
		}
		if watch {
			// Serving: answer the handshake at once; requests for tools
			// wait until every upstream has been tried.
			go start()
		} else {
			start()
		}
	}
	return b, nil
}

// reload re-reads the upstream definitions and re-resolves their ${VAR}
// placeholders (codecall serve does it on SIGHUP).
func (s source) reload(ctx context.Context, b *built, logger *slog.Logger) {
	if b.gw == nil {
		return
	}
	_, servers, _, err := s.upstreams()
	if err != nil {
		logger.Error("codecall: upstreams not reloaded", "error", err)
		return
	}
	if err := b.gw.Reload(ctx, servers); err != nil {
		logger.Warn("codecall: upstreams reloaded with failures", "error", err)
		return
	}
	logger.Info("codecall: upstreams reloaded", "servers", len(servers))
}
