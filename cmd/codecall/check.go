package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/codecall-go/codecall/gateway"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/sandbox"
	"github.com/codecall-go/codecall/staticcatalog"
)

func checkCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("check", stderr)
	configFile := fs.String("config", "", "CodeCall YAML config `file` to validate")
	catalogFile := fs.String("catalog", "", "static catalog `file` to validate")
	upstreamsFile := fs.String("upstreams", "", "upstream servers `file` ({\"mcpServers\": ...}) to validate")
	addr := fs.String("http", "", "report who could reach serve --http `addr` with the token flags given")
	var auth httpAuth
	auth.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *configFile == "" && *catalogFile == "" && *upstreamsFile == "" && *addr == "" {
		return fmt.Errorf("check needs --config FILE, --catalog FILE, --upstreams FILE and/or --http ADDR")
	}
	failed := false
	var cfg presets.Config
	var cfgErr error
	if *configFile != "" {
		cfg, cfgErr = presets.Load(*configFile)
	}
	// What serve would read its upstreams from, so that an upstream of
	// either file starting the gateway again on the other is caught too.
	own := ownedBy(*upstreamsFile, *configFile, cfg.Upstreams)
	if *configFile != "" {
		if err := cfgErr; err != nil {
			fmt.Fprintf(stdout, "%s: invalid\n%v\n", *configFile, err)
			failed = true
		} else {
			fmt.Fprintf(stdout, "%s: ok (mode %s, surfaces %v, preset %s, timeout %s, %d tool calls per run)\n",
				*configFile, cfg.Mode, cfg.Surfaces, cfg.Preset, cfg.VM.Timeout, cfg.VM.MaxToolCalls)
			if cfg.Upstreams.File != "" || len(cfg.Upstreams.Servers) > 0 {
				servers, err := gateway.ServersOf(cfg.Upstreams, filepath.Dir(*configFile))
				if err == nil {
					err = selfReference(servers, own)
				}
				if err != nil {
					fmt.Fprintf(stdout, "%s: upstreams: invalid\n%v\n", *configFile, err)
					failed = true
				}
			}
			fmt.Fprintf(stdout, "  transport: a request body or stdin line may hold up to %d bytes\n", cfg.Transport.MaxRequestBytes)
			fmt.Fprintf(stdout, "  embeddings: %s\n", embeddingsLine(cfg.Search.Embeddings))
			if !checkPolicy(cfg, stdout) {
				failed = true
			}
			line, ok := isolationLine(cfg)
			fmt.Fprintf(stdout, "  isolation: %s\n", line)
			failed = failed || !ok
		}
	}
	if *catalogFile != "" {
		tools, err := staticcatalog.Load(*catalogFile)
		if err != nil {
			fmt.Fprintf(stdout, "%s: invalid\n%v\n", *catalogFile, err)
			failed = true
		} else {
			fmt.Fprintf(stdout, "%s: ok (%d tools)\n", *catalogFile, len(tools))
		}
	}
	if *upstreamsFile != "" {
		servers, err := gateway.LoadServers(*upstreamsFile)
		if err == nil {
			err = selfReference(servers, own)
		}
		if err != nil {
			fmt.Fprintf(stdout, "%s: invalid\n%v\n", *upstreamsFile, err)
			failed = true
		} else {
			fmt.Fprintf(stdout, "%s: ok (%d servers; commands and URLs are checked when serving)\n", *upstreamsFile, len(servers))
		}
	}
	if *addr != "" && !checkHTTP(*addr, auth, stdout) {
		failed = true
	}
	if failed {
		return fmt.Errorf("check found problems")
	}
	return nil
}

// checkHTTP reports who could reach serve --http addr with these flags,
// by the rule serve obeys; it is not ok when serve would refuse.
func checkHTTP(addr string, auth httpAuth, stdout io.Writer) bool {
	bearer, err := auth.bearer()
	if err == nil {
		var e exposure
		if e, err = decideExposure(addr, bearer, auth.insecure); err == nil {
			fmt.Fprintf(stdout, "http %s: %s\n", addr, e)
			return true
		}
	}
	fmt.Fprintf(stdout, "http %s: REFUSED: serve would not start: %v\n", addr, err)
	return false
}

// embeddingsLine says whether search would use an embedding model, by
// making it as serve would and embedding one text. A model that does not
// work is reported, not failed: serve would search lexically.
func embeddingsLine(cfg presets.EmbeddingsConfig) string {
	if cfg.Provider == presets.EmbeddingsOff {
		return "off (lexical search)"
	}
	e, err := middleware.NewEmbedder(cfg)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		var vecs [][]float32
		if vecs, err = e.Embed(ctx, []string{"create an issue"}); err == nil && len(vecs) != 1 {
			err = fmt.Errorf("got %d vectors for 1 text", len(vecs))
		}
		if err == nil {
			return fmt.Sprintf("ok (%s, dimension %d, weight %v)", cfg.Provider, len(vecs[0]), cfg.Weight)
		}
	}
	return fmt.Sprintf("UNAVAILABLE (serve would log a warning and search lexically): %v", err)
}

// checkPolicy loads and compiles the configured Rego policy as serve
// would, and reports its files or its problems with file and line.
func checkPolicy(cfg presets.Config, stdout io.Writer) bool {
	if len(cfg.Policy.Paths) == 0 {
		fmt.Fprintln(stdout, "  policy: built-in default (read-only and explicitly non-destructive tools run; every other tool asks for approval)")
		return true
	}
	e, err := policy.LoadEngine(context.Background(), cfg.Policy.Paths, cfg.Policy.Query)
	if err != nil {
		fmt.Fprintf(stdout, "  policy: invalid\n%v\n", err)
		return false
	}
	fmt.Fprintf(stdout, "  policy: ok (%d modules, query %s)\n", len(e.Files()), e.Query())
	return true
}

// isolationLine says where plans would run under cfg on this host, by
// starting one sandboxed worker when the config asks for process
// isolation. It is not ok when locked_down could not start.
func isolationLine(cfg presets.Config) (string, bool) {
	if cfg.VM.Isolation != presets.IsolationProcess {
		return "inprocess (as configured: plans run in the server's own process)", true
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts := []sandbox.Option{sandbox.WithLimits(cfg.VM), sandbox.WithLogger(quiet), sandbox.WithCgroup(sandbox.CgroupMode(cfg.Sandbox.Cgroup))}
	if cfg.Sandbox.Command != "" {
		opts = append(opts, sandbox.WithCommand(cfg.Sandbox.Command))
	}
	conf, err := sandbox.Check(context.Background(), opts...)
	switch {
	case err == nil:
		return "process (" + conf.String() + ")", true
	case cfg.Preset == presets.LockedDown:
		return fmt.Sprintf("UNAVAILABLE: locked_down needs sandboxed worker processes and the server would refuse to start: %v", err), false
	}
	return fmt.Sprintf("inprocess (FALLBACK: vm.isolation is process, but sandboxed worker processes cannot start here: %v)", err), true
}
