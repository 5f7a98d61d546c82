package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

func serveCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	var src source
	fs.StringVar(&src.configFile, "config", "", "CodeCall YAML config `file` (reloaded on change)")
	fs.StringVar(&src.catalogFile, "catalog", "", "serve a static catalog: JSON `file` with an array of tool definitions")
	addr := fs.String("http", "", "serve streamable HTTP on `addr` (e.g. 127.0.0.1:8080) instead of stdio")
	path := fs.String("path", "/mcp", "HTTP endpoint `path`")
	level := fs.String("log-level", "info", "log `level`: debug, info, warn, error")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve takes no arguments, got %q", fs.Args())
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	// stdout carries the protocol on stdio: every log goes to stderr.
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))
	srv, cc, err := src.build(logger, true)
	if err != nil {
		return err
	}
	defer cc.Close()

	if *addr == "" {
		stdio := server.NewStdioServer(srv)
		stdio.SetErrorLogger(log.New(stderr, "codecall: ", log.LstdFlags))
		logger.Info("codecall: serving on stdio")
		if err := stdio.Listen(ctx, stdin, stdout); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
			return err
		}
		return nil
	}
	httpSrv := server.NewStreamableHTTPServer(srv, server.WithEndpointPath(*path))
	errc := make(chan error, 1)
	go func() { errc <- httpSrv.Start(*addr) }()
	logger.Info("codecall: serving streamable HTTP", "url", "http://"+*addr+*path)
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return httpSrv.Shutdown(shutdownCtx)
	}
}
