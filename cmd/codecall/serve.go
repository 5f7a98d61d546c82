package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

func serveCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	var src source
	var origins stringList
	fs.StringVar(&src.configFile, "config", "", "CodeCall YAML config `file` (reloaded on change)")
	fs.StringVar(&src.catalogFile, "catalog", "", "serve a static catalog: JSON `file` with an array of tool definitions")
	fs.StringVar(&src.upstreamsFile, "upstreams", "", "serve the tools of the MCP servers in `file` ({\"mcpServers\": ...}, the usual client format)")
	openapiFlag(fs, &src)
	fs.StringVar(&src.tokenDir, "token-dir", "", "read and refresh the OAuth tokens of HTTP and SSE upstreams in `dir` (default: upstreams.tokenDir, else the user's config directory, codecall/tokens)")
	fs.Func("surface", "offer the agent-facing `surface` codecall (codecall.search/describe/execute) or codemode (codemode.run); repeatable, replaces the config's surfaces", func(v string) error {
		src.surfaces = append(src.surfaces, presets.Surface(v))
		return nil
	})
	addr := fs.String("http", "", "serve streamable HTTP on `addr` (e.g. 127.0.0.1:8080) instead of stdio")
	path := fs.String("path", "/mcp", "HTTP endpoint `path`")
	var auth httpAuth
	auth.register(fs)
	var cons consoleFlags
	cons.register(fs)
	fs.Var(&origins, "allow-origin", "with --http, also accept browser requests from this `origin` (repeatable; loopback origins are always accepted)")
	var lf logFlags
	lf.register(fs, "info")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve takes no arguments, got %q", fs.Args())
	}
	// stdout carries the protocol on stdio: every log goes to stderr.
	logger, err := lf.logger(stderr)
	if err != nil {
		return err
	}
	bearer, err := auth.bearer()
	if err != nil {
		return err
	}
	var exp exposure
	switch {
	case *addr != "":
		if exp, err = decideExposure(*addr, bearer, auth.insecure); err != nil {
			return err
		}
	case bearer != "":
		return errors.New("--token and --token-env apply to --http only; stdio needs no token")
	case auth.insecure:
		return errors.New("--http-insecure-no-auth applies to --http only")
	}
	cfg, err := src.config()
	if err != nil {
		return err
	}
	maxRequest := cfg.Transport.MaxRequestBytes
	src.progress = upstreamProgress(logger)
	var store pinger
	if cfg.State.Durable() {
		st, key, err := openState(ctx, cfg.State)
		if err != nil {
			return fmt.Errorf("state: %s: %w", stateWhere(cfg.State), err)
		}
		defer st.Close()
		store = st
		src.extra = append(src.extra, middleware.WithStateStore(st, key))
		logger.Info("codecall: plans paused for approval are kept in the state store", "store", stateWhere(cfg.State))
	}
	cs, err := cons.prepare(cfg.Console, *addr, *path)
	if err != nil {
		return err
	}
	if cs != nil {
		src.extra = append(src.extra, cs.options()...)
	}
	tp, shutdownTracing, err := tracerProvider(ctx)
	if err != nil {
		return err
	}
	defer func() {
		flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := shutdownTracing(flush); err != nil {
			logger.Warn("codecall: spans not exported", "error", err)
		}
	}()
	if tp != nil {
		src.tracer = tp
		logger.Info("codecall: exporting spans over OTLP/HTTP")
	}
	b, err := src.build(ctx, logger, true)
	if err != nil {
		return err
	}
	defer b.Close()
	if b.gw != nil {
		// Upstream definitions and their ${VAR} values are re-read on SIGHUP
		// and when the files holding them change.
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGHUP)
		defer signal.Stop(sig)
		hup := make(chan struct{})
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-sig:
					select {
					case hup <- struct{}{}:
					case <-ctx.Done():
						return
					}
				}
			}
		}()
		watchCtx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		go watchUpstreams(watchCtx, src, b, hup, logger)
	}
	srv := b.srv
	if isTerminal(stdin) {
		bn := banner{served: servedWhat(ctx, src, b), exe: executable(), args: append([]string{"serve"}, args...)}
		if *addr != "" {
			bn.url = "http://" + *addr + *path
		}
		bn.write(stderr)
	}

	if *addr == "" {
		// Every write to stdout, mcp-go's and the limiter's refusals,
		// is one whole line.
		out := &lockedWriter{w: stdout}
		in := newLineLimiter(stdin, maxRequest, func() {
			logger.Warn("codecall: refused a message on stdin longer than transport.maxRequestBytes; skipped to the next line", "maxRequestBytes", maxRequest)
			_, _ = out.Write(tooLargeResponse("a message on stdin", maxRequest))
		})
		stdio := server.NewStdioServer(srv)
		stdio.SetErrorLogger(log.New(stderr, "codecall: ", log.LstdFlags))
		logger.Info("codecall: serving on stdio", "maxRequestBytes", maxRequest)
		if err := stdio.Listen(ctx, in, out); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
			return err
		}
		return nil
	}
	if exp.open {
		logger.Warn("codecall: SERVING WITHOUT AUTHENTICATION (--http-insecure-no-auth): anyone who can reach "+*addr+" can run plans and call every tool; require a bearer token with --token-env, or bind 127.0.0.1", "addr", *addr)
	}
	mux := http.NewServeMux()
	hc := &health{catalog: &b.catalogReady, store: store, log: logger}
	hc.mount(mux)
	// The guard answers first, so a request without the token is refused
	// before its body is read.
	mux.Handle(*path, newHTTPGuard(limitBody(server.NewStreamableHTTPServer(srv, server.WithEndpointPath(*path), server.WithEventStore(newEventStore())), maxRequest), *addr, bearer, origins))
	httpSrv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if cs != nil {
		if err := cs.mount(ctx, mux, httpSrv, b.cc, logger); err != nil {
			return err
		}
		logger.Info("codecall: serving the operator console", "url", "http://"+*addr+"/console/", "allowRemote", cs.cfg.AllowRemote)
	}
	errc := make(chan error, 1)
	go func() { errc <- httpSrv.ListenAndServe() }()
	logger.Info("codecall: serving streamable HTTP", "url", "http://"+*addr+*path, "exposure", exp.String(), "maxRequestBytes", maxRequest)
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
		// Drain: the listener closes at once (a load balancer's checks
		// fail and it sends no more work) and readiness says draining on
		// connections still open; requests in flight (a plan running, a
		// resumed plan) get up to a plan's timeout to finish. A plan that
		// pauses meanwhile is saved in the state store like any other.
		hc.draining.Store(true)
		grace := cfg.VM.Timeout + 5*time.Second
		logger.Info("codecall: draining: no new requests; waiting for those in flight", "atMost", grace)
		shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		return httpSrv.Shutdown(shutdownCtx)
	}
}
