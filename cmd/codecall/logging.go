package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/codecall-go/codecall/gateway"
)

// logFlags are the flags that shape the CLI's logs on stderr.
type logFlags struct {
	level  string
	format string
}

// register adds --log-level (default def) and --log-format to fs.
func (l *logFlags) register(fs *flag.FlagSet, def string) {
	fs.StringVar(&l.level, "log-level", def, "log `level`: debug, info, warn, error")
	fs.StringVar(&l.format, "log-format", "text", "log `format`: text (key=value lines) or json (one JSON object a line, for a log collector)")
}

// logger returns a logger writing to w in the chosen format and level.
func (l logFlags) logger(w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(l.level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return l.loggerAt(w, lvl)
}

// loggerAt is logger at a given level, whatever --log-level says.
func (l logFlags) loggerAt(w io.Writer, lvl slog.Level) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: lvl}
	switch l.format {
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format: %q is not a log format; use text or json", l.format)
}

// upstreamProgress logs each attempt to start an upstream on log: which
// one is starting, then how long it took and its tools, or why it failed.
// Starting an upstream with npx can take a minute; these lines say what
// the command is waiting for.
func upstreamProgress(log *slog.Logger) func(gateway.StartEvent) {
	return func(e gateway.StartEvent) {
		switch {
		case !e.Done:
			log.Info("codecall: starting upstream", "upstream", e.Upstream, "transport", e.Transport)
		case e.Err != nil:
			log.Warn("codecall: upstream failed", "upstream", e.Upstream, "ms", e.Elapsed.Milliseconds(), "error", e.Err.Error())
		default:
			log.Info("codecall: upstream started", "upstream", e.Upstream, "ms", e.Elapsed.Milliseconds(), "tools", e.Tools)
		}
	}
}

// buildOnce builds src for a command that answers once and exits (search,
// policy eval): its logs at the command's level, each upstream's start
// shown whatever the level, and the gateway's own lines, which would
// repeat those, dropped.
func buildOnce(ctx context.Context, src source, lf logFlags, stderr io.Writer) (*built, error) {
	logger, err := lf.logger(stderr)
	if err != nil {
		return nil, err
	}
	progress, _ := lf.loggerAt(stderr, slog.LevelInfo)
	src.progress = upstreamProgress(progress)
	src.gatewayLog = slog.New(slog.DiscardHandler)
	return src.build(ctx, logger, false)
}
