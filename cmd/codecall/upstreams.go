package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/codecall-go/codecall/gateway"
	"github.com/codecall-go/codecall/meta"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/policy/audit"
	"github.com/codecall-go/codecall/presets"
)

const upstreamsUsage = `Usage:
  codecall upstreams accept [--config FILE] [--state-dir DIR] UPSTREAM|TOOL

Accepts the changed (or new) tool definitions the gateway holds back
(upstreams.pinDefinitions): of every tool of UPSTREAM, or of one TOOL named
as the gateway serves it (<id>.<tool>, with the configured separator, or
<id>:<tool>). A running codecall serve serves them once it checks that
upstream again: send it SIGHUP, or wait for the upstream's next
tools/list_changed.
`

// upstreamsCmd is codecall upstreams accept.
func upstreamsCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "accept" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			fmt.Fprint(stdout, upstreamsUsage)
			return nil
		}
		fmt.Fprint(stderr, upstreamsUsage)
		return errUsage
	}
	fs := newFlags("upstreams accept", stderr)
	configFile := fs.String("config", "", "CodeCall YAML config `file` (for upstreams.stateDir and upstreams.separator)")
	stateDir := fs.String("state-dir", "", "the state `directory` (default: upstreams.stateDir, else $XDG_STATE_HOME/codecall or ~/.local/state/codecall)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fmt.Fprint(stderr, upstreamsUsage)
		return errUsage
	}
	cfg, err := loadConfig(*configFile)
	if err != nil {
		return err
	}
	dir := *stateDir
	if dir == "" {
		if dir, err = stateDirOf(cfg.Upstreams); err != nil {
			return err
		}
	}
	sep := cfg.Upstreams.Separator
	if sep == "" {
		sep = "."
	}
	accepted, err := gateway.AcceptDefinitions(dir, fs.Arg(0), sep)
	if err != nil {
		return fmt.Errorf("upstreams accept: %w", err)
	}
	if len(accepted) == 0 {
		fmt.Fprintf(stdout, "nothing held back for %s\n", fs.Arg(0))
		return nil
	}
	fmt.Fprintf(stdout, "accepted %s; a running codecall serve serves them after SIGHUP or the upstream's next tools/list_changed\n", strings.Join(accepted, ", "))
	return nil
}

// stateDirOf is where the pinned definitions live: upstreams.stateDir, or
// the default state directory.
func stateDirOf(c presets.UpstreamsConfig) (string, error) {
	if c.StateDir != "" {
		return c.StateDir, nil
	}
	return gateway.DefaultStateDir()
}

// auditQuarantine writes a held-back tool to the audit log of the
// CodeCall that serves the gateway (nil before it is built).
func auditQuarantine(cc func() *middleware.CodeCall) func(gateway.Quarantine) {
	return func(q gateway.Quarantine) {
		c := cc()
		if c == nil {
			return
		}
		ctx := context.Background()
		st, release := c.Acquire(ctx)
		defer release()
		st.Audit.Log(ctx, audit.Event{Type: audit.UpstreamQuarantine, Tool: q.Name, AppID: q.Upstream, Reason: q.Reason,
			ErrorCode: "QUARANTINED"})
	}
}

// gatewayServers is the gateway as codemode.run's servers and as the
// source of which upstreams are down, for search and describe to say so.
type gatewayServers struct{ *gateway.Gateway }

// Unavailable lists the upstreams that failed and wait for their restart.
func (g gatewayServers) Unavailable() []meta.UnavailableServer {
	var out []meta.UnavailableServer
	for _, st := range g.Status() {
		if st.State == "failed" {
			out = append(out, meta.UnavailableServer{ID: st.ID, Reason: st.Error, Since: st.DownSince, RetryAt: st.RetryAt})
		}
	}
	return out
}
